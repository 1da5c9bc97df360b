"""``tf.image.sample_distorted_bounding_box`` and ``stateless_sample_distorted_bounding_box``
against TensorFlow's contract, derived by hand: the window lies in the image, its area (a fraction
of the image's) is in ``area_range`` and its width over height in ``aspect_ratio_range`` up to the
rounding of one pixel, it covers at least ``min_object_covered`` of the box, ``begin``/``size``/
``bboxes`` describe the same window, and when no try can meet the constraints the window is the
whole image. Where TensorFlow is installed: the same deterministic sizes, and its refusals."""

import numpy as np
import pytest

import gradkit.tf as gtf

BOX = [[[0.1, 0.2, 0.5, 0.7]]]  # rows 6..30, columns 16..56 of a 60 x 80 image


def _window(begin, size, bbox, height=60, width=80):
    (top, left, zero), (rows, cols, minus) = np.asarray(begin).tolist(), np.asarray(size).tolist()
    assert zero == 0 and minus == -1
    np.testing.assert_allclose(
        np.asarray(bbox), [[[top / height, left / width, (top + rows) / height, (left + cols) / width]]], rtol=1e-6
    )
    return top, left, rows, cols


@pytest.mark.parametrize("covered, areas, ratios", [(0.1, (0.05, 1.0), (0.75, 1.33)), (0.5, (0.1, 0.6), (0.5, 2.0))])
def test_windows_meet_the_constraints(covered, areas, ratios):
    for i in range(40):
        out = gtf.image.stateless_sample_distorted_bounding_box(
            [60, 80, 3], BOX, seed=[i, 3], min_object_covered=covered, area_range=areas, aspect_ratio_range=ratios
        )
        top, left, rows, cols = _window(*out)
        assert 0 <= top and top + rows <= 60 and 0 <= left and left + cols <= 80
        if (rows, cols) == (60, 80):
            continue  # no try met the constraints
        area = rows * cols / (60 * 80)
        assert areas[0] - 1e-6 <= area <= areas[1] + 1e-6
        assert ratios[0] - 0.5 / rows <= cols / rows <= ratios[1] + 0.5 / rows
        overlap = max(0, min(top + rows, 30) - max(top, 6)) * max(0, min(left + cols, 56) - max(left, 16))
        assert overlap >= covered * (24 * 40) - 1e-6


def _fixed_size(tf, seed):
    # Area exactly a quarter of a 40 x 40 image and a square window: 20 x 20, whatever the draws.
    return tf.image.stateless_sample_distorted_bounding_box(
        [40, 40, 1],
        [[[0.0, 0.0, 1.0, 1.0]]],
        seed=seed,
        min_object_covered=0.0,
        area_range=(0.25, 0.25),
        aspect_ratio_range=(1.0, 1.0),
    )


def test_a_fixed_size_window_and_seeds():
    corners = set()
    for i in range(20):
        begin, size, _ = _fixed_size(gtf, [i, 0])
        np.testing.assert_array_equal(size, [20, 20, -1])
        corners.add(tuple(np.asarray(begin)[:2].tolist()))
    assert len(corners) > 5 and all(0 <= c <= 19 for corner in corners for c in corner)
    again = [np.asarray(v) for v in _fixed_size(gtf, [4, 0])]
    for a, b in zip(again, _fixed_size(gtf, [4, 0])):
        np.testing.assert_array_equal(a, b)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(_fixed_size(tf, [1, 0])[1].numpy(), [20, 20, -1])


def test_impossible_constraints_give_the_whole_image():
    # Covering the whole box (40% x 50% of the image) with at most 8% of the image cannot be done.
    for sample in (
        lambda: gtf.image.stateless_sample_distorted_bounding_box(
            [60, 80, 3], BOX, seed=[1, 2], min_object_covered=1.0, area_range=(0.05, 0.08), max_attempts=5
        ),
        lambda: gtf.image.sample_distorted_bounding_box(
            [60, 80, 3], BOX, min_object_covered=1.0, area_range=(0.05, 0.08)
        ),
    ):
        begin, size, bbox = sample()
        np.testing.assert_array_equal(begin, [0, 0, 0])
        np.testing.assert_array_equal(size, [60, 80, -1])
        np.testing.assert_array_equal(bbox, [[[0, 0, 1, 1]]])


def test_inside_tf_function_and_without_boxes():
    program = gtf.function(lambda boxes: gtf.image.sample_distorted_bounding_box(gtf.constant([60, 80, 3]), boxes))
    top, left, rows, cols = _window(*program(gtf.constant(BOX)))
    assert top + rows <= 60 and left + cols <= 80
    empty = np.zeros((1, 0, 4), np.float32)
    top, left, rows, cols = _window(
        *gtf.image.stateless_sample_distorted_bounding_box(
            [60, 80, 3], empty, seed=[5, 6], use_image_if_no_bounding_boxes=True
        )
    )
    assert rows * cols >= 0.05 * 4800 - 1e-6
    with pytest.raises(ValueError, match=r"\[gradkit\].*no bounding boxes"):
        gtf.image.stateless_sample_distorted_bounding_box([60, 80, 3], empty, seed=[5, 6])
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*in \[0, 1\]"):
        gtf.image.stateless_sample_distorted_bounding_box([60, 80, 3], [[[0.1, 0.2, 1.5, 0.7]]], seed=[5, 6])
