"""``tf.image.resize`` (every method, with and without antialias), ``resize_with_pad`` and
``ResizeMethod`` against real TensorFlow 2.21: values and gradients with respect to the image,
for batched 4-D and single 3-D images."""

import numpy as np
import pytest

import gradkit.tf as gtf

METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]
# Up, down (by a whole factor and by a fraction) and mixed, so every kernel meets the image's edges.
SIZES = [((5, 4), (9, 7)), ((6, 8), (3, 4)), ((7, 5), (4, 3)), ((4, 6), (7, 3))]


def _image(shape, seed=0):
    """The same image for the same arguments (each program runs twice, once per module)."""
    return np.random.RandomState(seed).uniform(0.0, 1.0, shape).astype(np.float32)


def _value_and_gradient(tf, image, size, **kwargs):
    """The resized image and the gradient of a weighted sum of it (weights fixed per size)."""
    x = tf.Variable(image)
    with tf.GradientTape() as tape:
        y = tf.image.resize(x, size, **kwargs)
        weights = tf.reshape(tf.range(tf.size(y), dtype=tf.float32) % 7.0 - 3.0, tf.shape(y))
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * weights)
    return [y, tape.gradient(loss, x)]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("sizes", SIZES, ids=[f"{a}to{b}" for a, b in SIZES])
def test_resize_values_and_gradients_of_a_batch(method, antialias, sizes):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    (height, width), size = sizes
    image = _image((2, height, width, 3))
    if method == "area":  # TensorFlow has no gradient for ResizeArea: values only (gradient below)
        run_both_ok(lambda tf: tf.image.resize(image, size, method, antialias=antialias))
        return
    run_both_ok(lambda tf: _value_and_gradient(tf, image, size, method=method, antialias=antialias))


@pytest.mark.parametrize("method", METHODS)
def test_resize_of_a_single_image(method):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    image = _image((5, 6, 2))
    if method == "area":
        run_both_ok(lambda tf: tf.image.resize(image, [3, 8], method))
        return
    run_both_ok(lambda tf: _value_and_gradient(tf, image, [3, 8], method=method))


def test_the_area_gradient_is_the_adjoint_of_tensorflows_area_resize():
    # TensorFlow gives no gradient for area; gradkit's exact one is checked against the Jacobian
    # of TensorFlow's own forward, built column by column from unit images.
    tf = pytest.importorskip("tensorflow")
    shape, size = (1, 5, 7, 1), [3, 4]
    basis = np.eye(np.prod(shape), dtype=np.float32).reshape((-1, *shape[1:]))
    jacobian = tf.image.resize(basis, size, "area").numpy().reshape(len(basis), -1)  # [in, out]
    upstream = _image((1, *size, 1), seed=1)
    x = gtf.Variable(_image(shape))
    with gtf.GradientTape() as tape:
        y = gtf.image.resize(x, size, gtf.image.ResizeMethod.AREA)
    gradient = tape.gradient(y, x, output_gradients=upstream)
    np.testing.assert_allclose(gradient.numpy().ravel(), jacobian @ upstream.ravel(), rtol=1e-5, atol=1e-6)


def p_dtypes(tf):
    ints = tf.constant(np.arange(2 * 4 * 5 * 3).reshape(2, 4, 5, 3) % 251, tf.uint8)
    halves = tf.cast(_image((4, 5, 1)), tf.float16)
    return [
        tf.image.resize(ints, [3, 7]),
        tf.image.resize(ints, [3, 7], "nearest"),
        tf.image.resize(tf.cast(ints, tf.int32), [6, 2], "bicubic", antialias=True),
        tf.image.resize(halves, [6, 3]),
        tf.image.resize(halves, [6, 3], tf.image.ResizeMethod.NEAREST_NEIGHBOR),
        tf.image.resize(halves, [2, 9], "lanczos3"),
    ]


def p_dtype_names(tf):
    ints = tf.zeros([1, 4, 5, 1], tf.uint8)
    return [
        tf.image.resize(ints, [2, 2]).dtype.name,
        tf.image.resize(ints, [2, 2], "nearest").dtype.name,
        tf.image.resize(tf.zeros([4, 5, 1], tf.float16), [2, 2], "area").dtype.name,
    ]


def p_preserve_aspect_ratio(tf):
    image = _image((1, 4, 6, 2))
    return [
        tf.image.resize(image, [3, 3], preserve_aspect_ratio=True),
        tf.image.resize(image, [10, 9], "bicubic", preserve_aspect_ratio=True),
        tf.image.resize(image[0], [5, 100], "nearest", preserve_aspect_ratio=True),
        tf.image.resize(image, tf.constant([7, 5]), preserve_aspect_ratio=True, antialias=True),
    ]


def p_a_float16_image_gets_a_float16_gradient(tf):
    x = tf.Variable(tf.cast(_image((3, 4, 1)), tf.float16))
    with tf.GradientTape() as tape:
        y = tf.image.resize(x, [5, 2])
    gradient = tape.gradient(y, x)
    return [y, gradient, gradient.dtype.name]


def p_resize_inside_a_function(tf):
    f = tf.function(lambda x: tf.image.resize(x, [6, 5], "gaussian", antialias=True))
    return f(tf.constant(_image((2, 3, 4, 1))))


def p_resize_with_pad(tf):
    wide, tall = _image((2, 4, 8, 3)), _image((6, 3, 1))
    return [
        tf.image.resize_with_pad(wide, 8, 8),
        tf.image.resize_with_pad(tall, 5, 9, method="nearest"),
        tf.image.resize_with_pad(tall, 4, 4, method=tf.image.ResizeMethod.LANCZOS3, antialias=True),
        tf.image.resize_with_pad(wide, 3, 11),
    ]


def p_resize_with_pad_gradient(tf):
    x = tf.Variable(_image((4, 6, 2)))
    with tf.GradientTape() as tape:
        y = tf.image.resize_with_pad(x, 5, 5, "bicubic")
        loss = tf.reduce_sum(y * tf.reshape(tf.range(50.0), [5, 5, 2]))
    return [y, tape.gradient(loss, x)]


def p_resize_method_names(tf):
    m = tf.image.ResizeMethod
    return [m.BILINEAR, m.NEAREST_NEIGHBOR, m.BICUBIC, m.AREA, m.LANCZOS3, m.LANCZOS5, m.GAUSSIAN, m.MITCHELLCUBIC]


def p_an_unknown_method(tf):
    return tf.image.resize(_image((4, 4, 1)), [2, 2], "trilinear")


def p_a_two_dimensional_image(tf):
    return tf.image.resize(_image((4, 4)), [2, 2])


def p_a_size_of_three_numbers(tf):
    return tf.image.resize(_image((4, 4, 1)), [2, 2, 2])


def p_a_zero_size(tf):
    return tf.image.resize(_image((4, 4, 1)), [0, 2])


def p_an_upper_case_method(tf):
    return tf.image.resize(_image((4, 4, 1)), [2, 2], "BILINEAR")


def p_a_training_step_inside_a_function(tf):
    # Augment, resize, compare: the gradient of an SSIM and PSNR loss reaches the image through
    # every op, inside one compiled step.
    target = tf.constant(_image((2, 12, 12, 3), seed=3))
    x = tf.Variable(_image((2, 6, 7, 3), seed=4))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = tf.image.resize(tf.image.flip_left_right(x), [12, 12], "bicubic")
            y = tf.image.adjust_brightness(
                tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(y) * tf.constant([[[[1.0, 1.1, 0.9]]]])), 0.05
            )
            y = tf.image.resize_with_crop_or_pad(tf.image.central_crop(y, 0.75), 12, 12)
            loss = (
                -tf.reduce_mean(tf.image.ssim(y, target, 1.0, filter_size=5))
                - tf.reduce_mean(tf.image.psnr(y, target, 1.0)) / 100
            )
        return loss, tape.gradient(loss, x)

    return list(step())


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_errors_say_what_came_in():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.resize got method='trilinear'"):
        gtf.image.resize(_image((4, 4, 1)), [2, 2], "trilinear")
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.resize got an image of shape \[4, 4\]"):
        gtf.image.resize(_image((4, 4)), [2, 2])
    with pytest.raises(TypeError, match=r"bool image"):
        gtf.image.resize(np.zeros((2, 2, 1), bool), [3, 3])


@pytest.mark.parametrize(("shape", "size"), [((2, 9, 1), [1, 1]), ((2, 9, 1), [7, 2]), ((3, 2, 9, 1), [1, 1])])
def test_a_kept_aspect_ratio_that_rounds_a_side_to_zero_is_refused_as_tensorflow_refuses_it(shape, size):
    image = np.zeros(shape, np.float32)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] .*rounds one side to 0"):
        gtf.image.resize(image, size, preserve_aspect_ratio=True)
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.resize(image, size, preserve_aspect_ratio=True)
