"""``tf.image``'s flips, transposition, rotation, crops, pads and ``extract_patches`` against
real TensorFlow 2.21: values, dtypes, gradients with respect to the image and the errors, for
batched 4-D and single 3-D images."""

import numpy as np
import pytest

import gradkit.tf as gtf

BATCH = np.arange(2 * 5 * 6 * 3, dtype=np.float32).reshape(2, 5, 6, 3) / 10.0
SINGLE = BATCH[1]
WEIGHTS_SEED = 3


def _gradient(tf, op, image):
    """The value of ``op(image)`` and the gradient of a weighted sum of it."""
    x = tf.Variable(image)
    with tf.GradientTape() as tape:
        y = op(x)
        weights = tf.reshape(tf.range(tf.size(y), dtype=tf.float32) % 5.0 - 2.0, tf.shape(y))
        loss = tf.reduce_sum(y * weights)
    return [y, tape.gradient(loss, x)]


OPS = {
    "flip_left_right": lambda tf: tf.image.flip_left_right,
    "flip_up_down": lambda tf: tf.image.flip_up_down,
    "transpose": lambda tf: tf.image.transpose,
    "rot90": lambda tf: tf.image.rot90,
    "rot90_k2": lambda tf: lambda x: tf.image.rot90(x, 2),
    "rot90_k3": lambda tf: lambda x: tf.image.rot90(x, k=3),
    "rot90_k_minus1": lambda tf: lambda x: tf.image.rot90(x, k=-1),
    "rot90_k_tensor": lambda tf: lambda x: tf.image.rot90(x, tf.constant(5)),
    "central_crop_half": lambda tf: lambda x: tf.image.central_crop(x, 0.5),
    "central_crop_third": lambda tf: lambda x: tf.image.central_crop(x, 0.33),
    "central_crop_all": lambda tf: lambda x: tf.image.central_crop(x, 1.0),
    "crop_to_bounding_box": lambda tf: lambda x: tf.image.crop_to_bounding_box(x, 1, 2, 3, 4),
    "pad_to_bounding_box": lambda tf: lambda x: tf.image.pad_to_bounding_box(x, 2, 1, 8, 9),
    "crop_or_pad_crop": lambda tf: lambda x: tf.image.resize_with_crop_or_pad(x, 2, 3),
    "crop_or_pad_pad": lambda tf: lambda x: tf.image.resize_with_crop_or_pad(x, 8, 9),
    "crop_or_pad_mixed": lambda tf: lambda x: tf.image.resize_with_crop_or_pad(x, 2, 11),
    "crop_or_pad_same": lambda tf: lambda x: tf.image.resize_with_crop_or_pad(x, 5, 6),
}


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("image", [BATCH, SINGLE], ids=["batch", "single"])
def test_values_and_gradients(name, image):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(lambda tf: _gradient(tf, OPS[name](tf), image))


PATCHES = [
    ([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
    ([1, 2, 3, 1], [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
    ([1, 3, 2, 1], [1, 2, 1, 1], [1, 2, 2, 1], "VALID"),
    ([1, 2, 2, 1], [1, 3, 2, 1], [1, 2, 1, 1], "SAME"),
    ([1, 1, 1, 1], [1, 4, 4, 1], [1, 1, 1, 1], "VALID"),
]


@pytest.mark.parametrize("sizes, strides, rates, padding", PATCHES)
def test_extract_patches(sizes, strides, rates, padding):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(lambda tf: _gradient(tf, lambda x: tf.image.extract_patches(x, sizes, strides, rates, padding), BATCH))


def p_dtypes_are_kept(tf):
    ints = tf.constant(np.arange(4 * 5 * 2).reshape(4, 5, 2), tf.uint8)
    return [
        [op.dtype.name, op]
        for op in (
            tf.image.flip_left_right(ints),
            tf.image.rot90(ints),
            tf.image.transpose(tf.cast(ints, tf.int32)),
            tf.image.central_crop(ints, 0.6),
            tf.image.pad_to_bounding_box(ints, 1, 1, 6, 7),
            tf.image.resize_with_crop_or_pad(tf.cast(ints, tf.float16), 3, 9),
            tf.image.extract_patches(ints[None], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
        )
    ]


def p_inside_a_function(tf):
    f = tf.function(lambda x: tf.image.rot90(tf.image.resize_with_crop_or_pad(tf.image.flip_up_down(x), 4, 7)))
    return f(tf.constant(BATCH))


def p_crop_past_the_edge(tf):
    return tf.image.crop_to_bounding_box(SINGLE, 3, 0, 3, 2)


def p_crop_negative_offset(tf):
    return tf.image.crop_to_bounding_box(SINGLE, -1, 0, 3, 2)


def p_crop_empty_target(tf):
    return tf.image.crop_to_bounding_box(SINGLE, 0, 0, 0, 2)


def p_pad_too_small(tf):
    return tf.image.pad_to_bounding_box(BATCH, 1, 0, 5, 6)


def p_pad_negative_offset(tf):
    return tf.image.pad_to_bounding_box(BATCH, 0, -2, 9, 9)


def p_crop_or_pad_zero_target(tf):
    return tf.image.resize_with_crop_or_pad(SINGLE, 0, 3)


def p_central_crop_zero(tf):
    return tf.image.central_crop(SINGLE, 0.0)


def p_central_crop_more_than_all(tf):
    return tf.image.central_crop(SINGLE, 1.5)


def p_flip_a_vector(tf):
    return tf.image.flip_left_right(tf.constant([1.0, 2.0]))


def p_patches_of_a_single_image(tf):
    return tf.image.extract_patches(SINGLE, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


def p_patches_bad_sizes(tf):
    return tf.image.extract_patches(BATCH, [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


def p_patches_lowercase_padding(tf):
    return tf.image.extract_patches(BATCH, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "same")


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_errors_say_what_came_in():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.crop_to_bounding_box: the box 3 x 2 at \(3, 0\)"):
        gtf.image.crop_to_bounding_box(SINGLE, 3, 0, 3, 2)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.image\.central_crop got central_fraction=1\.5"):
        gtf.image.central_crop(SINGLE, 1.5)


# VALID windows near the image's size: TensorFlow's output size (n - span + stride) / stride in C's
# truncating division, refused when negative (BATCH is 5 x 6).
VALID_WINDOWS = {
    "as_tall_as_the_image_plus_one_is_empty": ([1, 6, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1]),
    "past_the_image_refuses": ([1, 7, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1]),
    "overshooting_by_less_than_a_stride_is_empty": ([1, 8, 2, 1], [1, 2, 1, 1], [1, 1, 1, 1]),
    "dilated_past_the_image_refuses": ([1, 2, 4, 1], [1, 1, 1, 1], [1, 1, 3, 1]),
}


@pytest.mark.parametrize("name", sorted(VALID_WINDOWS))
def test_valid_windows_near_the_image_size(name):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    sizes, strides, rates = VALID_WINDOWS[name]
    outcome = run_both(lambda tf: tf.image.extract_patches(BATCH, sizes, strides, rates, "VALID"))
    assert isinstance(outcome, Exception) == ("refuses" in name), outcome
