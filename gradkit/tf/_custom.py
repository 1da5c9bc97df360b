"""``custom_gradient``, ``stop_gradient``, ``grad_pass_through``, ``vectorized_map``."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core import key_order
from gradkit._core.custom import custom_gradient as _gk_custom_gradient
from gradkit._core.custom import stop_gradient as _gk_stop_gradient
from gradkit._core.transforms import vmap as _gk_vmap
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor

from . import _name_scope, _random
from ._control import _over_leading_axis, _stacked
from ._control_compiled import refuse_unknown_length
from ._convert import convert, wrap
from ._graph_helpers import tapes_paused


def stop_gradient(input, name=None):  # noqa: A002  (TensorFlow's argument name)
    return wrap(_gk_stop_gradient(convert(input)))


def _value_of(x):
    if hasattr(type(x), "__gradkit_dense__"):
        x = convert(x)
    return x.__gradkit_value__() if isinstance(x, Tensor) else x


def custom_gradient(f=None):
    """``tf.custom_gradient``: ``f(*x)`` returns ``(y, grad_fn)``.

    If ``f`` reads Variables, ``grad_fn(dy, variables=None)`` must return
    ``(input_grads, variable_grads)``; a ``grad_fn`` without ``variables=`` raises TypeError.
    ``f`` runs at each call, and calls with the same programs share one compiled program
    under a tape (see ``gradkit.custom_gradient``).

    >>> import gradkit.tf as tf
    >>> @tf.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return tf.clip_by_norm(dy, 0.5)
    ...     return y, backward
    >>> v = tf.Variable(2.0)
    >>> with tf.GradientTape() as t:
    ...     output = clip_gradients(v * v)
    >>> float(t.gradient(output, v))
    2.0
    """
    if f is None:
        return custom_gradient
    return functools.update_wrapper(_CustomGradient(f), f)


def _conj(values):
    """The complex arrays among ``values`` conjugated (TensorFlow's gradients of complex values are
    the conjugates of jax's cotangents)."""
    return jax.tree_util.tree_map(lambda v: jnp.conj(v) if jnp.iscomplexobj(v) else v, values)


def _values(tree):
    """Tensors (and ``tf.IndexedSlices``, densified) as their values, for the jax code below."""
    return jax.tree_util.tree_map(
        _value_of, tree, is_leaf=lambda x: isinstance(x, Tensor) or hasattr(type(x), "__gradkit_dense__")
    )


class _CustomGradient:
    """A function decorated with ``tf.custom_gradient``; on a class, a method (bound to its
    instance, which is not an input), as TensorFlow binds it."""

    def __init__(self, f):
        self._f = f

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.update_wrapper(_CustomGradient(self._f.__get__(instance, owner)), self._f)

    def __call__(self, *args, **kwargs):
        f = self._f
        # As in TensorFlow, f takes its arguments as they came (a list stays a list) and each
        # tensor in them is an input: grad_fn returns one gradient per tensor, in the order
        # tf.nest.flatten lists them, in any nesting.
        leaves, tree = jax.tree_util.tree_flatten(args, is_leaf=_is_input)
        n_inputs = len(leaves)
        # gradkit runs f more than once per call (TensorFlow once): each run draws the same
        # random numbers, so a grad_fn closing over a draw sees the forward's.
        replay = _random.replaying()

        @functools.wraps(f)
        def run(*xs, **kws):
            # f and its grad_fn take tensors, as in TensorFlow: a tape inside grad_fn watches dy
            # and records Python operators on it, and x.get_shape() works. The gradient flows
            # through the inputs (and Variables) alone, as in TensorFlow: a tensor f closes over
            # or takes as a keyword, recorded by a tape outside, is a constant of it.
            inputs = key_order.like(args, jax.tree_util.tree_unflatten(tree, wrap(xs, traced=True)))
            with replay, tapes_paused():
                y, grad_fn = f(*inputs, **kws)

            @functools.wraps(grad_fn)
            def tensor_grad_fn(*dys, **grad_kws):
                # grad_fn is written in TensorFlow's convention for complex values, the
                # conjugate of jax's cotangents: dy goes in conjugated, its gradients come out so.
                with tapes_paused():
                    result = grad_fn(*wrap(_conj(dys), traced=True), **grad_kws)
                if "variables" in grad_kws:
                    input_grads, variable_grads = result
                    return _conj(_flat_input_grads(input_grads, n_inputs)), _conj(_values(variable_grads))
                return _conj(_flat_input_grads(result, n_inputs))

            return _values(y), tensor_grad_fn

        # grad_fn's variables= list: sorted by name inside tf.function, as TensorFlow's graph
        # passes it; creation order eagerly (TensorFlow's eager order is that of a set of
        # Variable references: usually creation order for Variables created one after another).
        by_name = _name_scope.in_graph()
        return wrap(_gk_custom_gradient(run, variables_by_name=by_name)(*[convert(a) for a in leaves], **kwargs))


def _is_input(x) -> bool:
    return isinstance(x, Tensor) or hasattr(x, "_read_value") or hasattr(type(x), "__gradkit_dense__")


def _is_gradient(x) -> bool:
    return x is None or _is_input(x)


def _flat_input_grads(grads, n_inputs: int) -> tuple:
    """grad_fn's input gradients as TensorFlow counts them: flattened (tf.nest.flatten), one per
    input tensor, None kept (it cuts that input, as in TensorFlow)."""
    flat = jax.tree_util.tree_leaves(grads, is_leaf=_is_gradient)
    if len(flat) != n_inputs:
        raise _errors.GradkitValueError(
            f"custom_gradient: grad_fn returned {len(flat)} input gradient(s) for {n_inputs} input tensor(s) "
            "(TensorFlow counts the tensors of both in tf.nest.flatten order and raises ValueError). Return one "
            "gradient per input tensor, e.g. a list [dx0, dx1] for f(x0, x1) or for f([x0, x1])."
        )
    return tuple(_value_of(g) for g in flat)


@jax.custom_jvp
def _pass_through(x, y):
    return y  # f(x) itself: its value, dtype and shape


@_pass_through.defjvp
def _pass_through_jvp(primals, tangents):
    # The identity from x to y: x's tangent brought to y's shape (summed over the axes y does not
    # have, broadcast over those it adds), so that the gradient for x is y's, broadcast to x's
    # shape. y's own tangent (f's derivative) is dropped, as TensorFlow's gradient drops it.
    (_, y), (dx, _) = primals, tangents
    if not jnp.issubdtype(y.dtype, jnp.inexact):
        return y, np.zeros(y.shape, jax.dtypes.float0)
    extra = dx.ndim - y.ndim
    if extra > 0:
        dx = jnp.sum(dx, axis=tuple(range(extra)))
    ones = tuple(i for i, (a, b) in enumerate(zip(dx.shape, y.shape[max(-extra, 0) :])) if b == 1 and a != 1)
    if ones:
        dx = jnp.sum(dx, axis=ones, keepdims=True)
    return y, jnp.broadcast_to(dx, y.shape).astype(y.dtype)


def _passes_through(x_shape, y_shape) -> bool:
    try:
        return np.broadcast_shapes(tuple(x_shape), tuple(y_shape)) in (tuple(x_shape), tuple(y_shape))
    except ValueError:
        return False


def grad_pass_through(f):
    """Forward ``f(x)``, backward the identity (``tf.grad_pass_through``).

    The value is ``f(x)`` itself (its dtype and shape). The gradient for ``x`` is the output's,
    broadcast to ``x``'s shape where ``f`` changes the shape (TensorFlow hands the output's
    gradient over unshaped); an integer output has no gradient (TensorFlow gives an integer one).

    >>> import gradkit.tf as tf
    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as t:
    ...     y = grad_pass_through(tf.math.round)(x * 1.3)
    >>> float(y), round(float(t.gradient(y, x)), 6)
    (3.0, 1.3)
    """

    @functools.wraps(f)
    def wrapper(x, *args, **kwargs):
        xv = convert(x)
        y = f(x, *args, **kwargs)
        if hasattr(y, "_read_value"):  # f assigned a Variable and returned it
            y = y.value
        y = convert(y)
        if not _passes_through(xv.shape, y.shape):
            return wrap(stop_gradient(y))  # shapes no gradient can pass between: none passes
        return wrap(lift(_pass_through)(xv, stop_gradient(y)))

    return wrapper


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``tf.vectorized_map``: ``fn`` mapped over the first axis with ``gk.vmap`` (one recorded op)."""

    leaves = jax.tree_util.tree_map(convert, elems, is_leaf=lambda e: isinstance(e, Tensor))
    # gk.vmap reads the Variables fn uses as inputs of the mapped call, which a recording tape
    # then records (and differentiates) as one op. A tf.random draw in fn is each element's
    # own, as in TensorFlow (whose vectorization draws with the batch prepended to the shape).
    size = jax.tree_util.tree_leaves(leaves, is_leaf=lambda e: isinstance(e, Tensor))[0].shape[0]
    refuse_unknown_length(size, "tf.vectorized_map")
    replay = _random.replaying(op_seeds=False)

    returned = {}

    def element(index, xs):
        # fn takes tensors, as in TensorFlow: a tape inside it records Python operators
        # (x * x, x[None]) on its element.
        with replay.at(index):
            returned["out"] = fn(wrap(xs, traced=True))
            return returned["out"]

    try:
        mapped = wrap(_gk_vmap(element)(np.arange(size, dtype=np.uint32), leaves))
        return key_order.like(returned["out"], mapped)  # fn's dicts in the order it built them
    except _errors.GradkitError:
        # What gk.vmap cannot vectorise (fn closes over a tensor a tape records, draws from a
        # tf.random.Generator, calls tf.py_function): as TensorFlow falls back to a loop there,
        # one call per element, recorded op by op. An error of fn's own is raised by the loop.
        if not fallback_to_while_loop:
            raise
        return _stacked([element(i, row) for i, row in enumerate(_over_leading_axis(leaves))])
