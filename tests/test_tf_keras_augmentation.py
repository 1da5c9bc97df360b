"""gradkit.tf's random image-augmentation layers (RandomFlip, RandomRotation, RandomZoom,
RandomTranslation, RandomContrast, RandomBrightness, RandomCrop) and their affine transform
against real Keras 3 on TensorFlow: the same transformation (drawn by Keras with a seed, handed
to both) gives the same images for every fill mode and interpolation; inference is the identity
(RandomCrop: Keras' documented central resize); configs are Keras'; the draws have Keras'
shapes and ranges and are new at every call, also of a compiled tf.function; gradients match
TensorFlow's where TensorFlow's are exact and are the exact adjoint of its sampling otherwise;
a small augmented model trains with fit."""

import sys
from pathlib import Path

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
keras = tf_real.keras

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit.tf._keras.affine_transform import affine_transform  # noqa: E402

_RNG = np.random.default_rng(3)
IMAGES = _RNG.uniform(0, 255, size=(3, 5, 7, 2)).astype(np.float32)
UNIT = _RNG.uniform(0, 1, size=(4, 5, 7, 1)).astype(np.float32)
MODES = ("reflect", "wrap", "constant", "nearest")

# name -> (class name, constructor kwargs); each compared on batched and single images.
CASES = {
    "flip_horizontal": ("RandomFlip", dict(mode="horizontal")),
    "flip_vertical": ("RandomFlip", dict(mode="vertical")),
    "flip_both": ("RandomFlip", dict()),
    "contrast": ("RandomContrast", dict(factor=0.9)),
    "contrast_range": ("RandomContrast", dict(factor=(0.2, 0.6), value_range=(20, 200))),
    "brightness": ("RandomBrightness", dict(factor=0.5)),
    "brightness_pair": ("RandomBrightness", dict(factor=(-0.4, 0.1), value_range=(255, 10))),
    "crop": ("RandomCrop", dict(height=3, width=4, seed=1)),
    "crop_larger_than_image": ("RandomCrop", dict(height=6, width=4, seed=1)),
    "crop_same_height": ("RandomCrop", dict(height=5, width=3, seed=1)),
    "zoom_keep_aspect": ("RandomZoom", dict(height_factor=0.4)),
    "zoom_in_out": ("RandomZoom", dict(height_factor=(-0.5, -0.1), width_factor=(-0.3, 0.6))),
    "translation": ("RandomTranslation", dict(height_factor=0.4, width_factor=(-0.6, 0.3))),
    **{
        f"rotation_{mode}_{interpolation}": (
            "RandomRotation",
            dict(factor=0.4, fill_mode=mode, interpolation=interpolation, fill_value=7.0),
        )
        for mode in MODES
        for interpolation in ("bilinear", "nearest")
    },
    **{
        f"zoom_{mode}_nearest": ("RandomZoom", dict(height_factor=0.5, fill_mode=mode, interpolation="nearest"))
        for mode in MODES
    },
    **{
        f"translation_{mode}": ("RandomTranslation", dict(height_factor=0.5, width_factor=0.8, fill_mode=mode))
        for mode in MODES
    },
}


SINGLE_IMAGE_CASES = ("rotation_reflect_bilinear", "zoom_keep_aspect", "zoom_in_out")


def _as_numpy(transformation):
    """Keras' transformation (a dict or tuple of TF tensors and Python values) as NumPy arrays."""
    if isinstance(transformation, dict):
        return {k: _as_numpy(v) for k, v in transformation.items()}
    if isinstance(transformation, tuple) and not all(isinstance(v, int) for v in transformation):
        return tuple(_as_numpy(v) for v in transformation)
    return transformation.numpy() if hasattr(transformation, "numpy") else transformation


def _pair(key):
    name, kwargs = CASES[key]
    return getattr(keras.layers, name)(**kwargs), getattr(gtf.keras.layers, name)(**kwargs)


@pytest.mark.parametrize("key", sorted(CASES))
def test_transform_images_equals_keras_for_the_same_transformation(key):
    theirs, ours = _pair(key)
    # One image too for a case of each layer (the other fill modes add nothing there).
    single = not key.startswith(("rotation", "zoom", "translation_")) or key in SINGLE_IMAGE_CASES
    for images in (IMAGES, IMAGES[1]) if single else (IMAGES,):
        for seed in (0, 1):
            transformation = theirs.get_random_transformation(images, training=True, seed=seed)
            if images.ndim == 3:  # Keras' call on one image: a batch of one, the transformation unbatched
                expected = theirs.transform_single_image(images, transformation).numpy()
                got = gtf.squeeze(ours.transform_images(images[None], _as_numpy(transformation)), 0)
            else:
                expected = theirs.transform_images(images, transformation).numpy()
                got = ours.transform_images(images, _as_numpy(transformation))
            assert got.dtype == np.float32
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=5e-5)


@pytest.mark.parametrize("key", ["flip_both", "rotation_wrap_bilinear", "zoom_in_out", "contrast", "crop"])
def test_channels_first_equals_keras(key):
    name, kwargs = CASES[key]
    images = IMAGES.transpose(0, 3, 1, 2)
    theirs = getattr(keras.layers, name)(data_format="channels_first", **kwargs)
    ours = getattr(gtf.keras.layers, name)(data_format="channels_first", **kwargs)
    transformation = theirs.get_random_transformation(images, training=True, seed=4)
    expected = theirs.transform_images(images, transformation).numpy()
    got = ours.transform_images(images, _as_numpy(transformation)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=5e-5)


@pytest.mark.parametrize("size", [(5, 7), (1, 4)])
def test_affine_transform_equals_image_projective_transform_v3(size):
    height, width = size
    images = _RNG.normal(size=(2, height, width, 2)).astype(np.float32)
    for trial in range(4):
        angle, scale = _RNG.uniform(-3, 3), _RNG.uniform(0.5, 1.8)
        cos, sin = scale * np.cos(angle), scale * np.sin(angle)
        shift = _RNG.uniform(-9, 9, size=2)
        tilt = _RNG.uniform(-0.05, 0.05, size=2) * (trial % 2)  # projective rows half the time
        transforms = np.array([[cos, -sin, shift[0], sin, cos, shift[1], *tilt]] * 2, np.float32)
        transforms[1, :2] *= -1
        for mode in MODES:
            for interpolation in ("bilinear", "nearest"):
                expected = tf_real.raw_ops.ImageProjectiveTransformV3(
                    images=images,
                    transforms=transforms,
                    output_shape=[height, width],
                    fill_value=0.5,
                    interpolation=interpolation.upper(),
                    fill_mode=mode.upper(),
                ).numpy()
                got = affine_transform(images, transforms, interpolation, mode, 0.5).numpy()
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-5, err_msg=f"{mode} {interpolation}")


# -- inference, dtypes and configs ------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(k for k in CASES if not k.startswith("crop")))
def test_inference_is_the_identity(key):
    _, ours = _pair(key)
    for images in (IMAGES, IMAGES[0], IMAGES.astype(np.float64)):
        out = ours(images, training=False)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out.numpy(), images.astype(np.float32))


@pytest.mark.parametrize("target", [(3, 3), (2, 5), (6, 4), (5, 7)])
def test_random_crop_at_inference_is_keras_central_resize(target):
    # Keras documents the largest central window of the target's aspect ratio, resized (its
    # smart_resize); Keras 3.15 returns the input uncropped instead (its issue #21868).
    expected = np.asarray(keras.preprocessing.image.smart_resize(IMAGES, target))
    layer = gtf.keras.layers.RandomCrop(*target)
    np.testing.assert_allclose(layer(IMAGES, training=False).numpy(), expected, rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(layer(IMAGES[0], training=False).numpy(), expected[0], rtol=1e-6, atol=1e-4)
    first = gtf.keras.layers.RandomCrop(*target, data_format="channels_first")
    out = first(IMAGES.transpose(0, 3, 1, 2), training=False).numpy()
    np.testing.assert_allclose(out, expected.transpose(0, 3, 1, 2), rtol=1e-6, atol=1e-4)
    assert layer.compute_output_shape((None, 5, 7, 2)) == (None, *target, 2)


def test_integer_images_follow_keras():
    ints = IMAGES.astype(np.int32)
    for name, kwargs in [
        ("RandomFlip", {}),
        ("RandomRotation", {"factor": 0.2}),
        ("RandomCrop", {"height": 3, "width": 3}),
    ]:
        for training in (True, False):
            assert getattr(gtf.keras.layers, name)(**kwargs)(ints, training=training).dtype == np.float32
    # A fixed delta (factor (0.2, 0.2)): Keras casts it to the images' integer dtype.
    theirs = keras.layers.RandomBrightness((0.2, 0.2))(ints, training=True).numpy()
    ours = gtf.keras.layers.RandomBrightness((0.2, 0.2))(ints, training=True)
    assert ours.dtype == np.int32
    np.testing.assert_array_equal(ours.numpy(), theirs)
    assert gtf.keras.layers.RandomContrast(0.5)(ints, training=False).dtype == np.int32
    contrasted = gtf.keras.layers.RandomContrast(0.5)(ints, training=True)  # Keras on TF fails here
    assert contrasted.dtype == np.float32


CONFIGS = {
    "flip": ("RandomFlip", dict(mode="vertical", seed=3, name="l")),
    "rotation": ("RandomRotation", dict(factor=(-0.2, 0.1), fill_mode="constant", fill_value=1.0, name="l")),
    "rotation_number": ("RandomRotation", dict(factor=0.1, interpolation="nearest", name="l")),
    "zoom": ("RandomZoom", dict(height_factor=0.2, seed=5, name="l")),
    "zoom_pair": ("RandomZoom", dict(height_factor=(-0.3, 0.1), width_factor=[0.2, -0.1], fill_mode="wrap", name="l")),
    "translation": ("RandomTranslation", dict(height_factor=0.1, width_factor=0.2, data_format="channels_first")),
    "contrast": ("RandomContrast", dict(factor=0.3, name="l")),
    "contrast_pair": ("RandomContrast", dict(factor=[0.4, 0.1], value_range=(0, 1), seed=2, name="l")),
    "brightness": ("RandomBrightness", dict(factor=0.2, value_range=(255, 0), name="l")),
    "crop": ("RandomCrop", dict(height=3, width=4, seed=9, name="l")),
}


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_get_config_equals_keras_and_round_trips(key):
    name, kwargs = CONFIGS[key]
    kwargs = {"name": "l", **kwargs}
    theirs = getattr(keras.layers, name)(**kwargs).get_config()
    ours_layer = getattr(gtf.keras.layers, name)(**kwargs)
    ours = ours_layer.get_config()
    assert ours == theirs
    assert type(ours_layer).from_config(ours).get_config() == ours
    assert getattr(keras.layers, name).from_config(ours).get_config() == theirs


def test_random_crop_without_a_seed_gets_one_as_in_keras():
    seed = gtf.keras.layers.RandomCrop(3, 3).get_config()["seed"]
    assert isinstance(seed, int) and 1 <= seed <= 10**9


# -- the draws --------------------------------------------------------------------------------


def _check_ranges(key, ours, transformation, batch):
    name, _ = CASES[key]
    if name == "RandomFlip":
        assert transformation["flips"].shape == (batch, 1, 1, 1) and transformation["flips"].dtype == bool
    elif name == "RandomRotation":
        angle = transformation["angle"].numpy()
        assert angle.shape == (batch,) and transformation["rotation_matrix"].shape == (batch, 8)
        assert ((angle >= ours.factor[0] * 360) & (angle <= ours.factor[1] * 360)).all()
    elif name == "RandomZoom":
        same = ours.width_factor is None  # the width zooms by the height's factor
        for axis in ("height", "width"):
            zoom = transformation[f"{axis}_zoom"].numpy()
            bounds = "height" if same else axis
            lower, upper = getattr(ours, f"{bounds}_lower"), getattr(ours, f"{bounds}_upper")
            assert zoom.shape == (batch, 1) and ((zoom >= 1 + lower) & (zoom <= 1 + upper)).all()
        if same:
            np.testing.assert_array_equal(transformation["width_zoom"].numpy(), transformation["height_zoom"].numpy())
    elif name == "RandomTranslation":
        shift = transformation["translations"].numpy()
        assert shift.shape == (batch, 2) and shift.dtype == np.float32
        assert ((shift[:, 0] >= ours.width_lower * 7) & (shift[:, 0] <= ours.width_upper * 7)).all()
        assert ((shift[:, 1] >= ours.height_lower * 5) & (shift[:, 1] <= ours.height_upper * 5)).all()
    elif name == "RandomContrast":
        factor = transformation["contrast_factor"].numpy()
        assert factor.shape == (batch, 1, 1, 1)
        assert ((factor >= 1 - ours.factor[0]) & (factor <= 1 + ours.factor[1])).all()
    elif name == "RandomBrightness":
        delta = transformation["rgb_delta"].numpy() / (ours.value_range[1] - ours.value_range[0])
        assert delta.shape == (batch, 1, 1, 1) and ((delta >= ours.factor[0]) & (delta <= ours.factor[1])).all()
    elif name == "RandomCrop" and key == "crop":
        top, left = (int(v) for v in transformation)
        assert 0 <= top <= 5 - ours.height and 0 <= left <= 7 - ours.width


def _flat(transformation):
    values = transformation.values() if isinstance(transformation, dict) else transformation
    return np.concatenate([np.ravel(np.asarray(v, np.float32)) for v in values if not isinstance(v, tuple)])


@pytest.mark.parametrize(
    "key",
    ["flip_both", "rotation_reflect_bilinear", "zoom_in_out", "zoom_keep_aspect", "translation"]
    + ["contrast_range", "brightness_pair", "crop"],
)
def test_draws_have_keras_shapes_and_ranges_and_are_new_at_each_call(key):
    theirs, ours = _pair(key)
    keras_draw = _as_numpy(theirs.get_random_transformation(UNIT, seed=1))
    keras_shapes = [np.shape(v) for v in keras_draw.values()] if isinstance(keras_draw, dict) else None
    draws = []
    for _ in range(8):
        transformation = ours.get_random_transformation(UNIT)
        _check_ranges(key, ours, transformation, batch=4)
        if keras_shapes is not None:
            assert [np.shape(v) for v in _as_numpy(transformation).values()] == keras_shapes
        draws.append(_flat(transformation))
    assert len({d.tobytes() for d in draws}) > 1
    single = ours.get_random_transformation(UNIT[0])
    if CASES[key][0] == "RandomRotation":
        assert single["rotation_matrix"].shape == (8,)
    # An int seed draws the same transformation every time, as Keras' stateless seeds do.
    np.testing.assert_array_equal(
        _flat(ours.get_random_transformation(UNIT, seed=5)), _flat(ours.get_random_transformation(UNIT, seed=5))
    )


def test_rotation_matrix_is_keras_affine_matrix_of_the_angles():
    theirs = keras.layers.RandomRotation(0.3)
    transformation = gtf.keras.layers.RandomRotation(0.3).get_random_transformation(UNIT)
    angle = tf_real.constant(transformation["angle"].numpy())
    zeros, ones = tf_real.zeros([4]), tf_real.ones([4])
    expected = theirs._compute_affine_matrix(0.5, 0.5, angle, zeros, zeros, ones, zeros, zeros, 5, 7)
    np.testing.assert_allclose(transformation["rotation_matrix"].numpy(), expected.numpy(), rtol=1e-6, atol=1e-5)


def test_flips_flip_about_half_the_images():
    flips = gtf.keras.layers.RandomFlip().get_random_transformation(np.zeros((400, 2, 2, 1), np.float32))["flips"]
    assert 150 < int(flips.numpy().sum()) < 250


@pytest.mark.parametrize("key", ["flip_both", "rotation_reflect_bilinear", "contrast", "crop"])
def test_compiled_calls_draw_anew_and_compile_once(key):
    _, ours = _pair(key)
    step = gtf.function(lambda x: ours(x, training=True))
    first = step(UNIT).numpy()
    outputs = [step(UNIT).numpy() for _ in range(4)]
    assert count_compiles(lambda: step(UNIT)) == 0
    assert step.experimental_get_tracing_count() == 1
    assert len({o.tobytes() for o in [first, *outputs]}) > 1


def test_layer_seed_fixes_the_sequence():
    runs = []
    for _ in range(2):
        gtf.random.set_seed(11)
        layer = gtf.keras.layers.RandomRotation(0.2, seed=4)
        runs.append([layer(UNIT).numpy() for _ in range(2)])
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[0][1])


# -- gradients --------------------------------------------------------------------------------


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


@pytest.mark.parametrize("key", ["flip_both", "contrast", "contrast_range", "brightness_pair", "crop"])
def test_gradients_equal_tensorflow(key):
    theirs, ours = _pair(key)
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=2)
    shape = theirs.transform_images(IMAGES, transformation).shape
    weights = _RNG.normal(size=shape).astype(np.float32)
    expected = _keras_gradient(theirs, IMAGES, transformation, weights)
    got = _our_gradient(ours, IMAGES, _as_numpy(transformation), weights)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_whole_pixel_shift_gradients_equal_tensorflow(interpolation):
    # Pixels move one to one: TensorFlow's registered gradient (the inverse shift) is exact here.
    theirs = keras.layers.RandomTranslation(0.5, 0.5, fill_mode="constant", interpolation=interpolation)
    ours = gtf.keras.layers.RandomTranslation(0.5, 0.5, fill_mode="constant", interpolation=interpolation)
    transformation = {"translations": np.array([[1.0, 0.0], [-2.0, 1.0], [3.0, -2.0]], np.float32)}
    weights = _RNG.normal(size=IMAGES.shape).astype(np.float32)
    expected = _keras_gradient(theirs, IMAGES, transformation, weights)
    np.testing.assert_allclose(_our_gradient(ours, IMAGES, transformation, weights), expected, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize(
    "key",
    ["rotation_reflect_bilinear", "rotation_wrap_nearest", "rotation_constant_bilinear"]
    + ["zoom_in_out", "translation_nearest"],
)
def test_geometric_gradients_are_the_adjoint_of_tensorflows_sampling(key):
    # TensorFlow's sampling is linear in the images: its Jacobian, column by column, from the
    # images of one pixel each; gradkit's gradient is that Jacobian transposed times the weights.
    theirs, ours = _pair(key)
    image = UNIT[:1]
    transformation = theirs.get_random_transformation(image, training=True, seed=3)
    basis = np.eye(35, dtype=np.float32).reshape(35, 5, 7, 1)
    batched = dict(transformation)
    for name in ("rotation_matrix", "height_zoom", "width_zoom", "translations"):
        if name in batched:  # the one image's parameters, for each basis image
            batched[name] = tf_real.repeat(batched[name], 35, axis=0)
    offset = theirs.transform_images(np.zeros_like(basis), batched).numpy()  # fill_value's part
    columns = (theirs.transform_images(basis, batched).numpy() - offset).reshape(35, 35)
    weights = _RNG.normal(size=(1, 5, 7, 1)).astype(np.float32)
    expected = (columns @ weights.reshape(35)).reshape(1, 5, 7, 1)
    got = _our_gradient(ours, image, _as_numpy(transformation), weights)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# -- training ---------------------------------------------------------------------------------


def test_augmented_model_trains_with_fit():
    gtf.keras.utils.set_random_seed(0)
    L = gtf.keras.layers
    model = gtf.keras.Sequential(
        [
            gtf.keras.Input(shape=(5, 7, 1)),
            L.RandomFlip("horizontal"),
            L.RandomRotation(0.1),
            L.RandomZoom(0.1),
            L.RandomTranslation(0.1, 0.1, fill_mode="nearest"),
            L.RandomContrast(0.2, value_range=(0, 1)),
            L.RandomBrightness(0.1, value_range=(0, 1)),
            L.RandomCrop(4, 6),
            L.Conv2D(2, 3, activation="relu"),
            L.Flatten(),
            L.Dense(1),
        ]
    )
    model.compile(optimizer=gtf.keras.optimizers.Adam(0.01), loss="mse")
    before = [w.copy() for w in model.get_weights()]
    x, y = UNIT[[0, 1, 2, 3] * 2], np.arange(8, dtype=np.float32)[:, None] / 8
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert all(np.isfinite(history.history["loss"]))
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    np.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))  # no augmentation


# -- errors -----------------------------------------------------------------------------------

ERRORS = {
    "flip_mode": (lambda L: L.RandomFlip("diagonal"), ValueError, "mode='diagonal'"),
    "rotation_factor": (lambda L: L.RandomRotation(1.5), ValueError, "factor"),
    "rotation_factor_list": (lambda L: L.RandomRotation([0.1]), ValueError, "factor"),
    "rotation_fill_mode": (lambda L: L.RandomRotation(0.1, fill_mode="mirror"), NotImplementedError, "fill_mode"),
    "zoom_interpolation": (lambda L: L.RandomZoom(0.1, interpolation="bicubic"), NotImplementedError, "interp"),
    "zoom_factor": (lambda L: L.RandomZoom(-1.0), ValueError, "height_factor"),
    "translation_factor": (lambda L: L.RandomTranslation(0.1, (0.2, 1.5)), ValueError, "width_factor"),
    "contrast_factor": (lambda L: L.RandomContrast(-0.2), ValueError, "factor"),
    "brightness_value_range": (lambda L: L.RandomBrightness(0.1, value_range=255), ValueError, "value_range"),
    "crop_size": (lambda L: L.RandomCrop(0, 3), ValueError, "height=0"),
    "data_format": (lambda L: L.RandomFlip(data_format="NHWC"), ValueError, "data_format"),
    "bounding_boxes": (lambda L: L.RandomFlip(bounding_box_format="xyxy"), NotImplementedError, "bounding_box"),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_bad_arguments_raise_keras_error_types(key):
    make, error, text = ERRORS[key]
    if key not in ("crop_size", "flip_mode", "bounding_boxes"):  # Keras does not check these
        with pytest.raises(error):
            make(keras.layers)
    with pytest.raises(error, match=r"\[gradkit\].*" + text):
        make(gtf.keras.layers)


def test_bad_inputs_raise_clear_errors():
    layer = gtf.keras.layers.RandomRotation(0.1)
    with pytest.raises(ValueError, match=r"\[gradkit\].*rank 3"):
        layer(np.zeros((5, 7), np.float32))
    with pytest.raises(TypeError, match=r"\[gradkit\].*dict"):
        layer({"images": UNIT})
    with pytest.raises(TypeError, match=r"\[gradkit\].*seed"):
        layer.get_random_transformation(UNIT, seed="1")
    with pytest.raises(ValueError, match=r"\[gradkit\].*transform of shape \[3, 8\]"):
        affine_transform(UNIT, np.zeros((3, 8), np.float32))
    with pytest.raises(TypeError, match=r"\[gradkit\].*int32 images"):
        affine_transform(UNIT.astype(np.int32), np.zeros(8, np.float32))
    with pytest.raises(ValueError, match=r"\[gradkit\].*fill_mode='mirror'"):
        affine_transform(UNIT, np.zeros(8, np.float32), fill_mode="mirror")
