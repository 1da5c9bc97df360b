"""``tf.keras.utils``' data helpers: ``to_categorical``, ``normalize`` and ``pad_sequences``, as
Keras 3 computes them: on NumPy inputs with NumPy (so the results are NumPy arrays, as there),
on tensors as recorded ops (differentiable where Keras' are)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .._convert import call, convert


def _is_tensor(x) -> bool:
    return isinstance(x, (Tensor, jax.Array)) or hasattr(x, "_read_value")


def _one_hot(x, num_classes):
    if x.ndim > 1 and x.shape[-1] == 1:
        x = x.reshape(x.shape[:-1])
    return jax.nn.one_hot(x, num_classes, dtype=jnp.float32)


def to_categorical(x, num_classes=None):
    """Integer class labels as one-hot rows (a trailing axis of size 1 is dropped first)."""
    if _is_tensor(x):
        if num_classes is None:
            raise _errors.GradkitValueError(
                "tf.keras.utils.to_categorical of a tensor needs num_classes (Keras' one_hot needs it too). "
                "Pass num_classes=..., or pass a NumPy array, whose largest label sets it."
            )
        return call(_one_hot, convert(x), num_classes=int(num_classes))
    x = np.array(x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = tuple(shape[:-1])
    x = x.reshape(-1)
    if not num_classes:
        num_classes = np.max(x) + 1
    categorical = np.zeros((x.shape[0], num_classes))
    categorical[np.arange(x.shape[0]), x] = 1
    return np.reshape(categorical, shape + (num_classes,))


def _normalize(x, axis, order):
    if x.ndim == 0:
        x = x[None]
    if order == 2:
        inv_norm = jax.lax.rsqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
        return x * jnp.minimum(inv_norm, 1.0 / 1e-7)
    norm = jnp.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / jnp.maximum(norm, 1e-7)


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (a zero norm leaves zeros)."""
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        # Keras writes `axis or -1`, which turns axis 0 into -1 (and then fails to broadcast).
        return x / np.expand_dims(norm, -1 if axis is None else axis)
    if not isinstance(order, int) or order < 1:
        raise _errors.GradkitValueError(f"Argument `order` must be an int >= 1, as in Keras. Received: order={order!r}")
    return call(_normalize, convert(x), axis=axis, order=order)


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Sequences of different lengths as one ``(len(sequences), maxlen, ...)`` NumPy array,
    padded with ``value`` and truncated at the start (``"pre"``) or end (``"post"``)."""
    if not hasattr(sequences, "__len__"):
        raise _errors.GradkitValueError(
            f"`sequences` must be iterable, as in Keras; got {type(sequences).__name__}. Pass a list of sequences."
        )
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        bad = padding if padding not in ("pre", "post") else truncating
        raise _errors.GradkitValueError(
            f'Padding or truncating type "{bad}" not understood, as in Keras: use "pre" or "post".'
        )
    lengths, sample_shape = [], ()
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError as e:
            raise _errors.GradkitValueError(
                f"`sequences` must be a list of iterables, as in Keras. Found non-iterable: {x!r}"
            ) from e
        if not sample_shape and len(x):
            sample_shape = np.asarray(x).shape[1:]
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    if isinstance(value, str) and dtype is not object and not np.issubdtype(dtype, np.str_):
        raise _errors.GradkitValueError(
            f"`dtype` {dtype} is not compatible with `value`'s type: {type(value).__name__}, as in Keras. "
            "Set dtype=object for variable length strings."
        )
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or not maxlen:
            continue
        kept = np.asarray(s[-maxlen:] if truncating == "pre" else s[:maxlen], dtype=dtype)
        if kept.shape[1:] != tuple(sample_shape):
            raise _errors.GradkitValueError(
                f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from expected shape "
                f"{tuple(sample_shape)}, as Keras refuses too. Give every step of every sequence the same shape."
            )
        if padding == "post":
            out[i, : len(kept)] = kept
        else:
            out[i, -len(kept) :] = kept
    return out


NAMES = "to_categorical normalize pad_sequences"
