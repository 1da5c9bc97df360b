"""``tf.image.draw_bounding_boxes`` against TensorFlow's kernel (skipped without it) on boxes that
are inside, clipped, inverted, outside and degenerate, with the default and given colors, on
gray, RGB and RGBA images; and a box drawn by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

_BOXES = np.array(
    [
        [[0.1, 0.2, 0.8, 0.9], [0.5, -0.3, 1.4, 0.5], [0.9, 0.9, 0.1, 0.2], [-0.5, -0.5, -0.1, -0.1], [0, 0, 1, 1]],
        [[0.33, 0.21, 0.67, 0.74], [0.2, 0.2, 0.2, 0.2], [-0.09, 0.5, 0.3, 1.2], [0.5, 0.5, 0.99, 0.99], [0.1] * 4],
    ],
    np.float32,
)


def _images(depth, dtype="float32"):
    rng = np.random.RandomState(0)
    return (rng.rand(2, 7, 9, depth) * (255 if dtype == "uint8" else 1)).astype(dtype)


_CASES = {
    "rgb_default": (3, "float32", None),
    "rgb_colors": (3, "float32", [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    "gray_default": (1, "float32", None),
    "gray_colors": (1, "float32", [[0.3, 0.2, 0.1]]),
    "rgba_default": (4, "float32", None),
    "uint8_default": (3, "uint8", None),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_draw_bounding_boxes_as_tensorflow(case):
    depth, dtype, colors = _CASES[case]
    colors = None if colors is None else np.asarray(colors, np.float32)
    got = gtf.image.draw_bounding_boxes(_images(depth, dtype), _BOXES, colors).numpy()
    assert got.dtype == np.float32 and got.shape == (2, 7, 9, depth)  # a NumPy array is converted to float32
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(got, tf.image.draw_bounding_boxes(_images(depth, dtype), _BOXES, colors).numpy())


def test_a_box_drawn_by_hand():
    # [0.25, 0.25, 0.75, 0.75] of a 5x5 image: rows and columns 1..3 (0.25 * 4 = 1, 0.75 * 4 = 3).
    out = gtf.image.draw_bounding_boxes(np.zeros((1, 5, 5, 1), np.float32), [[[0.25, 0.25, 0.75, 0.75]]], None)
    want = np.zeros((5, 5))
    want[1, 1:4] = want[3, 1:4] = want[1:4, 1] = want[1:4, 3] = 1.0  # white on gray
    np.testing.assert_array_equal(out.numpy()[0, :, :, 0], want)


def test_no_gradient_and_clear_errors():
    x = gtf.Variable(np.zeros((1, 3, 3, 3), np.float32))
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.image.draw_bounding_boxes(x, [[[0.0, 0.0, 1.0, 1.0]]], None))
    assert tape.gradient(y, x) is None  # TensorFlow defines no gradient for the op
    with pytest.raises(gtf.errors.InvalidArgumentError, match="equal or more channels"):
        gtf.image.draw_bounding_boxes(np.zeros((1, 3, 3, 3), np.float32), [[[0, 0, 1, 1.0]]], [[0.3, 0.2]])
    with pytest.raises(gtf.errors.InvalidArgumentError, match="float32 or float16"):
        gtf.image.draw_bounding_boxes(gtf.zeros((1, 3, 3, 3), gtf.uint8), [[[0, 0, 1, 1.0]]], None)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[batch, num_boxes, 4\]"):
        gtf.image.draw_bounding_boxes(np.zeros((1, 3, 3, 3), np.float32), [[0, 0, 1, 1.0]], None)
