"""``tf.image.total_variation``, ``image_gradients``, ``sobel_edges``, ``psnr``, ``ssim`` and
``ssim_multiscale`` against real TensorFlow 2.21: values and gradients (with respect to both
images and ``max_val``), for batched 4-D and single 3-D images, and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _image(shape, seed=0):
    """The same image for the same arguments (each program runs twice, once per module)."""
    return np.random.RandomState(seed).uniform(0.0, 1.0, shape).astype(np.float32)


def _noisy(image, seed=1, scale=0.1):
    return np.clip(image + scale * np.random.RandomState(seed).standard_normal(image.shape), 0, 1).astype(np.float32)


BATCH, SINGLE = _image((2, 12, 13, 3)), _image((12, 14, 2), seed=2)


def _close(program, atol=2e-5):
    """``program`` under both modules, compared to ``atol``: SSIM's gradients subtract nearly
    equal filtered moments, so their rounding differs from TensorFlow's by a few 1e-6."""
    tf_real = pytest.importorskip("tensorflow")
    from test_tf_parity import _np

    expected, got = _np(program(tf_real)), _np(program(gtf))
    for e, g in zip(gtf.nest.flatten(expected), gtf.nest.flatten(got)):
        assert np.shape(e) == np.shape(g)
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=atol)


def _gradients(tf, op, *arrays):
    sources = [tf.Variable(a) for a in arrays]
    with tf.GradientTape() as tape:
        y = op(*sources)
        total = tf.nest.flatten(y)
        loss = tf.add_n(
            [tf.reduce_sum(t * tf.reshape(tf.range(tf.size(t), dtype=t.dtype) % 3.0 - 1.0, tf.shape(t))) for t in total]
        )
    return [y, tape.gradient(loss, sources)]


@pytest.mark.parametrize("image", [BATCH, SINGLE], ids=["batch", "single"])
def test_total_variation(image):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(lambda tf: _gradients(tf, tf.image.total_variation, image))


def test_image_gradients_and_sobel_edges():
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(lambda tf: _gradients(tf, tf.image.image_gradients, BATCH))
    run_both_ok(lambda tf: _gradients(tf, tf.image.sobel_edges, BATCH))


@pytest.mark.parametrize("images", [(BATCH, _noisy(BATCH)), (SINGLE, _noisy(SINGLE, 3))], ids=["batch", "single"])
def test_psnr_and_ssim_values_and_gradients(images):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    a, b = images
    run_both_ok(lambda tf: _gradients(tf, lambda x, y, m: tf.image.psnr(x, y, m), a, b, np.float32(1.0)))
    _close(lambda tf: _gradients(tf, lambda x, y, m: tf.image.ssim(x, y, m), a, b, np.float32(1.0)))
    _close(
        lambda tf: _gradients(
            tf, lambda x, y: tf.image.ssim(x, y, 1.0, filter_size=5, filter_sigma=0.8, k1=0.02, k2=0.05), a, b
        )
    )
    _close(lambda tf: _gradients(tf, lambda x, y: tf.image.ssim(x, y, 2.0, filter_size=3, return_index_map=True), a, b))


@pytest.mark.parametrize("shape", [(2, 26, 23, 2), (25, 28, 1)], ids=["batch_odd_sizes", "single"])
def test_ssim_multiscale_values_and_gradients(shape):
    pytest.importorskip("tensorflow")

    a = _image(shape, seed=4)
    b = _noisy(a, seed=5, scale=0.05)
    _close(
        lambda tf: _gradients(
            tf, lambda x, y: tf.image.ssim_multiscale(x, y, 1.0, power_factors=(0.3, 0.3, 0.4), filter_size=5), a, b
        )
    )


def test_ssim_multiscale_with_its_defaults():
    pytest.importorskip("tensorflow")

    a = _image((1, 176, 177, 1), seed=6)
    b = _noisy(a, seed=7, scale=0.05)
    _close(lambda tf: _gradients(tf, lambda x, y: tf.image.ssim_multiscale(x, y, 1.0), a, b))


def p_integer_images(tf):
    a = tf.constant((BATCH * 255).astype(np.uint8))
    b = tf.constant((_noisy(BATCH) * 255).astype(np.uint8))
    return [
        tf.image.total_variation(tf.cast(a, tf.int32)),
        tf.image.psnr(a, b, 255),
        tf.image.ssim(a, b, 255),
        tf.image.ssim(a, b, 255, filter_size=3),
        tf.image.psnr(tf.cast(a, tf.float32), tf.cast(b, tf.float32), 255.0),
    ]


def p_broadcast_batches(tf):
    a, b = BATCH, _noisy(BATCH)[:1]
    return [tf.image.psnr(a, b, 1.0), tf.image.ssim(a, b, 1.0, filter_size=5)]


def p_identical_images(tf):
    return [tf.image.psnr(SINGLE, SINGLE, 1.0), tf.image.ssim(SINGLE, SINGLE, 1.0)]


def p_inside_a_function(tf):
    f = tf.function(lambda x, y: [tf.image.ssim(x, y, 1.0, filter_size=7), tf.image.psnr(x, y, 1.0)])
    return f(tf.constant(BATCH), tf.constant(_noisy(BATCH)))


def p_ssim_of_a_small_image(tf):
    return tf.image.ssim(_image((8, 8, 1)), _image((8, 8, 1), 1), 1.0)


def p_psnr_of_different_shapes(tf):
    return tf.image.psnr(_image((8, 8, 1)), _image((8, 9, 1)), 1.0)


def p_image_gradients_of_a_single_image(tf):
    return tf.image.image_gradients(tf.constant(SINGLE))


def p_total_variation_of_unsigned_integers(tf):
    return tf.image.total_variation(tf.cast(SINGLE * 255, tf.uint8))


def p_total_variation_gradient_between_equal_neighbours(tf):
    # tf.abs's gradient at 0 is 0.
    x = tf.Variable([[[0.0, 0.5], [0.5, 0.0]], [[0.5, 0.5], [1.0, 0.0]]])
    with tf.GradientTape() as tape:
        tv = tf.image.total_variation(x)
    return [tv, tape.gradient(tv, x)]


def p_total_variation_of_a_matrix(tf):
    return tf.image.total_variation(tf.zeros([3, 3]))


def p_sobel_edges_of_one_pixel_refuses(tf):
    return tf.image.sobel_edges(tf.zeros([2, 1, 1, 3]))


def p_sobel_edges_of_one_row_refuses(tf):
    return tf.image.sobel_edges(tf.zeros([1, 1, 5, 1]))


def p_sobel_edges_of_two_by_two(tf):
    return tf.image.sobel_edges(tf.reshape(tf.range(8.0), [2, 2, 2, 1]))


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_errors_say_what_came_in():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.ssim got images of height x width 8 x 8"):
        gtf.image.ssim(_image((8, 8, 1)), _image((8, 8, 1)), 1.0)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.psnr got images of shapes \[8, 8, 1\] and"):
        gtf.image.psnr(_image((8, 8, 1)), _image((8, 9, 1)), 1.0)
