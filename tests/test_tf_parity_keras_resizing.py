"""``tf.keras.layers.Resizing`` against real Keras on TensorFlow: every interpolation, cropping and
padding to the aspect ratio, channels_first, integer and float inputs, one image or a batch,
gradients with respect to the input, the config, and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

BATCH = np.random.default_rng(0).random((2, 5, 8, 3)).astype(np.float32) * 10

CASES = {
    "bilinear": dict(height=3, width=4),
    "nearest": dict(height=7, width=5, interpolation="nearest"),
    "bicubic": dict(height=4, width=6, interpolation="bicubic"),
    "area": dict(height=2, width=3, interpolation="area"),
    "lanczos3-antialias": dict(height=3, width=3, interpolation="lanczos3", antialias=True),
    "crop": dict(height=4, width=4, crop_to_aspect_ratio=True),
    "crop-tall": dict(height=6, width=2, crop_to_aspect_ratio=True),
    "pad": dict(height=4, width=4, pad_to_aspect_ratio=True, fill_value=-1.0),
    "pad-wide": dict(height=2, width=9, pad_to_aspect_ratio=True),
    "channels_first": dict(height=4, width=3, data_format="channels_first"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("batched", [True, False], ids=["batch", "single"])
def test_float_images_and_gradients_match_keras(case, batched):
    tf = pytest.importorskip("tensorflow")
    images = BATCH if batched else BATCH[0]
    outs = []
    for lib in (tf, gtf):
        x = lib.Variable(images)
        with lib.GradientTape() as tape:
            y = lib.keras.layers.Resizing(**CASES[case])(x)
            loss = lib.reduce_sum(y * np.linspace(-1, 1, int(np.prod(y.shape)), dtype=np.float32).reshape(y.shape))
        # TensorFlow has no gradient for area resizing (gradkit's is the exact one, see tf.image.resize).
        grad = None if case == "area" and lib is tf else np.asarray(tape.gradient(loss, x))
        outs.append((np.asarray(y), grad))
    (want, want_grad), (got, got_grad) = outs
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    if want_grad is not None:
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-4)
    else:
        assert got_grad.shape == images.shape


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float64])
def test_dtypes_are_keras(dtype):
    tf = pytest.importorskip("tensorflow")
    images = (BATCH * 25).astype(dtype)
    want = tf.keras.layers.Resizing(3, 5)(images).numpy()
    got = gtf.keras.layers.Resizing(3, 5)(images).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(
        got.astype(np.float64), want.astype(np.float64), atol=1.0 if dtype != np.float64 else 1e-4
    )


def test_config_is_keras():
    tf = pytest.importorskip("tensorflow")
    args = dict(height=3, width=4, interpolation="nearest", pad_to_aspect_ratio=True, fill_value=2.0)
    want, got = tf.keras.layers.Resizing(**args).get_config(), gtf.keras.layers.Resizing(**args).get_config()
    assert {k: v for k, v in got.items() if k != "name"} == {k: v for k, v in want.items() if k != "name"}
    assert gtf.keras.layers.Resizing.from_config(got).get_config() == got


@pytest.mark.parametrize(
    "args, message",
    [
        (dict(interpolation="cubic"), "interpolation"),
        (dict(fill_mode="reflect"), "constant"),
        (dict(crop_to_aspect_ratio=True, pad_to_aspect_ratio=True), "only one of"),
    ],
)
def test_errors_are_keras(args, message):
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf.keras.layers.Resizing(3, 3, **args)(BATCH)
    with pytest.raises(ValueError, match=r"^\[gradkit\] Resizing .*" + message):
        gtf.keras.layers.Resizing(3, 3, **args)(BATCH)


CROPS = [(3, 4), (5, 8), (1, 1), (6, 4), (4, 10), (7, 9)]


@pytest.mark.parametrize("size", CROPS, ids=[f"{h}x{w}" for h, w in CROPS])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_center_crop_matches_keras(size, data_format):
    tf = pytest.importorskip("tensorflow")
    images = BATCH if data_format == "channels_last" else np.transpose(BATCH, (0, 3, 1, 2))
    outs = []
    for lib in (tf, gtf):
        x = lib.Variable(images)
        with lib.GradientTape() as tape:
            y = lib.keras.layers.CenterCrop(*size, data_format=data_format)(x)
            loss = lib.reduce_sum(y * np.linspace(-1, 1, int(np.prod(y.shape)), dtype=np.float32).reshape(y.shape))
        outs.append((np.asarray(y), np.asarray(tape.gradient(loss, x))))
    (want, want_grad), (got, got_grad) = outs
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-4)


def test_center_crop_of_integers_and_its_config():
    tf = pytest.importorskip("tensorflow")
    images = (BATCH[0] * 20).astype(np.uint8)
    want, got = tf.keras.layers.CenterCrop(3, 3)(images).numpy(), gtf.keras.layers.CenterCrop(3, 3)(images).numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    want, got = tf.keras.layers.CenterCrop(3, 4).get_config(), gtf.keras.layers.CenterCrop(3, 4).get_config()
    assert {k: v for k, v in got.items() if k != "name"} == {k: v for k, v in want.items() if k != "name"}
