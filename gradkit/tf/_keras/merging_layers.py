"""``tf.keras.layers``' merging layers: ``Add``, ``Subtract``, ``Multiply``, ``Average``,
``Maximum``, ``Minimum``, ``Concatenate``, ``Dot`` and their functional forms (``add``, ...).

Each takes a list of tensors and merges them in one recorded op. As in Keras 3, the
elementwise merges broadcast, and an input of lower rank gets size-1 axes inserted after its
batch axis first; ``Maximum``/``Minimum`` send a tie's gradient to the earlier input, as
TensorFlow's ``maximum`` does.

>>> import gradkit.tf as tf
>>> a, b = tf.constant([[1.0, 5.0]]), tf.constant([[3.0, 2.0]])
>>> tf.keras.layers.Add()([a, b]).numpy().tolist(), tf.keras.layers.maximum([a, b]).numpy().tolist()
([[4.0, 7.0]], [[3.0, 5.0]])
>>> tf.keras.layers.Dot(axes=1)([a, b]).numpy().tolist()
[[13.0]]
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from gradkit import _errors

from .. import _math
from .._convert import call
from .._grad_kernels import with_tf_gradient_kernel
from . import functional, layer_config, masking
from .base_layer import Layer
from .layer_names import KerasNamedLayer

_rsqrt = with_tf_gradient_kernel(jax.lax.rsqrt)  # TensorFlow's RsqrtGrad: 0 for a zero upstream


def _with_batch_axis_first(inputs):
    """Keras' rank rule: size-1 axes inserted after the batch axis until every input has the
    largest rank."""
    rank = max(x.ndim for x in inputs)
    return [x.reshape(x.shape[:1] + (1,) * (rank - x.ndim) + x.shape[1:]) if x.ndim < rank else x for x in inputs]


def _merge(*inputs, kind):
    xs = _with_batch_axis_first(inputs)
    if kind == "add":
        return functools.reduce(jnp.add, xs)
    if kind == "subtract":
        return xs[0] - xs[1]
    if kind == "multiply":
        return functools.reduce(jnp.multiply, xs)
    if kind == "average":
        return functools.reduce(jnp.add, xs) / len(xs)
    if kind == "maximum":
        return functools.reduce(_math._tf_maximum, xs)
    return functools.reduce(_math._tf_minimum, xs)


def _masked_merge(*arrays, kind, present):
    """Keras' Multiply, Maximum and Minimum of inputs some of which carry masks (``present``
    says which; their masks follow the inputs): Multiply takes a masked entry as 1, and 0 where
    every input is masked when all carry masks; Maximum and Minimum take the other input's
    value where one is masked (``_apply_merge_op_and_or_mask``)."""
    xs = _with_batch_axis_first(arrays[: len(present)])
    given = iter(arrays[len(present) :])
    masks = [jnp.broadcast_to(next(given).astype(bool)[..., None], x.shape) if p else None for x, p in zip(xs, present)]
    if kind == "multiply":
        out = functools.reduce(
            jnp.multiply, [x if m is None else jnp.where(m, x, jnp.ones_like(x)) for x, m in zip(xs, masks)]
        )
        if all(present):
            return jnp.where(functools.reduce(jnp.logical_or, masks), out, jnp.zeros_like(out))
        return out
    op = _math._tf_maximum if kind == "maximum" else _math._tf_minimum
    out, out_mask = xs[0], masks[0]
    for x, m in zip(xs[1:], masks[1:]):
        if m is not None:
            x = jnp.where(m, x, out)
        if out_mask is not None:
            out = jnp.where(out_mask, out, x)
        out_mask = None if m is None or out_mask is None else jnp.logical_or(out_mask, m)
        out = op(out, x)
    return out


def _elementwise_shape(shape1, shape2, what):
    """Keras' ``_compute_elemwise_op_output_shape`` (shapes without the batch axis)."""
    if len(shape1) < len(shape2):
        shape1, shape2 = shape2, shape1
    if not shape2:
        return tuple(shape1)
    out = list(shape1[: len(shape1) - len(shape2)])
    for i, j in zip(shape1[len(shape1) - len(shape2) :], shape2):
        if i is None or j is None:
            out.append(None)
        elif i == 1 or j == 1:
            out.append(j if i == 1 else i)
        elif i != j:
            raise _errors.GradkitValueError(
                f"{what}: inputs have incompatible shapes {tuple(shape1)} and {tuple(shape2)} (without the batch "
                "axis), as Keras refuses. Pass inputs whose shapes broadcast."
            )
        else:
            out.append(i)
    return tuple(out)


def _any_mask(*masks):
    return jnp.any(jnp.stack([m.astype(bool) for m in masks]), axis=0)


def _concatenated_mask(inputs, masks, axis):
    full = []
    for x, m in zip(inputs, masks):
        if m is None:
            full.append(jnp.ones(x.shape, bool))
        elif m.ndim < x.ndim:
            full.append(jnp.broadcast_to(m.astype(bool)[..., None], x.shape))
        else:
            full.append(m.astype(bool))
    return jnp.any(jnp.concatenate(full, axis=axis), axis=-1)


class _Merge(KerasNamedLayer, Layer):
    """A merge of a list of tensors of broadcastable shapes."""

    _kind = ""

    def _check_list(self, inputs, count=None):
        what = f"{type(self).__name__} '{self.name}'"
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise _errors.GradkitValueError(
                f"{what} merges a list of tensors, as Keras' merge layers do, but got {type(inputs).__name__}. "
                "Call it as layer([x1, x2, ...])."
            )
        if count is not None and len(inputs) != count:
            raise _errors.GradkitValueError(
                f"{what} takes exactly {count} inputs, as in Keras, but got {len(inputs)}. Pass a list of {count}."
            )
        # Keras compares the batch sizes once, when its first call builds the layer, and a symbolic
        # input's unknown size matches any (a constant of batch size 1 merged with tf.keras.Input).
        batch_sizes = {x.shape[0] for x in inputs if len(x.shape)}
        if not self.__dict__.get("_keras_batch_checked") and not functional.batch_size_unknown():
            if len(batch_sizes) > 1:
                raise _errors.GradkitValueError(
                    f"{what} cannot merge tensors with different batch sizes (shapes "
                    f"{[tuple(x.shape) for x in inputs]}), as Keras cannot."
                )
        self.__dict__["_keras_batch_checked"] = True
        return what

    def compute_mask(self, inputs, mask=None):
        """Keras': the steps any input keeps (an OR of the masks; None unless every input has one)."""
        if not mask or any(m is None for m in mask):
            return None
        return call(_any_mask, *mask)

    def call(self, inputs):
        what = self._check_list(inputs, 2 if self._kind == "subtract" else None)
        self.compute_output_shape([tuple(x.shape) for x in inputs], what)
        if self._kind in ("multiply", "maximum", "minimum"):
            masks = [masking.get_keras_mask(x) for x in inputs]
            if any(m is not None for m in masks):
                present = tuple(m is not None for m in masks)
                given = [m for m in masks if m is not None]
                return call(_masked_merge, *inputs, *given, kind=self._kind, present=present)
        return call(_merge, *inputs, kind=self._kind)

    def compute_output_shape(self, input_shape, _what=None):
        what = _what or f"{type(self).__name__} '{self.name}'"
        shapes = [tuple(s) for s in input_shape]
        out = shapes[0][1:]
        for shape in shapes[1:]:
            out = _elementwise_shape(out, shape[1:], what)
        batch_sizes = {s[0] for s in shapes if s} - {None}
        return (batch_sizes.pop() if len(batch_sizes) == 1 else None, *out)


class Add(_Merge):
    """``tf.keras.layers.Add()``: the sum of the inputs."""

    _kind = "add"


class Subtract(_Merge):
    """``tf.keras.layers.Subtract()``: ``inputs[0] - inputs[1]`` (exactly two inputs)."""

    _kind = "subtract"


class Multiply(_Merge):
    """``tf.keras.layers.Multiply()``: the elementwise product of the inputs."""

    _kind = "multiply"


class Average(_Merge):
    """``tf.keras.layers.Average()``: the elementwise mean of the inputs."""

    _kind = "average"


class Maximum(_Merge):
    """``tf.keras.layers.Maximum()``: the elementwise maximum (a tie's gradient to the earlier input)."""

    _kind = "maximum"


class Minimum(_Merge):
    """``tf.keras.layers.Minimum()``: the elementwise minimum (a tie's gradient to the earlier input)."""

    _kind = "minimum"


def _concatenate(*inputs, axis):
    return jnp.concatenate(inputs, axis=axis)


class Concatenate(_Merge):
    """``tf.keras.layers.Concatenate(axis=-1)``: the inputs joined along ``axis``; their other
    sizes must match."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        what = self._check_list(inputs)
        self.compute_output_shape([tuple(x.shape) for x in inputs], what)
        return call(_concatenate, *inputs, axis=int(self.axis))

    def compute_mask(self, inputs, mask=None):
        """Keras': each input's mask (all True where it has none) broadcast to its shape, joined
        along ``axis``, then whether any entry of the last axis is kept."""
        if mask is None or all(m is None for m in mask):
            return None
        return call(_concatenated_mask, list(inputs), list(mask), axis=int(self.axis))

    def compute_output_shape(self, input_shape, _what=None):
        what = _what or f"{type(self).__name__} '{self.name}'"
        shapes = [tuple(s) for s in input_shape]
        ranks = {len(s) for s in shapes}
        axis = self.axis
        ok = len(ranks) == 1 and -len(shapes[0]) <= axis < len(shapes[0])
        if ok:
            axis %= len(shapes[0])
            others = [[d for i, d in enumerate(s) if i != axis] for s in shapes]
            ok = all(a is None or b is None or a == b for other in others[1:] for a, b in zip(others[0], other))
        if not ok:
            raise _errors.GradkitValueError(
                f"{what} requires inputs with matching shapes except for the concatenation axis {self.axis}, as "
                f"Keras does, but got shapes {shapes}."
            )
        out = list(shapes[0])
        sizes = [s[axis] for s in shapes]
        out[axis] = None if None in sizes else sum(sizes)
        return tuple(out)


def _dot_axes(axes, ranks):
    """Keras' reading of ``axes``: an int is the same axis in both inputs; negative axes count
    from the end of each input."""
    if isinstance(axes, int):
        return [axes % r for r in ranks] if axes < 0 else [axes, axes]
    return [a % r if a < 0 else a for a, r in zip(axes, ranks)]


def _l2_normalize(x, axis):
    # Keras' ops.normalize: x * min(rsqrt(sum(x**2)), 1 / epsilon), epsilon = 1e-7.
    inverse_norm = _rsqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
    return x * _math._tf_minimum(inverse_norm, jnp.asarray(1.0 / 1e-7, x.dtype))


def _batch_dot(x, y, axes, normalize):
    """Keras' ``batch_dot``, step for step: the summed axis moved last in ``x`` and second in
    ``y``, a batched matmul, and a rank-1 result given a size-1 axis."""
    a0, a1 = axes
    if normalize:
        x, y = _l2_normalize(x, a0), _l2_normalize(y, a1)
    x_rank, y_rank = x.ndim, y.ndim
    if x_rank == 2:
        x, a0 = x[:, None, :], a0 + 1
    if y_rank == 2:
        y = y[:, :, None]
    x = jnp.moveaxis(x, a0, -1)
    y = jnp.moveaxis(y, a1, 1)
    x_mid, y_tail = x.shape[1:-1], y.shape[2:]
    out = jnp.matmul(x.reshape(x.shape[0], -1, x.shape[-1]), y.reshape(y.shape[0], y.shape[1], -1))
    out = out.reshape(out.shape[:1] + x_mid + y_tail)
    if x_rank == 2:
        out = out.squeeze(1)
    elif y_rank == 2:
        out = out.squeeze(-1)
    return out


class Dot(_Merge):
    """``tf.keras.layers.Dot(axes, normalize=False)``: the dot product of two inputs' samples
    along ``axes`` (an int, or one axis per input; never the batch axis 0), as Keras'
    ``batch_dot``; with ``normalize=True`` each input is L2-normalized along its axis first
    (the cosine similarity)."""

    def compute_mask(self, inputs, mask=None):
        return None  # the dot product sums the steps away (Keras')

    def __init__(self, axes, normalize=False, **kwargs):
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise _errors.GradkitTypeError(
                    f"Dot takes axes as an int or a list of two ints, as Keras does, but got axes={axes!r}."
                )
            if len(axes) != 2 or not all(isinstance(a, int) for a in axes):
                raise _errors.GradkitValueError(
                    f"Dot takes axes as an int or two ints (one axis per input), as Keras does, but got axes={axes!r}."
                )
        super().__init__(**kwargs)
        self.axes = axes
        self.normalize = normalize

    def _axes(self, shapes, what):
        ranks = [len(s) for s in shapes]
        if min(ranks) < 2:
            raise _errors.GradkitValueError(
                f"{what} takes inputs of rank 2 or more (a batch axis first), as Keras' batch_dot does, but got "
                f"shapes {[tuple(s) for s in shapes]}."
            )
        axes = _dot_axes(self.axes, ranks)
        if 0 in axes or any(not 0 <= a < r for a, r in zip(axes, ranks)):
            raise _errors.GradkitValueError(
                f"{what}: axes={self.axes!r} gives the axes {axes} of inputs of shapes {[tuple(s) for s in shapes]}; "
                "each must be an axis of its input other than the batch axis 0, as Keras requires."
            )
        d1, d2 = shapes[0][axes[0]], shapes[1][axes[1]]
        if d1 is not None and d2 is not None and d1 != d2:
            raise _errors.GradkitValueError(
                f"{what}: incompatible input shapes {[tuple(s) for s in shapes]}: size {d1} at axis {axes[0]} != "
                f"size {d2} at axis {axes[1]}, as Keras refuses. Pick axes of equal size."
            )
        return axes

    def call(self, inputs):
        what = self._check_list(inputs, 2)
        axes = self._axes([tuple(x.shape) for x in inputs], what)
        return call(_batch_dot, *inputs, axes=tuple(axes), normalize=bool(self.normalize))

    def compute_output_shape(self, input_shape, _what=None):
        what = _what or f"{type(self).__name__} '{self.name}'"
        shapes = [list(s) for s in input_shape]
        if len(shapes) != 2:
            raise _errors.GradkitValueError(f"{what} takes a list of 2 input shapes, but got {input_shape!r}.")
        axes = self._axes(shapes, what)
        shape1, shape2 = list(shapes[0]), list(shapes[1])
        shape1.pop(axes[0])
        shape2.pop(axes[1])
        shape2.pop(0)
        out = shape1 + shape2
        return tuple(out + [1] if len(out) == 1 else out)


def add(inputs, **kwargs):
    """``tf.keras.layers.add(inputs)``: ``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``tf.keras.layers.subtract(inputs)``: ``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``tf.keras.layers.multiply(inputs)``: ``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``tf.keras.layers.average(inputs)``: ``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``tf.keras.layers.maximum(inputs)``: ``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``tf.keras.layers.minimum(inputs)``: ``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """``tf.keras.layers.concatenate(inputs, axis=-1)``: ``Concatenate(axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """``tf.keras.layers.dot(inputs, axes=-1)``: ``Dot(axes, **kwargs)(inputs)``."""
    return Dot(axes=axes, **kwargs)(inputs)


layer_config.BUILTIN.update(
    {
        **{name: () for name in ("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum")},
        "Concatenate": ("axis",),
        "Dot": ("axes", "normalize"),
    }
)
