"""``stop_gradient`` and TensorFlow-style ``custom_gradient``."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.extend.core import ClosedJaxpr, jaxpr_as_fun

from .. import _errors
from . import frames
from .compat import array_const
from .functionalize import StateFrame, values_of
from .programs import aval_of, discover, intern, program_key, runtime, trace
from .state import State
from .variable import Variable


def stop_gradient(x):
    """``x`` with no gradient flowing back through it (``jax.lax.stop_gradient``)."""
    if isinstance(x, Variable):
        x = x.value
    return frames.apply(jax.lax.stop_gradient, x)


def custom_gradient(f: Callable | None = None, *, variables_by_name: bool = False) -> Callable:
    """Give ``f`` a gradient of your choosing (TensorFlow's ``tf.custom_gradient``).

    ``f(*inputs, **kwargs)`` returns ``(y, grad_fn)``. ``grad_fn(*dys)`` takes one upstream
    gradient per output of ``f`` (``grad_fn(dy)`` for a single output) and returns the
    gradient for each input (a single value when there is one input); keyword arguments are
    not differentiated. If ``f`` reads Variables, ``grad_fn`` must accept ``variables=`` and
    return ``(input_grads, variable_grads)``, one variable gradient per Variable of the list it
    is given: the Variables ``f`` reads, in the order they were created (with
    ``variables_by_name=True``, sorted by name, Variables of one name in the order they were
    created, as TensorFlow's ``tf.function`` gives them). Built on ``jax.custom_vjp``: ``f`` is traced, so Python control flow on its
    inputs' values is not possible inside it (use ``jnp.where`` or ``jax.lax.cond``). A
    gradient ``grad_fn`` returns as None cuts that input from the call, as in TensorFlow: a
    tape gives None for it unless another path reaches it (``jax.grad`` gives zeros).

    As in TensorFlow, ``f`` runs at every call, with the Python state and Variable values of
    that call. ``grad_fn`` is traced (with abstract values) at the call too, so it sees them as
    they were then, even if the gradient is taken later; a Variable only ``grad_fn`` reads is
    a constant of it. Arrays that ``f`` or ``grad_fn`` close over are runtime inputs of the
    traced programs (constants: no gradient flows to them, as in TensorFlow), so calls whose
    programs are the same, whatever those arrays hold, are one op to a recording tape: a loop
    of same-shaped steps compiles once. A Python number they read is part of the program: a
    new value compiles a new one. A ``jax.custom_jvp`` or ``jax.custom_vjp`` rule or a
    callback used inside them is known by its name in the program, so, as under ``jax.jit``,
    it must not change with Python state between calls (a gradkit ``custom_gradient`` inside
    is told apart by its own programs, so it may). A ``grad_fn`` that cannot be traced at the
    call (one that branches in Python on ``dy``) runs when the gradient is taken instead, and
    each such call is a new op, compiled anew at the gradient.

    >>> import gradkit as gk, jax, jax.numpy as jnp
    >>> @gk.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return jnp.clip(dy, -0.5, 0.5)
    ...     return y, backward
    >>> float(jax.grad(lambda v: clip_gradients(v * v))(2.0))   # dy = 1 clipped to 0.5, times d(v*v)/dv = 4
    2.0
    """
    if f is None:
        return functools.partial(custom_gradient, variables_by_name=variables_by_name)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        # f runs at each call, as in TensorFlow: Variables or Python state it reads may differ
        # from one call to the next. What stays the same is found by comparing the programs.
        fk = functools.partial(f, **kwargs) if kwargs else f
        in_avals = tuple(aval_of(a) for a in args)
        variables, forward, out_tree = _trace_forward(fk, in_avals)
        # grad_fn's variables= list, and its gradients, in a fixed order that does not depend on
        # the order f reads them in: creation order (TensorFlow's usual eager order for Variables
        # created one after another, such as a layer's kernel and bias), or by name as TensorFlow's
        # tf.function passes them.
        variables = tuple(
            sorted(variables, key=(lambda v: (v.name, v._uid)) if variables_by_name else (lambda v: v._uid))
        )
        var_values = tuple(v.value for v in variables)
        if variables:
            var_avals = tuple(aval_of(x) for x in var_values)
            forward, out_tree = trace(_forward_fn(fk, variables), (*var_avals, *in_avals))
        else:
            var_avals = ()
        dy_avals = tuple(_cotangent_aval(a) for a in forward.out_avals)
        try:
            backward, grads_tree = trace(_backward_fn(fk, variables, len(args)), (*var_avals, *in_avals, *dy_avals))
        except Exception:
            # grad_fn cannot be traced now (it branches on dy's value, or raises): it runs at the
            # gradient, as before, on a custom_vjp of its own (an error surfaces there too).
            return frames.apply(_build(fk, variables), var_values, *args)
        call = _interned_op(forward, out_tree, backward, grads_tree, len(variables), getattr(f, "__name__", "f"))
        var_none, args_none = _returned_none(grads_tree, len(args))
        var_values = tuple(_cut(v) if none else v for v, none in zip(var_values, var_none))
        args = tuple(_cut(runtime(a)) if none else runtime(a) for a, none in zip(args, args_none))
        fwd_consts, bwd_consts = tuple(map(array_const, forward.consts)), tuple(map(array_const, backward.consts))
        return frames.apply(call, fwd_consts, bwd_consts, var_values, *args)

    return wrapper


def _returned_none(grads_tree, n_inputs: int) -> tuple[list[bool], list[bool]]:
    """Which Variables and inputs ``grad_fn`` returns None for, from its results' structure."""
    skeleton = jax.tree_util.tree_unflatten(grads_tree, [0] * grads_tree.num_leaves)
    var_grads, input_grads = skeleton[0], skeleton[1 : 1 + n_inputs]
    return [g is None for g in var_grads], [g is None for g in input_grads]


def grad_fn_returned_none(x):
    """An input whose gradient ``grad_fn`` returned as None, cut from the call as TensorFlow
    cuts it: a tape gives None for it unless another path reaches it (jax.grad gives zeros)."""
    return jax.lax.stop_gradient(x)


def _cut(x):
    return frames.apply(grad_fn_returned_none, x)


def _pair(f, returned) -> tuple:
    """``f``'s ``(y, grad_fn)``; anything else is refused (unpacking an array would take its rows)."""
    if isinstance(returned, (tuple, list)) and len(returned) == 2 and callable(returned[1]):
        return tuple(returned)
    name = getattr(f, "__name__", "the function")
    raise _errors.GradkitTypeError(
        f"a function decorated with custom_gradient must return (y, grad_fn), a pair of its output and the "
        f"function that maps the output's gradient dy to the inputs' gradients, but {name} returned "
        f"{f'an array of shape {tuple(returned.shape)}' if hasattr(returned, 'shape') else type(returned).__name__}. "
        "End it with `return y, grad_fn`."
    )


def _cotangent_aval(aval) -> jax.ShapeDtypeStruct:
    # jax hands the backward a float0 cotangent for an integer or boolean output.
    if jnp.issubdtype(aval.dtype, jnp.inexact):
        return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)
    return jax.ShapeDtypeStruct(aval.shape, jax.dtypes.float0)


def _constant(var) -> None:
    """A Variable that only ``grad_fn`` reads is a constant of it, read when ``f`` is called."""


def _trace_forward(f, in_avals) -> tuple[tuple[Variable, ...], ClosedJaxpr, object]:
    """The Variables ``f`` reads, and, when it reads none, its program and output structure."""
    try:
        return discover(lambda *xs: _pair(f, f(*xs))[0], in_avals)
    except frames.TRACER_VALUE_ERRORS as e:
        raise _errors.GradkitTypeError(
            "a function decorated with custom_gradient is traced with abstract values to build its "
            "jax.custom_vjp, so it cannot branch or loop in Python on its inputs' values (or call "
            ".numpy() on them). Use jnp.where / jax.lax.cond / jax.lax.fori_loop inside it, or compute "
            "the branch outside and pass it in as a keyword argument."
        ) from e


def _forward_fn(f, variables):
    n = len(variables)

    def forward(*flat):
        frame = StateFrame(State._make(variables, flat[:n]), strict=False, on_unknown_read=_constant)
        with frame:
            y, _ = _pair(f, f(*flat[n:]))
            return values_of(y)

    return forward


def _backward_fn(f, variables, n_inputs):
    n = len(variables)

    def backward(*flat):
        # As in _build's bwd: f runs again to make grad_fn, under the Variable values the
        # forward saw, so a derivative of the backward with respect to them is exact.
        var_values, xs, dys = flat[:n], flat[n : n + n_inputs], flat[n + n_inputs :]
        frame = StateFrame(State._make(variables, var_values), strict=False, on_unknown_read=_constant)
        with frame:
            _, grad_fn = _pair(f, f(*xs))
            input_grads, var_grads = _grad_caller(grad_fn, variables)(dys)
        return (_checked_variable_shapes(var_grads, variables), *_checked_shapes(_as_tuple(input_grads, n_inputs), xs))

    return backward


def _interned_op(forward: ClosedJaxpr, out_tree, backward: ClosedJaxpr, grads_tree, n_vars: int, name: str):
    """The custom_vjp function of these programs: equal programs give the very same function
    object, as a recording tape keys its ops (and so its compiled programs) by it."""
    key = ("custom_gradient", *program_key(forward), out_tree, *program_key(backward), grads_tree, n_vars)
    return intern(key, lambda: _from_programs(forward.jaxpr, out_tree, backward.jaxpr, grads_tree, n_vars, name))


_op_ids = itertools.count()


def _unique_name(name: str) -> str:
    # A custom_vjp appears by name in the program of a function that calls it (a custom_gradient
    # function inside another): the name must tell rules apart.
    return f"gradkit_custom_gradient_{next(_op_ids)}_{name}"


def _from_programs(fwd_jaxpr, out_tree, bwd_jaxpr, grads_tree, n_vars: int, name: str) -> Callable:
    """A ``custom_vjp`` function of (forward constants, backward constants, variable values, *inputs)."""

    def primal(fwd_consts, bwd_consts, var_values, *xs):
        out = jaxpr_as_fun(ClosedJaxpr(fwd_jaxpr, list(fwd_consts)))(*var_values, *xs)
        return jax.tree_util.tree_unflatten(out_tree, out)

    primal.__name__ = primal.__qualname__ = _unique_name(name)
    call = jax.custom_vjp(primal)

    def fwd(fwd_consts, bwd_consts, var_values, *xs):
        return primal(fwd_consts, bwd_consts, var_values, *xs), (bwd_consts, var_values, xs)

    def bwd(res, dy):
        bwd_consts, var_values, xs = res
        flat = jaxpr_as_fun(ClosedJaxpr(bwd_jaxpr, list(bwd_consts)))(*var_values, *xs, *jax.tree_util.tree_leaves(dy))
        var_grads, *input_grads = jax.tree_util.tree_unflatten(grads_tree, flat)
        return (None, None, var_grads, *input_grads)

    call.defvjp(fwd, bwd)
    return call


def _build(f: Callable, variables: tuple[Variable, ...]) -> Callable:
    """A ``custom_vjp`` function of (variable values, *inputs) that runs ``grad_fn`` at the gradient."""

    def run(var_values, *xs):
        frame = StateFrame(State._make(variables, var_values), strict=False)
        with frame:
            y, grad_fn = _pair(f, f(*xs))
            y = values_of(y)
        return y, grad_fn

    def primal(var_values, *xs):
        return run(var_values, *xs)[0]

    primal.__name__ = primal.__qualname__ = _unique_name(getattr(f, "__name__", "f"))
    call = jax.custom_vjp(primal)

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
            _, grad_fn = _pair(f, f(*xs))
            input_grads, var_grads = _grad_caller(grad_fn, variables)(dy)
        return (_checked_variable_shapes(var_grads, variables), *_checked_shapes(_as_tuple(input_grads, len(xs)), xs))

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
    if not isinstance(grads, (tuple, list)):
        if n == 1:
            return (grads,)
        # One tensor for several inputs: iterating it would split its rows among the inputs
        # (or fail on a scalar); TensorFlow counts it as one gradient and raises ValueError.
        grads = (grads,)
    grads = tuple(grads)
    if len(grads) != n:
        raise _errors.GradkitValueError(
            f"custom_gradient: grad_fn returned {len(grads)} input gradient(s) for {n} input(s). "
            "Return one gradient per input, in order."
        )
    return grads


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else tuple(jnp.shape(x))


def _checked_variable_shapes(grads, variables) -> tuple:
    """``grads`` (one per Variable grad_fn is given), once each has its Variable's shape."""
    for g, v in zip(grads, variables):
        if g is not None and _shape(g) != tuple(v.shape):
            raise _errors.GradkitValueError(
                f"custom_gradient: grad_fn returned a gradient of shape {_shape(g)} for Variable {v._label()}, whose "
                f"shape is {tuple(v.shape)}; each Variable's gradient must have that Variable's shape. Reduce or "
                "reshape it in grad_fn."
            )
    return tuple(grads)


def _checked_shapes(grads, xs):
    """``grads``, once each has its input's shape: jax's custom_vjp needs that, and would
    otherwise fail with an error that names neither grad_fn nor the input."""
    for k, (g, x) in enumerate(zip(grads, xs)):
        if g is None:
            continue
        g_shape, x_shape = _shape(g), _shape(x)
        if g_shape != x_shape:
            raise _errors.GradkitValueError(
                f"custom_gradient: grad_fn returned a gradient of shape {g_shape} for input {k}, whose shape is "
                f"{x_shape}; each input's gradient must have that input's shape. Reduce or reshape it in "
                "grad_fn (for a broadcast input, sum over the broadcast axes)."
            )
    return grads
