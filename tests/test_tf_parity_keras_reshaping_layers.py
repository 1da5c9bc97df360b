"""gradkit.tf's Keras reshaping layers (Permute, RepeatVector, Cropping1D/2D/3D,
ZeroPadding1D/2D/3D, UpSampling1D/2D/3D, and Flatten/Reshape's edges) against real tf.keras 3:
outputs, input gradients, configs, compute_output_shape and the errors for arguments and
inputs Keras refuses."""

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, check_output_shape, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
SEQ = _rs.randn(2, 5, 3).astype(np.float32)
IMG = _rs.randn(2, 4, 5, 3).astype(np.float32)
VOL = _rs.randn(2, 3, 4, 5, 2).astype(np.float32)
ROWS = _rs.randn(2, 3).astype(np.float32)

CASES = {
    "permute_2d": (lambda L: L.Permute((2, 1)), SEQ),
    "permute_3d": (lambda L: L.Permute((3, 1, 2)), IMG),
    "repeat_vector": (lambda L: L.RepeatVector(4), ROWS),
    "cropping1d": (lambda L: L.Cropping1D(), SEQ),
    "cropping1d_pair": (lambda L: L.Cropping1D((0, 3)), SEQ),
    "cropping2d_int": (lambda L: L.Cropping2D(1), IMG),
    "cropping2d_pairs": (lambda L: L.Cropping2D(((1, 0), (2, 1))), IMG),
    "cropping2d_symmetric": (lambda L: L.Cropping2D((1, 2)), IMG),
    "cropping2d_first": (lambda L: L.Cropping2D(((0, 1), (1, 0)), data_format="channels_first"), IMG),
    "cropping3d": (lambda L: L.Cropping3D(), VOL),
    "cropping3d_first": (lambda L: L.Cropping3D(((1, 0), 1, (0, 1)), data_format="channels_first"), VOL),
    "zero_padding1d": (lambda L: L.ZeroPadding1D(), SEQ),
    "zero_padding1d_pair": (lambda L: L.ZeroPadding1D((0, 2)), SEQ),
    "zero_padding1d_first": (lambda L: L.ZeroPadding1D((1, 2), data_format="channels_first"), SEQ),
    "zero_padding2d": (lambda L: L.ZeroPadding2D(((1, 0), (2, 1))), IMG),
    "zero_padding2d_first": (lambda L: L.ZeroPadding2D(2, data_format="channels_first"), IMG),
    "zero_padding3d": (lambda L: L.ZeroPadding3D((1, 0, 2)), VOL),
    "zero_padding3d_first": (lambda L: L.ZeroPadding3D(data_format="channels_first"), VOL),
    "up_sampling1d": (lambda L: L.UpSampling1D(3), SEQ),
    "up_sampling2d": (lambda L: L.UpSampling2D((2, 3)), IMG),
    "up_sampling2d_first": (lambda L: L.UpSampling2D(2, data_format="channels_first"), IMG),
    "up_sampling2d_bilinear": (lambda L: L.UpSampling2D((2, 3), interpolation="bilinear"), IMG),
    "up_sampling2d_bilinear_first": (
        lambda L: L.UpSampling2D((3, 2), data_format="channels_first", interpolation="BILINEAR"),
        IMG,
    ),
    "up_sampling2d_bicubic": (lambda L: L.UpSampling2D((3, 2), interpolation="bicubic"), IMG),
    "up_sampling2d_bicubic_first": (
        lambda L: L.UpSampling2D((2, 4), data_format="channels_first", interpolation="bicubic"),
        IMG,
    ),
    "up_sampling2d_bicubic_small": (lambda L: L.UpSampling2D(3, interpolation="bicubic"), IMG[:, :1, :2]),
    **{
        f"up_sampling2d_{method}": (lambda L, method=method: L.UpSampling2D((2, 3), interpolation=method), IMG)
        for method in ("lanczos3", "lanczos5")
    },
    "up_sampling2d_lanczos5_first_small": (
        lambda L: L.UpSampling2D(2, data_format="channels_first", interpolation="lanczos5"),
        IMG[:, :, :2, :3],
    ),
    "up_sampling3d": (lambda L: L.UpSampling3D((1, 2, 3)), VOL),
    "up_sampling3d_first": (lambda L: L.UpSampling3D(2, data_format="channels_first"), VOL),
    "flatten_first": (lambda L: L.Flatten(data_format="channels_first"), IMG),
    "flatten_rank1": (lambda L: L.Flatten(), ROWS[0]),
    "flatten_upper_case_format": (lambda L: L.Flatten(data_format="Channels_First"), IMG),
    "reshape_unknown": (lambda L: L.Reshape((-1, 5)), IMG),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_layer_matches_keras(key):
    make, x = CASES[key]
    check_layer(lambda tf: make(tf.keras.layers), x)


SHAPES = {
    "permute": (lambda L: L.Permute((2, 1)), (None, 5, 3)),
    "repeat_vector": (lambda L: L.RepeatVector(4), (None, 3)),
    "cropping1d": (lambda L: L.Cropping1D((1, 2)), (None, None, 3)),
    "cropping2d": (lambda L: L.Cropping2D(((1, 0), (2, 1))), (None, 4, 5, 3)),
    "cropping2d_first": (lambda L: L.Cropping2D(1, data_format="channels_first"), (None, 3, 4, None)),
    "cropping3d": (lambda L: L.Cropping3D(), (2, 3, 4, 5, 2)),
    "zero_padding1d": (lambda L: L.ZeroPadding1D((1, 2)), (None, 5, 3)),
    "zero_padding2d_first": (lambda L: L.ZeroPadding2D(2, data_format="channels_first"), (None, 3, None, 5)),
    "zero_padding3d": (lambda L: L.ZeroPadding3D((1, 0, 2)), (None, 3, 4, 5, 2)),
    "up_sampling1d": (lambda L: L.UpSampling1D(3), (None, 5, 3)),
    "up_sampling2d": (lambda L: L.UpSampling2D((2, 3)), (None, 4, None, 3)),
    "up_sampling3d_first": (lambda L: L.UpSampling3D(2, data_format="channels_first"), (None, 2, 3, 4, 5)),
}


@pytest.mark.parametrize("key", sorted(SHAPES))
def test_compute_output_shape_matches_keras(key):
    make, shape = SHAPES[key]
    check_output_shape(lambda tf: make(tf.keras.layers), shape)


REFUSED = {
    "permute_dims": lambda tf: tf.keras.layers.Permute((0, 1)),
    "permute_rank": lambda tf: tf.keras.layers.Permute((2, 1))(tf.constant(IMG)),
    "repeat_float": lambda tf: tf.keras.layers.RepeatVector(2.0),
    "repeat_zero": lambda tf: tf.keras.layers.RepeatVector(0),
    "repeat_rank": lambda tf: tf.keras.layers.RepeatVector(2)(tf.constant(SEQ)),
    "cropping1d_negative": lambda tf: tf.keras.layers.Cropping1D(-1),
    "cropping1d_too_much": lambda tf: tf.keras.layers.Cropping1D((2, 3))(tf.constant(SEQ)),
    "cropping2d_three": lambda tf: tf.keras.layers.Cropping2D((1, 1, 1)),
    "cropping2d_too_much": lambda tf: tf.keras.layers.Cropping2D(((2, 2), (0, 0)))(tf.constant(IMG)),
    "cropping3d_too_much": lambda tf: tf.keras.layers.Cropping3D(((0, 0), (0, 0), (3, 2)))(tf.constant(VOL)),
    "zero_padding2d_bad": lambda tf: tf.keras.layers.ZeroPadding2D("a"),
    "zero_padding3d_rank": lambda tf: tf.keras.layers.ZeroPadding3D()(tf.constant(IMG)),
    "data_format": lambda tf: tf.keras.layers.ZeroPadding2D(data_format="nchw"),
    "flatten_data_format": lambda tf: tf.keras.layers.Flatten(data_format="nchw"),
    "flatten_scalar": lambda tf: tf.keras.layers.Flatten()(tf.constant(1.0)),
    "reshape_two_unknown": lambda tf: tf.keras.layers.Reshape((-1, -1)),
    "reshape_size": lambda tf: tf.keras.layers.Reshape((4, -1))(tf.constant(SEQ)),
    "up_sampling1d_size": lambda tf: tf.keras.layers.UpSampling1D(0),
    "up_sampling1d_type": lambda tf: tf.keras.layers.UpSampling1D((2,)),
    "up_sampling2d_size": lambda tf: tf.keras.layers.UpSampling2D((2, 0)),
    "up_sampling2d_rank": lambda tf: tf.keras.layers.UpSampling2D()(tf.constant(SEQ)),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refusals_match_keras(key):
    program = REFUSED[key]
    with pytest.raises((ValueError, TypeError)) as theirs:
        program(tf_real)
    builtin = ValueError if isinstance(theirs.value, ValueError) else TypeError
    with pytest.raises(builtin, match=r"\[gradkit\]"):
        program(gtf)


@pytest.mark.parametrize("size", [(2, 2), (3, 2), (1, 3)])
def test_area_interpolation_matches_keras_and_repeats(size):
    # An area resize by whole factors gives each input entry to the outputs it covers: a repeat
    # (hand oracle, NumPy), and Keras' values; its gradient is the repeat's (TensorFlow has none).
    ours = np.asarray(gtf.keras.layers.UpSampling2D(size, interpolation="area")(gtf.constant(IMG)))
    np.testing.assert_allclose(ours, np.repeat(np.repeat(IMG, size[0], axis=1), size[1], axis=2))
    theirs = np.asarray(tf_real.keras.layers.UpSampling2D(size, interpolation="area")(tf_real.constant(IMG)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("interpolation", ["cubic", "gaussian", "mitchellcubic"])
def test_interpolations_keras_does_not_know_are_refused(interpolation):
    # Keras refuses them when the layer is called; gradkit.tf when it is made.
    with pytest.raises(ValueError):
        tf_real.keras.layers.UpSampling2D(interpolation=interpolation)(tf_real.constant(IMG))
    with pytest.raises(ValueError, match=r"\[gradkit\].*'lanczos5'"):
        gtf.keras.layers.UpSampling2D(interpolation=interpolation)


def test_bilinear_upsampling_in_a_tf_function_matches_keras():
    def run(tf):
        layer = tf.keras.layers.UpSampling2D(2, interpolation="bilinear")

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = layer(x)
                loss = tf.reduce_sum(y * y)
            return y, tape.gradient(loss, x)

        return [t.numpy() for t in step(tf.constant(IMG))]

    for got, want in zip(run(gtf), run(tf_real)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_every_reshaping_name_is_in_the_namespace():
    from gradkit.tf._keras import reshaping_layers, upsampling_layers

    keras_names = {n for n in dir(tf_real.keras.layers) if not n.startswith("_")}
    for module in (reshaping_layers, upsampling_layers):
        defined = {n for n in dir(module) if not n.startswith("_")} & keras_names
        assert defined <= set(dir(gtf.keras.layers))


@pytest.mark.parametrize("interpolation", ["bilinear", "bicubic", "lanczos3", "lanczos5"])
def test_integer_images_are_resized_in_float32_and_rounded(interpolation):
    # Keras resizes an integer image in float32 and rounds to its dtype; a result lying within
    # rounding of a tie (x.5) may round the other way here, by one.
    images = np.random.default_rng(1).integers(0, 200, size=(2, 3, 4, 2)).astype("int32")
    ours = gtf.keras.layers.UpSampling2D((2, 3), interpolation=interpolation)(images).numpy()
    theirs = np.asarray(tf_real.keras.layers.UpSampling2D((2, 3), interpolation=interpolation)(images))
    assert ours.dtype == theirs.dtype == np.int32
    assert np.abs(ours - theirs).max() <= 1
    assert (ours != theirs).mean() < 0.02
