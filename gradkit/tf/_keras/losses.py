"""``tf.keras.losses``: Keras 3's loss classes and functions, computed as Keras computes them
with TensorFlow's backend, so values and gradients (also at its clipping bounds) are Keras'.

Each loss is one op the tape records (the per-sample values), followed by one op for the
reduction with the sample weights. Keras clips probabilities to ``[1e-7, 1 - 1e-7]`` when
``from_logits=False``; the clip passes the gradient at the bounds, as ``tf.clip_by_value``
does, and ``abs``/``maximum`` send a kink's gradient where TensorFlow sends it.
"""

from __future__ import annotations

import math
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.record import floats_are_runtime

from .._convert import call, convert, float_operand, known_value
from .._grad_kernels import with_tf_gradient_kernel
from .._losses import _sigmoid_xent, _softmax_xent, _sparse_softmax_xent
from .._math import _clip_by_value, _divide_no_nan, _float_divide, _tf_abs, _tf_maximum, _tf_minimum
from .._namespace import missing
from . import dtype_policies, keras_logits, masking

EPSILON = 1e-7  # keras.backend.epsilon()

REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")


class Reduction:
    """``tf.keras.losses.Reduction``'s names (the legacy enum TensorFlow still exports)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


def standardize_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise _errors.GradkitValueError(
            f"tf.keras.losses got reduction={reduction!r}, which Keras 3 does not accept (it raises too). "
            f"Pass one of {REDUCTIONS}; 'sum_over_batch_size' is the default and what 'auto' used to mean."
        )
    return reduction


# ---- pure jax pieces (module-level: the tape keys compiled programs by function) -------------


def same_rank(x1, x2, expand_rank_1=True):
    """Keras' ``squeeze_or_expand_to_same_rank``: drop or add a trailing axis of size 1 when the
    ranks differ by one."""
    if x1.ndim == x2.ndim:
        return x1, x2
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            x2 = jnp.expand_dims(x2, -1)
        else:
            x1 = jnp.squeeze(x1, -1)
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            x1 = jnp.expand_dims(x1, -1)
        else:
            x2 = jnp.squeeze(x2, -1)
    return x1, x2


def _clip(x, lo, hi):
    return _clip_by_value(x, jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype))


def _mean_squared_error(y_true, y_pred):
    y_true, y_pred = same_rank(y_true, y_pred)
    return jnp.mean(jnp.square(y_true - y_pred), axis=-1)


def _mean_absolute_error(y_true, y_pred):
    y_true, y_pred = same_rank(y_true, y_pred)
    return jnp.mean(_tf_abs(y_true - y_pred), axis=-1)


def _mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = same_rank(y_true, y_pred)
    eps = jnp.asarray(EPSILON, y_pred.dtype)
    return 100.0 * jnp.mean(_tf_abs((y_true - y_pred) / _tf_maximum(_tf_abs(y_true), eps)), axis=-1)


def _mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = same_rank(y_true, y_pred)
    eps = jnp.asarray(EPSILON, y_pred.dtype)
    first = jnp.log(_tf_maximum(y_pred, eps) + 1.0)
    second = jnp.log(_tf_maximum(y_true, eps) + 1.0)
    return jnp.mean(jnp.square(first - second), axis=-1)


_rsqrt = with_tf_gradient_kernel(jax.lax.rsqrt)


def _l2_normalize(x, axis):
    # Keras' ops.nn.normalize: x * min(rsqrt(sum(x^2)), 1 / epsilon); a zero vector stays zero,
    # and TensorFlow's Rsqrt gradient kernel keeps its gradient finite.
    inv_norm = _rsqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
    return x * _tf_minimum(inv_norm, jnp.asarray(1.0 / EPSILON, x.dtype))


def _cosine_similarity(y_true, y_pred, axis):
    y_true, y_pred = same_rank(y_true, y_pred)
    return -jnp.sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def _huber(y_true, y_pred, delta):
    y_true, y_pred = same_rank(y_true, y_pred)
    delta = jnp.asarray(delta, y_pred.dtype)
    error = y_pred - y_true
    abs_error = _tf_abs(error)
    quadratic = 0.5 * jnp.square(error)
    linear = delta * abs_error - 0.5 * jnp.square(delta)
    return jnp.mean(jnp.where(abs_error <= delta, quadratic, linear), axis=-1)


# delta an operand of the program: an annealed delta compiles nothing new.
floats_are_runtime(_huber)


def _log_cosh(y_true, y_pred):
    y_true, y_pred = same_rank(y_true, y_pred)
    x = y_pred - y_true
    return jnp.mean(x + jax.nn.softplus(-2.0 * x) - jnp.asarray(math.log(2.0), x.dtype), axis=-1)


def _hinge_labels(y_true):
    # Labels all 0 or 1 become -1 or 1, as Keras converts them; other labels stay as they are.
    binary = jnp.all((y_true == 0) | (y_true == 1))
    return jnp.where(binary, 2.0 * y_true - 1.0, y_true)


def _hinge(y_true, y_pred):
    margin = _tf_maximum(1.0 - _hinge_labels(y_true) * y_pred, jnp.zeros((), y_pred.dtype))
    return jnp.mean(margin, axis=-1)


def _squared_hinge(y_true, y_pred):
    margin = _tf_maximum(1.0 - _hinge_labels(y_true) * y_pred, jnp.zeros((), y_pred.dtype))
    return jnp.mean(jnp.square(margin), axis=-1)


def _categorical_hinge(y_true, y_pred):
    pos = jnp.sum(y_true * y_pred, axis=-1)
    neg = jnp.max((1.0 - y_true) * y_pred, axis=-1)
    return _tf_maximum(neg - pos + 1.0, jnp.zeros((), y_pred.dtype))


def _kl_divergence(y_true, y_pred):
    y_true = _clip(y_true, EPSILON, 1.0)
    y_pred = _clip(y_pred, EPSILON, 1.0)
    return jnp.sum(y_true * jnp.log(y_true / y_pred), axis=-1)


def _poisson(y_true, y_pred):
    return jnp.mean(y_pred - y_true * jnp.log(y_pred + jnp.asarray(EPSILON, y_pred.dtype)), axis=-1)


def _no_smoothing(label_smoothing) -> bool:
    # A number 0 leaves the labels alone; an array (a runtime value of the program) always smooths,
    # which for 0 gives the labels exactly.
    return isinstance(label_smoothing, (int, float)) and not label_smoothing


def _smooth_binary(y_true, label_smoothing):
    if _no_smoothing(label_smoothing):
        return y_true
    amount = jnp.asarray(label_smoothing, y_true.dtype)
    return y_true * (1 - amount) + 0.5 * amount


def _smooth_categorical(y_true, label_smoothing):
    if _no_smoothing(label_smoothing):
        return y_true
    # Keras counts the classes along the last axis, whatever ``axis`` is.
    amount = jnp.asarray(label_smoothing, y_true.dtype)
    return y_true * (1 - amount) + amount / y_true.shape[-1]


def _binary_elementwise(y_true, y_pred, from_logits):
    """Keras' binary cross-entropy of each element: from the logits, or of the clipped probabilities."""
    if from_logits:
        return _sigmoid_xent(y_true, y_pred)
    output = _clip(y_pred, EPSILON, 1.0 - EPSILON)
    return -(y_true * jnp.log(output) + (1 - y_true) * jnp.log(1 - output))


def _class_probabilities(y_pred, axis):
    """Keras' probabilities for a categorical cross-entropy: renormalized along ``axis``, clipped."""
    # TensorFlow's RealDiv gradient: finite for tiny sums, where jax's x / y**2 overflows.
    return _clip(_float_divide(y_pred, jnp.sum(y_pred, axis=axis, keepdims=True)), EPSILON, 1.0 - EPSILON)


def _binary_crossentropy(y_true, y_pred, from_logits, label_smoothing, axis):
    y_true = _smooth_binary(y_true, label_smoothing)
    return jnp.mean(_binary_elementwise(y_true, y_pred, from_logits), axis=axis)


def _categorical_crossentropy(y_true, y_pred, from_logits, label_smoothing, axis):
    y_true = _smooth_categorical(y_true, label_smoothing)
    if from_logits:
        return _softmax_xent(y_true, y_pred, axis)
    return -jnp.sum(y_true * jnp.log(_class_probabilities(y_pred, axis)), axis=axis)


# label_smoothing an operand of the program: a scheduled amount compiles nothing new.
floats_are_runtime(_binary_crossentropy)
floats_are_runtime(_categorical_crossentropy)


def _sparse_categorical_crossentropy(y_true, y_pred, from_logits):
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = jnp.squeeze(y_true, -1)
    logits = y_pred if from_logits else jnp.log(_clip(y_pred, EPSILON, 1.0 - EPSILON))
    return _sparse_softmax_xent(y_true.astype(jnp.int32), logits)


def _binary_focal_crossentropy(y_true, y_pred, apply_class_balancing, alpha, gamma, from_logits, label_smoothing, axis):
    y_true = _smooth_binary(y_true, label_smoothing)
    # With from_logits Keras' cross-entropy is from the logits (its sigmoid keeps them), its
    # focal factor from the probabilities.
    elementwise = _binary_elementwise(y_true, y_pred, from_logits)
    p = jax.nn.sigmoid(y_pred) if from_logits else y_pred
    return _focal(y_true, p, elementwise, apply_class_balancing, alpha, gamma, axis)


def _binary_focal_crossentropy_of_kept_logits(
    y_true, y_pred, logits, apply_class_balancing, alpha, gamma, label_smoothing, axis
):
    # Probabilities that kept their logits (a Keras sigmoid or softmax): Keras' cross-entropy
    # is from the logits, its focal factor from the probabilities as given.
    y_true = _smooth_binary(y_true, label_smoothing)
    return _focal(y_true, y_pred, _sigmoid_xent(y_true, logits), apply_class_balancing, alpha, gamma, axis)


def _focal(y_true, p, elementwise, apply_class_balancing, alpha, gamma, axis):
    p_t = y_true * p + (1 - y_true) * (1 - p)
    focal = jnp.power(1.0 - p_t, gamma) * elementwise
    if apply_class_balancing:
        focal = (y_true * alpha + (1 - y_true) * (1 - alpha)) * focal
    return jnp.mean(focal, axis=axis)


def _categorical_focal_crossentropy(y_true, y_pred, alpha, gamma, from_logits, label_smoothing, axis):
    y_true = _smooth_categorical(y_true, label_smoothing)
    output = _class_probabilities(jax.nn.softmax(y_pred, axis=axis) if from_logits else y_pred, axis)
    alpha = jnp.asarray(alpha, output.dtype)
    if alpha.ndim:  # one weight per class (Keras takes a list), along the class axis
        shape = [1] * output.ndim
        shape[axis] = alpha.shape[0]
        alpha = jnp.broadcast_to(alpha.reshape(shape), output.shape)
    return jnp.sum(alpha * jnp.power(1.0 - output, gamma) * (-y_true * jnp.log(output)), axis=axis)


def _broadcast_multiply(x, y):
    # TensorFlow broadcasts weights of a lower rank (losses (4, 4), weights (4,)); spelled out so
    # it runs under jax_numpy_rank_promotion="raise" too.
    shape = np.broadcast_shapes(x.shape, y.shape)
    return jnp.broadcast_to(x, shape) * jnp.broadcast_to(y, shape)


def _mask_weights(mask, sample_weight, dtype, reduction):
    """Keras' ``apply_mask``: the entries a loss masks out weigh 0; for a mean, the others weigh
    ``total / valid``, so the mean is over the entries kept."""
    if reduction in ("mean", "sum_over_batch_size"):
        valid = jnp.sum(mask.astype(dtype))
        weight = _divide_no_nan(jnp.asarray(mask.size, dtype), valid)
        float_mask = jnp.where(mask, weight, jnp.zeros((), dtype))
    else:
        float_mask = mask.astype(dtype)
    if sample_weight is None:
        return float_mask
    float_mask, sample_weight = same_rank(float_mask, sample_weight.astype(dtype))
    return _broadcast_multiply(sample_weight, float_mask)


def reduce_weighted_values(values, sample_weight, mask, reduction):
    """Keras' ``reduce_weighted_values``: weight, then sum, or sum and divide by the number of
    values (``sum_over_batch_size``, ``mean``) or by the weights' sum (``mean_with_sample_weight``).
    A ``mask`` (where a loss such as Circle marks its entries to leave out) joins the weights."""
    if mask is not None:
        sample_weight = _mask_weights(mask, sample_weight, values.dtype, reduction)
    if sample_weight is not None:
        values, sample_weight = same_rank(values, sample_weight.astype(values.dtype))
        values = _broadcast_multiply(values, sample_weight)
    if reduction in (None, "none") or values.shape in ((), (0,)):
        return values
    loss = jnp.sum(values)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = jnp.sum(sample_weight).astype(loss.dtype)
    else:
        divisor = jnp.asarray(values.size, loss.dtype)
    return _divide_no_nan(loss, divisor)


# ---- the functions ----------------------------------------------------------------------------


def _pair(y_true, y_pred):
    y_pred = convert(y_pred)
    return convert(y_true, y_pred.dtype), y_pred


def _shape(x):
    return tuple(x.shape)


def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``."""
    return call(_mean_squared_error, *_pair(y_true, y_pred))


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``."""
    return call(_mean_absolute_error, *_pair(y_true, y_pred))


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(abs((y_true - y_pred) / max(abs(y_true), 1e-7)), axis=-1)``."""
    return call(_mean_absolute_percentage_error, *_pair(y_true, y_pred))


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean(square(log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1)), axis=-1)``."""
    return call(_mean_squared_logarithmic_error, *_pair(y_true, y_pred))


def cosine_similarity(y_true, y_pred, axis=-1):
    """``-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)`` (0 for a zero vector)."""
    return call(_cosine_similarity, *_pair(y_true, y_pred), axis=_int_axis(axis))


def huber(y_true, y_pred, delta=1.0):
    """Quadratic for errors up to ``delta``, linear beyond, averaged over the last axis."""
    return call(_huber, *_pair(y_true, y_pred), delta=float_operand(delta))


def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed without overflow."""
    return call(_log_cosh, *_pair(y_true, y_pred))


def hinge(y_true, y_pred):
    """``mean(maximum(1 - y_true * y_pred, 0), axis=-1)``; labels all in {0, 1} become -1/1."""
    return call(_hinge, *_pair(y_true, y_pred))


def squared_hinge(y_true, y_pred):
    """``mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)``; 0/1 labels become -1/1."""
    return call(_squared_hinge, *_pair(y_true, y_pred))


def categorical_hinge(y_true, y_pred):
    """``maximum(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)`` over the last axis."""
    return call(_categorical_hinge, *_pair(y_true, y_pred))


def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred), axis=-1)``, both clipped to ``[1e-7, 1]``."""
    return call(_kl_divergence, *_pair(y_true, y_pred))


def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)``."""
    return call(_poisson, *_pair(y_true, y_pred))


def _int_axis(axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise _errors.GradkitValueError(
            f"tf.keras.losses got axis={axis!r} of type {type(axis).__name__}, but the axis must be an int, "
            "as Keras requires. Pass axis=-1 (the default) or another integer."
        )
    return int(axis)


def _check_same_shape(fn, y_true, y_pred):
    if _shape(y_true) != _shape(y_pred):
        raise _errors.GradkitValueError(
            f"tf.keras.losses.{fn} needs y_true and y_pred of the same shape, as Keras does, but got "
            f"y_true of shape {_shape(y_true)} and y_pred of shape {_shape(y_pred)}. Reshape the labels "
            f"to the predictions' shape (for integer class labels use sparse_categorical_crossentropy)."
        )


def _cross_entropy(name, fn, y_true, y_pred, from_logits, label_smoothing, axis, **options):
    """``fn`` recorded over the labels and predictions, which must have one shape (as Keras
    requires of these losses), with the options every cross-entropy takes and ``options``."""
    y_true, y_pred = _pair(y_true, y_pred)
    _check_same_shape(name, y_true, y_pred)
    return call(
        fn,
        y_true,
        y_pred,
        from_logits=bool(from_logits),
        label_smoothing=float_operand(label_smoothing),
        axis=_int_axis(axis),
        **options,
    )


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy averaged over ``axis``; ``y_pred`` is probabilities (clipped to
    ``[1e-7, 1 - 1e-7]``) unless ``from_logits``; ``label_smoothing`` squeezes labels toward 0.5."""
    y_pred, from_logits = keras_logits.prediction(y_pred, from_logits, "binary_crossentropy")
    return _cross_entropy(
        "binary_crossentropy", _binary_crossentropy, y_true, y_pred, from_logits, label_smoothing, axis
    )


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy of one-hot (or soft) ``y_true`` against ``y_pred`` along ``axis``;
    probabilities are renormalized along ``axis`` and clipped to ``[1e-7, 1 - 1e-7]`` unless
    ``from_logits``."""
    axis = _int_axis(axis)
    y_pred, from_logits = keras_logits.prediction(y_pred, from_logits, "categorical_crossentropy")
    y_true, y_pred = _pair(y_true, y_pred)
    _check_same_shape("categorical_crossentropy", y_true, y_pred)
    if y_pred.ndim and y_pred.shape[-1] == 1:
        warnings.warn(
            "In loss categorical_crossentropy, expected y_pred.shape to be (batch_size, num_classes) with "
            f"num_classes > 1. Received: y_pred.shape={_shape(y_pred)}. Consider using 'binary_crossentropy' "
            "if you only have 2 classes.",
            SyntaxWarning,
            stacklevel=2,
        )
    return call(
        _categorical_crossentropy,
        y_true,
        y_pred,
        from_logits=bool(from_logits),
        label_smoothing=float_operand(label_smoothing),
        axis=axis,
    )


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Cross-entropy of integer class labels ``y_true`` against ``y_pred`` (probabilities, clipped
    to ``[1e-7, 1 - 1e-7]``, unless ``from_logits``) along the last axis."""
    fn = "tf.keras.losses.sparse_categorical_crossentropy"
    if ignore_class is None:
        # With ignore_class, Keras zeroes the ignored rows of y_pred first: the product is no softmax
        # output, so its cross-entropy takes the probabilities (clipped to 1e-7), not the logits.
        y_pred, from_logits = keras_logits.prediction(y_pred, from_logits, "sparse_categorical_crossentropy")
    y_pred = convert(y_pred)
    y_true = convert(y_true)
    axis = _int_axis(axis)
    if axis not in (-1, y_pred.ndim - 1):
        raise _errors.GradkitValueError(
            f"{fn} got axis={axis}; Keras' TensorFlow backend supports only the last axis (axis=-1). "
            "Move the class axis last first (tf.transpose or tf.experimental.numpy.moveaxis)."
        )
    labels_shape = _shape(y_true)
    if y_true.ndim == y_pred.ndim and labels_shape and labels_shape[-1] == 1:
        labels_shape = labels_shape[:-1]
    if labels_shape != _shape(y_pred)[:-1]:
        raise _errors.GradkitValueError(
            f"{fn} needs labels of y_pred's shape without its last (class) axis, as Keras does, but got y_true "
            f"of shape {_shape(y_true)} and y_pred of shape {_shape(y_pred)}. Pass one integer class per row "
            f"(y_true of shape {_shape(y_pred)[:-1]}); for one-hot labels use categorical_crossentropy."
        )
    valid = None
    if ignore_class is not None:
        # Keras' rule: the ignored labels count as class 0 on a zeroed row, their losses are 0,
        # and the mask set on the losses leaves them out of a Loss's reduction.
        valid = call(_not_ignored, y_true, y_pred, ignore_class=int(ignore_class))
        y_true, y_pred = call(_ignored_zeroed, y_true, y_pred, valid)
    known = known_value(y_true)
    n = y_pred.shape[-1]
    if known is not None and known.size and (known.min() < 0 or known.max() >= n):
        bad = known.min() if known.min() < 0 else known.max()
        raise _errors.InvalidArgumentValueError(
            f"{fn} got the label {bad}, outside the classes [0, {n}) of y_pred; TensorFlow refuses it too "
            f"(InvalidArgumentError). Pass class indices in [0, {n})."
        )
    losses = call(_sparse_categorical_crossentropy, y_true, y_pred, from_logits=bool(from_logits))
    if valid is None:
        return losses
    losses = call(_kept, losses, valid)
    masking.set_keras_mask(losses, valid)
    return losses


def _labels_shaped(y_true, y_pred):
    return jnp.squeeze(y_true, -1) if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1 else y_true


def _not_ignored(y_true, y_pred, ignore_class):
    return _labels_shaped(y_true, y_pred) != ignore_class


def _ignored_zeroed(y_true, y_pred, valid):
    y_true = _labels_shaped(y_true, y_pred)
    return y_true * valid.astype(y_true.dtype), y_pred * valid[..., None].astype(y_pred.dtype)


def _kept(losses, valid):
    return jnp.where(valid.reshape(losses.shape), losses, jnp.zeros((), losses.dtype))


# Keras' short names (tf.keras.losses.mse, MSE, ...).
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


# ---- the classes ------------------------------------------------------------------------------


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """Keras' binary focal cross-entropy, averaged over ``axis``: the binary cross-entropy times
    ``(1 - p_t) ** gamma`` (``p_t`` the probability given to the true label), and with
    ``apply_class_balancing`` times ``alpha`` for label 1 and ``1 - alpha`` for label 0."""
    logits = None if from_logits else keras_logits.logits_of(y_pred, "Sigmoid")
    if logits is not None:
        # Keras' TensorFlow backend takes the cross-entropy from the logits the sigmoid or
        # softmax kept (no clip at 1e-7), the focal factor from y_pred itself.
        y_true, y_pred = _pair(y_true, y_pred)
        _check_same_shape("binary_focal_crossentropy", y_true, y_pred)
        return call(
            _binary_focal_crossentropy_of_kept_logits,
            y_true,
            y_pred,
            convert(logits),
            apply_class_balancing=bool(apply_class_balancing),
            alpha=float(alpha),
            gamma=float(gamma),
            label_smoothing=float(label_smoothing),
            axis=_int_axis(axis),
        )
    return _cross_entropy(
        "binary_focal_crossentropy",
        _binary_focal_crossentropy,
        y_true,
        y_pred,
        from_logits,
        label_smoothing,
        axis,
        apply_class_balancing=bool(apply_class_balancing),
        alpha=float(alpha),
        gamma=float(gamma),
    )


def categorical_focal_crossentropy(
    y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Keras' categorical focal cross-entropy along ``axis``: each class's cross-entropy times
    ``alpha * (1 - p) ** gamma``, with ``y_pred`` renormalized along ``axis`` and clipped to
    ``[1e-7, 1 - 1e-7]`` (a softmax first with ``from_logits``)."""
    return _cross_entropy(
        "categorical_focal_crossentropy",
        _categorical_focal_crossentropy,
        y_true,
        y_pred,
        from_logits,
        label_smoothing,
        axis,
        alpha=tuple(float(a) for a in alpha) if isinstance(alpha, (list, tuple, np.ndarray)) else float(alpha),
        gamma=float(gamma),
    )


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Loss:
    """Keras' ``Loss`` base class: ``loss(y_true, y_pred, sample_weight=None)`` converts both to
    the loss's dtype, computes ``self.call(y_true, y_pred)`` per sample and reduces it.

    Subclass it and write ``call`` with ``gradkit.tf`` ops, as in Keras.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self._dtype = dtype_policies.compute_dtype(dtype)

    @property
    def dtype(self):
        return self._dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        in_mask = masking.get_keras_mask(y_pred)  # a Keras mask on the prediction (mask_zero)
        y_pred = keras_logits.carry(y_pred, convert(y_pred, self._dtype))
        y_true = convert(y_true, self._dtype)
        raw = self.call(y_true, y_pred)
        losses = convert(raw)
        weights = None if sample_weight is None else convert(sample_weight, self._dtype)
        mask = self._output_mask(losses)
        if mask is None:
            mask = masking.get_keras_mask(raw)  # set by the loss function (ignore_class), as Keras reads it
        if in_mask is not None:
            mask = in_mask if mask is None else call(jnp.logical_and, in_mask, mask)
        return call(reduce_weighted_values, losses, weights, mask, reduction=self.reduction)

    def _output_mask(self, losses):
        """The entries of ``losses`` the reduction keeps (Keras' mask on a loss's output), or None."""
        return None

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"[gradkit] {type(self).__name__} must define call(y_true, y_pred).")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class LossFunctionWrapper(Loss):
    """A ``Loss`` from a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn=None, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        if fn is None:
            raise _errors.GradkitTypeError(
                "tf.keras.losses' LossFunctionWrapper needs the loss function fn(y_true, y_pred) (Keras raises "
                "too: a missing argument). Pass it, or use one of the loss classes, e.g. MeanSquaredError()."
            )
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, ranked = call(same_rank, y_true, y_pred)
        return self.fn(y_true, keras_logits.carry(y_pred, ranked), **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _loss_class(cls_name, fn, default_name, doc, order=None, check=None, methods=None, **options):
    """A Keras loss class over ``fn`` whose constructor takes ``options`` (with their defaults),
    then ``reduction``, ``name`` and ``dtype``; ``order`` is Keras' positional order where it differs;
    ``check(options)`` refuses the options Keras' constructor refuses; ``methods`` are the class's own."""
    defaults = {**options, "reduction": "sum_over_batch_size", "name": default_name, "dtype": None}
    order = order or tuple(defaults)

    def __init__(self, *args, **kwargs):
        if len(args) > len(order):
            raise _errors.GradkitTypeError(
                f"tf.keras.losses.{cls_name} got {len(args)} positional arguments, but takes at most "
                f"{len(order)}: {', '.join(order)}."
            )
        values = dict(defaults)
        values.update(zip(order, args))
        for key, value in kwargs.items():
            if key not in defaults:
                raise _errors.GradkitTypeError(
                    f"tf.keras.losses.{cls_name} got the argument {key}={value!r}, which it does not take "
                    f"(Keras raises too). Its arguments are {', '.join(order)}."
                )
            values[key] = value
        fn_kwargs = {key: values[key] for key in options}
        if check is not None:
            check(fn_kwargs)
        LossFunctionWrapper.__init__(
            self, fn, reduction=values["reduction"], name=values["name"], dtype=values["dtype"], **fn_kwargs
        )
        for key, value in fn_kwargs.items():
            setattr(self, key, value)

    members = {**(methods or {}), "__init__": __init__, "__doc__": doc, "__module__": __name__}
    return type(cls_name, (LossFunctionWrapper,), members)


MeanSquaredError = _loss_class(
    "MeanSquaredError", mean_squared_error, "mean_squared_error", "Mean of squared errors over the last axis."
)
MeanAbsoluteError = _loss_class(
    "MeanAbsoluteError", mean_absolute_error, "mean_absolute_error", "Mean of absolute errors over the last axis."
)
MeanAbsolutePercentageError = _loss_class(
    "MeanAbsolutePercentageError",
    mean_absolute_percentage_error,
    "mean_absolute_percentage_error",
    "``100 * mean(abs((y_true - y_pred) / y_true))`` over the last axis.",
)
MeanSquaredLogarithmicError = _loss_class(
    "MeanSquaredLogarithmicError",
    mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error",
    "Mean squared error of ``log(1 + y)`` over the last axis.",
)
CosineSimilarity = _loss_class(
    "CosineSimilarity",
    cosine_similarity,
    "cosine_similarity",
    "Negative cosine similarity along ``axis`` (default -1).",
    axis=-1,
)
Huber = _loss_class("Huber", huber, "huber_loss", "Huber loss with threshold ``delta`` (default 1.0).", delta=1.0)
LogCosh = _loss_class("LogCosh", log_cosh, "log_cosh", "``log(cosh(y_pred - y_true))`` over the last axis.")
Hinge = _loss_class("Hinge", hinge, "hinge", "Hinge loss; 0/1 labels become -1/1.")
SquaredHinge = _loss_class("SquaredHinge", squared_hinge, "squared_hinge", "Squared hinge loss.")
CategoricalHinge = _loss_class("CategoricalHinge", categorical_hinge, "categorical_hinge", "Categorical hinge loss.")
KLDivergence = _loss_class("KLDivergence", kl_divergence, "kl_divergence", "Kullback-Leibler divergence.")
Poisson = _loss_class("Poisson", poisson, "poisson", "Poisson loss.")
BinaryCrossentropy = _loss_class(
    "BinaryCrossentropy",
    binary_crossentropy,
    "binary_crossentropy",
    "Binary cross-entropy (``from_logits``, ``label_smoothing``, ``axis``).",
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
)
CategoricalCrossentropy = _loss_class(
    "CategoricalCrossentropy",
    categorical_crossentropy,
    "categorical_crossentropy",
    "Cross-entropy of one-hot labels (``from_logits``, ``label_smoothing``, ``axis``).",
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
)
SparseCategoricalCrossentropy = _loss_class(
    "SparseCategoricalCrossentropy",
    sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    "Cross-entropy of integer labels (``from_logits``; ``ignore_class`` must stay None).",
    order=("from_logits", "ignore_class", "reduction", "axis", "name", "dtype"),
    from_logits=False,
    ignore_class=None,
    axis=-1,
)


BinaryFocalCrossentropy = _loss_class(
    "BinaryFocalCrossentropy",
    binary_focal_crossentropy,
    "binary_focal_crossentropy",
    "Binary focal cross-entropy (``apply_class_balancing``, ``alpha``, ``gamma``, ``from_logits``, "
    "``label_smoothing``, ``axis``).",
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
)
CategoricalFocalCrossentropy = _loss_class(
    "CategoricalFocalCrossentropy",
    categorical_focal_crossentropy,
    "categorical_focal_crossentropy",
    "Categorical focal cross-entropy (``alpha``, ``gamma``, ``from_logits``, ``label_smoothing``, ``axis``).",
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
)


def __getattr__(name):
    raise AttributeError(missing("gradkit.tf.keras.losses", name))
