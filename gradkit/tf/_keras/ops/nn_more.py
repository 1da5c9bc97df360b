"""More of ``keras.ops.nn``: ``depth_to_space``/``space_to_depth``, ``depthwise_conv``,
``separable_conv``, ``conv_transpose``, ``layer_normalization``, ``rms_normalization``, ``psnr``,
``sparsemax``, ``polar`` and ``dot_product_attention``.

The convolutions take Keras' kernels (``depthwise_conv``: ``(*spatial, in_channels, multiplier)``;
``conv_transpose``: ``(*spatial, out_channels, in_channels)``) and its channels_last layout
(channels_first transposed to it and back); the normalizations compute half precision in float32
and return the input's dtype, as Keras does.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> [round(v, 4) for v in ops.layer_normalization(tf.constant([0.0, 1.0, 2.0])).numpy().tolist()]
[-1.2247, 0.0, 1.2247]
>>> ops.depth_to_space(tf.ones((1, 2, 2, 8)), 2).shape
(1, 4, 4, 2)
"""

from __future__ import annotations

import builtins

import numpy as np

from gradkit import _errors

from ... import _array, _conv_transpose, _math, _nn, _space_depth
from .. import activations as _activations
from .dispatch import cast, keras_op, tensor
from .dtype_rules import EPSILON, dtype_name, result_type
from .nn_ops import _FORMATS, _layout, _tuple, conv
from .numpy_elementwise import add, multiply

NAMES = (
    "depth_to_space space_to_depth depthwise_conv separable_conv conv_transpose layer_normalization "
    "rms_normalization psnr sparsemax polar dot_product_attention"
)


def _blocks(name, tf_op):
    def op(x, block_size, data_format="channels_last"):
        block_size = builtins.int(block_size)
        if block_size < 2:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} takes block_size >= 2, but got {block_size} (Keras raises ValueError)."
            )
        x, back = _layout(x, data_format)
        return back(tf_op(x, block_size, data_format="NHWC"))

    op.__name__ = op.__qualname__ = name
    move = "depth into spatial blocks" if name == "depth_to_space" else "spatial blocks into depth"
    op.__doc__ = (
        f"``keras.ops.{name}(x, block_size, data_format='channels_last')``: a 4-D ``x``'s {move} of "
        "``block_size`` by ``block_size``, as ``tf.nn``'s."
    )
    return keras_op(op)


depth_to_space = _blocks("depth_to_space", _space_depth.depth_to_space)
space_to_depth = _blocks("space_to_depth", _space_depth.space_to_depth)


def _depthwise(x, kernel, strides, padding, dilation_rate):
    """A channels_last depthwise convolution as ``conv`` grouped by channel: output channel
    ``c * multiplier + m`` from input channel ``c``, as TensorFlow's depthwise kernel orders them."""
    kernel = tensor(kernel)
    if x.ndim not in (3, 4):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.depthwise_conv takes inputs of rank 3 (1-D) or 4 (2-D), but got shape {tuple(x.shape)} "
            "(Keras raises ValueError)."
        )
    if kernel.ndim != x.ndim or kernel.shape[-2] != x.shape[-1]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.depthwise_conv: a kernel of shape (*spatial, {x.shape[-1]}, multiplier) fits inputs of "
            f"shape {tuple(x.shape)}, but got one of shape {tuple(kernel.shape)} (Keras raises ValueError)."
        )
    grouped = _array.reshape(kernel, [*kernel.shape[:-2], 1, kernel.shape[-2] * kernel.shape[-1]])
    return conv(x, grouped, strides=strides, padding=padding, dilation_rate=dilation_rate)


@keras_op
def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """``keras.ops.depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
    dilation_rate=1)``: each input channel convolved with its own ``multiplier`` filters (a kernel of
    shape ``(*spatial, in_channels, multiplier)``; 1 or 2 spatial axes)."""
    x, back = _layout(inputs, data_format)
    return back(_depthwise(x, kernel, strides, padding, dilation_rate))


@keras_op
def separable_conv(
    inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", data_format=None, dilation_rate=1
):
    """``keras.ops.separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
    data_format=None, dilation_rate=1)``: ``depthwise_conv`` by ``depthwise_kernel``, then a 1x1
    convolution by ``pointwise_kernel`` (``(1, [1,] in_channels * multiplier, out_channels)``)."""
    x, back = _layout(inputs, data_format)
    depthwise = _depthwise(x, depthwise_kernel, strides, padding, dilation_rate)
    return back(conv(depthwise, pointwise_kernel))


def _transposed_size(size, kernel, stride, padding, output_padding, dilation):
    # Keras' compute_conv_transpose_output_shape (TensorFlow's padding rules).
    kernel = (kernel - 1) * dilation + 1
    if padding == "valid":
        extra = builtins.max(kernel, stride) - kernel if output_padding is None else output_padding
        return (size - 1) * stride + kernel + extra
    if output_padding is None:
        return size * stride
    return (size - 1) * stride + kernel % 2 + output_padding


@keras_op
def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None, dilation_rate=1):
    """``keras.ops.conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
    data_format=None, dilation_rate=1)``: the transposed convolution (the gradient of ``conv``) with a
    ``(*spatial, out_channels, in_channels)`` kernel, its output size as Keras computes it."""
    x, back = _layout(inputs, data_format)
    kernel = tensor(kernel)
    n = x.ndim - 2
    padding = str(padding).lower()
    if n not in _FORMATS or padding not in ("valid", "same"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.conv_transpose takes inputs of rank 3 to 5 and padding 'valid' or 'same', but got shape "
            f"{tuple(x.shape)} and padding={padding!r} (Keras raises ValueError)."
        )
    if kernel.ndim != n + 2 or kernel.shape[-1] != x.shape[-1]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.conv_transpose: a kernel of shape (*spatial, out_channels, {x.shape[-1]}) fits inputs "
            f"of shape {tuple(x.shape)}, but got one of shape {tuple(kernel.shape)} (Keras raises ValueError)."
        )
    strides, dilations = _tuple(strides, n), _tuple(dilation_rate, n)
    extra = (None,) * n if output_padding is None else _tuple(output_padding, n)
    spatial = [
        _transposed_size(x.shape[1 + i], kernel.shape[i], strides[i], padding, extra[i], dilations[i]) for i in range(n)
    ]
    output_shape = [x.shape[0], *spatial, kernel.shape[-2]]
    out = _conv_transpose.conv_transpose(
        x,
        kernel,
        output_shape,
        list(strides),
        padding=padding.upper(),
        data_format=_FORMATS[n],
        dilations=list(dilations),
    )
    return back(out)


def _axes_list(axis, ndim):
    return sorted(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))


@keras_op
def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """``keras.ops.layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None)``:
    ``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over ``axis`` (``epsilon`` 1e-7 by default;
    half precision computed in float32)."""
    if kwargs.pop("rms_scaling", False) or kwargs:
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.layer_normalization got {sorted(kwargs) or ['rms_scaling=True']}: gradkit does not take "
            "Keras' deprecated rms_scaling. Use tf.keras.ops.rms_normalization."
        )
    epsilon = EPSILON if epsilon is None else epsilon
    x = tensor(x)
    original = x.dtype
    x = cast(x, result_type(x.dtype, "float32"))
    ndim = x.ndim
    chosen = _axes_list(axis, ndim)
    shape = [1] * ndim
    for a in chosen:
        shape[a] = x.shape[a]

    def broadcast(v):
        if v is None:
            return None
        v = tensor(v, x.dtype)
        return _array.reshape(v, shape) if v.ndim != ndim and chosen != [ndim - 1] else v

    mean, variance = _nn.moments(x, axes=chosen, keepdims=True)
    gamma, beta = broadcast(gamma), broadcast(beta)
    inv = _math.rsqrt(_math.add(variance, tensor(epsilon, x.dtype)))
    if gamma is not None:
        inv = multiply(inv, gamma)
    shift = multiply(_math.negative(mean), inv)
    if beta is not None:
        shift = add(shift, beta)
    return cast(add(multiply(x, inv), shift), original)


@keras_op
def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """``keras.ops.rms_normalization(x, scale=None, axis=-1, epsilon=None)``: ``x / sqrt(mean(x**2) +
    epsilon) * scale`` over ``axis`` (``epsilon`` 1e-7 by default; half precision computed in float32)."""
    epsilon = EPSILON if epsilon is None else epsilon
    x = tensor(x)
    original = x.dtype
    x = cast(x, result_type(x.dtype, "float32"))
    if x.ndim == 0:
        x = _array.reshape(x, [1])
    chosen = _axes_list(axis, x.ndim)
    mean_square = _math.reduce_mean(_math.square(x), axis=chosen, keepdims=True)
    out = _math.multiply(x, _math.rsqrt(_math.add(mean_square, tensor(epsilon, x.dtype))))
    if scale is not None:
        out = multiply(out, tensor(scale, x.dtype))
    return cast(out, original)


@keras_op
def psnr(x1, x2, max_val):
    """``keras.ops.psnr(x1, x2, max_val)``: the peak signal-to-noise ratio ``20 log10(max_val) -
    10 log10(mean((x1 - x2)**2))``, in ``x2``'s dtype, over all entries."""
    x1, x2 = tensor(x1), tensor(x2)
    if tuple(x1.shape) != tuple(x2.shape):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.psnr takes x1 and x2 of one shape, but got {tuple(x1.shape)} and {tuple(x2.shape)} (Keras "
            "raises ValueError)."
        )
    max_val = tensor(max_val, x2.dtype)
    mse = _math.reduce_mean(_math.square(_math.subtract(x1, x2)))

    def log10(v):
        v = cast(v, result_type(v.dtype, float))
        return _math.divide(_math.log(v), _math.log(tensor(10.0, v.dtype)))

    peak, noise = log10(max_val), log10(mse)
    return _math.subtract(
        _math.multiply(tensor(20.0, peak.dtype), peak), _math.multiply(tensor(10.0, noise.dtype), noise)
    )


@keras_op
def sparsemax(x, axis=-1):
    """``keras.ops.sparsemax(x, axis=-1)``: the Euclidean projection of ``x`` onto the probability
    simplex along ``axis``, as ``tf.keras.activations.sparsemax`` (which see: gradkit computes the
    definition where Keras 3's formula departs from it, with more than one entry in the support)."""
    return _activations.sparsemax(tensor(x), axis=builtins.int(axis))


@keras_op
def polar(abs_, angle):
    """``keras.ops.polar(abs_, angle)``: the complex ``abs_ * (cos(angle) + i sin(angle))`` (float
    ``abs_`` and ``angle``, broadcast against each other; complex64 for float32)."""
    abs_, angle = tensor(abs_), tensor(angle)
    real, imag = _math.multiply(abs_, _math.cos(angle)), _math.multiply(abs_, _math.sin(angle))
    if dtype_name(real.dtype) not in ("float16", "bfloat16", "float32"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.polar takes float abs_ and angle, but got {real.dtype} (Keras raises ValueError). Cast them "
            "to float32."
        )
    return _math.complex(real, imag)


def _large_negative(dtype):
    return (65500.0 if dtype_name(dtype) == "float16" else 3.38953e38) * -0.7


@keras_op
def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    scale=None,
    is_causal=False,
    flash_attention=None,
    attn_logits_soft_cap=None,
):
    """``keras.ops.dot_product_attention(query, key, value, bias=None, mask=None, scale=None,
    is_causal=False, flash_attention=None, attn_logits_soft_cap=None)``: ``softmax(q k^T * scale +
    bias, masked) v`` over 4-D ``(batch, length, heads, head_dim)`` tensors (``scale`` 1/sqrt(head_dim);
    fewer key/value heads are repeated to the query's, grouped-query attention); the softmax in float32.

    As on Keras' TensorFlow backend, flash attention and ``attn_logits_soft_cap`` are refused."""
    if flash_attention:
        raise _errors.GradkitValueError(
            "tf.keras.ops.dot_product_attention got flash_attention=True: Keras' TensorFlow backend has no flash "
            "attention (ValueError), and neither has gradkit. Leave flash_attention None or False."
        )
    if attn_logits_soft_cap is not None:
        raise _errors.GradkitValueError(
            "tf.keras.ops.dot_product_attention got attn_logits_soft_cap: Keras supports it only for JAX on TPU "
            "(ValueError elsewhere). Leave it None."
        )
    query, key, value = tensor(query), tensor(key), tensor(value)
    if query.ndim != 4:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.dot_product_attention takes 4-D inputs (batch, length, heads, head_dim), but got "
            f"query.shape={tuple(query.shape)} (Keras raises ValueError)."
        )
    dtype = result_type(query.dtype, key.dtype, value.dtype)
    query, key, value = cast(query, dtype), cast(key, dtype), cast(value, dtype)
    heads, kv_heads = query.shape[2], key.shape[2]
    if heads > kv_heads > 1:
        key = _array.repeat(key, heads // kv_heads, axis=2)
        value = _array.repeat(value, heads // kv_heads, axis=2)
    if scale is None:
        scale = 1.0 / float(np.sqrt(np.float32(key.shape[-1])))
    logits_dtype = result_type(query.dtype, "float32")
    logits = cast(_math.einsum("BTNH,BSNH->BNTS", query, key), logits_dtype)
    logits = _math.multiply(logits, cast(scale, logits_dtype))
    if bias is not None:
        logits = _math.add(logits, cast(tensor(bias, dtype), logits_dtype))
    if mask is not None or is_causal:
        keep = _array.ones_like(logits, dtype="bool")
        if mask is not None:
            keep = _math.logical_and(keep, cast(mask, "bool"))
        if is_causal:
            t, s = logits.shape[2], logits.shape[3]
            keep = _math.logical_and(keep, _array.constant(np.tril(np.ones((t, s), bool))[None, None]))
        logits = _array.where(keep, logits, tensor(_large_negative(logits.dtype), logits.dtype))
    probs = cast(_nn.softmax(cast(logits, result_type(logits.dtype, "float32")), axis=-1), key.dtype)
    return _math.einsum("BNTS,BSNH->BTNH", probs, value)
