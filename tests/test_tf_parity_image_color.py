"""``tf.image``'s colour conversions, adjustments and ``convert_image_dtype`` against real
TensorFlow 2.21: values and dtypes for batched 4-D and single 3-D images, gradients with
TensorFlow's where it has them, and where it has none (contrast, hue, saturation,
hsv_to_rgb) against central differences of TensorFlow's own forward."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _image(shape, seed=0, low=0.0, high=1.0):
    """The same image for the same arguments (each program runs twice, once per module)."""
    return np.random.RandomState(seed).uniform(low, high, shape).astype(np.float32)


BATCH, SINGLE = _image((2, 3, 4, 3)), _image((4, 5, 3), seed=1)
UINT8 = (np.random.RandomState(2).uniform(0, 256, (2, 3, 4, 3))).astype(np.uint8)


def _weighted(tf, y):
    weights = tf.reshape(tf.range(tf.size(y), dtype=tf.float32) % 5.0 - 2.0, tf.shape(y))
    return tf.reduce_sum(tf.cast(y, tf.float32) * weights)


def _with_gradient(tf, op, image, *params):
    """``op(image, *params)`` and the gradients of a weighted sum of it (image and params)."""
    sources = [tf.Variable(image)] + [tf.Variable(p) for p in params]
    with tf.GradientTape() as tape:
        y = op(*sources)
        loss = _weighted(tf, y)
    return [y, tape.gradient(loss, sources)]


DIFFERENTIABLE = {
    "rgb_to_grayscale": (lambda tf: tf.image.rgb_to_grayscale, ()),
    "rgb_to_hsv": (lambda tf: tf.image.rgb_to_hsv, ()),
    "rgb_to_yiq": (lambda tf: tf.image.rgb_to_yiq, ()),
    "yiq_to_rgb": (lambda tf: tf.image.yiq_to_rgb, ()),
    "rgb_to_yuv": (lambda tf: tf.image.rgb_to_yuv, ()),
    "yuv_to_rgb": (lambda tf: tf.image.yuv_to_rgb, ()),
    "adjust_brightness": (lambda tf: tf.image.adjust_brightness, (0.3,)),
    "adjust_gamma": (lambda tf: tf.image.adjust_gamma, (0.7, 1.3)),
    "per_image_standardization": (lambda tf: tf.image.per_image_standardization, ()),
    "convert_to_float16": (lambda tf: lambda x: tf.image.convert_image_dtype(x, tf.float16), ()),
}


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
@pytest.mark.parametrize("image", [BATCH, SINGLE], ids=["batch", "single"])
def test_values_and_gradients(name, image):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    op, params = DIFFERENTIABLE[name]
    run_both_ok(lambda tf: _with_gradient(tf, op(tf), image, *params))


def test_grayscale_to_rgb_values_and_gradients():
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(lambda tf: _with_gradient(tf, tf.image.grayscale_to_rgb, _image((2, 3, 4, 1))))
    run_both_ok(lambda tf: _with_gradient(tf, tf.image.grayscale_to_rgb, _image((3, 1))))


WITHOUT_TF_GRADIENT = {
    "hsv_to_rgb": (lambda tf: tf.image.hsv_to_rgb, None),
    "adjust_contrast": (lambda tf: tf.image.adjust_contrast, 1.7),
    "adjust_contrast_down": (lambda tf: tf.image.adjust_contrast, 0.4),
    "adjust_hue": (lambda tf: tf.image.adjust_hue, 0.23),
    "adjust_hue_back": (lambda tf: tf.image.adjust_hue, -0.61),
    "adjust_saturation": (lambda tf: tf.image.adjust_saturation, 0.6),
    "adjust_saturation_up": (lambda tf: tf.image.adjust_saturation, 1.4),
}


@pytest.mark.parametrize("name", list(WITHOUT_TF_GRADIENT))
@pytest.mark.parametrize("image", [BATCH, SINGLE], ids=["batch", "single"])
def test_values(name, image):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    op, param = WITHOUT_TF_GRADIENT[name]
    run_both_ok(lambda tf: op(tf)(image) if param is None else op(tf)(image, param))


def _away_from_kinks(tf):
    """Pixels whose hue lies inside a sixth of the circle, before and after the hue turns tested,
    with saturation and value away from 0, so no channel ties and no clip is met nearby."""
    rng = np.random.RandomState(5)
    sixth = rng.randint(0, 6, (2, 3, 4)) + rng.uniform(0.15, 0.5, (2, 3, 4))
    hsv = np.stack([sixth / 6, rng.uniform(0.3, 0.65, (2, 3, 4)), rng.uniform(0.3, 1.0, (2, 3, 4))], -1)
    return tf.image.hsv_to_rgb(hsv.astype(np.float32)).numpy()


@pytest.mark.parametrize("name", list(WITHOUT_TF_GRADIENT))
def test_gradients_where_tensorflow_has_none(name):
    # The gradient of a weighted sum, along a random direction of the image (and of the
    # parameter), against central differences of TensorFlow's forward: every op here is
    # piecewise smooth, and the image is far from its kinks at this step.
    tf = pytest.importorskip("tensorflow")
    op, param = WITHOUT_TF_GRADIENT[name]
    image = _away_from_kinks(tf)
    direction = _image(image.shape, seed=7, low=-1.0, high=1.0)
    weights = np.arange(image.size, dtype=np.float64).reshape(image.shape) % 5 - 2

    def tf_value(x, p):
        y = op(tf)(x) if param is None else op(tf)(x, np.float32(p))
        return float(np.sum(y.numpy().astype(np.float64) * weights))

    step = 1e-4
    x = gtf.Variable(image)
    p = None if param is None else gtf.Variable(np.float32(param))
    with gtf.GradientTape() as tape:
        y = op(gtf)(x) if p is None else op(gtf)(x, p)
    gradients = tape.gradient(y, [x] if p is None else [x, p], output_gradients=weights.astype(np.float32))
    expected = (tf_value(image + step * direction, param) - tf_value(image - step * direction, param)) / (2 * step)
    np.testing.assert_allclose(np.sum(gradients[0].numpy() * direction), expected, rtol=2e-3, atol=5e-3)
    if p is not None:
        expected = (tf_value(image, param + step) - tf_value(image, param - step)) / (2 * step)
        np.testing.assert_allclose(float(gradients[1]), expected, rtol=2e-3, atol=5e-3)


def p_integer_images(tf):
    images = tf.constant(UINT8)
    return [
        tf.image.rgb_to_grayscale(images),
        tf.image.adjust_brightness(images, 0.2),
        tf.image.adjust_brightness(images, -0.3),
        tf.image.adjust_contrast(images, 2.5),
        tf.image.adjust_gamma(images, 0.5, 1.5),
        tf.image.adjust_hue(images, 0.4),
        tf.image.adjust_saturation(images, 3.0),
        tf.image.per_image_standardization(images),
        tf.image.adjust_contrast(tf.cast(images, tf.int16), 0.5),
    ]


def p_a_uint8_augmentation_pipeline(tf):
    image = tf.image.convert_image_dtype(tf.constant(UINT8), tf.float32)
    image = tf.image.adjust_hue(tf.image.adjust_saturation(image, 1.3), -0.1)
    image = tf.image.adjust_contrast(tf.image.adjust_brightness(image, 0.05), 1.1)
    image = tf.image.resize(image, [5, 6], antialias=True)
    # Away from the rounding boundaries of the cast back, so both round each value alike.
    return [image, tf.image.convert_image_dtype(tf.round(image * 255) / 255, tf.uint8, saturate=True)]


def p_dtype_names(tf):
    images = tf.constant(UINT8)
    halves = tf.cast(BATCH, tf.float16)
    return [
        tf.image.rgb_to_grayscale(images).dtype.name,
        tf.image.rgb_to_grayscale(halves).dtype.name,
        tf.image.per_image_standardization(images).dtype.name,
        tf.image.adjust_brightness(halves, 0.1).dtype.name,
        tf.image.adjust_gamma(images, 2.0).dtype.name,
        tf.image.rgb_to_hsv(halves).dtype.name,
        tf.image.rgb_to_yuv(halves).dtype.name,
    ]


def p_float16(tf):
    halves = tf.cast(BATCH, tf.float16)
    return [
        tf.cast(tf.image.rgb_to_grayscale(halves), tf.float32),
        tf.cast(tf.image.adjust_brightness(halves, 0.25), tf.float32),
    ]


def p_hsv_of_grays_blacks_and_ties(tf):
    pixels = tf.constant(
        [[[0.0, 0.0, 0.0], [0.4, 0.4, 0.4], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [0.2, 0.5, 0.5]]]
    )
    return [
        tf.image.rgb_to_hsv(pixels),
        tf.image.adjust_hue(pixels, 0.5),
        tf.image.adjust_saturation(pixels, 0.5),
        tf.image.hsv_to_rgb(tf.constant([[0.0, 1.0, 1.0], [0.999, 0.5, 0.5], [1.0, 1.0, 1.0]])),
    ]


def p_hsv_gradients_where_channels_tie(tf):
    pixels = tf.Variable(
        [[[1.0, 1.0, 0.2], [0.4, 0.4, 0.4], [0.0, 0.0, 0.0], [0.2, 0.5, 0.5], [0.3, 0.1, 0.3], [0.2, 0.2, 0.6]]]
    )
    with tf.GradientTape() as tape:
        hsv = tf.image.rgb_to_hsv(pixels) * tf.constant([[[1.0, 2.0, 3.0]]])
    return tape.gradient(hsv, pixels)


def test_the_hsv_gradient_is_exact_where_the_smallest_channel_is_zero():
    # TensorFlow's RGBToHSV gradient multiplies each channel's saturation and hue terms by
    # (channel > 0), so a zero smallest channel gets none: for (1, 0.5, 0) it gives
    # d saturation / d blue = 0 where saturation = 1 - blue / red makes it -1. gradkit's is
    # exact; central differences of TensorFlow's own forward agree with it.
    tf = pytest.importorskip("tensorflow")
    pixel = np.array([[[1.0, 0.5, 0.0]]], np.float32)
    x = gtf.Variable(pixel)
    with gtf.GradientTape() as tape:
        saturation = gtf.image.rgb_to_hsv(x)[..., 1]
    step = np.array([[[0.0, 0.0, 1e-3]]], np.float32)
    forward = (tf.image.rgb_to_hsv(pixel + step)[..., 1] - tf.image.rgb_to_hsv(pixel)[..., 1]).numpy() / 1e-3
    np.testing.assert_allclose(tape.gradient(saturation, x).numpy()[0, 0], [0.0, 0.0, -1.0], atol=1e-6)
    np.testing.assert_allclose(forward, -1.0, rtol=1e-3)


def p_per_image_standardization_of_a_flat_image(tf):
    return [
        tf.image.per_image_standardization(tf.fill([2, 2, 3], 0.5)),
        tf.image.per_image_standardization(tf.constant([[[0.0], [1e-4]], [[0.0], [0.0]]])),
    ]


def p_gradients_at_flat_images_and_zero_pixels(tf):
    flat = tf.Variable(tf.fill([2, 2, 3], 0.5))
    pixels = tf.Variable([[[0.0, 0.5, 0.5], [0.5, 0.0, 1.0]], [[0.5, 0.5, 0.2], [1.0, 0.0, 0.3]]])
    with tf.GradientTape(persistent=True) as tape:
        standardized = tf.image.per_image_standardization(flat)
        squared = tf.image.adjust_gamma(pixels, 2.0)
        brightened = tf.image.adjust_brightness(pixels, 0.6)  # saturates at 1
    return [tape.gradient(standardized, flat), tape.gradient(squared, pixels), tape.gradient(brightened, pixels)]


def p_tensor_parameters(tf):
    return [
        tf.image.adjust_brightness(SINGLE, tf.constant(-0.1)),
        tf.image.adjust_contrast(SINGLE, tf.constant(1.2)),
        tf.image.adjust_hue(SINGLE, tf.constant(0.1)),
        tf.image.adjust_saturation(SINGLE, tf.constant(2.0)),
        tf.image.adjust_gamma(SINGLE, tf.constant(2.0), tf.constant(0.5)),
    ]


def p_inside_a_function(tf):
    f = tf.function(lambda x: tf.image.adjust_hue(tf.image.adjust_saturation(x, 1.5), 0.1))
    return f(tf.constant(BATCH))


def p_convert_image_dtype(tf):
    ints = tf.constant([0, 1, 100, 255], tf.uint8)
    floats = tf.constant([-0.5, 0.0, 0.25, 0.5, 1.0, 1.5])
    shorts = tf.constant([-32768, -1, 0, 255, 32767], tf.int16)
    out = []
    for saturate in (False, True):
        out += [
            tf.image.convert_image_dtype(ints, tf.float32, saturate=saturate),
            tf.image.convert_image_dtype(floats, tf.uint8, saturate=saturate),
            tf.image.convert_image_dtype(floats, tf.int16, saturate=saturate),
            tf.image.convert_image_dtype(ints, tf.int16, saturate=saturate),
            tf.image.convert_image_dtype(ints, tf.int32, saturate=saturate),
            tf.image.convert_image_dtype(shorts, tf.uint8, saturate=saturate),
            tf.image.convert_image_dtype(shorts, tf.int8, saturate=saturate),
            tf.image.convert_image_dtype(shorts, tf.float16, saturate=saturate),
            tf.image.convert_image_dtype(floats, tf.float16, saturate=saturate),
            tf.image.convert_image_dtype(floats, tf.float32, saturate=saturate),
        ]
    return out


def p_convert_image_dtype_gradient(tf):
    x = tf.Variable(BATCH)
    with tf.GradientTape(persistent=True) as tape:
        halves = tf.image.convert_image_dtype(x, tf.float16)
        ints = tf.image.convert_image_dtype(x, tf.uint8)
    return [tape.gradient(halves, x), tape.gradient(ints, x)]


def p_convert_a_boolean_image(tf):
    return tf.image.convert_image_dtype(tf.constant([True, False]), tf.float32)


def p_convert_to_a_boolean(tf):
    return tf.image.convert_image_dtype(tf.constant([1.0]), tf.bool)


def p_four_channels(tf):
    return tf.image.rgb_to_hsv(tf.zeros([2, 2, 4]))


def p_grayscale_with_three_channels(tf):
    return tf.image.grayscale_to_rgb(tf.zeros([2, 2, 3]))


def p_hsv_of_integers(tf):
    return tf.image.rgb_to_hsv(tf.constant(UINT8))


def p_yiq_of_integers(tf):
    return tf.image.rgb_to_yiq(tf.constant(UINT8))


def p_negative_gamma(tf):
    return tf.image.adjust_gamma(SINGLE, -1.0)


def p_hue_delta_past_one(tf):
    return tf.image.adjust_hue(SINGLE, 1.5)


def p_contrast_of_a_matrix(tf):
    return tf.image.adjust_contrast(tf.zeros([3, 3]), 2.0)


def p_hue_of_a_matrix(tf):
    return tf.image.adjust_hue(tf.zeros([6, 3]), 0.5)


def p_saturation_of_a_matrix(tf):
    return tf.image.adjust_saturation(tf.zeros([6, 3]), 0.5)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_errors_say_what_came_in():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.adjust_gamma got gamma=-1\.0"):
        gtf.image.adjust_gamma(SINGLE, -1.0)
    with pytest.raises(AttributeError, match=r"^\[gradkit\] tf\.image\.convert_image_dtype got dtype bool"):
        gtf.image.convert_image_dtype(SINGLE, gtf.bool)
    with pytest.raises(ValueError, match=r"last axis must hold 3 channels"):
        gtf.image.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
