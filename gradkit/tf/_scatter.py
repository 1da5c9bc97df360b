"""Scatter updates: ``tf.tensor_scatter_nd_*``, ``tf.IndexedSlices`` and the rows they write.

``indices`` has shape ``batch + (K,)``: each of its rows indexes the first ``K`` axes of the
tensor, and ``updates`` has shape ``batch + tensor.shape[K:]``. Written with ``.at[]``; the
gradients are TensorFlow's: the tensor's is zero at the entries written, and every update gets
the upstream gradient gathered at its index, even one that a repeated index overwrote (jax's
rule for ``.at[].set`` gives it to the update written last only, and a Variable's
``scatter_update``/``scatter_nd_update``, an assignment that TensorFlow does not differentiate,
keeps that exact rule).

>>> import gradkit.tf as tf
>>> tf.tensor_scatter_nd_add(tf.zeros([3]), [[0], [0], [2]], [1.0, 2.0, 5.0]).numpy().tolist()
[3.0, 0.0, 5.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import TENSOR_LIKE, call, convert, known_value, static_ints
from ._indexing import bad_indices, check_indices, out_of_range_dropped
from ._segment import _segment_prod


def _nd_index(indices):
    return tuple(jnp.moveaxis(indices, -1, 0))


@jax.custom_vjp
def _set_nd(tensor, indices, updates):
    return tensor.at[_nd_index(indices)].set(updates)


def _set_nd_fwd(tensor, indices, updates):
    return _set_nd(tensor, indices, updates), indices


def _set_nd_bwd(indices, upstream):
    # TensorFlow's _TensorScatterUpdateGrad: tensor_scatter_nd_update(upstream, indices, 0) for
    # the tensor and gather_nd(upstream, indices) for the updates; the indices have none.
    index = _nd_index(indices)
    # An index dropped from the scatter (out of range) gets no gradient: read 0 there, not a clamped row.
    return upstream.at[index].set(0), None, upstream.at[index].get(mode="fill", fill_value=0)


_set_nd.defvjp(_set_nd_fwd, _set_nd_bwd)


def _scatter_nd(tensor, indices, updates, how, ignore=False):
    # An index out of range is skipped: TensorFlow's bad_indices_policy='IGNORE', and what an
    # index traced inside tf.function that the checks could not see does (TensorFlow raises when
    # it runs); a negative one too, which jax's .at[] would count from the end and write.
    indices = out_of_range_dropped(indices, tensor.shape[: indices.shape[-1]])
    if how in ("max", "min") and jnp.issubdtype(updates.dtype, jnp.floating):
        # TensorFlow's kernel keeps the entry unless the update compares above (below) it, so a
        # NaN update changes nothing (a NaN entry stays); jax's maximum would write the NaN.
        updates = jnp.where(jnp.isnan(updates), -jnp.inf if how == "max" else jnp.inf, updates)
    if how == "multiply":
        return _multiplied(tensor, indices, updates)
    if ignore:
        return getattr(tensor.at[_nd_index(indices)], how)(updates, mode="drop")
    if how in ("set", "assign") and jnp.issubdtype(tensor.dtype, jnp.inexact):
        # The updates as the kernel's: the tensor's dtype, one per index (jax sums a broadcast back).
        shape = tuple(indices.shape[:-1]) + tuple(tensor.shape[indices.shape[-1] :])
        updates = jnp.broadcast_to(updates.astype(tensor.dtype), shape)
        if how == "assign":
            # A Variable's scatter assignment: jax's rule, exact for the value written, so the
            # update a repeated index overwrote has no gradient (TensorFlow gives none at all).
            return tensor.at[_nd_index(indices)].set(updates)
        return _set_nd(tensor, indices, updates)
    return getattr(tensor.at[_nd_index(indices)], "set" if how == "assign" else how)(updates)


def _multiplied(tensor, indices, updates):
    """Each indexed entry times every update at its index, one update at a time (jax
    differentiates a multiplying scatter only where indices are unique)."""
    flat_indices = indices.reshape((-1, indices.shape[-1]))
    flat_updates = updates.reshape((flat_indices.shape[0], *updates.shape[indices.ndim - 1 :]))

    def one(i, x):
        index = tuple(flat_indices[i, j] for j in range(flat_indices.shape[1]))
        return x.at[index].multiply(flat_updates[i], unique_indices=True, mode="drop")

    return jax.lax.fori_loop(0, flat_indices.shape[0], one, tensor)


def _scatter(tensor, indices, updates, how, what, policy=""):
    tensor, indices = convert(tensor), convert(indices)
    # A tensor keeps its dtype (another one is refused below); numbers and NumPy arrays take the
    # tensor's, as TensorFlow converts them.
    updates = convert(updates) if isinstance(updates, TENSOR_LIKE) else convert(updates, tensor.dtype)
    k = indices.shape[-1] if indices.ndim else 0
    want = tuple(indices.shape[:-1]) + tuple(tensor.shape[k:])
    # jax's .at[] would broadcast updates and cast their dtype; TensorFlow raises.
    if k > tensor.ndim or tuple(updates.shape) != want or updates.dtype != tensor.dtype or not updates.ndim:
        raise _errors.InvalidArgumentValueError(
            f"{what}: updates of shape {tuple(updates.shape)} and dtype {updates.dtype} with indices of shape "
            f"{tuple(indices.shape)} into a tensor of shape {tuple(tensor.shape)} and dtype {tensor.dtype}; "
            "TensorFlow requires updates.shape == indices.shape[:-1] + tensor.shape[indices.shape[-1]:] "
            f"(here {want}), of rank at least one (indices [[i]] with updates [u] for one element), and the "
            "tensor's dtype."
        )
    if bad_indices(policy, what):
        return call(_scatter_nd, tensor, indices, updates, how=how, ignore=True)
    # jax's .at[] drops an index past the end and wraps a negative one; TensorFlow raises.
    check_indices(indices, tensor.shape[:k], what)
    return call(_scatter_nd, tensor, indices, updates, how=how)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    return _scatter(tensor, indices, updates, "set", "tf.tensor_scatter_nd_update")


# bad_indices_policy (not tensor_scatter_nd_update's, as in TensorFlow): an index out of range
# raises ('', 'DEFAULT', 'ERROR', TensorFlow's default on the CPU) or is skipped ('IGNORE').
def tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="", name=None):
    return _scatter(tensor, indices, updates, "add", "tf.tensor_scatter_nd_add", bad_indices_policy)


def tensor_scatter_nd_sub(tensor, indices, updates, bad_indices_policy="", name=None):
    if not isinstance(updates, TENSOR_LIKE):
        updates = convert(updates, convert(tensor).dtype)
    return _scatter(tensor, indices, -convert(updates), "add", "tf.tensor_scatter_nd_sub", bad_indices_policy)


def tensor_scatter_nd_max(tensor, indices, updates, bad_indices_policy="", name=None):
    return _scatter(tensor, indices, updates, "max", "tf.tensor_scatter_nd_max", bad_indices_policy)


def tensor_scatter_nd_min(tensor, indices, updates, bad_indices_policy="", name=None):
    return _scatter(tensor, indices, updates, "min", "tf.tensor_scatter_nd_min", bad_indices_policy)


def _scatter_into_zeros(indices, updates, shape, ignore=False):
    # Out of range, negative too, is skipped (as in _scatter_nd).
    zeros = jnp.zeros(shape, updates.dtype).at[_nd_index(out_of_range_dropped(indices, shape[: indices.shape[-1]]))]
    mode = "drop"
    if updates.dtype == jnp.bool_:
        return zeros.max(updates, mode=mode)  # duplicates are or-ed, as TensorFlow's bool scatter_nd
    return zeros.add(updates, mode=mode)


def scatter_nd(indices, updates, shape, bad_indices_policy="", name=None):
    """``tf.scatter_nd``: a zero tensor of ``shape`` with ``updates`` added at ``indices``
    (duplicates sum, as in TensorFlow; an index out of range raises, or is skipped with
    ``bad_indices_policy='IGNORE'``)."""
    indices, updates, shape = convert(indices), convert(updates), static_ints(shape)
    if not jnp.issubdtype(indices.dtype, jnp.integer):
        raise _errors.GradkitTypeError(
            f"tf.scatter_nd takes integer indices, but got dtype {indices.dtype}. Cast them: tf.cast(indices, tf.int32)."
        )
    k = indices.shape[-1] if indices.ndim else 0
    want = tuple(indices.shape[:-1]) + shape[k:]
    if k > len(shape) or tuple(updates.shape) != want or not updates.ndim:
        raise _errors.InvalidArgumentValueError(
            f"tf.scatter_nd: updates of shape {tuple(updates.shape)} with indices of shape {tuple(indices.shape)} "
            f"into shape {shape}; TensorFlow requires updates.shape == indices.shape[:-1] + shape[indices.shape[-1]:] "
            f"(here {want}), of rank at least one (indices [[i]] with updates [u] for one element)."
        )
    if bad_indices(bad_indices_policy, "tf.scatter_nd"):
        return call(_scatter_into_zeros, indices, updates, shape=shape, ignore=True)
    check_indices(indices, shape[:k], "tf.scatter_nd")
    return call(_scatter_into_zeros, indices, updates, shape=shape)


class IndexedSlices:
    """``tf.IndexedSlices(values, indices, dense_shape=None)``: rows ``indices`` of a tensor hold ``values``."""

    def __init__(self, values, indices, dense_shape=None):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"

    @property
    def dtype(self):
        return convert(self.values).dtype

    @property
    def shape(self):
        """The dense tensor's shape: ``dense_shape``, else the values' with an unknown first size."""
        from ._convert import TensorShape

        if self.dense_shape is not None:
            return TensorShape(static_ints(self.dense_shape))
        return TensorShape((None, *convert(self.values).shape[1:]))

    def __neg__(self):
        from . import _math

        return IndexedSlices(_math.negative(self.values), self.indices, self.dense_shape)

    def __gradkit_dense__(self):
        """The dense tensor (``tf.convert_to_tensor``): each row the sum of the values at its index."""
        if self.dense_shape is None:
            raise _errors.GradkitValueError(
                "tf.convert_to_tensor of a tf.IndexedSlices without dense_shape: the number of rows is unknown, "
                "and TensorFlow refuses it too. Give dense_shape=: tf.IndexedSlices(values, indices, dense_shape)."
            )
        from ._segment import unsorted_segment_sum

        return unsorted_segment_sum(self.values, self.indices, static_ints(self.dense_shape)[0])


_MSG_NOT_SLICES = (
    "Variable.{method} takes a tf.IndexedSlices (rows `indices` get `values`), but got {got}. "
    "Pass tf.IndexedSlices(values, indices), or call Variable.scatter_nd_update(indices, updates) "
    "with indices of shape (n, 1)."
)


def slices_of(sparse_delta, method: str):
    """``(indices, values)`` of an IndexedSlices-like argument, or a clear error."""
    if not (hasattr(sparse_delta, "indices") and hasattr(sparse_delta, "values")):
        raise _errors.GradkitTypeError(_MSG_NOT_SLICES.format(method=method, got=type(sparse_delta).__name__))
    return sparse_delta.indices, sparse_delta.values


def _rows(tensor, indices, values, how):
    if how == "assign":
        return _scatter_nd(tensor, indices[..., None], values, how)  # a row's index is a 1-tuple
    if how in ("multiply", "divide") and jnp.issubdtype(tensor.dtype, jnp.inexact):
        # TensorFlow applies a repeated row's values one after another: the row is multiplied by
        # their product. jax differentiates a scatter product only at distinct indices, so the
        # product per row is a segment product (with TensorFlow's gradient where values are 0).
        values = jnp.broadcast_to(values, tuple(indices.shape) + tuple(tensor.shape[1:])).astype(tensor.dtype)
        if how == "divide":
            values = 1 / values
        rows = values.reshape((-1, *tensor.shape[1:]))
        return tensor * _segment_prod(rows, indices.reshape(-1), tensor.shape[0], False)
    if how == "divide":
        # Integers divide toward zero, as C and TensorFlow do (5 / -2 is -2); dividing by each of a
        # repeated row's values in turn is dividing by their product.
        values = jnp.broadcast_to(values, tuple(indices.shape) + tuple(tensor.shape[1:])).astype(tensor.dtype)
        rows = values.reshape((-1, *tensor.shape[1:]))
        return jax.lax.div(tensor, jax.ops.segment_prod(rows, indices.reshape(-1), tensor.shape[0]))
    return getattr(tensor.at[indices], how)(values)


def scatter_rows(tensor, indices, values, how, what="Variable.scatter_update"):
    """Rows ``indices`` (any shape) of ``tensor`` set to ``values`` (``how='assign'``), or combined
    with them (``how``: add, max, min, multiply, divide)."""
    tensor, indices, values = convert(tensor), convert(indices), convert(values)
    check_indices(indices, tensor.shape[0], what)
    want = tuple(indices.shape) + tuple(tensor.shape[1:])
    if values.ndim and tuple(values.shape) != want:
        raise _errors.InvalidArgumentValueError(
            f"{what} got updates of shape {tuple(values.shape)} for indices of shape {tuple(indices.shape)} into a "
            f"Variable of shape {tuple(tensor.shape)}: TensorFlow requires a scalar or updates.shape == "
            f"indices.shape + shape[1:] (here {want}). Reshape or broadcast them: tf.broadcast_to(updates, {list(want)})."
        )
    if how == "divide":
        divisors = known_value(values)
        if divisors is not None and not np.all(np.asarray(divisors) != 0):
            raise _errors.InvalidArgumentValueError(
                f"{what} got updates that contain 0: TensorFlow refuses to divide by them. Leave those rows out "
                "of the indices."
            )
    return call(_rows, tensor, indices, values, how=how)
