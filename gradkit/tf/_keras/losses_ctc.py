"""``tf.keras.losses``' CTC loss, as Keras 3 computes it with TensorFlow: ``tf.nn.ctc_loss`` on
dense labels (class 0 the blank, the labels' length their count of nonzero entries, every
frame of ``y_pred`` used), which runs TensorFlow's batched forward-backward algorithm in the log
domain (``ctc_loss_dense``). This is that algorithm's backward pass, with its constants: a
final state other than the label sequence's end weighs ``1e-307`` rather than 0, so labels that
no alignment can produce give a large finite loss (about 707) instead of infinity, as in Keras.

The gradient is JAX's derivative of that recursion: TensorFlow's registered gradient,
``softmax(logits) - posterior``, is that derivative, and both agree. Second derivatives differ:
TensorFlow's come out NaN (in TF 2.21 with Keras 3); gradkit's are
the exact ones (they agree with finite differences of the gradient).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._convert import call, convert
from .losses import _loss_class

# TensorFlow's log(0): log(1e-307) computed in float64, then cast to the loss's dtype.
_LOG_0_64 = float(np.log(np.float64(0.0) + 1e-307))


def _log_transitions(labels, dtype):
    """``log`` of TensorFlow's CTC transition matrix (to, from) for each label sequence: state 0
    starts, states 1..L are the labels, states L+1..2L+1 the blanks after each; a label follows the
    same label only through a blank."""
    batch, length = labels.shape
    n = length + 1
    base = np.eye(2 * n, dtype=dtype)
    base[1, 0] = 1.0
    for k in range(length):
        base[k + 1, n + k] = 1.0  # blank after label k -> label k + 1
    for k in range(n):
        base[n + k, k] = 1.0  # label k -> the blank after it
    trans = jnp.broadcast_to(jnp.asarray(base), (batch, 2 * n, 2 * n))
    if length > 1:
        distinct = (labels[:, :-1] != labels[:, 1:]).astype(dtype)
        to = np.arange(2, n)
        trans = trans.at[:, to, to - 1].add(distinct)
    return jnp.log(trans)


def ctc_negative_log_likelihood(labels, label_length, logits, logit_length):
    """TensorFlow's dense CTC loss, per sequence: ``labels`` (batch, max_length) of classes >= 1
    (0 the blank), ``label_length`` of them used, against ``logits`` (batch, frames, classes) of
    which the first ``logit_length`` frames count (None: all)."""
    # float32 at least (float16 and bfloat16 are computed in it), float64 kept.
    dtype = jnp.result_type(logits.dtype, jnp.float32)
    logits = logits.astype(dtype)
    labels = labels.astype(jnp.int32)
    label_length = label_length.astype(jnp.int32)
    batch, frames, classes = logits.shape
    n = labels.shape[1] + 1

    log_p = jax.nn.log_softmax(logits, axis=-1)
    # A label's state has its class's log-probability (one outside [0, classes) has 0, as
    # TensorFlow's one-hot product gives); the start state none.
    one_hot = jax.nn.one_hot(labels, classes, dtype=dtype)
    label_log_p = jnp.sum(log_p[:, :, None, :] * one_hot[:, None, :, :], axis=-1)
    blank = jnp.broadcast_to(log_p[:, :, :1], (*log_p.shape[:2], n))
    start = jnp.full((*log_p.shape[:2], 1), -jnp.inf, dtype)
    observed = jnp.concatenate([start, label_log_p, blank], axis=-1)

    states = jnp.arange(2 * n)[None, :]
    ends = (states == label_length[:, None]) | (states == n + label_length[:, None])
    final = jnp.where(ends, jnp.zeros((), dtype), jnp.asarray(_LOG_0_64, dtype))
    backward_trans = jnp.swapaxes(_log_transitions(labels, dtype), 1, 2)
    # Frames past a sequence's own length leave its recursion as it is.
    used = (
        jnp.ones((frames, batch), bool)
        if logit_length is None
        else (jnp.arange(frames)[:, None] < logit_length.astype(jnp.int32)[None, :])
    )

    def step(carry, inputs):
        state, total = carry
        obs, live = inputs
        new = jax.nn.logsumexp((state + obs)[:, None, :] + backward_trans, axis=-1)
        norm = jax.nn.logsumexp(new, axis=-1, keepdims=True)
        state = jnp.where(live[:, None], new - norm, state)
        total = jnp.where(live, total + norm[:, 0], total)
        return (state, total), None

    zero = jnp.zeros((batch,), dtype)
    (state, total), _ = jax.lax.scan(step, (final, zero), (jnp.swapaxes(observed, 0, 1), used), reverse=True)
    return -(state[:, 0] + total)


def _ctc(y_true, y_pred):
    label_length = jnp.sum(y_true != 0, axis=-1)
    return ctc_negative_log_likelihood(y_true, label_length, y_pred, None)


def ctc(y_true, y_pred):
    """Keras' CTC loss of integer label sequences ``y_true`` (batch, max_length), 0 the blank and
    padding, against logits ``y_pred`` (batch, frames, classes); one value per sequence."""
    y_pred, y_true = convert(y_pred), convert(y_true)
    if y_true.ndim != 2:
        raise _errors.GradkitValueError(
            f"tf.keras.losses.ctc expects y_true of shape (batch_size, max_length) in integer format, as Keras "
            f"does (it raises too), but got y_true.shape={tuple(y_true.shape)}. Pass one row of labels per "
            "sequence, padded with 0."
        )
    if y_pred.ndim != 3:
        raise _errors.GradkitValueError(
            f"tf.keras.losses.ctc expects logits y_pred of shape (batch_size, max_length, num_classes), as Keras "
            f"does (it raises too), but got y_pred.shape={tuple(y_pred.shape)}. Pass one row of logits per frame."
        )
    return call(_ctc, y_true, y_pred)


CTC = _loss_class(
    "CTC",
    ctc,
    "ctc",
    "CTC loss of integer label sequences against logits (``CTC(reduction, name, dtype)``).",
)
