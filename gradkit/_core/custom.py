"""``stop_gradient`` and TensorFlow-style ``custom_gradient``."""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax

from .. import _errors
from . import frames
from .functionalize import StateFrame, values_of
from .state import State
from .variable import Variable


def stop_gradient(x):
    """``x`` with no gradient flowing back through it (``jax.lax.stop_gradient``)."""
    if isinstance(x, Variable):
        x = x.value
    return frames.apply(jax.lax.stop_gradient, x)


class _ReadRecorder(frames.Frame):
    """Notes which Variables a function reads, answering from the frame below."""

    def __init__(self):
        self.seen: dict[int, Variable] = {}

    def read(self, var):
        self.seen.setdefault(id(var), var)
        # The probe only needs shapes; a value a layer above wraps (a recorded tensor)
        # must not leak into the abstract trace.
        return frames.concrete(frames.read_below(self, var))


def custom_gradient(f: Callable | None = None) -> Callable:
    """Give ``f`` a gradient of your choosing (TensorFlow's ``tf.custom_gradient``).

    ``f(*inputs, **kwargs)`` returns ``(y, grad_fn)``. ``grad_fn(*dys)`` takes one upstream
    gradient per output of ``f`` (``grad_fn(dy)`` for a single output) and returns the
    gradient for each input (a single value when there is one input); keyword arguments are
    not differentiated. If ``f`` reads Variables, ``grad_fn`` must accept ``variables=`` and
    return ``(input_grads, variable_grads)``, one variable gradient per Variable in the order
    given. Built on ``jax.custom_vjp``: ``f`` is traced, so Python control flow on its
    inputs' values is not possible inside it (use ``jnp.where`` or ``jax.lax.cond``), a
    gradient returned as None counts as zeros, and under a recording tape each call is a new
    op (compiled anew at the gradient).

    >>> import gradkit as gk, jax, jax.numpy as jnp
    >>> @gk.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return jnp.clip(dy, -0.5, 0.5)
    ...     return y, backward
    >>> float(jax.grad(lambda v: clip_gradients(v * v))(2.0))   # 4 clipped to 0.5, times dv*v/dv
    2.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        # Built afresh each call, as TensorFlow runs f each call: Variables or Python state
        # that f reads may differ from one call to the next.
        fk = functools.partial(f, **kwargs) if kwargs else f
        variables = _variables_read(fk, args)
        return frames.apply(_build(fk, variables), tuple(v.value for v in variables), *args)

    return wrapper


def _variables_read(f, args) -> list[Variable]:
    recorder = _ReadRecorder()

    def probe(*xs):
        with recorder:
            y, _ = f(*xs)
        return values_of(y)

    shapes = [
        jax.ShapeDtypeStruct(getattr(a, "shape", ()), getattr(a, "dtype", None) or jax.numpy.result_type(a))
        for a in args
    ]
    try:
        jax.eval_shape(probe, *shapes)
    except frames.TRACER_VALUE_ERRORS as e:
        raise _errors.GradkitTypeError(
            "a function decorated with custom_gradient is traced with abstract values to build its "
            "jax.custom_vjp, so it cannot branch or loop in Python on its inputs' values (or call "
            ".numpy() on them). Use jnp.where / jax.lax.cond / jax.lax.fori_loop inside it, or compute "
            "the branch outside and pass it in as a keyword argument."
        ) from e
    return list(recorder.seen.values())


def _build(f: Callable, variables: list[Variable]) -> Callable:
    """A ``custom_vjp`` function of (variable values, *inputs)."""
    variables = tuple(variables)

    def run(var_values, *xs):
        frame = StateFrame(State._make(variables, var_values), strict=False)
        with frame:
            y, grad_fn = f(*xs)
            y = values_of(y)
        return y, grad_fn

    @jax.custom_vjp
    def call(var_values, *xs):
        return run(var_values, *xs)[0]

    def fwd(var_values, *xs):
        return run(var_values, *xs)[0], (var_values, xs)

    def bwd(res, dy):
        # grad_fn is a Python closure over values of the forward trace, which cannot cross
        # into the backward pass; run the forward again to rebuild it (under jit, XLA
        # shares the repeated work). grad_fn runs under the same frame, so a Variable it
        # reads has the value the forward saw (the live value may differ by now, or the
        # forward ran inside a transform), and a derivative of the backward with respect to
        # that value is exact.
        var_values, xs = res
        frame = StateFrame(State._make(variables, var_values), strict=False)
        with frame:
            _, grad_fn = f(*xs)
            input_grads, var_grads = _grad_caller(grad_fn, variables)(dy)
        return (tuple(var_grads), *_as_tuple(input_grads, len(xs)))

    call.defvjp(fwd, bwd)
    return call


def _grad_caller(grad_fn, variables):
    def caller(dy):
        if variables:
            try:
                result = grad_fn(*jax.tree_util.tree_leaves(dy), variables=list(variables))
            except TypeError as e:
                if "variables" not in str(e):
                    raise
                raise _errors.GradkitTypeError(
                    "the function decorated with custom_gradient reads Variables "
                    f"({', '.join(v._label() for v in variables)}), so its grad_fn must accept "
                    "variables= and return (input_grads, variable_grads). Define "
                    "grad_fn(dy, variables=None)."
                ) from None
            input_grads, var_grads = result
            return input_grads, [values_of(g) for g in var_grads]
        return grad_fn(*jax.tree_util.tree_leaves(dy)), []

    return caller


def _as_tuple(grads, n):
    if n == 1 and not isinstance(grads, (tuple, list)):
        return (grads,)
    grads = tuple(grads)
    if len(grads) != n:
        raise _errors.GradkitValueError(
            f"custom_gradient: grad_fn returned {len(grads)} input gradient(s) for {n} input(s). "
            "Return one gradient per input, in order."
        )
    return grads
