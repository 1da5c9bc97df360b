"""``tf.image.non_max_suppression_padded`` and ``combined_non_max_suppression`` against real
TensorFlow 2.21: random boxes (corners in either order), tied scores, every threshold, output
size and padding, batches, q=1 and per-class boxes; inside tf.function (compiled once); no
gradient; the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _same(got, want):
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == w.dtype.name
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def _iou(a, b):
    (ay0, ay1), (ax0, ax1) = sorted(a[[0, 2]]), sorted(a[[1, 3]])
    (by0, by1), (bx0, bx1) = sorted(b[[0, 2]]), sorted(b[[1, 3]])
    area_a, area_b = np.float32(ay1 - ay0) * (ax1 - ax0), np.float32(by1 - by0) * (bx1 - bx0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(ay1, by1) - max(ay0, by0), 0) * max(min(ax1, bx1) - max(ax0, bx0), 0)
    return inter / (area_a + area_b - inter)


def _combined_oracle(boxes, scores, per_class, total, iou_threshold, score_threshold, pad_per_class, clip):
    """Combined NMS as gradkit documents it for tied scores, in NumPy: per class, greedy hard NMS in
    (score descending, index) order; the classes' selections merged by score, ties in class order.
    (TensorFlow's kernel orders ties as its C++ heap and std::sort leave them, which changes which
    of two tied, overlapping boxes is kept.)"""
    batch, n, classes = scores.shape
    size = min(total, per_class * classes) if pad_per_class else total
    out = np.zeros((batch, size, 4), np.float32), np.zeros((batch, size), np.float32)
    out = (*out, np.zeros((batch, size), np.float32), np.zeros(batch, np.int32))
    for b in range(batch):
        found = []
        for c in range(classes):
            kept = []
            for i in sorted(np.flatnonzero(scores[b, :, c] > score_threshold), key=lambda i: -scores[b, i, c]):
                box = boxes[b, i, min(c, boxes.shape[2] - 1)]
                if len(kept) < min(per_class, n) and all(_iou(box, k) <= iou_threshold for k in kept):
                    kept.append(box)
                    found.append((scores[b, i, c], c, box))
        found = sorted(found, key=lambda f: -f[0])[:size]
        out[3][b] = len(found)
        for k, (score, c, box) in enumerate(found):
            out[0][b, k] = np.clip(box, 0.0, 1.0) if clip else box
            out[1][b, k], out[2][b, k] = score, c
    return out


def _same_as_oracle(got, args):
    for g, w in zip(got, _combined_oracle(*args), strict=True):
        assert tuple(g.shape) == w.shape and str(g.dtype) == w.dtype.name
        np.testing.assert_allclose(g.numpy(), w, rtol=0, atol=0)


def _boxes(rng, shape):
    corner = rng.random((*shape, 2)).astype(np.float32)
    return np.concatenate([corner, corner + rng.random((*shape, 2)).astype(np.float32) * 0.6], -1)


def _padded_case(seed):
    rng = np.random.default_rng(seed)
    n, batch = 20, [(), (2,), (2, 2)][seed % 3]  # few shapes: few compiled programs
    boxes = _boxes(rng, (*batch, n))
    if seed % 4 == 0:
        boxes = boxes[..., [2, 3, 0, 1]]  # the other corners first
    scores = rng.random((*batch, n)).astype(np.float32)
    if seed % 5 == 0:
        scores = np.round(scores * 3) / 3  # ties: the lower index first
    kw = dict(
        iou_threshold=float(rng.choice([0.0, 0.3, 0.5, 1.0])),
        score_threshold=float(rng.choice([-np.inf, 0.2, 0.5])),
        tile_size=int(rng.choice([4, 512])),
    )
    return boxes, scores, int(rng.choice([0, 6, 22])), kw


def _combined_case(seed):
    rng = np.random.default_rng(seed)
    batch, n, classes = 2, 20, 3
    boxes = _boxes(rng, (batch, n, 1 if seed % 2 else classes)) * 1.3 - 0.1  # some outside [0, 1]
    if seed % 3 == 0:
        boxes = boxes[..., [2, 3, 0, 1]]
    scores = rng.random((batch, n, classes)).astype(np.float32)
    if seed % 4 == 0:
        scores = np.round(scores * 3) / 3  # ties
    # The sizes, the padding and clip_boxes fix the compiled program (several seconds to compile):
    # few of them, while boxes, scores and both thresholds vary freely.
    per_class, total, pad = (10, 40, True) if seed == 5 else (10, 25, seed % 5 == 0)
    return (
        boxes,
        scores,
        per_class,
        total,
        float(rng.choice([0.0, 0.3, 0.5, 1.0])),
        float(rng.choice([-np.inf, 0.2, 0.5])),
        pad,
        bool(seed % 4 != 1),
    )


def test_padded_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for seed in range(12):
        boxes, scores, size, kw = _padded_case(seed)
        want = tf.image.non_max_suppression_padded(boxes, scores, size, pad_to_max_output_size=True, **kw)
        _same(gtf.image.non_max_suppression_padded(boxes, scores, size, pad_to_max_output_size=True, **kw), want)
        if boxes.ndim == 2:  # unpadded: the valid indices alone
            want = tf.image.non_max_suppression_padded(tf.constant(boxes), tf.constant(scores), size, **kw)
            _same(gtf.image.non_max_suppression_padded(boxes, scores, size, **kw), want)


def test_padded_sorted_input_canonical_coordinates_and_integer_boxes():
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(7)
    boxes, scores = _boxes(rng, (12,)), -np.sort(-rng.random(12).astype(np.float32))
    for kw in (dict(sorted_input=True), dict(canonicalized_coordinates=True), dict(score_threshold=0.4)):
        want = tf.image.non_max_suppression_padded(boxes, scores, 6, 0.2, pad_to_max_output_size=True, **kw)
        _same(gtf.image.non_max_suppression_padded(boxes, scores, 6, 0.2, pad_to_max_output_size=True, **kw), want)
    whole = (boxes * 10).astype(np.int32)
    want = tf.image.non_max_suppression_padded(whole, scores, 5, pad_to_max_output_size=True)
    _same(gtf.image.non_max_suppression_padded(whole, scores, 5, pad_to_max_output_size=True), want)


def test_combined_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for seed in range(16):
        args = _combined_case(seed)
        got = gtf.image.combined_non_max_suppression(*args)
        if seed % 4 == 0:  # tied scores: the documented order, which TensorFlow's need not be
            _same_as_oracle(got, args)
        else:
            _same(got, tf.image.combined_non_max_suppression(*args))


@pytest.mark.parametrize("per_class, total", [(10, 20), (3, 6)])
def test_combined_equal_scores_in_index_then_class_order(per_class, total):
    boxes = np.array([[2 * i, 0, 2 * i + 1, 1] for i in range(12)], np.float32)[None, :, None]
    rng = np.random.default_rng(per_class)
    for scores in (np.ones((1, 12, 3), np.float32), rng.integers(0, 3, (1, 12, 3)).astype(np.float32)):
        args = (boxes, scores, per_class, total, 0.5, -1.0, False, False)
        _same_as_oracle(gtf.image.combined_non_max_suppression(*args), args)


def test_float16_boxes_and_scores_of_combined():
    args = list(_combined_case(3))
    args[0], args[1] = args[0].astype(np.float16), args[1].astype(np.float16)  # rounding makes ties
    _same_as_oracle(gtf.image.combined_non_max_suppression(*args), args)


def test_inside_tf_function_compiled_once():
    tf = pytest.importorskip("tensorflow")

    @gtf.function
    def detect(boxes, scores, padded_boxes, padded_scores):
        combined = gtf.image.combined_non_max_suppression(boxes, scores, 4, 7, 0.4, 0.1)
        padded = gtf.image.non_max_suppression_padded(padded_boxes, padded_scores, 5, 0.4, pad_to_max_output_size=True)
        return combined, padded

    for seed in (2, 4, 6):
        rng = np.random.default_rng(seed)
        boxes, scores = _boxes(rng, (2, 9, 1)), rng.random((2, 9, 3)).astype(np.float32)
        padded_boxes, padded_scores = _boxes(rng, (3, 9)), rng.random((3, 9)).astype(np.float32)
        combined, padded = detect(
            gtf.constant(boxes), gtf.constant(scores), gtf.constant(padded_boxes), gtf.constant(padded_scores)
        )
        _same(combined, tf.image.combined_non_max_suppression(boxes, scores, 4, 7, 0.4, 0.1))
        want = tf.image.non_max_suppression_padded(padded_boxes, padded_scores, 5, 0.4, pad_to_max_output_size=True)
        _same(padded, want)
    assert detect.experimental_get_tracing_count() == 1


def test_no_gradient_as_in_tensorflow():
    boxes = gtf.Variable(_boxes(np.random.default_rng(1), (1, 6, 1)))
    scores = gtf.Variable(np.random.default_rng(2).random((1, 6, 2)).astype(np.float32))
    with gtf.GradientTape() as tape:
        nmsed_boxes, nmsed_scores, _, _ = gtf.image.combined_non_max_suppression(boxes, scores, 3, 4)
        indices, _ = gtf.image.non_max_suppression_padded(
            boxes[0, :, 0], scores[0, :, 0], 3, pad_to_max_output_size=True
        )
        loss = (
            gtf.reduce_sum(nmsed_boxes) + gtf.reduce_sum(nmsed_scores) + gtf.reduce_sum(gtf.cast(indices, gtf.float32))
        )
    assert tape.gradient(loss, [boxes, scores]) == [None, None]


def test_unpadded_needs_known_values_inside_tf_function():
    boxes, scores, _, _ = _padded_case(0)
    with pytest.raises(ValueError, match=r"^\[gradkit\] .*pad_to_max_output_size=False got traced boxes"):
        gtf.function(lambda b: gtf.image.non_max_suppression_padded(b, scores, 3))(gtf.constant(boxes))


def _args(**change):
    rng = np.random.default_rng(0)
    args = dict(boxes=_boxes(rng, (1, 5, 1)), scores=rng.random((1, 5, 2)).astype(np.float32))
    return args | dict(max_output_size_per_class=3, max_total_size=4) | change


COMBINED_BAD = {
    "q neither 1 nor classes": (_args(boxes=np.zeros((1, 5, 3, 4), np.float32)), "either 1 or num classes"),
    "boxes of 5 columns": (_args(boxes=np.zeros((1, 5, 1, 5), np.float32)), "4 columns"),
    "scores for other boxes": (_args(scores=np.zeros((1, 6, 2), np.float32)), "incompatible shape"),
    "batch sizes differ": (_args(boxes=np.zeros((2, 5, 1, 4), np.float32)), "same batch size"),
    "rank-3 boxes": (_args(boxes=np.zeros((5, 1, 4), np.float32)), "same batch size"),
    "zero per class": (_args(max_output_size_per_class=0), "must be positive"),
    "zero total": (_args(max_total_size=0), "must be > 0"),
    "threshold above 1": (_args(iou_threshold=1.5), r"must be in \[0, 1\]"),
    "per-class size a vector": (_args(max_output_size_per_class=[3]), "0-D"),
}


@pytest.mark.parametrize("case", list(COMBINED_BAD))
def test_combined_errors_are_tensorflows(case):
    tf = pytest.importorskip("tensorflow")
    args, message = COMBINED_BAD[case]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.combined_non_max_suppression(**args)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] .*" + message):
        gtf.image.combined_non_max_suppression(**args)


PADDED_BAD = {
    "batched without padding": (
        dict(boxes=np.zeros((2, 5, 4), np.float32), scores=np.zeros((2, 5), np.float32)),
        ValueError,
    ),
    "boxes of 3 columns": (dict(boxes=np.zeros((5, 3), np.float32), pad_to_max_output_size=True), ValueError),
    "scores for other boxes": (dict(scores=np.zeros(4, np.float32)), ValueError),
    "no boxes": (dict(boxes=np.zeros((0, 4), np.float32), scores=np.zeros(0, np.float32)), ValueError),
    "float max_output_size": (dict(max_output_size=3.0), TypeError),
}


@pytest.mark.parametrize("case", list(PADDED_BAD))
def test_padded_errors_are_tensorflows(case):
    tf = pytest.importorskip("tensorflow")
    change, error = PADDED_BAD[case]
    args = dict(
        boxes=np.random.rand(5, 4).astype(np.float32), scores=np.random.rand(5).astype(np.float32), max_output_size=3
    )
    args |= change
    with pytest.raises(error):
        tf.image.non_max_suppression_padded(
            **{k: tf.constant(v) if k in ("boxes", "scores") else v for k, v in args.items()}
        )
    with pytest.raises(error, match=r"^\[gradkit\] "):
        gtf.image.non_max_suppression_padded(**args)


def test_padded_negative_size_is_refused_as_tensorflow_refuses_it():
    tf = pytest.importorskip("tensorflow")
    boxes = np.random.default_rng(3).random((5, 4)).astype(np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.non_max_suppression_padded(tf.constant(boxes), tf.ones(5), -1)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] "):
        gtf.image.non_max_suppression_padded(boxes, np.ones(5, np.float32), -1)
