"""``gk.scan``: ``jax.lax.scan`` for a step function that reads Variables.

The step function runs once, traced, as ``jax.lax.scan`` runs it, so a loop of any length
compiles to one XLA while loop (an unrolled Python loop compiles one copy of the step per
iteration). Variables it reads are read as they are when the scan starts; assigning one that
exists outside the step is refused (each iteration would write the one Variable), while a
Variable created inside the step is local to that iteration. Under a recording tape the whole
scan is one recorded op over the Variables it reads, so gradients with respect to them flow.

>>> import gradkit as gk, jax.numpy as jnp
>>> decay = gk.Variable(0.5)
>>> def step(carry, x):
...     carry = carry * decay + x
...     return carry, carry
>>> final, history = gk.scan(step, jnp.float32(0.0), jnp.array([1.0, 2.0, 3.0]))
>>> float(final), history.tolist()
(4.25, [1.0, 2.5, 4.25])
>>> with gk.GradientTape() as tape:
...     final, _ = gk.scan(step, jnp.float32(0.0), jnp.array([1.0, 2.0, 3.0]))
>>> float(tape.gradient(final, decay))   # d/dd (d^2 + 2d + 3) at d = 0.5
3.0
"""

from __future__ import annotations

from collections.abc import Callable

import jax

from .. import _errors
from .functionalize import StateFrame, values_of
from .programs import program_call
from .state import State
from .transforms import _recorded, check_callable


class _ScanFrame(StateFrame):
    """The frame of one traced step of ``gk.scan``: Variables created in the step are local to
    it; assigning one that existed before is refused at the assignment."""

    def __init__(self, traced_locals: bool = True):
        self.traced_locals = traced_locals
        # No warning for reading an outer Variable in the traced step: each gk.scan call traces its
        # step anew, so the value read is the Variable's at that call.
        super().__init__(State._make((), ()), strict=False, created_are_local=True, warns_if_staged=False)

    def adopt_traced(self, var, value) -> bool:
        # Without traced_locals a Variable created from a traced value is refused at its
        # creation, before anything (a layer built on its first call) can keep it.
        return self.traced_locals and super().adopt_traced(var, value)

    def assign(self, var, value):
        if not self.is_local(var):
            raise _errors.GradkitTypeError(
                f"gk.scan's step assigns Variable {var._label()}, which exists outside the step: the step is traced "
                "once and runs at every iteration, so each would write the one Variable. The Variable is "
                "unchanged. Carry the value instead (return it in the carry), or loop in Python."
            )
        super().assign(var, value)


def scan(f: Callable, init, xs=None, length=None, reverse: bool = False, unroll: int | bool = 1):
    """Like ``jax.lax.scan(f, init, xs, length, reverse, unroll)``, for a step ``f(carry, x) ->
    (carry, y)`` that reads Variables; returns ``(final carry, stacked ys)``. See the module
    docstring for Variables and tapes."""
    return _scan(f, init, xs, length, reverse, unroll, traced_locals=True)


def scan_without_traced_locals(f: Callable, init, xs=None, length=None, reverse: bool = False):
    """``scan`` for a caller that runs ``f`` another way where the scan fails (gradkit.tf's
    loops, row by row): a Variable ``f`` creates from a traced value raises at its creation,
    so a failed scan leaves no Variable behind that the other way would find half made."""
    return _scan(f, init, xs, length, reverse, 1, traced_locals=False)


def _scan(f, init, xs, length, reverse, unroll, traced_locals: bool):
    check_callable(f, "gk.scan")

    def run(init, xs):
        # A new step function for each trace: jax caches a loop body's program per function, and
        # a Variable read in it answers differently from one trace to the next (program_call
        # traces once to find the Variables read, then again with their values as inputs).
        def step(carry, x):
            frame = _ScanFrame(traced_locals)
            with frame:
                out = f(carry, x)
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    raise _errors.GradkitTypeError(
                        f"gk.scan's step must return a pair (new carry, y), as jax.lax.scan's does, but returned "
                        f"{type(out).__name__}{'' if not isinstance(out, (tuple, list)) else f' of length {len(out)}'}."
                    )
                out = values_of(tuple(out))
            for var in frame.escaped(assigned=True):
                raise _errors.GradkitTypeError(
                    f"gk.scan's step creates and assigns Variable {var._label()} and keeps it after the step: each "
                    "iteration would give it its own value. Create it outside the step, or keep it local to the step."
                )
            return out

        return jax.lax.scan(step, init, xs, length=length, reverse=reverse, unroll=unroll)

    if not _recorded():
        return run(init, xs)
    # A tape records: the scan is one program over the Variables the step reads, recorded as one op.
    return program_call(run, (init, xs), {}, "gk.scan")
