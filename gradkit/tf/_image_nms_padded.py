"""``tf.image``'s fixed-size non-max suppression: ``non_max_suppression_padded`` and
``combined_non_max_suppression``.

Their results have sizes known from the arguments, so both run as compiled JAX programs
(``lax`` loops, no host round trip): eagerly, inside ``tf.function`` on traced boxes and scores,
and under a tape (neither has a gradient, as in TensorFlow: a gradient through them is None).

``non_max_suppression_padded`` is TensorFlow's tiled algorithm, step for step: boxes scoring at
or below ``score_threshold`` become zero boxes, the corner order is taken from the first box of
the batch, a box suppresses another when their IoU (with TensorFlow's ``1e-8`` in the union) is
at or above ``iou_threshold``, and a selected box must have a positive coordinate. It can differ
from ``non_max_suppression`` exactly where TensorFlow's does.

``combined_non_max_suppression`` is TensorFlow's CPU kernel: per batch item and class, hard NMS
(IoU strictly above the threshold suppresses) over the boxes scoring strictly above
``score_threshold``, then the classes' selections merged by score. Equal scores come out in index
order (per class), then class order; TensorFlow's kernel leaves them in whatever order its C++
containers do (a binary heap per class, then ``std::sort``). So with ties the detections may
come out in another order, and where tied boxes overlap, one may suppress the other in
TensorFlow's kernel while the other is kept here.

>>> import gradkit.tf as tf
>>> boxes = [[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, 2.0, 1.0, 3.0]]
>>> indices, valid = tf.image.non_max_suppression_padded(
...     boxes, [0.9, 0.8, 0.7], 3, pad_to_max_output_size=True)
>>> indices.numpy().tolist(), int(valid)
([0, 2, 0], 2)
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gradkit import _errors
from gradkit._tape import record

from ._array import reshape
from ._convert import call, convert, known_value

__all__ = ["combined_non_max_suppression", "non_max_suppression_padded"]

CombinedNonMaxSuppression = collections.namedtuple(
    "CombinedNonMaxSuppression", ["nmsed_boxes", "nmsed_scores", "nmsed_classes", "valid_detections"]
)


def _invalid(message: str) -> _errors.InvalidArgumentValueError:
    return _errors.InvalidArgumentValueError("[gradkit] " + message)


def _static_int(value, what: str, fn: str, dtype_error) -> int:
    """A size argument, which fixes the result's shape: it must be known when the call runs."""
    known = known_value(value)
    if known is None:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got a traced {what} inside tf.function: it fixes the shape of the result, and a "
            "gradkit program has a fixed shape. Pass a Python int (or a tensor known outside the function)."
        )
    if known.dtype.kind not in "iu":
        raise dtype_error(f"tf.image.{fn} got {what}={known.tolist()!r}: it must be an int32 scalar.")
    if known.ndim != 0:
        raise _invalid(f"tf.image.{fn} got {what} of shape {list(known.shape)}: it must be 0-D, a scalar.")
    return int(known)


def _descending_order(keys):
    """The stable order of ``keys`` from largest to smallest along the last axis (equal keys: the
    lower index first, as TensorFlow's top_k and the kernels' comparisons, which take -0.0 == 0.0)."""
    keys = jnp.where(keys == 0, jnp.zeros_like(keys), keys)
    return jnp.argsort(-keys, axis=-1, stable=True)


# -- non_max_suppression_padded ---------------------------------------------------------------------


def _overlap(boxes_a, boxes_b):
    """TensorFlow's ``_bbox_overlap``: ``[batch, n, m]`` IoU of canonical boxes, 1e-8 in the union."""
    a_ymin, a_xmin, a_ymax, a_xmax = (boxes_a[:, :, k : k + 1] for k in range(4))
    b_ymin, b_xmin, b_ymax, b_xmax = (jnp.swapaxes(boxes_b[:, :, k : k + 1], 1, 2) for k in range(4))
    i_xmin, i_xmax = jnp.maximum(a_xmin, b_xmin), jnp.minimum(a_xmax, b_xmax)
    i_ymin, i_ymax = jnp.maximum(a_ymin, b_ymin), jnp.minimum(a_ymax, b_ymax)
    i_area = jnp.maximum(i_xmax - i_xmin, 0.0) * jnp.maximum(i_ymax - i_ymin, 0.0)
    a_area = (a_ymax - a_ymin) * (a_xmax - a_xmin)
    b_area = (b_ymax - b_ymin) * (b_xmax - b_xmin)
    union = a_area + b_area - i_area + np.float32(1e-8)
    return i_area / union


def _self_suppression(iou, threshold):
    """Suppresses a tile's boxes by the tile's boxes that nothing suppresses, until a round
    removes no more than ``threshold`` of IoU in total (TensorFlow's stopping rule)."""

    def body(state):
        iou, _, iou_sum = state
        can_suppress = (jnp.max(iou, axis=1) < threshold).astype(iou.dtype)[:, :, None]
        kept = (jnp.max(can_suppress * iou, axis=1) < threshold).astype(iou.dtype)[:, :, None]
        iou = kept * iou
        new_sum = jnp.sum(iou, axis=(1, 2))
        return iou, jnp.any(iou_sum - new_sum > threshold), new_sum

    iou, _, _ = lax.while_loop(lambda state: state[1], body, (iou, jnp.array(True), jnp.sum(iou, axis=(1, 2))))
    return iou


def _padded(boxes, scores, iou_threshold, score_threshold, *, max_output_size, tile_size, sorted_input, canonical):
    """TensorFlow's ``non_max_suppression_padded_v2`` on ``[batch, n, 4]`` boxes and ``[batch, n]``
    scores: ``[batch, max_output_size]`` int32 indices and ``[batch]`` counts, compiled once per
    shape and options (its loops would otherwise compile again at every eager call)."""
    return _padded_program(
        boxes,
        scores,
        iou_threshold,
        score_threshold,
        max_output_size=max_output_size,
        tile_size=tile_size,
        sorted_input=sorted_input,
        canonical=canonical,
    )


def _padded_kernel(
    boxes, scores, iou_threshold, score_threshold, *, max_output_size, tile_size, sorted_input, canonical
):
    batch, num_boxes = boxes.shape[0], boxes.shape[1]
    iou_threshold = jnp.asarray(iou_threshold, jnp.float32)
    score_threshold = jnp.asarray(score_threshold, jnp.float32)
    # TensorFlow skips the score mask when score_threshold is -inf (a -inf score then stays).
    keep = (scores > score_threshold) | (score_threshold == -jnp.inf)
    scores = scores * keep.astype(scores.dtype)
    boxes = boxes * keep.astype(boxes.dtype)[:, :, None]
    if not canonical:
        y1, x1, y2, x2 = (boxes[:, :, k : k + 1] for k in range(4))
        y_in_order, x_in_order = y1[0, 0, 0] <= y2[0, 0, 0], x1[0, 0, 0] <= x2[0, 0, 0]
        y_min, y_max = jnp.where(y_in_order, y1, y2), jnp.where(y_in_order, y2, y1)
        x_min, x_max = jnp.where(x_in_order, x1, x2), jnp.where(x_in_order, x2, x1)
        boxes = jnp.concatenate([y_min, x_min, y_max, x_max], axis=2)
    if sorted_input:
        sorted_indices = jnp.zeros(scores.shape, jnp.int32)
    else:
        sorted_indices = _descending_order(scores).astype(jnp.int32)
        boxes = jnp.take_along_axis(boxes, sorted_indices[:, :, None], axis=1)
    padded_size = int(np.ceil(np.float32(max(num_boxes, max_output_size)) / np.float32(tile_size))) * tile_size
    boxes = jnp.pad(boxes.astype(jnp.float32), ((0, 0), (0, padded_size - num_boxes), (0, 0)))
    num_tiles = padded_size // tile_size
    upper = jnp.arange(tile_size)[None, :] > jnp.arange(tile_size)[:, None]

    def tile_body(state):
        boxes, output_size, tile = state
        box_slice = lax.dynamic_slice_in_dim(boxes, tile * tile_size, tile_size, axis=1)

        def cross(inner):
            box_slice, earlier = inner
            suppressing = lax.dynamic_slice_in_dim(boxes, earlier * tile_size, tile_size, axis=1)
            iou = _overlap(suppressing, box_slice)
            kept = jnp.all(iou < iou_threshold, axis=1).astype(box_slice.dtype)[:, :, None]
            return kept * box_slice, earlier + 1

        box_slice, _ = lax.while_loop(lambda inner: inner[1] < tile, cross, (box_slice, jnp.int32(0)))
        iou = _overlap(box_slice, box_slice)
        iou = iou * (upper[None] & (iou >= iou_threshold)).astype(iou.dtype)
        suppressed = jnp.sum(_self_suppression(iou, iou_threshold), axis=1) > 0
        box_slice = box_slice * (1.0 - suppressed.astype(box_slice.dtype))[:, :, None]
        mask = (jnp.arange(num_tiles) == tile).astype(boxes.dtype).reshape(1, -1, 1, 1)
        tiled = jnp.broadcast_to(box_slice[:, None], (batch, num_tiles, tile_size, 4))
        boxes = tiled * mask + boxes.reshape(batch, num_tiles, tile_size, 4) * (1 - mask)
        boxes = boxes.reshape(batch, padded_size, 4)
        output_size = output_size + jnp.sum(jnp.any(box_slice > 0, axis=2), axis=1, dtype=jnp.int32)
        return boxes, output_size, tile + 1

    def tile_cond(state):
        _, output_size, tile = state
        return (jnp.min(output_size, initial=np.iinfo(np.int32).max) < max_output_size) & (tile < num_tiles)

    start = (boxes, jnp.zeros((batch,), jnp.int32), jnp.int32(0))
    selected_boxes, output_size, _ = lax.while_loop(tile_cond, tile_body, start)
    num_valid = jnp.minimum(output_size, max_output_size)
    rank = (
        jnp.any(selected_boxes > 0, axis=2).astype(jnp.int32) * jnp.arange(padded_size, 0, -1, dtype=jnp.int32)[None, :]
    )
    idx = padded_size - lax.top_k(rank, max_output_size)[0]
    idx = jnp.minimum(idx, num_boxes - 1)
    if not sorted_input:
        idx = jnp.take_along_axis(sorted_indices, idx, axis=1)
    idx = jnp.where(jnp.arange(max_output_size)[None, :] < num_valid[:, None], idx, 0)
    return idx.astype(jnp.int32), num_valid


_padded_program = jax.jit(_padded_kernel, static_argnames=("max_output_size", "tile_size", "sorted_input", "canonical"))
record.cut_by_design(_padded, "tf.image.non_max_suppression_padded (it has no gradient in TensorFlow)")


def non_max_suppression_padded(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_to_max_output_size=False,
    name=None,
    sorted_input=False,
    canonicalized_coordinates=False,
    tile_size=512,
):
    """``tf.image.non_max_suppression_padded``: ``(indices, num_valid)`` of TensorFlow's tiled NMS
    over ``[..., num_boxes, 4]`` boxes and ``[..., num_boxes]`` float32 scores. With
    ``pad_to_max_output_size`` the indices have shape ``[..., max_output_size]`` (zeros past
    ``num_valid``); without it (one image only), the valid indices alone, which needs known values."""
    fn = "non_max_suppression_padded"
    boxes, scores = convert(boxes), convert(scores)
    if not pad_to_max_output_size and boxes.ndim > 2:
        raise _errors.GradkitValueError(
            f"tf.image.{fn}: 'pad_to_max_output_size' (value False) must be True for batched input (boxes of "
            f"shape {list(boxes.shape)}), as in TensorFlow."
        )
    size = _static_int(max_output_size, "max_output_size", fn, _errors.GradkitTypeError)
    if size < 0:
        raise _invalid(f"tf.image.{fn} got max_output_size={size}: it must be non-negative.")
    if str(scores.dtype) != "float32":
        raise _errors.GradkitTypeError(
            f"tf.image.{fn} got {scores.dtype} scores: TensorFlow's compares them with a float32 score_threshold "
            "and takes float32 only. Cast them: tf.cast(scores, tf.float32)."
        )
    if boxes.dtype.kind not in "fiu" or str(boxes.dtype) == "bool":
        raise _errors.GradkitTypeError(f"tf.image.{fn} got {boxes.dtype} boxes: they must be real numbers.")
    if boxes.ndim < 2:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got boxes of shape {list(boxes.shape)}: they must be [..., num_boxes, 4]."
        )
    num_boxes = boxes.shape[-2]
    batch_shape = tuple(boxes.shape[:-2])
    batch = boxes.size // (num_boxes * 4) if num_boxes else 0
    if not batch or boxes.size != batch * num_boxes * 4 or scores.size != batch * num_boxes:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got boxes of shape {list(boxes.shape)} and scores of shape {list(scores.shape)}: "
            "boxes must be [..., num_boxes, 4] and scores [..., num_boxes], with at least one box and as many "
            "images in each."
        )
    tile = int(tile_size)
    if tile <= 0:
        raise _invalid(f"tf.image.{fn} got tile_size={tile}: it must be positive.")
    indices, num_valid = call(
        _padded,
        reshape(boxes, (batch, num_boxes, 4)),
        reshape(scores, (batch, num_boxes)),
        convert(iou_threshold, "float32"),
        convert(score_threshold, "float32"),
        max_output_size=size,
        tile_size=tile,
        sorted_input=bool(sorted_input),
        canonical=bool(canonicalized_coordinates),
    )
    if pad_to_max_output_size:
        return reshape(indices, (*batch_shape, size)), reshape(num_valid, batch_shape)
    count = known_value(num_valid)
    if count is None:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} with pad_to_max_output_size=False got traced boxes inside tf.function: its result's "
            "length depends on their values, and a gradkit program has a fixed shape. Pass "
            "pad_to_max_output_size=True and use the first num_valid indices."
        )
    return indices[0, : int(count[0])], reshape(num_valid, ())


# -- combined_non_max_suppression -----------------------------------------------------------------


def _stable_order(scores, passing):
    """The passing boxes best first, equal scores in index order (TensorFlow's kernel takes them
    from a heap, which leaves equal scores in an order of its own)."""
    return _descending_order(jnp.where(passing, scores, -jnp.inf)).astype(jnp.int32)


def _iou(box, boxes):
    """The kernel's IoU of ``box`` with each of ``boxes`` (any corner order; 0 when either has
    no area)."""
    ymin, ymax = jnp.minimum(box[0], box[2]), jnp.maximum(box[0], box[2])
    xmin, xmax = jnp.minimum(box[1], box[3]), jnp.maximum(box[1], box[3])
    ymins, ymaxs = jnp.minimum(boxes[:, 0], boxes[:, 2]), jnp.maximum(boxes[:, 0], boxes[:, 2])
    xmins, xmaxs = jnp.minimum(boxes[:, 1], boxes[:, 3]), jnp.maximum(boxes[:, 1], boxes[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    areas = (ymaxs - ymins) * (xmaxs - xmins)
    height = jnp.maximum(jnp.minimum(ymax, ymaxs) - jnp.maximum(ymin, ymins), 0.0)
    width = jnp.maximum(jnp.minimum(xmax, xmaxs) - jnp.maximum(xmin, xmins), 0.0)
    intersection = height * width
    iou = intersection / (area + areas - intersection)
    return jnp.where((area <= 0) | (areas <= 0), 0.0, iou)


def _class_nms(boxes, scores, order, count, iou_threshold, size_per_class):
    """Hard NMS over the candidates in ``order``: the selected box indices (-1 past the last)."""
    selected = jnp.full((size_per_class,), -1, jnp.int32)
    selected_boxes = jnp.zeros((size_per_class, 4), boxes.dtype)

    def body(state):
        position, taken, selected, selected_boxes = state
        index = order[position]
        box = boxes[index]
        overlaps = (_iou(box, selected_boxes) > iou_threshold) & (jnp.arange(size_per_class) < taken)
        keep = ~jnp.any(overlaps)
        slot = jnp.minimum(taken, size_per_class - 1)
        selected = jnp.where(keep, selected.at[slot].set(index), selected)
        selected_boxes = jnp.where(keep, selected_boxes.at[slot].set(box), selected_boxes)
        return position + 1, taken + keep.astype(jnp.int32), selected, selected_boxes

    def cond(state):
        return (state[0] < count) & (state[1] < size_per_class)

    start = (jnp.int32(0), jnp.int32(0), selected, selected_boxes)
    return lax.while_loop(cond, body, start)[2]


def _combined(boxes, scores, iou_threshold, score_threshold, *, size_per_class, per_batch_size, clip_boxes):
    """The kernel on ``[batch, n, q, 4]`` boxes and ``[batch, n, classes]`` scores, compiled once per
    shape and sizes (its many loops would otherwise compile again at every eager call)."""
    return _combined_program(
        boxes,
        scores,
        iou_threshold,
        score_threshold,
        size_per_class=size_per_class,
        per_batch_size=per_batch_size,
        clip_boxes=clip_boxes,
    )


def _combined_kernel(boxes, scores, iou_threshold, score_threshold, *, size_per_class, per_batch_size, clip_boxes):
    batch, num_classes = boxes.shape[0], scores.shape[2]
    if size_per_class == 0:  # no boxes: nothing selected
        return (
            jnp.zeros((batch, per_batch_size, 4), jnp.float32),
            jnp.zeros((batch, per_batch_size), jnp.float32),
            jnp.zeros((batch, per_batch_size), jnp.float32),
            jnp.zeros((batch,), jnp.int32),
        )
    iou_threshold = jnp.asarray(iou_threshold, jnp.float32)
    class_scores = jnp.swapaxes(scores, 1, 2)  # [batch, classes, n]
    passing = class_scores > score_threshold
    counts = jnp.sum(passing.astype(jnp.int32), axis=-1)
    orders = jax.vmap(jax.vmap(_stable_order))(class_scores, passing)
    class_boxes = jnp.broadcast_to(jnp.moveaxis(boxes, 2, 1), (batch, num_classes, boxes.shape[1], 4))
    nms = jax.vmap(jax.vmap(_class_nms, in_axes=(0, 0, 0, 0, None, None)), in_axes=(0, 0, 0, 0, None, None))
    selected = nms(class_boxes, class_scores, orders, counts, iou_threshold, size_per_class)  # [batch, classes, k]
    valid = selected >= 0
    safe = jnp.maximum(selected, 0)
    cand_scores = jnp.where(valid, jnp.take_along_axis(class_scores, safe, axis=2), -jnp.inf)
    cand_boxes = jnp.where(valid[..., None], jnp.take_along_axis(class_boxes, safe[..., None], axis=2), 0.0)
    cand_classes = jnp.where(valid, jnp.arange(num_classes, dtype=jnp.float32)[None, :, None], -1.0)
    total = num_classes * size_per_class
    cand_scores = cand_scores.reshape(batch, total)
    cand_boxes = cand_boxes.reshape(batch, total, 4)
    cand_classes = cand_classes.reshape(batch, total)
    valid = valid.reshape(batch, total)
    merged = _descending_order(cand_scores)
    take = min(total, per_batch_size)
    merged = merged[:, :take]
    detections = jnp.minimum(jnp.sum(valid.astype(jnp.int32), axis=1), per_batch_size)
    shown = jnp.arange(take)[None, :] < detections[:, None]
    out_scores = jnp.where(shown, jnp.take_along_axis(cand_scores, merged, axis=1), 0.0)
    out_classes = jnp.where(shown, jnp.take_along_axis(cand_classes, merged, axis=1), 0.0)
    out_boxes = jnp.take_along_axis(cand_boxes, merged[..., None], axis=1)
    if clip_boxes:
        out_boxes = jnp.maximum(jnp.minimum(out_boxes, 1.0), 0.0)
    out_boxes = jnp.where(shown[..., None], out_boxes, 0.0)
    pad = per_batch_size - take
    out_boxes = jnp.pad(out_boxes, ((0, 0), (0, pad), (0, 0)))
    out_scores = jnp.pad(out_scores, ((0, 0), (0, pad)))
    out_classes = jnp.pad(out_classes, ((0, 0), (0, pad)))
    return out_boxes, out_scores, out_classes, detections.astype(jnp.int32)


_combined_program = jax.jit(_combined_kernel, static_argnames=("size_per_class", "per_batch_size", "clip_boxes"))
record.cut_by_design(_combined, "tf.image.combined_non_max_suppression (it has no gradient in TensorFlow)")


def combined_non_max_suppression(
    boxes,
    scores,
    max_output_size_per_class,
    max_total_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_per_class=False,
    clip_boxes=True,
    name=None,
):
    """``tf.image.combined_non_max_suppression``: ``(nmsed_boxes, nmsed_scores, nmsed_classes,
    valid_detections)`` of per-class NMS over ``[batch, num_boxes, q, 4]`` boxes (``q`` is 1, the
    same boxes for every class, or ``num_classes``) and ``[batch, num_boxes, num_classes]``
    scores, merged by score; float32 results padded with zeros, int32 counts."""
    fn = "combined_non_max_suppression"
    boxes, scores = convert(boxes), convert(scores)
    for what, x in (("boxes", boxes), ("scores", scores)):
        if x.dtype.kind != "f":
            raise _errors.GradkitTypeError(f"tf.image.{fn} got {x.dtype} {what}: they must be floats.")
    per_class = _static_int(max_output_size_per_class, "max_output_size_per_class", fn, _errors.GradkitTypeError)
    total = _static_int(max_total_size, "max_total_size", fn, _errors.GradkitTypeError)
    if np.asarray(known_value(max_total_size)).dtype.itemsize > 4 and not isinstance(max_total_size, int):
        raise _errors.InvalidArgumentTypeError(
            f"[gradkit] tf.image.{fn} got an int64 max_total_size: TensorFlow's op takes int32 only."
        )
    if boxes.ndim != 4 or scores.ndim != 3 or boxes.shape[0] != scores.shape[0]:
        raise _invalid(
            f"tf.image.{fn} got boxes of shape {list(boxes.shape)} and scores of shape {list(scores.shape)}: they "
            "must be [batch, num_boxes, q, 4] and [batch, num_boxes, num_classes], with the same batch size."
        )
    if boxes.shape[3] != 4:
        raise _invalid(f"tf.image.{fn} got boxes of shape {list(boxes.shape)}: boxes must have 4 columns.")
    if boxes.shape[1] != scores.shape[1]:
        raise _invalid(
            f"tf.image.{fn} got {boxes.shape[1]} boxes and scores for {scores.shape[1]}: scores has incompatible shape."
        )
    if boxes.shape[2] not in (1, scores.shape[2]):
        raise _invalid(
            f"tf.image.{fn} got boxes of shape {list(boxes.shape)} for {scores.shape[2]} classes: third dimension "
            "of boxes must be either 1 or num classes."
        )
    if per_class <= 0:
        raise _invalid(f"tf.image.{fn} got max_output_size_per_class={per_class}: max_size_per_class must be positive.")
    if total <= 0:
        raise _invalid(f"tf.image.{fn} got max_total_size={total}: max_total_size must be > 0.")
    threshold = known_value(iou_threshold)
    if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
        raise _invalid(f"tf.image.{fn} got iou_threshold={float(threshold)}: iou_threshold must be in [0, 1].")
    per_batch_size = min(total, per_class * scores.shape[2]) if pad_per_class else total
    return CombinedNonMaxSuppression(
        *call(
            _combined,
            convert(boxes, "float32") if str(boxes.dtype) != "float32" else boxes,
            convert(scores, "float32") if str(scores.dtype) != "float32" else scores,
            convert(iou_threshold, "float32"),
            convert(score_threshold, "float32"),
            size_per_class=min(per_class, boxes.shape[1]),
            per_batch_size=per_batch_size,
            clip_boxes=bool(clip_boxes),
        )
    )
