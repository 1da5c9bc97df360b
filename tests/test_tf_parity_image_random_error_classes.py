"""Refusals in ``tf.image`` and ``tf.random`` carry TensorFlow's eager error class.

Where TensorFlow's eager op rejects an input with a ``tf.errors`` class (InvalidArgumentError,
FailedPreconditionError, ...), gradkit's ``[gradkit]`` error derives from that class too (and
still from ValueError or TypeError); where TensorFlow raises TypeError at Python level, so does
gradkit. The parity test checks the class names against real TensorFlow, when it is installed.
"""

import builtins

import numpy as np
import pytest

import gradkit.tf as gtf

_X = np.random.default_rng(0).random((2, 7, 9, 3)).astype(np.float32)
_INTS = (_X * 255).astype(np.int32)
_ONES = [1, 1, 1, 1]

# (id, the tf.errors (or builtin) class name TensorFlow raises, the call)
CASES = [
    ("adjust_hue_2_channels", "InvalidArgumentError", lambda tf: tf.image.adjust_hue(tf.constant(_X[..., :2]), 0.1)),
    ("adjust_hue_2d", "InvalidArgumentError", lambda tf: tf.image.adjust_hue(tf.constant(_X[0, :, :3, 0]), 0.1)),
    (
        "adjust_saturation_2_channels",
        "InvalidArgumentError",
        lambda tf: tf.image.adjust_saturation(tf.constant(_X[..., :2]), 0.5),
    ),
    (
        "rgb_to_grayscale_2_channels",
        "InvalidArgumentError",
        lambda tf: tf.image.rgb_to_grayscale(tf.constant(_X[..., :2])),
    ),
    ("rgb_to_yiq_2_channels", "InvalidArgumentError", lambda tf: tf.image.rgb_to_yiq(tf.constant(_X[..., :2]))),
    ("rgb_to_hsv_2_channels", "FailedPreconditionError", lambda tf: tf.image.rgb_to_hsv(tf.constant(_X[..., :2]))),
    ("hsv_to_rgb_2_channels", "FailedPreconditionError", lambda tf: tf.image.hsv_to_rgb(tf.constant(_X[..., :2]))),
    ("rgb_to_hsv_int32", "InvalidArgumentError", lambda tf: tf.image.rgb_to_hsv(tf.constant(_INTS))),
    ("hsv_to_rgb_int32", "InvalidArgumentError", lambda tf: tf.image.hsv_to_rgb(tf.constant(_INTS))),
    ("rgb_to_yiq_int32", "TypeError", lambda tf: tf.image.rgb_to_yiq(tf.constant(_INTS))),
    (
        "adjust_contrast_2d",
        "InvalidArgumentError",
        lambda tf: tf.image.adjust_contrast(tf.constant(_X[0, :, :, 0]), 1.5),
    ),
    ("sobel_edges_3d", "InvalidArgumentError", lambda tf: tf.image.sobel_edges(tf.constant(_X[0]))),
    ("sobel_edges_int32", "InvalidArgumentError", lambda tf: tf.image.sobel_edges(tf.constant(_INTS))),
    (
        "total_variation_uint8",
        "InvalidArgumentError",
        lambda tf: tf.image.total_variation(tf.constant(_INTS.astype(np.uint8))),
    ),
    (
        "extract_patches_3d",
        "InvalidArgumentError",
        lambda tf: tf.image.extract_patches(tf.constant(_X[0]), [1, 2, 2, 1], _ONES, _ONES, "SAME"),
    ),
    (
        "extract_patches_sizes_length_3",
        "InvalidArgumentError",
        lambda tf: tf.image.extract_patches(tf.constant(_X), [1, 2, 2], _ONES, _ONES, "SAME"),
    ),
    (
        "extract_patches_padding",
        "InvalidArgumentError",
        lambda tf: tf.image.extract_patches(tf.constant(_X), [1, 2, 2, 1], _ONES, _ONES, "FULL"),
    ),
    (
        "extract_patches_batch_size_2",
        "UnimplementedError",
        lambda tf: tf.image.extract_patches(tf.constant(_X), [2, 2, 2, 1], _ONES, _ONES, "SAME"),
    ),
    (
        "extract_patches_zero_stride",
        "OutOfRangeError",
        lambda tf: tf.image.extract_patches(tf.constant(_X), [1, 2, 2, 1], [1, 0, 1, 1], _ONES, "SAME"),
    ),
    (
        "ssim_image_smaller_than_filter",
        "InvalidArgumentError",
        lambda tf: tf.image.ssim(tf.constant(_X[:, :5, :5]), tf.constant(_X[:, :5, :5]), 1.0),
    ),
    (
        "ssim_multiscale_image_too_small",
        "InvalidArgumentError",
        lambda tf: tf.image.ssim_multiscale(tf.constant(_X), tf.constant(_X), 1.0, filter_size=3),
    ),
    ("resize_bool", "InvalidArgumentError", lambda tf: tf.image.resize(tf.constant(_X > 0.5), [3, 3])),
    ("resize_size_0", "InvalidArgumentError", lambda tf: tf.image.resize(tf.constant(_X), [0, 3])),
    ("random_crop_too_big", "InvalidArgumentError", lambda tf: tf.image.random_crop(tf.constant(_X), [5, 5, 4, 3])),
    (
        "stateless_random_crop_wrong_rank",
        "InvalidArgumentError",
        lambda tf: tf.image.stateless_random_crop(tf.constant(_X), [5, 5, 3], seed=[1, 2]),
    ),
    (
        "stateless_random_flip_seed_shape_3",
        "InvalidArgumentError",
        lambda tf: tf.image.stateless_random_flip_left_right(tf.constant(_X), [1, 2, 3]),
    ),
    ("stateless_normal_seed_shape_3", "InvalidArgumentError", lambda tf: tf.random.stateless_normal([3], [1, 2, 3])),
    ("stateless_normal_seed_scalar", "InvalidArgumentError", lambda tf: tf.random.stateless_normal([3], 1)),
    ("stateless_normal_float_seed", "InvalidArgumentError", lambda tf: tf.random.stateless_normal([3], [1.0, 2.0])),
    ("stateless_uniform_float_seed", "InvalidArgumentError", lambda tf: tf.random.stateless_uniform([3], [1.0, 2.0])),
    (
        "stateless_uniform_empty_int_range",
        "InvalidArgumentError",
        lambda tf: tf.random.stateless_uniform([3], [1, 2], minval=5, maxval=3, dtype=tf.int32),
    ),
    (
        "stateless_gamma_alpha_does_not_fit",
        "InvalidArgumentError",
        lambda tf: tf.random.stateless_gamma([3], [1, 2], alpha=[1.0, 2.0]),
    ),
    (
        "gamma_alpha_beta_do_not_broadcast",
        "InvalidArgumentError",
        lambda tf: tf.random.gamma([3], alpha=[1.0, 2.0], beta=[1.0, 2.0, 3.0]),
    ),
    (
        "stateless_poisson_lam_does_not_broadcast",
        "InvalidArgumentError",
        lambda tf: tf.random.stateless_poisson([20], [1, 2], lam=[0.5, 3.0, 30.0]),
    ),
    (
        "stateless_poisson_lam_larger_rank",
        "InvalidArgumentError",
        lambda tf: tf.random.stateless_poisson([2], [1, 2], lam=[[0.5, 3.0], [1.0, 2.0]]),
    ),
    ("stateless_poisson_bool_lam", "InvalidArgumentError", lambda tf: tf.random.stateless_poisson([3], [1, 2], True)),
    ("normal_int32", "TypeError", lambda tf: tf.random.normal([3], dtype=tf.int32)),
]


def _class_of(name):
    """gradkit's ``tf.errors`` class of that name, or the builtin one (TypeError)."""
    return getattr(gtf.errors, name, None) or getattr(builtins, name)


@pytest.mark.parametrize(("name", "call"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_gradkit_raises_tensorflows_class(name, call):
    with pytest.raises(_class_of(name)) as info:
        call(gtf)
    assert str(info.value).startswith("[gradkit]"), str(info.value)


@pytest.mark.parametrize(("name", "call"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_tensorflow_raises_the_same_class(name, call):
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(Exception) as info:
        call(tf)
    assert type(info.value).__name__ == name, repr(info.value)


def test_stateless_poisson_lam_that_broadcasts_still_draws():
    counts = gtf.random.stateless_poisson([4, 2], [1, 2], lam=[0.5, 30.0])
    assert counts.shape == (4, 2)
    assert counts.dtype == gtf.int32


def test_normal_float_dtypes_still_draw():
    for dtype in (gtf.float16, gtf.bfloat16, gtf.float32):
        assert gtf.random.normal([2], dtype=dtype).dtype == dtype
