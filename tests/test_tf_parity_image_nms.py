"""``tf.image.non_max_suppression``, ``..._with_scores`` (hard and soft NMS) and ``..._overlaps``
against real TensorFlow 2.21 on random boxes (corners in either order, tied scores, degenerate
boxes), every threshold and output size, and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    corner = rng.random((n, 2)).astype(np.float32) * 3
    size = rng.random((n, 2)).astype(np.float32) * 1.5
    boxes = np.concatenate([corner, corner + size], 1)
    if seed % 3 == 0:
        boxes = boxes[:, [2, 3, 0, 1]]  # the other corners first
    if seed % 4 == 0:
        boxes[0, 2] = boxes[0, 0]  # a box with no area
    scores = rng.random(n).astype(np.float32)
    if seed % 5 == 0:
        scores = np.round(scores * 4) / 4  # equal scores: the lower index first
    return boxes, scores, int(rng.integers(0, n + 2)), rng.random((n, n)).astype(np.float32)


SEEDS = range(24)
SETTINGS = [(0.5, float("-inf"), 0.0), (0.3, 0.25, 0.0), (1.0, float("-inf"), 0.5), (0.5, 0.2, 0.3), (0.0, 0.5, 0.0)]


@pytest.mark.parametrize("iou_threshold, score_threshold, sigma", SETTINGS)
def test_selections_match_tensorflow(iou_threshold, score_threshold, sigma):
    tf = pytest.importorskip("tensorflow")
    for seed in SEEDS:
        boxes, scores, size, overlaps = _case(seed)
        want = tf.image.non_max_suppression_with_scores(boxes, scores, size, iou_threshold, score_threshold, sigma)
        got = gtf.image.non_max_suppression_with_scores(boxes, scores, size, iou_threshold, score_threshold, sigma)
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        assert got[0].dtype == np.int32 and got[1].dtype == np.float32
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), rtol=1e-6)
        hard = tf.image.non_max_suppression(boxes, scores, size, iou_threshold, score_threshold).numpy()
        np.testing.assert_array_equal(
            gtf.image.non_max_suppression(boxes, scores, size, iou_threshold, score_threshold).numpy(), hard
        )
        by_overlaps = tf.image.non_max_suppression_overlaps(overlaps, scores, size, iou_threshold, score_threshold)
        np.testing.assert_array_equal(
            gtf.image.non_max_suppression_overlaps(overlaps, scores, size, iou_threshold, score_threshold).numpy(),
            by_overlaps.numpy(),
        )


def test_known_values_inside_tf_function_and_a_gradient_through_the_gathered_boxes():
    boxes, scores, _, _ = _case(1)
    weights = gtf.Variable(scores)

    @gtf.function
    def step():
        with gtf.GradientTape() as tape:
            keep = gtf.image.non_max_suppression(boxes, scores, 4)
            loss = gtf.reduce_sum(gtf.gather(weights, keep) * 2.0)
        return keep, tape.gradient(loss, weights)

    keep, grad = step()
    want = np.zeros_like(scores)
    want[keep.numpy()] = 2.0
    np.testing.assert_array_equal(grad.numpy(), want)


def test_traced_boxes_inside_tf_function_are_refused_clearly():
    boxes, scores, _, _ = _case(2)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.non_max_suppression got a traced boxes"):
        gtf.function(lambda b: gtf.image.non_max_suppression(b, scores, 3))(gtf.constant(boxes))


BAD = {
    "negative output size": (dict(max_output_size=-1), "non-negative"),
    "threshold above 1": (dict(iou_threshold=1.5), r"must be in \[0, 1\]"),
    "boxes of 3": (dict(boxes=np.zeros((5, 3), np.float32)), "4 columns"),
    "scores of another length": (dict(scores=np.zeros(4, np.float32)), "incompatible shape"),
    "negative sigma": (dict(soft_nms_sigma=-1.0), ">= 0"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_are_tensorflows(case):
    tf = pytest.importorskip("tensorflow")
    change, message = BAD[case]
    args = dict(boxes=np.random.rand(5, 4).astype(np.float32), scores=np.random.rand(5).astype(np.float32))
    args |= dict(max_output_size=3) | change
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.non_max_suppression_with_scores(**args)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] .*" + message):
        gtf.image.non_max_suppression_with_scores(**args)


def test_overlaps_must_be_square():
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.non_max_suppression_overlaps(np.zeros((5, 4), np.float32), np.zeros(5, np.float32), 3)
    with pytest.raises(gtf.errors.InvalidArgumentError, match="must be square"):
        gtf.image.non_max_suppression_overlaps(np.zeros((5, 4), np.float32), np.zeros(5, np.float32), 3)
