"""``keras.ops.nn``'s CTC ops: ``ctc_loss`` (``tf.nn.ctc_loss`` on batch-major logits, as Keras'
TensorFlow backend calls it) and ``ctc_decode`` (greedy decoding, as ``tf.nn.ctc_greedy_decoder``).

``ctc_decode`` returns Keras' dense form: labels ``(1, batch, max_length)`` padded with -1, and
scores ``(batch, 1)``, the negated sum of each frame's largest logit. Beam search is not available
in gradkit: ``strategy="beam_search"`` raises and names the greedy strategy instead.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> logits = tf.constant([[[0.0, 5.0, 0.0], [0.0, 5.0, 0.0], [5.0, 0.0, 0.0], [0.0, 0.0, 5.0]]])
>>> ops.ctc_decode(logits, [4])[0].numpy().tolist()
[[[1, 2, -1, -1]]]
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors
from gradkit._tape import record

from ... import _nn_ctc
from .dispatch import apply, cast, keras_op, tensor
from .dtype_rules import result_type

NAMES = "ctc_loss ctc_decode"


@keras_op
def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """``keras.ops.ctc_loss(target, output, target_length, output_length, mask_index=0)``: the CTC
    negative log-likelihood of each ``target`` (batch, max_label_length) under the logits ``output``
    (batch, frames, classes), ``mask_index`` the blank; differentiable in ``output``."""
    target, output = cast(target, "int32"), tensor(output)
    dtype = result_type(output.dtype, "float32")
    loss = _nn_ctc.ctc_loss(
        target,
        cast(output, dtype),
        tensor(target_length),
        tensor(output_length),
        logits_time_major=False,
        blank_index=mask_index,
    )
    return cast(loss, dtype)


def _greedy(logits, lengths, *, merge, blank):
    batch, steps = logits.shape[0], logits.shape[1]
    best = jnp.argmax(logits, axis=-1).astype(jnp.int32)
    valid = jnp.arange(steps)[None, :] < lengths[:, None]
    previous = jnp.concatenate([jnp.full((batch, 1), -1, jnp.int32), best[:, :-1]], axis=1)
    emit = valid & (best != blank)
    if merge:
        emit = emit & (best != previous)
    slot = jnp.where(emit, jnp.cumsum(emit, axis=1) - 1, steps)
    rows = jnp.broadcast_to(jnp.arange(batch)[:, None], (batch, steps))
    decoded = jnp.full((batch, steps), -1, jnp.int32).at[rows, slot].set(best, mode="drop")
    scores = -jnp.sum(jnp.where(valid, jnp.max(logits, axis=-1), jnp.zeros((), logits.dtype)), axis=1, keepdims=True)
    return decoded[None], scores


# TensorFlow's CTCGreedyDecoder is not differentiable: gradkit gives None, as for its other such ops.
record.cut_by_design(_greedy, "tf.keras.ops.ctc_decode (CTC decoding has no gradient in TensorFlow)")


@keras_op
def ctc_decode(
    inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=True, mask_index=0
):
    """``keras.ops.ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1,
    merge_repeated=True, mask_index=0)``: each sequence's most likely frame labels, repeats merged
    and blanks (``mask_index``) dropped, as ``(labels (1, batch, max_length) padded with -1, scores
    (batch, 1))``. Greedy only (see the module docstring)."""
    if strategy == "beam_search":
        raise _errors.GradkitNotImplementedError(
            "tf.keras.ops.ctc_decode got strategy='beam_search', which gradkit does not implement (TensorFlow's "
            "beam search decoder is not ported). Use strategy='greedy', the default: the best label of each frame."
        )
    if strategy != "greedy":
        raise _errors.GradkitValueError(
            f"tf.keras.ops.ctc_decode got strategy={strategy!r}: Keras takes 'greedy' or 'beam_search' (ValueError "
            "otherwise), and gradkit 'greedy'. Pass strategy='greedy'."
        )
    x = tensor(inputs)
    if x.ndim != 3:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.ctc_decode takes inputs of shape (batch, max_length, num_classes), but got shape "
            f"{tuple(x.shape)}."
        )
    x = cast(x, result_type(x.dtype, "float32"))
    classes = x.shape[-1]
    blank = classes - 1 if mask_index is None else int(mask_index)
    blank = blank + classes if blank < 0 else blank
    if not 0 <= blank < classes:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.ctc_decode got mask_index={mask_index} for {classes} classes: it must be in "
            f"[-{classes}, {classes})."
        )
    lengths = tensor(sequence_lengths, "int32")
    return tuple(apply(_greedy, x, lengths, merge=bool(merge_repeated), blank=blank))
