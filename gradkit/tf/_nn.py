"""``tf.nn``: activations, normalisation, ``bias_add``, ``moments`` and ``embedding_lookup``.

The rest of ``tf.nn`` lives in modules of their own and is imported here: the cross-entropy
losses (``_losses``), other losses (``_nn_losses``), moments helpers (``_nn_moments``),
convolutions (``_conv``, ``_depthwise``), pooling (``_pooling``), morphology (``_morphology``), ``lrn``,
``space_to_depth`` / ``depth_to_space``, ``in_top_k`` / ``zero_fraction``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.record import floats_are_runtime

from . import _array, _math, _name_scope
from ._conv import atrous_conv2d, conv1d, conv2d, conv3d, convolution  # noqa: F401  (tf.nn's names)
from ._convert import axis_arg, call, convert, float_operand, known_value
from ._depthwise import depthwise_conv2d, separable_conv2d  # noqa: F401  (tf.nn's names)
from ._depthwise_backprop import (  # noqa: F401  (tf.nn's names)
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
)
from ._dropout import dropout  # noqa: F401  (tf.nn's name)
from ._grad_kernels import tf_rsqrt as _tf_rsqrt
from ._integer_data import in_top_k, zero_fraction  # noqa: F401  (tf.nn's names, tf.math's ops)
from ._kernel_dtypes import ORDERED as _ORDERED
from ._kernel_dtypes import REAL as _REAL
from ._kernel_dtypes import check_dtype as _check_dtype
from ._kernel_dtypes import unary as _unary
from ._losses import (  # noqa: F401  (tf.nn's names)
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from ._lrn import local_response_normalization, lrn  # noqa: F401  (tf.nn's names)
from ._morphology import dilation2d, erosion2d  # noqa: F401  (tf.nn's names)
from ._nn_losses import (  # noqa: F401  (tf.nn's names)
    compute_average_loss,
    log_poisson_loss,
    scale_regularization_loss,
    weighted_cross_entropy_with_logits,
)
from ._nn_moments import (  # noqa: F401  (tf.nn's names)
    batch_norm_with_global_normalization,
    normalize_moments,
    sufficient_statistics,
    weighted_moments,
)
from ._ordering import top_k  # noqa: F401  (tf.nn's name)
from ._pooling import (  # noqa: F401  (tf.nn's names)
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_pool_with_argmax,
    pool,
)
from ._space_depth import depth_to_space, space_to_depth  # noqa: F401  (tf.nn's names)
from ._with_space_to_batch import with_space_to_batch  # noqa: F401  (tf.nn's name)

sigmoid = _math.sigmoid
tanh = _math.tanh


def _masked_derivative(fn, inside):
    """``fn`` whose derivative is the incoming one where ``inside(x)`` and that times 0 elsewhere, as
    TensorFlow's ReluGrad/Relu6Grad multiply by a 0/1 mask: a NaN coming back stays NaN where the
    unit is off, where jax.nn's select makes it 0. (A multiply by the mask itself XLA rewrites into
    that select.) Integers go to ``fn`` as they are."""

    @jax.custom_jvp
    def masked(x):
        return fn(x)

    @masked.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return fn(x), jnp.where(inside(x), t, t * 0)

    def op(x):
        return masked(x) if jnp.issubdtype(x.dtype, jnp.inexact) else fn(x)

    op.__name__ = fn.__name__
    return op


_relu = _masked_derivative(jax.nn.relu, lambda x: x > 0)
relu = _math._unary(_relu, "relu")


def _features_named(fn):
    """``fn`` taking its tensor as ``features``, TensorFlow's name for it in tf.nn's activations."""

    def op(features, name=None):
        return fn(features)

    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = fn.__doc__
    return op


softplus = _features_named(_math.softplus)
relu = _features_named(relu)


def _relu6(x):
    if jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.clip(x, 0, 6).astype(x.dtype)  # TensorFlow keeps the integer dtype
    return _float_relu6(x)  # its derivative: 1 on (0, 6), 0 elsewhere, TensorFlow's Relu6Grad


_float_relu6 = _masked_derivative(jax.nn.relu6, lambda x: (x > 0) & (x < 6))


relu6 = _features_named(_math._unary(_relu6, "relu6"))


@jax.custom_jvp
def _softsign(x):
    return jax.nn.soft_sign(x)


@_softsign.defjvp
def _softsign_jvp(primals, tangents):
    # TensorFlow's SoftsignGrad, dx / (1 + |x|)**2: 0 at +-inf, where jax's chain rule through
    # x / (1 + |x|) gives NaN.
    (x,), (dx,) = primals, tangents
    return _softsign(x), dx / jnp.square(1 + jnp.abs(x))


softsign = _features_named(_unary(_softsign, "softsign", _REAL))


def _elu(x):
    # TensorFlow's EluGrad reads the output: at x = 0 (output 0) it takes the linear piece, so
    # the second derivative there is 0; jax.nn.elu takes the exponential piece (1). The first
    # derivatives agree (1). The exponential piece reads 0 where it is not taken.
    linear = x >= 0
    return jnp.where(linear, x, jnp.expm1(jnp.where(linear, 0, x)))


elu = _features_named(_unary(_elu, "elu", _REAL, where="tf.nn"))


def _silu(x, beta):
    return x * jax.nn.sigmoid(beta * x)


def silu(features, beta=1.0):
    """``tf.nn.silu`` (alias ``swish``): ``features * sigmoid(beta * features)``; ``beta`` is cast to
    the features' dtype, and differentiable when it is a tensor, as in TensorFlow."""
    x = convert(features)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise _errors.InvalidArgumentTypeError(  # TensorFlow's kernel: InvalidArgumentError eagerly
            f"tf.nn.silu takes a floating-point or complex input, as TensorFlow does, but got "
            f"{np.dtype(x.dtype).name}. Cast it first: tf.nn.silu(tf.cast(x, tf.float32))."
        )
    return call(_silu, x, convert(beta, x.dtype))


swish = silu


def _selu(x):
    # TensorFlow's gradient takes the linear piece at 0 (its rule reads the output, 0 there), where
    # jax.nn.selu takes the exponential one: scale * alpha instead of scale. The exponential
    # piece reads 0 where it is not taken, so a large x cannot make its unused gradient NaN.
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    linear = x >= 0
    return scale * jnp.where(linear, x, alpha * jnp.expm1(jnp.where(linear, 0, x)))


def selu(features, name=None):
    """``tf.nn.selu``: ``scale * x`` for ``x >= 0``, ``scale * alpha * (exp(x) - 1)`` below."""
    x = convert(features)
    _check_dtype(x, _REAL, "tf.nn.selu")
    return call(_selu, x)


def _softmax(x, axis):
    return jax.nn.softmax(x, axis=axis)


def _log_softmax(x, axis):
    return jax.nn.log_softmax(x, axis=axis)


def _floats(logits, what: str):
    x = convert(logits)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise _errors.InvalidArgumentTypeError(  # TensorFlow's kernel: InvalidArgumentError eagerly
            f"tf.nn.{what} takes floating-point logits, as in TensorFlow, but got dtype {np.dtype(x.dtype).name}. "
            f"Cast them first: tf.nn.{what}(tf.cast(logits, tf.float32))."
        )
    return x


def softmax(logits, axis=None, name=None):
    """``tf.nn.softmax``; inside a ``tf.function`` its output along the last axis keeps its
    logits, from which Keras' categorical cross-entropies compute there, as they do from
    TensorFlow's Softmax op (along another axis TensorFlow transposes around the op: none)."""
    logits = _floats(logits, "softmax")
    axis = -1 if axis is None else int(axis)
    out = call(_softmax, logits, axis=axis)
    if _name_scope.in_graph() and axis in (-1, logits.ndim - 1):
        from ._keras import keras_logits  # the Keras package builds on these ops: imported late

        keras_logits.remember(out, logits, "Softmax")
    return out


def log_softmax(logits, axis=None, name=None):
    return call(_log_softmax, _floats(logits, "log_softmax"), axis=-1 if axis is None else int(axis))


def _leaky_relu(x, alpha):
    return jnp.where(x > 0, x, jnp.asarray(alpha, x.dtype) * x)


def leaky_relu(features, alpha=0.2, name=None):
    x = convert(features)
    _check_dtype(x, _ORDERED, "tf.nn.leaky_relu")
    if jnp.issubdtype(x.dtype, jnp.integer):
        x = _array.cast(x, np.float32)  # TensorFlow's: integers in float32 (not JAX's float64 with 64-bit types)
    return call(_leaky_relu, x, float_operand(alpha))


# The slope an operand of the program, not part of it: an annealed slope compiles nothing new.
floats_are_runtime(_leaky_relu)


def _l2_loss(t):
    if jnp.finfo(t.dtype).bits < 32:
        # Summed in float32, as TensorFlow's kernel does not overflow a half-precision sum whose
        # result fits (a float16 sum of squares passes 65504 long before its half does).
        return (jnp.sum(t * t, dtype=jnp.float32) / 2).astype(t.dtype)
    return jnp.sum(t * t) / 2


def l2_loss(t, name=None):
    """``tf.nn.l2_loss``: ``sum(t ** 2) / 2``, of a float tensor."""
    t = convert(t)
    _check_dtype(t, _REAL, "tf.nn.l2_loss")
    return call(_l2_loss, t)


def _gelu(x, approximate):
    return jax.nn.gelu(x, approximate=approximate)


def gelu(features, approximate=False, name=None):
    """``tf.nn.gelu``: exact (erf) by default, the tanh approximation with ``approximate=True``."""
    x = convert(features)
    if np.dtype(x.dtype).name not in _REAL:  # TensorFlow checks in Python: ValueError
        raise _errors.GradkitValueError(
            f"tf.nn.gelu takes a floating-point tensor, as TensorFlow does, but got dtype {np.dtype(x.dtype).name}. "
            "Cast it first: tf.nn.gelu(tf.cast(x, tf.float32))."
        )
    return call(_gelu, x, approximate=bool(approximate))


def _l2_normalize(x, epsilon, axis):
    square_sum = jnp.sum(x * jnp.conj(x), axis=axis, keepdims=True).real
    return x * _tf_rsqrt(_math._tf_maximum(square_sum, jnp.asarray(epsilon, square_sum.dtype)))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x**2, axis), epsilon))``, as TensorFlow writes it."""
    axis = dim if axis is None else axis
    return call(_l2_normalize, convert(x), _epsilon(epsilon), axis=axis_arg(axis))


def _epsilon(value):
    """A Python number as itself (a constant of the program); a tensor as an input, which a tape
    differentiates and a tf.function traces, as TensorFlow does."""
    return float(value) if isinstance(value, (int, float, np.floating, np.integer)) else convert(value)


def _bias_add(value, bias, channel_axis):
    shape = [1] * value.ndim
    shape[channel_axis] = bias.shape[0]
    return value + jnp.reshape(bias, shape)


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` along the channel axis: the last one, or axis 1 for an 'NC...' data_format."""
    channel_axis = 1 if data_format is not None and data_format.startswith("NC") else -1
    v, b = convert(value), convert(bias)
    if v.ndim < 2 or b.ndim != 1 or b.shape[0] != v.shape[channel_axis]:
        # TensorFlow's InvalidArgumentError too, where broadcasting would hide the mistake.
        raise _errors.InvalidArgumentValueError(
            f"tf.nn.bias_add takes a value of rank 2 or more and a bias of rank 1 with one entry per channel "
            f"(axis {channel_axis} of the value), but got a value of shape {tuple(v.shape)} and a bias of shape "
            f"{tuple(b.shape)}."
        )
    return call(_bias_add, v, b, channel_axis=channel_axis % len(v.shape))


def _moments(x, axes, keepdims):
    # TensorFlow's formula: float16 in float32; an integer tensor in its own dtype (integer
    # means, as reduce_mean's); the variance treats the mean as a constant (the same gradient).
    y = x.astype(jnp.float32) if x.dtype == jnp.float16 else x
    mean = _math._mean(y, axes, True)
    variance = _math._mean(_math._squared_difference(y, jax.lax.stop_gradient(mean)), axes, True)
    if not keepdims:
        mean, variance = jnp.squeeze(mean, axes), jnp.squeeze(variance, axes)
    return mean.astype(x.dtype), variance.astype(x.dtype)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """``(mean, variance)`` of ``x`` over ``axes``."""
    axes = axis_arg(axes)
    axes = axes if isinstance(axes, tuple) else (axes,)
    return tuple(call(_moments, convert(x), axes=axes, keepdims=bool(keepdims)))


def _div_rows(ids, *, sizes):
    """Where TensorFlow's "div" partition strategy finds each id among shards of ``sizes`` rows
    (the first ``total % n`` shards hold one id more), as a row of the shards concatenated."""
    total = sum(sizes)
    per, extras = divmod(total, len(sizes))
    shard = jnp.clip(jnp.maximum(ids // (per + 1), (ids - extras) // per), 0, len(sizes) - 1)
    within = jnp.where(shard < extras, ids % (per + 1), (ids - extras) % per)
    offsets = jnp.asarray(np.cumsum([0, *sizes[:-1]]), ids.dtype)
    fits = (ids >= 0) & (ids < total) & (within < jnp.asarray(sizes, ids.dtype)[shard])
    return offsets[shard] + within, fits


def _sharded_rows(params, ids):
    shards = [convert(p) for p in params]
    if any(s.ndim == 0 or s.shape[1:] != shards[0].shape[1:] or s.dtype != shards[0].dtype for s in shards):
        raise _errors.GradkitValueError(
            "tf.nn.embedding_lookup got params shards of shapes "
            f"{[tuple(s.shape) for s in shards]} and dtypes {[np.dtype(s.dtype).name for s in shards]}: the shards "
            "of one table must agree in dtype and in every axis but the first, as in TensorFlow."
        )
    sizes = tuple(int(s.shape[0]) for s in shards)
    ids = convert(ids)
    rows, fits = call(_div_rows, ids, sizes=sizes)
    known = known_value(fits)
    if known is not None and not np.all(known):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.nn.embedding_lookup got ids {np.asarray(known_value(ids))[~known].tolist()} outside the "
            f"table or past the end of their shard: the ids must lie in [0, {sum(sizes)}), and TensorFlow's 'div' "
            f"strategy reads shard k as ids k*{sum(sizes) // len(sizes)} + min(k, {sum(sizes) % len(sizes)}) on "
            f"(the first shards one row longer where the rows do not divide evenly); these shards have "
            f"{list(sizes)} rows. Split the table that way, or concatenate it: tf.concat(params, axis=0)."
        )
    return _array.concat(shards, axis=0), rows


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows ``ids`` of ``params``: a tensor, or a list of shards of one table split along its
    first axis, which TensorFlow's "div" strategy reads (the ids in order, the first shards one
    row longer where the rows do not divide evenly), the gradient reaching each shard. With
    ``max_norm``, each looked-up embedding (over params' trailing axes) whose L2 norm is above it
    is scaled down to it, as TensorFlow's ``tf.clip_by_norm`` does (the rows of ``params`` stay
    as they are)."""
    if isinstance(params, (list, tuple)):
        if len(params) == 1:
            params = params[0]
        else:
            params, ids = _sharded_rows(params, ids)
    rows = _array.gather(params, ids, axis=0)
    if max_norm is None:
        return rows
    # TensorFlow's _clip: clip_by_norm over the axes each id looked up.
    ids_rank = len(convert(ids).shape)
    return _math.clip_by_norm(rows, max_norm, axes=list(range(ids_rank, len(rows.shape))))


def _batch_normalization(x, mean, variance, offset, scale, epsilon):
    # TensorFlow's formula, step for step: x * inv + (offset - mean * inv), broadcast as
    # TensorFlow broadcasts (leading axes added).
    rank = max(a.ndim for a in (x, mean, variance, offset, scale) if a is not None)
    x, mean, variance, offset, scale = (
        None if a is None else a.reshape((1,) * (rank - a.ndim) + a.shape) for a in (x, mean, variance, offset, scale)
    )
    inv = _tf_rsqrt(variance + jnp.asarray(epsilon, variance.dtype))
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv.astype(x.dtype) + shift.astype(x.dtype)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``tf.nn.batch_normalization``: ``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset``
    (``offset`` / ``scale`` may be None), written as TensorFlow writes it."""
    return call(
        _batch_normalization,
        convert(x),
        convert(mean),
        convert(variance),
        None if offset is None else convert(offset),
        None if scale is None else convert(scale),
        _epsilon(variance_epsilon),
    )


def _crelu(x, axis):
    return jnp.concatenate([jax.nn.relu(x), jax.nn.relu(-x)], axis=axis)


def crelu(features, axis=-1, name=None):
    """``tf.nn.crelu``: ``concat([relu(x), relu(-x)], axis)``."""
    return call(_crelu, convert(features), axis=int(axis))
