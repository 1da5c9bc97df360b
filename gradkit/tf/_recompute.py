"""``tf.recompute_grad``: the same values and gradients as ``f``, with ``f``'s forward pass
recomputed in the backward pass instead of kept (``jax.checkpoint``), to save memory.

As in TensorFlow, gradients flow to ``f``'s positional tensor arguments and to the Variables
``f`` reads; keyword arguments get none (TensorFlow's custom gradient does not differentiate
them), and a positional argument ``f`` does not use gets a zero gradient, not None. While a
tape records, a call is one recorded op over its arguments and the Variables ``f`` reads,
whose gradient JAX takes through ``jax.checkpoint``; inside ``tf.function`` or a gradkit
transform it is ``jax.checkpoint`` itself. Unlike TensorFlow's, second derivatives work
(TensorFlow raises NotImplementedError for a nested tape).

>>> import gradkit.tf as tf
>>> w = tf.Variable(3.0)
>>> block = tf.recompute_grad(lambda x: tf.sin(x) * w)
>>> x = tf.Variable(0.0)
>>> with tf.GradientTape() as tape:
...     y = block(x)
>>> [float(g) for g in tape.gradient(y, [x, w])]
[3.0, 0.0]
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.custom import stop_gradient as _gk_stop_gradient
from gradkit._core.functionalize import StateFrame, values_of
from gradkit._core.programs import program_call
from gradkit._core.state import State
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from ._convert import convert, wrap


def _is_leaf(x) -> bool:
    return isinstance(x, (Tensor, Variable))


def _is_traced(x) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, (Tensor, Variable, jax.Array, np.ndarray, np.generic, float, complex))


@jax.custom_jvp
def _linked(out, inputs):
    """``out``, counted as reading ``inputs`` with a derivative of exactly zero (no ``0 * x``,
    which would turn an infinite input into NaN): TensorFlow's recompute_grad gives each
    positional input a zero gradient for every output, where a tape would give None."""
    return out


@_linked.defjvp
def _linked_jvp(primals, tangents):
    return primals[0], tangents[0]


def _link(out, inputs: list):
    inputs = [x for x in inputs if jnp.issubdtype(jnp.result_type(x), jnp.inexact)]
    if not inputs:
        return out

    def link(y):
        return _linked(y, inputs) if jnp.issubdtype(jnp.result_type(y), jnp.inexact) else y

    return jax.tree_util.tree_map(link, out)


class _ReadsFrame(StateFrame):
    """The frame ``f`` runs in: notes the value of each Variable it reads (from the frame below:
    an input of the recorded program), and refuses assignments to Variables that outlive the
    call, which the recomputation in the backward pass would make a second time."""

    def __init__(self):
        super().__init__(State._make((), ()), strict=False, created_are_local=True)
        self.read_values: dict = {}

    def read(self, var):
        value = super().read(var)
        if not self.is_local(var):
            self.read_values.setdefault(id(var), value)
        return value

    def assign(self, var, value):
        if not self.is_local(var):
            raise _errors.GradkitTypeError(
                f"tf.recompute_grad: the function assigns Variable {var._label()} while a tape records (or inside "
                "tf.function): its forward pass runs again in the backward pass, which would assign it again. "
                "Return the new value and assign it outside the recomputed function."
            )
        super().assign(var, value)


def recompute_grad(f):
    """``tf.recompute_grad(f)``: ``f`` with its activations recomputed in the backward pass
    (see the module docstring)."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        positional = len(jax.tree_util.tree_leaves(args, is_leaf=_is_leaf))
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
        traced_at = [i for i, x in enumerate(leaves) if _is_traced(x)]
        values = []
        for i in traced_at:
            x = convert(leaves[i])
            # TensorFlow's custom gradient differentiates the positional arguments only.
            values.append(x if i < positional else _gk_stop_gradient(x))
        linked = [j for j, i in enumerate(traced_at) if i < positional]

        def run(*xs):
            full = list(leaves)
            for i, x in zip(traced_at, xs):
                full[i] = Tensor.concrete(x)
            a, k = jax.tree_util.tree_unflatten(treedef, full)
            return values_of(f(*a, **k))

        def program(*xs):
            # A new function at each trace: jax.checkpoint keeps the program it traced per
            # function, and a second trace (with the Variables f reads as inputs) must not
            # reuse one that read them as constants.
            checkpointed = jax.checkpoint(lambda *ys: run(*ys))
            frame = _ReadsFrame()
            with frame:
                out = checkpointed(*xs)
            # TensorFlow gives the Variables f reads a zero gradient for each output too.
            return _link(out, [xs[j] for j in linked] + list(frame.read_values.values()))

        top = frames.top()
        if top is None:
            return f(*args, **kwargs)  # nothing differentiates it: f as it is
        if isinstance(top, (StateFrame, frames.Suspend)):
            # Inside tf.function's trace or a gradkit transform: JAX differentiates it.
            plain = [x.__gradkit_value__() if isinstance(x, Tensor) else x for x in values]
            return wrap(program(*plain))
        return wrap(program_call(program, tuple(values), {}, "tf.recompute_grad"))

    return wrapper
