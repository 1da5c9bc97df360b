"""gradkit.tf's colour, pixel-value, filter, shear and perspective augmentation layers
(RandomGrayscale, RandomInvert, Solarization, RandomPosterization, AutoContrast, RandomHue,
RandomSaturation, RandomColorDegeneration, RandomSharpness, RandomColorJitter,
RandomGaussianBlur, RandomShear, RandomPerspective) against real Keras 3 on TensorFlow: the same
transformation (drawn by Keras with a seed, handed to both) gives the same images; inference
gives what Keras gives (dtypes included); configs and argument errors are Keras'; gradkit's own
draws have Keras' shapes and ranges, are fixed by an int seed and new at each call; image
gradients equal TensorFlow's and JAX's of the same arithmetic, and pass a finite-difference
check."""

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

tf_real = pytest.importorskip("tensorflow")
keras = tf_real.keras

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit.tf._keras import augmentation_color_layers as color_layers  # noqa: E402

_RNG = np.random.default_rng(7)
PIXELS = _RNG.uniform(0, 255, size=(2, 5, 6, 3)).astype(np.float32)  # value_range (0, 255)
UNIT = _RNG.uniform(0, 1, size=(2, 5, 6, 3)).astype(np.float32)  # value_range (0, 1)
MANY = _RNG.uniform(0, 1, size=(8, 4, 5, 3)).astype(np.float32)  # for the draws
MODES = ("reflect", "wrap", "constant", "nearest")

# name -> (class name, constructor kwargs, images, absolute tolerance)
CASES = {
    "grayscale": ("RandomGrayscale", dict(factor=0.5), PIXELS, 1e-4),
    "grayscale_all": ("RandomGrayscale", dict(factor=1.0), UNIT, 1e-6),
    "invert": ("RandomInvert", dict(), PIXELS, 0),
    "invert_unit": ("RandomInvert", dict(factor=(0.3, 0.9), value_range=(0, 1)), UNIT, 0),
    "solarization": ("Solarization", dict(addition_factor=0.2, threshold_factor=(0.4, 0.6)), PIXELS, 1e-4),
    "solarization_default": ("Solarization", dict(), PIXELS, 0),
    "solarization_unit": ("Solarization", dict(threshold_factor=0.8, value_range=(0, 1)), UNIT, 1e-6),
    "posterization": ("RandomPosterization", dict(factor=(2, 6)), PIXELS, 0),
    "posterization_unit": ("RandomPosterization", dict(factor=3, value_range=(0, 1)), UNIT, 1e-6),
    "auto_contrast": ("AutoContrast", dict(), PIXELS, 1e-4),
    "auto_contrast_unit": ("AutoContrast", dict(value_range=(0, 1)), UNIT, 1e-6),
    "hue": ("RandomHue", dict(factor=0.8), PIXELS, 1e-3),
    "hue_unit": ("RandomHue", dict(factor=(0.2, 0.6), value_range=(0, 1)), UNIT, 1e-6),
    "saturation": ("RandomSaturation", dict(factor=0.8), PIXELS, 1e-3),
    "saturation_unit": ("RandomSaturation", dict(factor=(0.3, 0.9), value_range=(0, 1)), UNIT, 1e-6),
    "degeneration": ("RandomColorDegeneration", dict(factor=0.7), PIXELS, 1e-4),
    "degeneration_unit": ("RandomColorDegeneration", dict(factor=(0.2, 0.9), value_range=(0, 1)), UNIT, 1e-6),
    "sharpness": ("RandomSharpness", dict(factor=0.9), PIXELS, 1e-4),
    "sharpness_unit": ("RandomSharpness", dict(factor=(0.1, 0.6), value_range=(0, 1)), UNIT, 1e-6),
    "blur": ("RandomGaussianBlur", dict(factor=0.9, sigma=(0.3, 0.9)), PIXELS, 1e-4),
    "blur_wide": ("RandomGaussianBlur", dict(kernel_size=(3, 5), sigma=0.8, value_range=(0, 1)), UNIT, 1e-6),
    **{
        f"shear_{mode}": ("RandomShear", dict(x_factor=0.5, y_factor=(0.1, 0.4), fill_mode=mode), UNIT, 1e-5)
        for mode in MODES
    },
    "shear_nearest_sampling": ("RandomShear", dict(x_factor=0.6, interpolation="nearest"), UNIT, 1e-6),
    "perspective": ("RandomPerspective", dict(scale=0.6, fill_value=0.5), UNIT, 1e-4),
    "perspective_half": ("RandomPerspective", dict(factor=0.5, scale=0.3), UNIT, 1e-4),
    "erasing": ("RandomErasing", dict(factor=0.8, scale=(0.1, 0.5)), PIXELS, 0),
    "erasing_fill": ("RandomErasing", dict(fill_value=(0.2, 0.4, 3.0), value_range=(0, 1)), UNIT, 0),
    "equalization": ("Equalization", dict(), PIXELS, 0),
    "equalization_unit": ("Equalization", dict(value_range=(0, 1), bins=16), UNIT, 1e-6),
}


def _as_numpy(transformation):
    """Keras' transformation (a tensor, or a dict of tensors and Python values) as NumPy."""
    if isinstance(transformation, dict):
        return {k: _as_numpy(v) for k, v in transformation.items()}
    return transformation.numpy() if hasattr(transformation, "numpy") else transformation


def _pair(key, **extra):
    name, kwargs, _, _ = CASES_AND_JITTER[key]
    return getattr(keras.layers, name)(**kwargs, **extra), getattr(gtf.keras.layers, name)(**kwargs, **extra)


@pytest.mark.parametrize("key", sorted(CASES))
def test_transform_images_equals_keras_for_the_same_transformation(key):
    theirs, ours = _pair(key)
    images, atol = CASES[key][2], CASES[key][3]
    for batch in (images, images[1]):
        for seed in (1, 2):
            transformation = theirs.get_random_transformation(batch, training=True, seed=seed)
            if batch.ndim == 3:  # Keras' call on one image: a batch of one, the transformation unbatched
                expected = theirs.transform_single_image(batch, transformation).numpy()
                got = gtf.squeeze(ours.transform_images(batch[None], _as_numpy(transformation)), 0)
            else:
                expected = theirs.transform_images(batch, transformation).numpy()
                got = ours.transform_images(batch, _as_numpy(transformation))
            assert got.dtype == expected.dtype
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=atol, err_msg=f"seed {seed}")


@pytest.mark.parametrize(
    "key",
    ["grayscale", "invert", "solarization", "hue", "saturation", "degeneration", "sharpness", "blur_wide"]
    + ["shear_wrap", "perspective", "erasing", "equalization"],
)
def test_channels_first_equals_keras(key):
    theirs, ours = _pair(key, data_format="channels_first")
    images, atol = CASES[key][2].transpose(0, 3, 1, 2), CASES[key][3]
    transformation = theirs.get_random_transformation(images, training=True, seed=3)
    expected = theirs.transform_images(images, transformation).numpy()
    got = ours.transform_images(images, _as_numpy(transformation)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=atol)


def test_auto_contrast_channels_first_stretches_each_channel():
    # Keras 3.15 reduces over axes (1, 2) whatever the layout; gradkit over each channel's pixels.
    last = gtf.keras.layers.AutoContrast()(PIXELS / 2).numpy()
    first = gtf.keras.layers.AutoContrast(data_format="channels_first")(PIXELS.transpose(0, 3, 1, 2) / 2)
    np.testing.assert_allclose(first.numpy(), last.transpose(0, 3, 1, 2), rtol=1e-6, atol=1e-4)
    assert last.min(axis=(1, 2)).max() == 0 and np.allclose(last.max(axis=(1, 2)), 255)


def test_auto_contrast_keeps_constant_and_nan_channels_as_keras():
    images = PIXELS.copy()
    images[0, :, :, 1] = 7.0
    images[1, 2, 3, 2] = np.nan
    expected = keras.layers.AutoContrast()(images).numpy()
    got = gtf.keras.layers.AutoContrast()(images).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-4)


def test_grayscale_of_one_channel_is_the_image():
    images = UNIT[..., :1]
    ours = gtf.keras.layers.RandomGrayscale(1.0)
    np.testing.assert_array_equal(ours(images).numpy(), images)


# -- RandomColorJitter -------------------------------------------------------------------------


def test_color_jitter_with_fixed_factors_equals_keras_call():
    kwargs = dict(brightness_factor=(0.2, 0.2), contrast_factor=(-0.3, 0.3), saturation_factor=(0.6, 0.6))
    expected = keras.layers.RandomColorJitter(**kwargs)(PIXELS).numpy()
    got = gtf.keras.layers.RandomColorJitter(**kwargs)(PIXELS).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("value_range", [(0, 255), (0, 1)])
def test_color_jitter_applies_keras_parts_in_order(value_range):
    images = PIXELS if value_range == (0, 255) else UNIT
    kwargs = dict(value_range=value_range, brightness_factor=0.3, contrast_factor=0.5, saturation_factor=0.4)
    theirs = keras.layers.RandomColorJitter(**kwargs, hue_factor=0.3)
    ours = gtf.keras.layers.RandomColorJitter(**kwargs, hue_factor=0.3)
    transformation, expected = {}, images
    for index, name in enumerate(("brightness", "contrast", "saturation", "hue")):
        part = getattr(theirs, f"random_{name}")
        transformation[name] = part.get_random_transformation(expected, seed=10 + index)
        expected = part.transform_images(expected, transformation[name])
    got = ours.transform_images(images, _as_numpy(transformation)).numpy()
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-5, atol=1e-3 * value_range[1])


def test_color_jitter_draws_each_given_part():
    layer = gtf.keras.layers.RandomColorJitter(contrast_factor=0.5, hue_factor=0.2)
    transformation = layer.get_random_transformation(MANY)
    assert sorted(transformation) == ["contrast", "hue"]
    assert layer.get_random_transformation(MANY, training=False) is None
    fixed = [_flat(layer.get_random_transformation(MANY, seed=4)) for _ in range(2)]
    np.testing.assert_array_equal(fixed[0], fixed[1])
    # The parts draw different numbers for one int seed.
    contrast = layer.get_random_transformation(MANY, seed=4)["contrast"]["contrast_factor"].numpy().ravel()
    hue = layer.get_random_transformation(MANY, seed=4)["hue"]["factor"].numpy().ravel()
    assert not np.allclose(np.abs(hue) * 2, np.abs(contrast - 1) * 2)
    assert layer(MANY).shape == MANY.shape


# -- inference, dtypes and configs -------------------------------------------------------------

# One case of each layer (RandomColorJitter's transformation is not Keras', so it is only here).
CASES_AND_JITTER = {
    **CASES,
    "color_jitter": ("RandomColorJitter", dict(brightness_factor=0.2, hue_factor=0.3), PIXELS, 1e-4),
}
_FIRST_OF_EACH = {}
for _key, _case in CASES_AND_JITTER.items():
    _FIRST_OF_EACH.setdefault(_case[0], _key)
INFERENCE = sorted(_FIRST_OF_EACH.values())


@pytest.mark.parametrize("key", INFERENCE)
def test_inference_equals_keras_with_dtypes(key):
    theirs, ours = _pair(key)
    images = CASES_AND_JITTER[key][2]
    for batch in (images, images[0], images.astype(np.float64), (images * 100).astype(np.int32)):
        expected = theirs(batch, training=False)
        got = ours(batch, training=False)
        assert got.dtype == np.dtype(expected.dtype.as_numpy_dtype)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("key", INFERENCE)
def test_integer_images_in_training_come_out_as_keras(key):
    theirs, ours = _pair(key)
    ints = (CASES_AND_JITTER[key][2] * 100).astype(np.int32)
    got = ours(ints, training=True)
    if CASES_AND_JITTER[key][0] == "RandomSaturation":  # Keras 3.15 on TensorFlow fails on integer images
        assert got.dtype == np.float32
        return
    assert got.dtype == np.dtype(theirs(ints, training=True).dtype.as_numpy_dtype)


CONFIGS = {
    "grayscale": ("RandomGrayscale", dict(factor=0.3)),
    "invert": ("RandomInvert", dict(factor=(0.2, 0.7), value_range=(0, 1), seed=3)),
    "solarization": ("Solarization", dict(addition_factor=0.1, threshold_factor=[0.6, 0.2], value_range=(255, 0))),
    "posterization": ("RandomPosterization", dict(factor=5, seed=2)),
    "auto_contrast": ("AutoContrast", dict(value_range=[1, 0])),
    "hue": ("RandomHue", dict(factor=(0.1, 0.4), value_range=(0, 1))),
    "saturation": ("RandomSaturation", dict(factor=0.5, seed=1)),
    "degeneration": ("RandomColorDegeneration", dict(factor=[0.1, -0.5], value_range=(10, 0))),
    "sharpness": ("RandomSharpness", dict(factor=0.4, data_format="channels_first")),
    "jitter": ("RandomColorJitter", dict(brightness_factor=0.1, saturation_factor=(0.2, 0.5), seed=4)),
    "blur": ("RandomGaussianBlur", dict(factor=0.5, kernel_size=(3, 5), sigma=0.4)),
    "shear": ("RandomShear", dict(x_factor=0.2, y_factor=(0.3, 0.1), fill_mode="constant", fill_value=2.0)),
    "perspective": ("RandomPerspective", dict(factor=0.3, scale=0.5, interpolation="nearest", seed=6)),
    "erasing": ("RandomErasing", dict(factor=0.4, scale=0.2, fill_value=[1, 2, 3], value_range=(0, 10))),
    "equalization": ("Equalization", dict(value_range=(0, 1), bins=64)),
}


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_get_config_equals_keras_and_round_trips(key):
    name, kwargs = CONFIGS[key]
    kwargs = {"name": "l", **kwargs}
    theirs = getattr(keras.layers, name)(**kwargs).get_config()
    ours_layer = getattr(gtf.keras.layers, name)(**kwargs)
    ours = ours_layer.get_config()
    assert ours == theirs
    if name == "RandomShear":  # its config holds (-f, f), which its constructor refuses, in Keras too
        with pytest.raises(TypeError, match="x_factor"):  # Keras wraps the ValueError
            getattr(keras.layers, name).from_config(ours)
        with pytest.raises(ValueError, match=r"\[gradkit\].*x_factor"):
            type(ours_layer).from_config(ours)
        return
    assert type(ours_layer).from_config(ours).get_config() == ours
    assert getattr(keras.layers, name).from_config(ours).get_config() == theirs


# -- the draws ---------------------------------------------------------------------------------


def _flat(transformation):
    if isinstance(transformation, dict):
        values = [_flat(v) for k, v in sorted(transformation.items()) if k != "input_shape"]
        return np.concatenate(values) if values else np.zeros(0, np.float32)
    return np.ravel(np.asarray(transformation, np.float32))


def _check_ranges(name, ours, t, batch):
    def within(values, low, high):
        values = np.asarray(values, np.float64)
        return bool(((values >= low - 1e-6) & (values <= high + 1e-6)).all())

    if name == "RandomGrayscale":
        assert t.shape == (batch, 1, 1, 1) and t.dtype == bool
    elif name == "RandomInvert":
        assert t["apply_inversion"].shape == (batch,) and t["apply_inversion"].dtype == bool
    elif name == "Solarization":
        assert within(t["additions"], ours.addition_factor[0], ours.addition_factor[1] * 255)
        assert within(t["thresholds"], ours.threshold_factor[0], ours.threshold_factor[1] * 255)
    elif name == "RandomPosterization":
        shift = t["shift_factor"].numpy()
        assert shift.dtype == np.uint8 and within(shift, 9 - ours.factor[1], 8 - ours.factor[0])
    elif name == "RandomHue":
        assert within(np.abs(t["factor"]), ours.factor[0] / 2, ours.factor[1] / 2)
    elif name == "RandomSaturation":
        low, high = (f / (1 - f + 1e-7) for f in ours.factor)
        assert within(t["factor"], low, high)
    elif name in ("RandomColorDegeneration", "RandomSharpness"):
        assert within(t["factor"], *ours.factor)
    elif name == "RandomGaussianBlur":
        assert t["blur_factor"].shape == (2,) and within(np.asarray(t["blur_factor"]) - 1e-6, *ours.sigma)
    elif name == "RandomShear":
        shear = t["shear_factor"].numpy()
        assert shear.shape == (batch, 2)
        assert within(np.abs(shear[:, 0]), 0, max(map(abs, ours.x_factor)))
        assert within(np.abs(shear[:, 1]), 0, max(map(abs, ours.y_factor)))
    elif name == "RandomPerspective":
        start, end = t["start_points"].numpy(), t["end_points"].numpy()
        np.testing.assert_array_equal(start[0], [[0, 0], [4, 0], [0, 3], [4, 3]])
        assert within(np.abs(end - start), 0, np.abs(start) * ours.scale / 2 + 1e-6)
    elif name == "RandomErasing":
        masks = t["batch_masks"].numpy()
        assert masks.shape == (batch, 4, 5, 3) and masks.dtype == bool
        np.testing.assert_array_equal(
            masks, np.broadcast_to(masks[..., :1], masks.shape)
        )  # one rectangle for all channels
        assert within(t["fill_value"], *ours.value_range)


_UNDRAWN = ("AutoContrast", "Equalization", "RandomColorJitter")
DRAWN = sorted(k for k in INFERENCE if CASES_AND_JITTER[k][0] not in _UNDRAWN)


@pytest.mark.parametrize("key", DRAWN)
def test_draws_have_keras_shapes_and_ranges_are_fixed_by_a_seed_and_new_at_each_call(key):
    theirs, ours = _pair(key)
    name = CASES[key][0]
    keras_draw = _as_numpy(theirs.get_random_transformation(MANY, training=True, seed=1))
    draws = []
    for _ in range(6):
        transformation = ours.get_random_transformation(MANY)
        _check_ranges(name, ours, transformation, batch=8)
        numpy_draw = _as_numpy(transformation)
        if isinstance(keras_draw, dict):
            assert sorted(numpy_draw) == sorted(keras_draw)
            for k in keras_draw:
                assert np.shape(numpy_draw[k]) == np.shape(keras_draw[k]), k
                if hasattr(keras_draw[k], "dtype"):
                    assert np.asarray(numpy_draw[k]).dtype == keras_draw[k].dtype, k
        else:
            assert np.shape(numpy_draw) == np.shape(keras_draw)
        draws.append(_flat(transformation))
    assert len({d.tobytes() for d in draws}) > 1
    np.testing.assert_array_equal(
        _flat(ours.get_random_transformation(MANY, seed=5)), _flat(ours.get_random_transformation(MANY, seed=5))
    )
    # Called on one image, the layer draws for a batch of one.
    assert ours(MANY[0], training=True).shape == MANY[0].shape


@pytest.mark.parametrize("key", ["hue", "sharpness", "shear_reflect", "perspective"])
def test_compiled_calls_draw_anew_and_compile_once(key):
    _, ours = _pair(key)
    step = gtf.function(lambda x: ours(x, training=True))
    outputs = [step(MANY).numpy() for _ in range(4)]
    assert count_compiles(lambda: step(MANY)) == 0
    assert step.experimental_get_tracing_count() == 1
    assert len({o.tobytes() for o in outputs}) > 1


def test_layer_seed_fixes_the_sequence():
    runs = []
    for _ in range(2):
        gtf.random.set_seed(11)
        layer = gtf.keras.layers.RandomHue(0.5, value_range=(0, 1), seed=4)
        runs.append([layer(MANY).numpy() for _ in range(2)])
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[0][1])


# -- gradients ---------------------------------------------------------------------------------


def _keras_gradient(theirs, images, transformation, weights):
    x = tf_real.constant(images)
    with tf_real.GradientTape() as tape:
        tape.watch(x)
        loss = tf_real.reduce_sum(theirs.transform_images(x, transformation) * weights)
    return tape.gradient(loss, x).numpy()


def _our_gradient(ours, images, transformation, weights):
    x = gtf.constant(images)
    with gtf.GradientTape() as tape:
        tape.watch(x)
        loss = gtf.reduce_sum(ours.transform_images(x, transformation) * weights)
    return tape.gradient(loss, x).numpy()


@pytest.mark.parametrize(
    "key",
    ["grayscale", "invert", "solarization", "auto_contrast", "degeneration", "sharpness", "blur", "blur_wide"]
    + ["erasing"],
)
def test_gradients_equal_tensorflow(key):
    theirs, ours = _pair(key)
    images = CASES[key][2]
    transformation = theirs.get_random_transformation(images, training=True, seed=2)
    weights = _RNG.normal(size=images.shape).astype(np.float32)
    expected = _keras_gradient(theirs, images, transformation, weights)
    got = _our_gradient(ours, images, _as_numpy(transformation), weights)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_posterization_gradient_is_zero():
    _, ours = _pair("posterization")
    transformation = {"shift_factor": np.array([3, 5], np.uint8)}
    weights = np.ones(PIXELS.shape, np.float32)
    np.testing.assert_array_equal(_our_gradient(ours, PIXELS, transformation, weights), 0)


def test_hue_gradient_is_jaxs_of_the_same_arithmetic_and_passes_finite_differences():
    layer = gtf.keras.layers.RandomHue(0.5, value_range=(0, 1))
    factor = np.array([0.21, -0.13], np.float32)
    weights = _RNG.normal(size=UNIT.shape).astype(np.float32)

    def hue(images):
        return color_layers._shift_hue(images, jnp.asarray(factor), value_range=(0.0, 1.0), data_format="channels_last")

    expected = jax.grad(lambda x: jnp.sum(hue(x) * weights))(jnp.asarray(UNIT))
    got = _our_gradient(layer, UNIT, {"factor": factor}, weights)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-6, atol=1e-6)
    # Finite differences of the layer's arithmetic (float32: steps of 1e-3, loose tolerances),
    # on pixels away from the kinks where the largest or smallest channel changes.
    pixels = jnp.asarray([[[[0.9, 0.5, 0.2], [0.3, 0.7, 0.45]], [[0.25, 0.35, 0.8], [0.6, 0.2, 0.4]]]], jnp.float32)
    check_grads(
        lambda x: hue(jnp.concatenate([x, x])), (pixels,), order=1, modes=("rev",), eps=1e-3, atol=2e-2, rtol=2e-2
    )


def test_shear_gradient_is_the_adjoint_of_keras_sampling():
    # The sampling is linear in the images: its Jacobian, column by column, from one-pixel images.
    theirs, ours = _pair("shear_reflect")
    image = UNIT[:1, :, :, :1]
    transformation = {"shear_factor": np.array([[0.35, -0.2]], np.float32)}
    basis = np.eye(30, dtype=np.float32).reshape(30, 5, 6, 1)
    batched = {"shear_factor": np.repeat(transformation["shear_factor"], 30, axis=0)}
    columns = theirs.transform_images(basis, batched).numpy().reshape(30, 30)
    weights = _RNG.normal(size=(1, 5, 6, 1)).astype(np.float32)
    expected = (columns @ weights.reshape(30)).reshape(1, 5, 6, 1)
    np.testing.assert_allclose(_our_gradient(ours, image, transformation, weights), expected, rtol=1e-5, atol=1e-5)


# -- training ----------------------------------------------------------------------------------


def test_augmented_model_trains_with_fit():
    gtf.keras.utils.set_random_seed(0)
    L = gtf.keras.layers
    model = gtf.keras.Sequential(
        [
            gtf.keras.Input(shape=(4, 5, 3)),
            L.RandomColorJitter(value_range=(0, 1), brightness_factor=0.1, saturation_factor=0.3, hue_factor=0.1),
            L.RandomGrayscale(0.2),
            L.RandomSharpness(0.3, value_range=(0, 1)),
            L.RandomGaussianBlur(0.5, sigma=0.5, value_range=(0, 1)),
            L.RandomShear(0.1, 0.1),
            L.RandomPerspective(0.5, scale=0.2),
            L.Solarization(threshold_factor=(0.9, 1.0), value_range=(0, 1)),
            L.AutoContrast(value_range=(0, 1)),
            L.RandomErasing(0.5, value_range=(0, 1)),
            L.Equalization(value_range=(0, 1)),
            L.Conv2D(2, 3, activation="relu"),
            L.Flatten(),
            L.Dense(1),
        ]
    )
    model.compile(optimizer=gtf.keras.optimizers.Adam(0.01), loss="mse")
    before = [w.copy() for w in model.get_weights()]
    x, y = MANY, np.arange(8, dtype=np.float32)[:, None] / 8
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert all(np.isfinite(history.history["loss"]))
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    np.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))


# -- errors ------------------------------------------------------------------------------------

ERRORS = {
    "grayscale_factor": (lambda L: L.RandomGrayscale(1.5), ValueError, "factor"),
    "grayscale_factor_pair": (lambda L: L.RandomGrayscale((0.1, 0.2)), TypeError, "factor"),
    "invert_factor": (lambda L: L.RandomInvert(1.5), ValueError, "factor"),
    "solarization_addition": (lambda L: L.Solarization(addition_factor=1.5), ValueError, "addition_factor"),
    "solarization_threshold": (lambda L: L.Solarization(threshold_factor=[0.1]), ValueError, "threshold_factor"),
    "solarization_value_range": (lambda L: L.Solarization(value_range=5), ValueError, "value_range"),
    "posterization_factor": (lambda L: L.RandomPosterization(9), ValueError, "factor"),
    "posterization_value_range": (lambda L: L.RandomPosterization(4, value_range=(0,)), ValueError, "value_range"),
    "auto_contrast_value_range": (lambda L: L.AutoContrast(value_range="0-255"), ValueError, "value_range"),
    "hue_factor": (lambda L: L.RandomHue(1.5), ValueError, "factor"),
    "saturation_factor": (lambda L: L.RandomSaturation(-1.5), ValueError, "factor"),
    "saturation_value_range": (lambda L: L.RandomSaturation(0.5, value_range=[1, 2, 3]), ValueError, "value_range"),
    "degeneration_factor": (lambda L: L.RandomColorDegeneration(2), ValueError, "factor"),
    "sharpness_factor": (lambda L: L.RandomSharpness((0.2, 0.3, 0.4)), ValueError, "factor"),
    "jitter_brightness": (lambda L: L.RandomColorJitter(brightness_factor=2.0), ValueError, "factor"),
    "jitter_hue": (lambda L: L.RandomColorJitter(hue_factor=(1.5, 2.0)), ValueError, "factor"),
    "blur_kernel_even": (lambda L: L.RandomGaussianBlur(kernel_size=4), ValueError, "kernel_size"),
    "blur_kernel_pair": (lambda L: L.RandomGaussianBlur(kernel_size=(3,)), ValueError, "kernel_size"),
    "blur_sigma": (lambda L: L.RandomGaussianBlur(sigma=2.0), ValueError, "sigma"),
    "shear_factor": (lambda L: L.RandomShear(x_factor=1.5), ValueError, "x_factor"),
    "shear_fill_mode": (lambda L: L.RandomShear(0.1, fill_mode="mirror"), NotImplementedError, "fill_mode"),
    "shear_interpolation": (lambda L: L.RandomShear(0.1, interpolation="bicubic"), NotImplementedError, "interp"),
    "perspective_scale": (lambda L: L.RandomPerspective(scale=2.0), ValueError, "scale"),
    "erasing_scale": (lambda L: L.RandomErasing(scale=(0.2, 0.3, 0.4)), ValueError, "scale"),
    "erasing_factor": (lambda L: L.RandomErasing(factor=-0.5), ValueError, "factor"),
    "perspective_interpolation": (
        lambda L: L.RandomPerspective(interpolation="bicubic"),
        NotImplementedError,
        "interpolation",
    ),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_bad_arguments_raise_keras_error_types(key):
    make, error, text = ERRORS[key]
    with pytest.raises(error):
        make(keras.layers)
    with pytest.raises(error, match=r"\[gradkit\].*" + text):
        make(gtf.keras.layers)


@pytest.mark.parametrize("name", ["RandomHue", "RandomSaturation", "RandomColorDegeneration", "RandomGrayscale"])
def test_images_without_three_channels_are_refused(name):
    layer = getattr(gtf.keras.layers, name)(0.5)
    with pytest.raises(ValueError, match=r"\[gradkit\].*channels"):
        layer(np.zeros((1, 4, 4, 2), np.float32), training=True)


def test_bad_seed_is_refused():
    with pytest.raises(TypeError, match=r"\[gradkit\].*seed"):
        gtf.keras.layers.RandomColorJitter(hue_factor=0.2).get_random_transformation(MANY, seed="1")


def test_erasing_fill_value_is_checked_when_drawing_as_in_keras():
    for layers in (keras.layers, gtf.keras.layers):
        layer = layers.RandomErasing(fill_value=(1.0, 2.0))  # accepted here, as Keras does
        with pytest.raises(ValueError, match="fill_value"):
            layer.get_random_transformation(MANY)


def test_equalization_refuses_a_bad_value_range_or_bins():
    # Keras 3.15 fails here with an AttributeError (its message attribute is missing).
    with pytest.raises(ValueError, match=r"\[gradkit\].*value_range"):
        gtf.keras.layers.Equalization(value_range=255)
    with pytest.raises(ValueError, match=r"\[gradkit\].*bins=0"):
        gtf.keras.layers.Equalization(bins=0)
