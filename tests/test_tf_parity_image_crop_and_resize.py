"""``tf.image.crop_and_resize`` against real TensorFlow 2.21: values, dtypes, gradients with
respect to the image and the boxes (bilinear and nearest: TensorFlow's nearest-neighbour box
gradient is the bilinear one), inside ``tf.function``, and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(7)
IMAGE = RNG.standard_normal((2, 5, 7, 3)).astype(np.float32)
BOXES = np.array(
    [
        [0.113, 0.217, 0.811, 0.907],
        [0.917, 0.803, 0.121, 0.317],  # flipped both ways
        [-0.313, 0.109, 1.213, 0.713],  # rows outside the image: extrapolated
        [0.253, 0.517, 0.253, 0.517],  # a point
        [0.0, 0.0, 1.0, 1.0],  # the whole image: samples on pixel centres, computed exactly
        [0.307, -0.213, 0.613, 0.419],
    ],
    np.float32,
)
# No other sample lands within 0.01 pixel of a pixel centre or an edge of the image, where the
# bilinear derivative jumps and the crop's value steps to extrapolation_value: there, a last-bit
# difference in how XLA and TensorFlow's kernel round the coordinates would change the answer.
INDICES = np.array([0, 1, 1, 0, 1, 0], np.int32)
SIZES = [[4, 3], [1, 1], [1, 5], [6, 1]]


def _crops_and_gradients(tf, method, size, extrapolation_value=0.0, function=False):
    image, boxes = tf.Variable(IMAGE), tf.Variable(BOXES)
    weights = np.random.default_rng(1).standard_normal((len(BOXES), *size, 3)).astype(np.float32)

    def step():
        with tf.GradientTape() as tape:
            crops = tf.image.crop_and_resize(
                image, boxes, INDICES, size, method=method, extrapolation_value=extrapolation_value
            )
            loss = tf.reduce_sum(crops * weights)
        return [crops, *tape.gradient(loss, [image, boxes])]

    out = tf.function(step)() if function else step()
    return [np.asarray(x) for x in out]


def _compare(want, got):
    crops, image_grad, boxes_grad = got
    assert crops.dtype == want[0].dtype == np.float32
    assert crops.shape == want[0].shape
    np.testing.assert_allclose(crops, want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(image_grad, want[1], rtol=1e-5, atol=1e-5)
    # Sums over every sample of a box, times the image's size: float32 rounding of a larger sum.
    np.testing.assert_allclose(boxes_grad, want[2], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", SIZES, ids=[f"{h}x{w}" for h, w in SIZES])
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crops_and_gradients_match_tensorflow(method, size):
    tf = pytest.importorskip("tensorflow")
    _compare(_crops_and_gradients(tf, method, size, -0.5), _crops_and_gradients(gtf, method, size, -0.5))


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_inside_tf_function(method):
    tf = pytest.importorskip("tensorflow")
    want = _crops_and_gradients(tf, method, [3, 4], 1.5, function=True)
    _compare(want, _crops_and_gradients(gtf, method, [3, 4], 1.5, function=True))


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float64, np.float16])
def test_image_dtypes_give_float32_crops(dtype):
    tf = pytest.importorskip("tensorflow")
    image = (np.abs(IMAGE) * 40).astype(dtype)
    want = tf.image.crop_and_resize(image, BOXES, INDICES, [3, 2]).numpy()
    got = gtf.image.crop_and_resize(image, BOXES, INDICES, [3, 2]).numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_integer_image_has_no_gradient_and_float16_image_gets_float16_gradient():
    tf = pytest.importorskip("tensorflow")
    for lib in (tf, gtf):
        ints = lib.constant(np.arange(2 * 5 * 7 * 3, dtype=np.int32).reshape(2, 5, 7, 3))
        halves = lib.constant(IMAGE.astype(np.float16))
        with lib.GradientTape(persistent=True) as tape:
            tape.watch(ints)
            tape.watch(halves)
            a = lib.reduce_sum(lib.image.crop_and_resize(ints, BOXES, INDICES, [2, 2]))
            b = lib.reduce_sum(lib.image.crop_and_resize(halves, BOXES, INDICES, [2, 2]))
        assert tape.gradient(a, ints) is None
        grad = tape.gradient(b, halves)
        assert grad.dtype == lib.float16
        if lib is tf:
            want = grad.numpy()
    np.testing.assert_allclose(grad.numpy().astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_no_boxes_and_other_index_dtypes():
    tf = pytest.importorskip("tensorflow")
    empty = np.zeros((0, 4), np.float32), np.zeros((0,), np.int32)
    assert (
        gtf.image.crop_and_resize(IMAGE, *empty, [2, 3]).shape == tf.image.crop_and_resize(IMAGE, *empty, [2, 3]).shape
    )
    for indices in (INDICES.astype(np.int64), INDICES.astype(np.float32)):
        want = tf.image.crop_and_resize(IMAGE, BOXES, indices, [2, 3]).numpy()
        np.testing.assert_allclose(gtf.image.crop_and_resize(IMAGE, BOXES, indices, [2, 3]).numpy(), want, rtol=1e-6)


BAD = {
    "method": (dict(method="bicubic"), "InvalidArgumentError", "'bilinear' and 'nearest'"),
    "box index past the batch": (dict(box_indices=[0, 1, 2, 0, 1, 0]), "OutOfRangeError", r"outside \[0, batch_size\)"),
    "negative box index": (dict(box_indices=[0, 1, -1, 0, 1, 0]), "OutOfRangeError", r"outside \[0, batch_size\)"),
    "zero crop size": (dict(crop_size=[0, 2]), "InvalidArgumentError", "must be positive"),
    "three crop sizes": (dict(crop_size=[2, 2, 2]), "InvalidArgumentError", "two integers"),
    "boxes of 3": (dict(boxes=BOXES[:, :3]), "InvalidArgumentError", r"\[num_boxes, 4\]"),
    "too few indices": (dict(box_indices=[0, 1]), "InvalidArgumentError", "incompatible shape"),
    "3-D image": (dict(image=IMAGE[0]), "InvalidArgumentError", "4-D"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_are_tensorflows(case):
    tf = pytest.importorskip("tensorflow")
    change, error, message = BAD[case]
    args = dict(image=IMAGE, boxes=BOXES, box_indices=INDICES, crop_size=[2, 2]) | change
    with pytest.raises(getattr(tf.errors, error)):
        tf.image.crop_and_resize(**args)
    with pytest.raises(getattr(gtf.errors, error), match=r"^\[gradkit\] .*" + message):
        gtf.image.crop_and_resize(**args)


def test_a_bad_box_index_inside_tf_function_raises_when_it_runs_and_changes_nothing():
    pytest.importorskip("tensorflow")
    v = gtf.Variable(1.0)

    @gtf.function
    def step(indices):
        v.assign_add(1.0)
        return gtf.image.crop_and_resize(IMAGE, BOXES[:2], indices, [2, 2])

    assert step(gtf.constant([0, 1])).shape == (2, 2, 2, 3)
    assert float(v.numpy()) == 2.0
    with pytest.raises(gtf.errors.OutOfRangeError, match="outside"):
        step(gtf.constant([0, 5]))
    assert float(v.numpy()) == 2.0


def _box_gradient(tf, compiled):
    rng = np.random.RandomState(0)
    image = rng.rand(2, 7, 9, 3).astype("float32")
    # Samples of the first box fall exactly on pixel rows and columns (in_y = 3, in_x = 3),
    # where the bilinear slope changes: TensorFlow takes the slope there as zero.
    boxes = np.array([[0.1, 0.2, 0.7, 0.9], [0.3, 0.0, 0.9, 0.5]], "float32")

    def gradient():
        b = tf.constant(boxes)
        with tf.GradientTape() as tape:
            tape.watch(b)
            crops = tf.image.crop_and_resize(tf.constant(image), b, [0, 1], [4, 5])
            weights = tf.reshape(tf.range(tf.size(crops), dtype=tf.float32), tf.shape(crops)) * 0.1 + 1
            loss = tf.reduce_sum(crops * weights)
        return tape.gradient(loss, b)

    return np.asarray((tf.function(gradient) if compiled else gradient)())


def test_box_gradient_on_pixel_samples_is_the_same_eager_and_compiled():
    np.testing.assert_allclose(_box_gradient(gtf, False), _box_gradient(gtf, True), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("compiled", [False, True])
def test_box_gradient_on_pixel_samples_matches_tensorflow(compiled):
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(_box_gradient(gtf, compiled), _box_gradient(tf, compiled), rtol=1e-4, atol=1e-3)


def test_box_gradient_on_pixel_samples_with_xla_default_flags():
    # The suite runs XLA with little optimization (conftest.py); with XLA's defaults a compiled
    # program may round the sample coordinates differently, so check there too, in a fresh process.
    import os
    import subprocess
    import sys

    code = (
        f"import numpy as np, sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import gradkit.tf as gtf; "
        "from test_tf_parity_image_crop_and_resize import _box_gradient as g; "
        "np.testing.assert_allclose(g(gtf, False), g(gtf, True), rtol=1e-4, atol=1e-3)"
    )
    env = dict(os.environ, XLA_FLAGS="")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


EDGE_CASES = [((6, 8), (2, 4)), ((6, 8), (5, 7)), ((32, 32), (7, 3)), ((5, 7), (6, 6))]
# The last box ends exactly on the image's right edge from inside it: its crops are compared,
# its gradient is not (TensorFlow's gradient kernel rounds that sample to just inside the edge,
# its forward kernel onto it; gradkit takes the slope where the forward kernel puts it).
EDGE_BOXES = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.1, 0.05, 0.9, 1.0]], np.float32)


def _edge_crops(tf, image_size, crop_size, compiled):
    image = np.random.default_rng(3).standard_normal((1, *image_size, 2)).astype(np.float32)
    weights = np.random.default_rng(4).standard_normal((len(EDGE_BOXES), *crop_size, 2)).astype(np.float32)

    def step():
        boxes = tf.constant(EDGE_BOXES)
        with tf.GradientTape() as tape:
            tape.watch(boxes)
            crops = tf.image.crop_and_resize(tf.constant(image), boxes, [0, 0, 0], crop_size)
            loss = tf.reduce_sum(crops * weights)
        return crops, tape.gradient(loss, boxes)

    return [np.asarray(x) for x in (tf.function(step) if compiled else step)()], image


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("image_size", "crop_size"), EDGE_CASES, ids=str)
def test_boxes_reaching_the_image_edges_match_tensorflow(image_size, crop_size, compiled):
    # The last sample of such a box lies exactly on the image's last row or column: it must be
    # that pixel (TensorFlow's float32 division, not a multiplication by a rounded reciprocal),
    # and the boxes' gradient TensorFlow's.
    (crops, boxes_grad), image = _edge_crops(gtf, image_size, crop_size, compiled)
    np.testing.assert_array_equal(crops[0, [0, 0, -1, -1], [0, -1, 0, -1]], image[0, [0, 0, -1, -1], [0, -1, 0, -1]])
    tf = pytest.importorskip("tensorflow")
    (want_crops, want_grad), _ = _edge_crops(tf, image_size, crop_size, compiled)
    np.testing.assert_allclose(crops, want_crops, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(boxes_grad[:2], want_grad[:2], rtol=1e-4, atol=1e-3)


def test_boxes_reaching_the_image_edges_with_xla_default_flags():
    import os
    import subprocess
    import sys

    code = (
        f"import numpy as np, sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import gradkit.tf as gtf; "
        "import test_tf_parity_image_crop_and_resize as t\n"
        "for size, crop in t.EDGE_CASES:\n"
        "    for compiled in (False, True):\n"
        "        (crops, _), image = t._edge_crops(gtf, size, crop, compiled)\n"
        "        corners = ([0, 0, -1, -1], [0, -1, 0, -1])\n"
        "        np.testing.assert_array_equal(crops[0][corners], image[0][corners])\n"
    )
    env = dict(os.environ, XLA_FLAGS="")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
