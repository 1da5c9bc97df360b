"""``tf.nn.ctc_loss`` on dense labels: TensorFlow's forward-backward recursion in the log domain
(``_keras/losses_ctc.py``), each sequence over its own ``logit_length`` frames and
``label_length`` labels, the blank at ``blank_index`` (default 0; negative counts from the end).

The gradient with respect to the logits is JAX's derivative of that recursion, which is
TensorFlow's registered gradient, ``softmax(logits) - posterior``. Sparse labels (a
``SparseTensor``) are not available: gradkit.tf has no sparse tensors; pass them dense.

>>> import gradkit.tf as tf
>>> logits = tf.zeros([4, 1, 3])  # time-major: 4 frames, 1 sequence, 3 classes
>>> loss = tf.nn.ctc_loss([[1, 2]], logits, label_length=[2], logit_length=[4])
>>> round(float(loss[0].numpy()), 4)
1.6864
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value
from ._keras.losses_ctc import ctc_negative_log_likelihood


def _ctc_loss(labels, logits, label_length, logit_length, *, time_major, blank):
    if time_major:
        logits = jnp.swapaxes(logits, 0, 1)
    if blank != 0:
        # TensorFlow's rotation: the blank's column first, and the labels below it moved up one.
        logits = jnp.concatenate([logits[..., blank : blank + 1], logits[..., :blank], logits[..., blank + 1 :]], -1)
        labels = jnp.where(labels < blank, labels + 1, labels)
    # Computed in float32 (at least); TensorFlow's op returns the logits' dtype (float16 too).
    loss = ctc_negative_log_likelihood(labels, label_length, logits, logit_length)
    return loss.astype(logits.dtype) if jnp.issubdtype(logits.dtype, jnp.floating) else loss


def ctc_loss(
    labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None, name=None
):
    """``tf.nn.ctc_loss`` with dense ``labels`` (batch, max_label_length): the negative log-likelihood
    of each label sequence, shape (batch,). ``unique`` (a speed-up hint in TensorFlow) changes nothing."""
    labels, logits = convert(labels), convert(logits)
    if label_length is None:
        raise _errors.GradkitValueError(
            "tf.nn.ctc_loss got label_length=None, which TensorFlow takes for a SparseTensor of labels; gradkit.tf "
            "has no sparse tensors. Pass dense labels (batch, max_label_length) and their label_length."
        )
    if labels.ndim != 2 or logits.ndim != 3:
        raise _errors.GradkitValueError(
            f"tf.nn.ctc_loss got labels of shape {list(labels.shape)} and logits of shape {list(logits.shape)}: it "
            "takes dense labels [batch, max_label_length] and logits [frames, batch, classes] (or [batch, frames, "
            "classes] with logits_time_major=False), as TensorFlow does."
        )
    if np.dtype(labels.dtype).kind not in "iu":
        raise _errors.GradkitTypeError(
            f"tf.nn.ctc_loss got {labels.dtype} labels: they must be integers (class ids), as in TensorFlow."
        )
    classes = logits.shape[-1]
    blank = 0 if blank_index is None else int(blank_index)
    blank = blank + classes if blank < 0 else blank
    if not 0 <= blank < classes:
        raise _errors.GradkitValueError(
            f"tf.nn.ctc_loss got blank_index={blank_index} for {classes} classes: it must be in [-{classes}, {classes})."
        )
    return call(
        _ctc_loss,
        labels,
        logits,
        convert(label_length),
        convert(logit_length),
        time_major=bool(logits_time_major),
        blank=blank,
    )


_INT64 = jax.dtypes.canonicalize_dtype(np.int64)  # int32 without jax's 64-bit types


def _unique_labels(labels):
    n = labels.shape[1]
    same = labels[:, :, None] == labels[:, None, :]  # (batch, i, j): label i equals label j
    earlier = jnp.tril(jnp.ones((n, n), bool), k=-1)  # j before i
    first = ~jnp.any(same & earlier[None], axis=2)  # label i's first occurrence
    order = jnp.cumsum(first, axis=1) - 1  # where a first occurrence goes among the unique labels
    index = jnp.take_along_axis(order, jnp.argmax(same, axis=2), axis=1)
    rows = jnp.arange(labels.shape[0])[:, None]
    unique = jnp.zeros(labels.shape, labels.dtype).at[rows, jnp.where(first, order, n)].set(labels, mode="drop")
    return unique.astype(_INT64), index.astype(np.int32)


def ctc_unique_labels(labels, name=None):
    """``tf.nn.ctc_unique_labels``: per row of ``labels`` (batch, length), its distinct labels in
    order of first appearance, padded with 0 to ``length`` (int64), and for each label the index
    of its value among them (int32), as ``[unique, index]``. With the index these are the dense
    labels ``ctc_loss``'s ``unique`` argument describes in TensorFlow."""
    x = convert(labels)
    if x.ndim != 2:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.nn.ctc_unique_labels got labels of shape {tuple(x.shape)}: it takes a batch of label "
            "sequences, shape (batch, length), as TensorFlow does (its unique op raises for a vector)."
        )
    return list(call(_unique_labels, x.astype(_INT64) if np.dtype(x.dtype).kind != "i" else x))


def _collapse_repeated(labels, seq_length):
    n = labels.shape[1]
    differs = jnp.concatenate([jnp.ones_like(labels[:, :1], bool), labels[:, 1:] != labels[:, :-1]], axis=1)
    keep = differs & (jnp.arange(n)[None, :] < seq_length[:, None])
    position = jnp.cumsum(keep, axis=1) - 1
    rows = jnp.arange(labels.shape[0])[:, None]
    collapsed = jnp.zeros_like(labels).at[rows, jnp.where(keep, position, n)].set(labels, mode="drop")
    return collapsed, jnp.sum(keep, axis=1, dtype=np.int32).astype(seq_length.dtype)


def collapse_repeated(labels, seq_length, name=None):
    """``tf.nn.collapse_repeated(labels, seq_length)``: each row's first ``seq_length`` labels
    with runs of a repeated label merged into one, left-aligned and padded with 0, and the new
    lengths, as ``(collapsed_labels, new_seq_length)``: ``[[1, 1, 2, 2, 1], [1, 2, 3, 4, 5]]``
    becomes ``[[1, 2, 1, 0, 0], [1, 2, 3, 4, 5]]`` with lengths ``[3, 5]``.

    As in TensorFlow the result is as wide as the longest new length. Inside ``tf.function``,
    where a width cannot depend on the values, it keeps the input's width (the columns past the
    longest new length are 0), which ``ctc_loss`` reads the same way with ``new_seq_length``.

    >>> import gradkit.tf as tf
    >>> labels, lengths = tf.nn.collapse_repeated([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5]], [5, 5])
    >>> labels.numpy().tolist(), lengths.numpy().tolist()
    ([[1, 2, 1, 0, 0], [1, 2, 3, 4, 5]], [3, 5])
    """
    x, lengths = convert(labels), convert(seq_length)
    if x.ndim != 2 or lengths.ndim != 1 or lengths.shape[0] != x.shape[0]:
        raise _errors.GradkitValueError(
            f"tf.nn.collapse_repeated got labels of shape {tuple(x.shape)} and seq_length of shape "
            f"{tuple(lengths.shape)}: it takes labels (batch, max_length) and one length per row, (batch,), as "
            "TensorFlow does."
        )
    if np.dtype(lengths.dtype).kind not in "iu":
        raise _errors.GradkitTypeError(
            f"tf.nn.collapse_repeated got seq_length of dtype {lengths.dtype}: the lengths must be integers, as in "
            "TensorFlow."
        )
    collapsed, new_lengths = call(_collapse_repeated, x, lengths)
    known = known_value(new_lengths)
    if known is not None:
        collapsed = collapsed[:, : int(known.max(initial=0))]
    return collapsed, new_lengths
