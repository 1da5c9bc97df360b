"""``tf.image.crop_to_bounding_box`` and ``pad_to_bounding_box`` with offsets traced inside a
``tf.function`` (a random crop's offset): the offsets do not change the result's shape, so they are
values of the program, checked when it runs, as TensorFlow's asserts check them. Oracles: NumPy
slicing and padding, and TensorFlow where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

IMAGES = np.random.RandomState(0).rand(2, 8, 8, 3).astype(np.float32)
WEIGHTS = np.arange(13 * 3, dtype=np.float32).reshape(1, 1, 13, 3)


def _run(tf, top, left):
    crop = tf.function(lambda x, a, b: tf.image.crop_to_bounding_box(x, a, b, 4, 3))
    pad = tf.function(lambda x, a, b: tf.image.pad_to_bounding_box(x, a, b, 12, 13))
    x = tf.Variable(IMAGES)
    with tf.GradientTape(persistent=True) as tape:
        cropped = crop(x, tf.constant(top), tf.constant(left))
        padded = pad(x, tf.constant(top), tf.constant(left))
        crop_loss = tf.reduce_sum(cropped * cropped)
        pad_loss = tf.reduce_sum(padded * tf.constant(WEIGHTS))
    return [np.asarray(v) for v in (cropped, padded, tape.gradient(crop_loss, x), tape.gradient(pad_loss, x))]


@pytest.mark.parametrize("top, left", [(0, 0), (2, 3), (4, 5)])
def test_traced_offsets_crop_and_pad(top, left):
    cropped, padded, crop_grad, pad_grad = _run(gtf, top, left)
    window = IMAGES[:, top : top + 4, left : left + 3]
    np.testing.assert_array_equal(cropped, window)
    want_padded = np.zeros((2, 12, 13, 3), np.float32)
    want_padded[:, top : top + 8, left : left + 8] = IMAGES
    np.testing.assert_array_equal(padded, want_padded)
    want_crop_grad = np.zeros_like(IMAGES)
    want_crop_grad[:, top : top + 4, left : left + 3] = 2 * window
    np.testing.assert_allclose(crop_grad, want_crop_grad, rtol=1e-6)
    np.testing.assert_array_equal(pad_grad, np.broadcast_to(WEIGHTS[:, :, left : left + 8], IMAGES.shape))
    tf = pytest.importorskip("tensorflow")
    for got, want in zip((cropped, padded, crop_grad, pad_grad), _run(tf, top, left)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_random_offset_drawn_in_the_function():
    @gtf.function
    def random_window(x):
        offset = gtf.random.uniform([], 0, 4, gtf.int32)
        return gtf.image.crop_to_bounding_box(x, offset, offset, 4, 4), offset

    window, offset = random_window(gtf.constant(IMAGES[0]))
    k = int(offset)
    np.testing.assert_array_equal(window, IMAGES[0, k : k + 4, k : k + 4])


@pytest.mark.parametrize("top, left", [(5, 0), (-1, 0), (0, 6)])
def test_offsets_past_the_image_fail_when_the_program_runs(top, left):
    crop = gtf.function(lambda x, a, b: gtf.image.crop_to_bounding_box(x, a, b, 4, 3))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*crop_to_bounding_box"):
        crop(gtf.constant(IMAGES), gtf.constant(top), gtf.constant(left))


def test_traced_offsets_under_jax_64_bit_mode():
    # jax wants one integer type for every start of a dynamic slice; a Python 0 is int64 there.
    from _x64_subprocess import run_script

    script = """
        import json, sys
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import gradkit.tf as tf
        top, left = json.loads(sys.argv[1])
        x = tf.constant(np.arange(7 * 9 * 3, dtype=np.float32).reshape(7, 9, 3))
        crop = tf.function(lambda x, a, b: tf.image.crop_to_bounding_box(x, a, b, 3, 4))
        pad = tf.function(lambda x, a, b: tf.image.pad_to_bounding_box(x, a, b, 10, 12))
        a, b = tf.constant(top), tf.constant(left)
        print(json.dumps([crop(x, a, b).numpy().tolist(), pad(x, a, b).numpy().tolist()]))
    """
    cropped, padded = run_script(script, [1, 2])
    image = np.arange(7 * 9 * 3, dtype=np.float32).reshape(7, 9, 3)
    np.testing.assert_array_equal(cropped, image[1:4, 2:6])
    want = np.zeros((10, 12, 3), np.float32)
    want[1:8, 2:11] = image
    np.testing.assert_array_equal(padded, want)
