"""``tf.image``'s non-max suppression: ``non_max_suppression``, ``..._with_scores`` (soft NMS) and
``..._overlaps``.

TensorFlow's serial algorithm (its CPU kernel's): candidates scoring above ``score_threshold``
are taken best first (equal scores: the lower index first). A candidate is checked against
the boxes selected since it was last checked, newest first: with hard NMS an overlap above the
threshold drops it; with soft NMS (``soft_nms_sigma > 0``, where the IoU threshold is ignored)
each overlap scales its score by ``exp(-0.5 * iou**2 / sigma)``, and a candidate whose score
dropped goes back into the queue with that score if it is still above ``score_threshold``. A
candidate that kept its score is selected. IoU is computed in float32 as the kernel does: 0
when either box has no area.

The result's length depends on the values (TensorFlow's has an unknown size in a graph), so
these run on known values: eagerly, or inside ``tf.function`` on values known while tracing.
The selection is not differentiable (TensorFlow registers no gradient); gather the boxes or
scores with the indices to keep a gradient path to them.

>>> import gradkit.tf as tf
>>> boxes = [[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, 2.0, 1.0, 3.0]]
>>> tf.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], max_output_size=3).numpy().tolist()
[0, 2]
"""

from __future__ import annotations

import heapq

import numpy as np

from gradkit import _errors

from ._array import constant
from ._convert import known_value

__all__ = ["non_max_suppression", "non_max_suppression_overlaps", "non_max_suppression_with_scores"]


def _known(x, what: str, fn: str) -> np.ndarray:
    value = known_value(x)
    if value is None:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got a traced {what} inside tf.function: the number of boxes it selects depends "
            "on their values, and a gradkit program has a fixed shape. Call it outside the compiled "
            "function (on the values it returns), or select with a fixed-size rule instead, e.g. "
            "tf.math.top_k on the scores."
        )
    return value


def _invalid(message: str) -> _errors.InvalidArgumentValueError:
    return _errors.InvalidArgumentValueError("[gradkit] " + message)


def _iou_fn(boxes: np.ndarray):
    """TensorFlow's IoU of two boxes, each ``[y1, x1, y2, x2]`` with its corners in any order."""
    boxes = boxes.astype(np.float32)
    ymin, ymax = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    xmin, xmax = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
    area = (ymax - ymin) * (xmax - xmin)

    def iou(i: int, j: int) -> np.float32:
        if area[i] <= 0 or area[j] <= 0:
            return np.float32(0.0)
        height = max(min(ymax[i], ymax[j]) - max(ymin[i], ymin[j]), np.float32(0.0))
        width = max(min(xmax[i], xmax[j]) - max(xmin[i], xmin[j]), np.float32(0.0))
        intersection = height * width
        return intersection / (area[i] + area[j] - intersection)

    return iou


def _suppress(similarity, scores: np.ndarray, max_output_size: int, threshold, score_threshold, sigma):
    """The serial algorithm; returns the selected indices and their (soft-NMS: decayed) scores."""
    scores = scores.astype(np.float32)
    threshold, score_threshold = np.float32(threshold), np.float32(score_threshold)
    soft = sigma > 0
    scale = np.float32(-0.5) / np.float32(sigma) if soft else np.float32(0.0)
    # A heap of (-score, index, the number of selected boxes it was last checked against).
    queue = [(-s, i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(queue)
    selected: list[int] = []
    selected_scores: list[np.float32] = []
    while queue and len(selected) < max_output_size:
        negative, index, begin = heapq.heappop(queue)
        score = original = np.float32(-negative)
        dropped = False
        for j in range(len(selected) - 1, begin - 1, -1):
            overlap = similarity(index, selected[j])
            if soft:
                score = np.float32(score * np.exp(scale * overlap * overlap, dtype=np.float32))
            elif overlap > threshold:
                dropped = True
                break
            if score <= score_threshold:
                break
        if dropped:
            continue
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-score, index, len(selected)))
    return np.asarray(selected, np.int32), np.asarray(selected_scores, np.float32)


def _check_common(scores: np.ndarray, n: int, max_output_size, fn: str) -> int:
    if scores.ndim != 1 or scores.shape[0] != n:
        raise _invalid(
            f"tf.image.{fn} got scores of shape {list(scores.shape)} for {n} boxes: scores has incompatible "
            "shape; give one score per box."
        )
    size = np.asarray(max_output_size)
    if size.ndim != 0 or size.dtype.kind not in "iu":
        raise _invalid(f"tf.image.{fn} got max_output_size={size.tolist()!r}: it must be an integer scalar.")
    if int(size) < 0:
        raise _invalid(f"tf.image.{fn} got max_output_size={int(size)}: output size must be non-negative.")
    return int(size)


def _check_threshold(value, what: str, fn: str) -> float:
    value = float(np.asarray(value))
    if not 0.0 <= value <= 1.0:
        raise _invalid(f"tf.image.{fn} got {what}={value}: {what} must be in [0, 1], as in TensorFlow.")
    return value


def _boxes_arg(boxes, fn: str) -> np.ndarray:
    boxes = _known(boxes, "boxes", fn)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(
            f"tf.image.{fn} got boxes of shape {list(boxes.shape)}: boxes must have 4 columns, [num_boxes, 4] "
            "each [y1, x1, y2, x2]."
        )
    return boxes


def _select(fn, boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma):
    """The checked arguments of ``tf.image.{fn}``, and the indices and scores it selects."""
    boxes = _boxes_arg(boxes, fn)
    scores = _known(scores, "scores", fn)
    size = _check_common(scores, boxes.shape[0], _known(max_output_size, "max_output_size", fn), fn)
    threshold = _check_threshold(_known(iou_threshold, "iou_threshold", fn), "iou_threshold", fn)
    score_threshold = float(_known(score_threshold, "score_threshold", fn))
    sigma = float(_known(soft_nms_sigma, "soft_nms_sigma", fn))
    if sigma < 0:
        raise _invalid(f"tf.image.{fn} got soft_nms_sigma={sigma}: soft_nms_sigma_val must be >= 0.")
    return _suppress(_iou_fn(boxes), scores, size, threshold, score_threshold, sigma)


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"), name=None):
    """``tf.image.non_max_suppression``: the indices (int32) of the boxes selected, best first."""
    indices, _ = _select("non_max_suppression", boxes, scores, max_output_size, iou_threshold, score_threshold, 0.0)
    return constant(indices)


def non_max_suppression_with_scores(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    soft_nms_sigma=0.0,
    name=None,
):
    """``tf.image.non_max_suppression_with_scores``: ``(indices, scores)`` of the boxes selected;
    with ``soft_nms_sigma > 0``, soft NMS (the scores are the decayed ones)."""
    indices, kept = _select(
        "non_max_suppression_with_scores",
        boxes,
        scores,
        max_output_size,
        iou_threshold,
        score_threshold,
        soft_nms_sigma,
    )
    return constant(indices), constant(kept)


def non_max_suppression_overlaps(
    overlaps, scores, max_output_size, overlap_threshold=0.5, score_threshold=float("-inf"), name=None
):
    """``tf.image.non_max_suppression_overlaps``: hard NMS with the given ``[n, n]`` overlaps in place of IoU."""
    fn = "non_max_suppression_overlaps"
    overlaps = _known(overlaps, "overlaps", fn)
    if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
        raise _invalid(
            f"tf.image.{fn} got overlaps of shape {list(overlaps.shape)}: overlaps must be square, [num_boxes, "
            "num_boxes]."
        )
    scores = _known(scores, "scores", fn)
    size = _check_common(scores, overlaps.shape[0], _known(max_output_size, "max_output_size", fn), fn)
    threshold = float(_known(overlap_threshold, "overlap_threshold", fn))
    score_threshold = float(_known(score_threshold, "score_threshold", fn))
    overlaps = overlaps.astype(np.float32)
    indices, _ = _suppress(lambda i, j: overlaps[i, j], scores, size, threshold, score_threshold, 0.0)
    return constant(indices)
