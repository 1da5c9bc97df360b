"""gradkit.tf's RandomElasticTransform and ContrastLimitedAdaptiveHistogramEqualization (CLAHE)
against real Keras 3 on TensorFlow and against NumPy derivations.

RandomElasticTransform: Keras' transformation (drawn with an int seed) and the noise its backend
op draws from that seed, handed to gradkit, give Keras' images (and segmentation masks, and
gradients); where Keras 3.15 goes wrong (``"reflect"`` on the top and left sides, ``"mirror"``,
a zero distortion) the images are a NumPy derivation's. CLAHE is compared with Keras directly
on the same images (float and uint8, clip limits, tile grids that do not divide the image,
constant images), and with a NumPy loop-by-loop derivation where Keras 3.15 on TensorFlow fails.
Also: draws (Keras' keys, shapes and dtypes; fixed by a seed, new at each call), configs,
``training=False``, channels_first, a functional and a Sequential model, argument errors."""

import json
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit.tf._keras import augmentation_local as local  # noqa: E402

_RNG = np.random.default_rng(21)
# Elastic: 24 x 28 pixels. Distortion 0.6: sigma = 0.05 * 0.6 * 24 = 0.72, a one-tap blur;
# distortion 0.95: sigma = 1.14, a 7 x 7 blur (Keras' 6 * int(sigma) | 1 taps).
IMAGES = _RNG.uniform(1, 254, size=(2, 24, 28, 1)).astype(np.float32)
FACTORS = (0.6, 0.95)
ELASTIC = dict(fill_value=7.0, scale=(0.5, 1.0))  # the elastic layers' arguments (one compiled program each)
MODES = ("constant", "nearest", "wrap")  # the modes Keras 3.15 on TensorFlow gets right everywhere
# CLAHE
PIXELS = _RNG.uniform(1, 254, size=(2, 8, 8, 3)).astype(np.float32)
GRAY = _RNG.uniform(1, 254, size=(3, 16, 16, 1)).astype(np.float32)
UINT8 = _RNG.integers(0, 256, size=(2, 13, 10, 3)).astype(np.uint8)


@pytest.fixture
def keras():
    return pytest.importorskip("tensorflow").keras


def _tf():
    return pytest.importorskip("tensorflow")


def _as_numpy(transformation):
    if isinstance(transformation, dict):
        return {k: _as_numpy(v) for k, v in transformation.items()}
    return transformation.numpy() if hasattr(transformation, "numpy") else transformation


def _same_pixels(got, expected, atol=1e-4):
    """Equal to float32 rounding, on pixels up to 255. Compiled, XLA fuses a product and the sum
    it feeds into one multiply-add (rounded once where TensorFlow rounds twice): an ulp or so of
    a pixel (1.5e-5 near 255). A bilinear sample's weights are an ulp of its position apart
    (gradkit takes the fraction of the shift, Keras of the rounded position), which moves the
    pixel by up to its slope (~250 per pixel) times that ulp (~2e-6): ``atol`` 1e-3 there.
    Integer outputs are truncated floats: one an ulp below a whole level may come out one
    lower, rarely."""
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    expected = expected.numpy() if hasattr(expected, "numpy") else np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if np.issubdtype(got.dtype, np.integer):
        difference = np.abs(got.astype(np.int64) - expected.astype(np.int64))
        assert difference.max(initial=0) <= 1 and np.mean(difference) < 0.01
    else:
        np.testing.assert_allclose(got, expected, rtol=0, atol=atol)


def _same_transformation(theirs, images, seed, apply=None, factor=None):
    """Keras' transformation for ``images`` with an int seed, and the same one for gradkit: the
    noise Keras' ``elastic_transform`` draws from that seed (``tf.random.stateless_normal`` on
    ``draw_seed(seed)``, once for x and once for y: the same field twice, as Keras 3.15 draws).
    ``apply`` (which images are transformed) and ``factor`` (the distortion) replace Keras' draws."""
    from keras.src.random.seed_generator import draw_seed

    tf = _tf()
    transformation = theirs.get_random_transformation(images, training=True, seed=seed)
    if apply is not None:
        transformation["apply_transform"] = tf.constant(apply)
    if factor is not None:
        transformation["distortion_factor"] = tf.constant(factor, "float32")
    batch = images.shape[0] if images.ndim == 4 else 1
    first = theirs.data_format == "channels_first"
    height, width = images.shape[-2:] if first else images.shape[-3:-1]
    field = tf.random.stateless_normal((batch, height, width), seed=draw_seed(seed), dtype="float32").numpy()
    ours = {k: v for k, v in _as_numpy(transformation).items() if k != "seed"}
    ours["noise"] = np.stack([field, field])
    return transformation, ours


def _elastic_pair(keras, **kwargs):
    return keras.layers.RandomElasticTransform(**kwargs), gtf.keras.layers.RandomElasticTransform(**kwargs)


# -- a NumPy derivation of the elastic transform ---------------------------------------------------

# Each fill mode as NumPy's np.pad extends an array (an independent statement of the modes).
_NP_PAD = {"reflect": "symmetric", "mirror": "reflect", "wrap": "wrap", "nearest": "edge"}


def _np_fixed(index, size, mode):
    """Integer positions moved into the image as ``mode`` extends it (by np.pad), and validity."""
    if mode == "constant":
        return np.clip(index, 0, size - 1), (index >= 0) & (index < size)
    margin = int(np.abs(index).max()) + size + 2
    extended = np.pad(np.arange(size), margin, mode=_NP_PAD[mode])
    return extended[index + margin], np.ones(index.shape, bool)


def _np_elastic(images, apply, factor, noise, *, order, mode, fill_value=0.0, value_range=(0, 255)):
    """The elastic transform from its definition, in float64: Keras' alpha and sigma (its float32
    values), a ``6 int(sigma) | 1``-tap Gaussian (zero-padded), then nearest or bilinear sampling.
    Returns the images and the sample rows and columns."""
    batch, height, width, _ = images.shape
    factor = np.float32(factor)
    alpha = float(np.float32(max(height, width)) * (np.float32(0.1) * factor))
    sigma = float(np.float32(min(height, width)) * (np.float32(0.05) * factor))
    taps = 6 * int(sigma) | 1
    x = np.arange(taps) - (taps - 1) / 2
    profile = np.exp(-0.5 * (x / sigma) ** 2) if sigma else (x == 0).astype(float)
    kernel = np.outer(profile, profile) / profile.sum() ** 2
    half = taps // 2
    fields = []
    for field in np.asarray(noise, np.float64) * sigma:  # x, then y
        padded = np.pad(field, ((0, 0), (half, half), (half, half)))
        fields.append(
            sum(kernel[i, j] * padded[:, i : i + height, j : j + width] for i in range(taps) for j in range(taps))
        )
    cols = np.arange(width)[None, None, :] + alpha * fields[0]
    rows = np.arange(height)[None, :, None] + alpha * fields[1]
    if order == 0:
        nodes = [(np.round(rows).astype(int), np.round(cols).astype(int), np.ones_like(rows))]
    else:
        r0, c0 = np.floor(rows).astype(int), np.floor(cols).astype(int)
        fr, fc = rows - r0, cols - c0
        nodes = [
            (r0, c0, (1 - fr) * (1 - fc)),
            (r0, c0 + 1, (1 - fr) * fc),
            (r0 + 1, c0, fr * (1 - fc)),
            (r0 + 1, c0 + 1, fr * fc),
        ]
    out = np.zeros(images.shape)
    b = np.arange(batch)[:, None, None]
    for r, c, weight in nodes:
        r, r_ok = _np_fixed(r, height, mode)
        c, c_ok = _np_fixed(c, width, mode)
        values = np.where((r_ok & c_ok)[..., None], images[b, r, c].astype(np.float64), fill_value)
        out += weight[..., None] * values
    out = np.where(np.asarray(apply)[:, None, None, None], out, images)
    return np.clip(out, *value_range), rows, cols


# -- RandomElasticTransform: the same transformation in both libraries -------------------------


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
@pytest.mark.parametrize("mode", MODES)
def test_elastic_transform_images_equals_keras_for_the_same_transformation(keras, mode, interpolation):
    theirs, ours = _elastic_pair(keras, fill_mode=mode, interpolation=interpolation, **ELASTIC)
    for seed, factor in zip((1, 2), FACTORS):
        transformation, same = _same_transformation(theirs, IMAGES, seed, apply=[True, False], factor=factor)
        expected = theirs.transform_images(IMAGES, transformation).numpy()
        got = ours.transform_images(IMAGES, same)
        assert not np.allclose(expected[0], IMAGES[0])  # the field moved the first image
        np.testing.assert_array_equal(got.numpy()[1], IMAGES[1])  # and left the second
        if factor < 0.8:  # a one-tap blur: the same positions, in float32 (see _same_pixels)
            _same_pixels(got, expected, atol=1e-3 if interpolation == "bilinear" else 0)
        elif interpolation == "bilinear":
            # TensorFlow's depthwise convolution and XLA sum the 49 taps of the blur in other
            # orders: the fields differ by float32 rounding (~1e-7 relative), the sample positions
            # by ~1e-6 of a pixel, so a pixel (slopes up to ~250 per pixel) by up to ~1e-3.
            _same_pixels(got, expected, atol=2e-3)
        else:  # nearest: a position that close to a half may round to the other pixel (rarely)
            assert got.dtype == expected.dtype
            assert np.mean(got.numpy() != expected) < 0.005


def test_elastic_single_image_and_channels_first_equal_keras(keras):
    theirs, ours = _elastic_pair(keras, fill_mode="wrap", **ELASTIC)
    image = IMAGES[0]
    transformation, same = _same_transformation(theirs, image, 4, apply=[True], factor=0.7)
    expected = theirs.transform_single_image(image, transformation)
    _same_pixels(gtf.squeeze(ours.transform_images(image[None], same), 0), expected, atol=1e-3)
    theirs, ours = _elastic_pair(keras, fill_mode="constant", data_format="channels_first", **ELASTIC)
    images = np.concatenate([IMAGES, 255 - IMAGES, IMAGES / 2], axis=-1).transpose(0, 3, 1, 2)
    transformation, same = _same_transformation(theirs, images, 5, apply=[True, True], factor=0.7)
    _same_pixels(ours.transform_images(images, same), theirs.transform_images(images, transformation), atol=1e-3)


def test_elastic_reflect_equals_keras_off_the_top_and_left_edges_and_numpy_everywhere(keras):
    # Keras 3.15 on TensorFlow reflects a position -k to k (taking |index|), one pixel further in
    # than its documented (d c b a | a b c d | d c b a), which its JAX backend follows: gradkit
    # reflects as documented. Keras' images are compared where no sample falls above or left of
    # the image; everywhere, gradkit's are the NumPy derivation's.
    theirs, ours = _elastic_pair(keras, fill_mode="reflect", **ELASTIC)
    transformation, same = _same_transformation(theirs, IMAGES, 6, apply=[True, True], factor=0.7)
    expected = theirs.transform_images(IMAGES, transformation).numpy()
    got = ours.transform_images(IMAGES, same).numpy()
    oracle, rows, cols = _np_elastic(IMAGES, [True, True], 0.7, same["noise"], order=1, mode="reflect", fill_value=7.0)
    np.testing.assert_allclose(got, oracle, rtol=0, atol=1e-3)
    inside = (rows > 0.01) & (cols > 0.01)
    assert not inside.all()  # some samples fall off the top or the left
    _same_pixels(got[inside], expected[inside], atol=1e-3)


@pytest.mark.parametrize(
    "mode, interpolation",
    [(mode, "bilinear") for mode in ("reflect", "mirror", "wrap", "nearest", "constant")]
    + [("reflect", "nearest"), ("mirror", "nearest")],  # Keras checks nearest sampling in its other modes
)
def test_elastic_equals_the_numpy_derivation(mode, interpolation):
    layer = gtf.keras.layers.RandomElasticTransform(fill_mode=mode, interpolation=interpolation, **ELASTIC)
    order = 0 if interpolation == "nearest" else 1
    # moves of ~20 pixels (several image lengths out, one-tap blur), and of ~1 pixel (7 x 7 blur)
    for factor, spread in zip(FACTORS, (20, 3)):
        noise = _RNG.normal(size=(2, 2, 24, 28)).astype(np.float32) * spread
        apply = np.array([True, False])
        transformation = {"apply_transform": apply, "distortion_factor": np.float32(factor), "noise": noise}
        got = layer.transform_images(IMAGES, transformation).numpy()
        oracle, _, _ = _np_elastic(IMAGES, apply, factor, noise, order=order, mode=mode, fill_value=7.0)
        if order == 0:  # a position within rounding of a half may round the other way in float64
            assert np.mean(np.abs(got - oracle) > 1e-3) < 0.005
        else:
            np.testing.assert_allclose(got, oracle, rtol=0, atol=2e-3)


def test_sampling_equals_keras_map_coordinates_with_halves_to_even(keras):
    # Keras' map_coordinates on TensorFlow at positions including exact halves (tf.round takes
    # them to even) and far outside, in each mode Keras gets right; gradkit's sampling, the same
    # (bilinear sampling is compared through the layers above).
    from keras.src.backend.tensorflow.image import map_coordinates

    image = _RNG.uniform(0, 10, size=(5, 6)).astype(np.float32)
    halves = _RNG.integers(-8, 8, size=(2, 5, 6)) + 0.5
    shifts = np.where(_RNG.uniform(size=(2, 5, 6)) < 0.5, halves, _RNG.uniform(-12, 12, size=(2, 5, 6)))
    shifts = shifts.astype(np.float32)
    rows = np.arange(5, dtype=np.float32)[:, None] + shifts[0]  # the positions, as Keras adds them
    cols = np.arange(6, dtype=np.float32)[None, :] + shifts[1]
    sample = jax.jit(local._sample, static_argnames=("order", "fill_mode", "fill_value"))
    for mode, order in [(mode, 0) for mode in MODES + ("reflect",)] + [("reflect", 1)]:
        expected = map_coordinates(image, np.stack([rows, cols]), order, fill_mode=mode, fill_value=-1.0).numpy()
        got = sample(
            jnp.asarray(image)[None, :, :, None],
            jnp.asarray(shifts[0])[None],
            jnp.asarray(shifts[1])[None],
            order=order,
            fill_mode=mode,
            fill_value=-1.0,
        )
        got = np.asarray(got)[0, :, :, 0]
        if mode == "reflect":  # Keras reflects negative positions one pixel off (see above)
            keep = (rows >= 0) & (cols >= 0)
            got, expected = got[keep], expected[keep]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5, err_msg=f"{mode} order {order}")


def test_reflect_and_mirror_as_keras_documents():
    layer = gtf.keras.layers.RandomElasticTransform
    image = np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1)  # a b c d = 0 1 2 3
    # alpha * sigma = 0.4 * 0.05 (one row of 4): x noise of -250 moves the samples 5 columns left
    shift = {"apply_transform": [True], "distortion_factor": 1.0, "noise": [[[[-250.0] * 4]], [[[0.0] * 4]]]}
    reflect = layer(fill_mode="reflect").transform_images(image, shift)[0, 0, :, 0].numpy()
    mirror = layer(fill_mode="mirror").transform_images(image, shift)[0, 0, :, 0].numpy()
    # columns -5..-2: reflect (d c b a | a b c d): d d c b; mirror (c d c b | a b c d): b c d c
    np.testing.assert_array_equal(reflect, [3, 3, 2, 1])
    np.testing.assert_array_equal(mirror, [1, 2, 3, 2])


def test_a_zero_distortion_leaves_the_images():
    # Keras 3.15 divides 0 by 0 in its blur kernel there (its images become NaN).
    layer = gtf.keras.layers.RandomElasticTransform(fill_mode="reflect", **ELASTIC)
    noise = _RNG.normal(size=(2, 2, 24, 28)).astype(np.float32)
    got = layer.transform_images(IMAGES, {"apply_transform": [True, True], "distortion_factor": 0.0, "noise": noise})
    np.testing.assert_array_equal(got.numpy(), IMAGES)


# -- RandomElasticTransform: masks, labels, boxes, inference ------------------------------------


def test_elastic_segmentation_masks_equal_keras_and_labels_pass(keras):
    theirs, ours = _elastic_pair(keras, fill_mode="wrap", **ELASTIC)
    masks = _RNG.integers(0, 4, size=IMAGES.shape).astype(np.float32)
    transformation, same = _same_transformation(theirs, masks, 7, apply=[True, False], factor=0.7)
    expected = theirs.transform_segmentation_masks(masks, transformation).numpy()
    got = ours.transform_segmentation_masks(masks, same)
    _same_pixels(got, expected, atol=0)
    assert set(np.unique(expected)) <= {0.0, 1.0, 2.0, 3.0} and not np.array_equal(expected, masks)
    # integer masks (Keras 3.15 on TensorFlow fails on them): the same values, in the layer's dtype
    as_ints = ours.transform_segmentation_masks(masks.astype(np.int32), same)
    assert as_ints.dtype == np.float32
    np.testing.assert_array_equal(as_ints.numpy(), got.numpy())
    unchanged = ours.transform_segmentation_masks(masks, same, training=False)  # as Keras: as they are
    np.testing.assert_array_equal(unchanged.numpy(), theirs.transform_segmentation_masks(masks, same, training=False))
    labels = np.eye(3, dtype=np.float32)
    np.testing.assert_array_equal(
        ours.transform_labels(labels, same).numpy(), theirs.transform_labels(labels, transformation)
    )
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*bounding boxes"):
        ours.transform_bounding_boxes({"boxes": np.zeros((1, 1, 4))}, same)


def test_elastic_inference_returns_the_input_in_the_layer_dtype_as_keras(keras):
    theirs, ours = _elastic_pair(keras, fill_mode="reflect", **ELASTIC)
    for images in (IMAGES, IMAGES[0], IMAGES.astype(np.float64), IMAGES.astype(np.int32)):
        expected = theirs(images, training=False)
        got = ours(images, training=False)
        assert got.dtype == np.dtype(expected.dtype.as_numpy_dtype)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    ints = IMAGES.astype(np.int32)  # in training: floats too, as Keras
    trained = ours(ints, training=True)
    assert trained.dtype == np.dtype(theirs(ints, training=True).dtype.as_numpy_dtype)
    assert trained.shape == ints.shape
    assert ours.get_random_transformation(IMAGES, training=False) is None
    for kwargs in (dict(scale=0.0), dict(factor=0.0)):  # nothing to draw, as in Keras
        assert gtf.keras.layers.RandomElasticTransform(**kwargs).get_random_transformation(IMAGES) is None
        assert keras.layers.RandomElasticTransform(**kwargs).get_random_transformation(IMAGES) is None


# -- RandomElasticTransform: draws ---------------------------------------------------------------


def test_elastic_draws_have_keras_shapes_and_are_fixed_by_a_seed_and_new_at_each_call(keras):
    # (IMAGES' shape throughout: each new shape of noise compiles JAX's normal sampler anew.)
    theirs, ours = _elastic_pair(keras, factor=(0.2, 0.8), scale=(0.3, 0.6))
    keras_draw = _as_numpy(theirs.get_random_transformation(IMAGES, training=True, seed=1))
    draws = [_as_numpy(ours.get_random_transformation(IMAGES)) for _ in range(3)]
    draws += [_as_numpy(ours.get_random_transformation(IMAGES, seed=seed)) for seed in range(10)]
    for draw in draws:
        assert sorted(draw) == sorted(set(keras_draw) - {"seed"} | {"noise"})
        for key in ("apply_transform", "distortion_factor"):
            assert np.shape(draw[key]) == np.shape(keras_draw[key]) and draw[key].dtype == keras_draw[key].dtype
        assert draw["noise"].shape == (2, 2, 24, 28) and draw["noise"].dtype == np.float32
        assert 0.3 <= float(draw["distortion_factor"]) < 0.6
        assert not np.array_equal(draw["noise"][0], draw["noise"][1])  # x and y drawn independently
    flat = [np.concatenate([np.ravel(d[k]).astype(np.float32) for k in sorted(d)]) for d in draws]
    assert len({f.tobytes() for f in flat}) == len(flat)  # new at each call, and for each seed
    noise = np.concatenate([np.ravel(d["noise"]) for d in draws])
    assert abs(noise.mean()) < 0.05 and abs(noise.std() - 1) < 0.05  # standard normals
    chosen = np.concatenate([d["apply_transform"] for d in draws[3:]])  # (seeded: the same each run)
    assert 0.1 < chosen.mean() < 0.9  # with probabilities from (0.2, 0.8)
    again = _as_numpy(ours.get_random_transformation(IMAGES, seed=5))
    for key in again:
        np.testing.assert_array_equal(again[key], draws[3 + 5][key])
    single = _as_numpy(ours.get_random_transformation(IMAGES[0]))  # one image: a batch of one
    assert single["apply_transform"].shape == (1,) and single["noise"].shape == (2, 1, 24, 28)


def test_elastic_compiled_calls_draw_anew_and_compile_once():
    layer = gtf.keras.layers.RandomElasticTransform(fill_mode="reflect", **ELASTIC)
    step = gtf.function(lambda x: layer(x, training=True))
    outputs = [step(IMAGES).numpy() for _ in range(3)]
    assert count_compiles(lambda: step(IMAGES)) == 0
    assert step.experimental_get_tracing_count() == 1
    assert all(out.shape == IMAGES.shape for out in outputs)
    # Each call transforms an image or, by its apply_transform draw, leaves it as it is (two calls
    # may both leave it), so what must be new at each call are the draws themselves.
    draw = gtf.function(lambda x: layer.get_random_transformation(x, training=True))
    noises = [np.asarray(draw(IMAGES)["noise"]) for _ in range(3)]
    assert len({n.tobytes() for n in noises}) == 3
    assert count_compiles(lambda: draw(IMAGES)) == 0
    # a transformation traced inside a compiled function (its distortion unknown when traced)
    transformation = _as_numpy(layer.get_random_transformation(IMAGES, seed=3))
    transformation["distortion_factor"] = np.float32(0.95)  # a 7 x 7 blur
    apply = gtf.function(lambda x, t: layer.transform_images(x, t))
    np.testing.assert_allclose(
        apply(IMAGES, transformation).numpy(), layer.transform_images(IMAGES, transformation).numpy(), atol=1e-4
    )


def test_elastic_layer_seed_fixes_the_sequence():
    runs = []
    for _ in range(2):
        gtf.random.set_seed(3)
        layer = gtf.keras.layers.RandomElasticTransform(seed=4, fill_mode="reflect", **ELASTIC)
        runs.append([layer(IMAGES).numpy() for _ in range(2)])
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[0][1])


# -- RandomElasticTransform: gradients -----------------------------------------------------------


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_elastic_gradient_equals_tensorflow(keras, interpolation):
    tf = _tf()
    theirs, ours = _elastic_pair(keras, fill_mode="constant", interpolation=interpolation, **ELASTIC)
    transformation, same = _same_transformation(theirs, IMAGES, 8, apply=[True, False], factor=0.7)
    weights = _RNG.normal(size=IMAGES.shape).astype(np.float32)
    x = tf.constant(IMAGES)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(theirs.transform_images(x, transformation) * weights)
    expected = tape.gradient(loss, x).numpy()
    y = gtf.constant(IMAGES)
    with gtf.GradientTape() as tape:
        tape.watch(y)
        loss = gtf.reduce_sum(ours.transform_images(y, same) * weights)
    np.testing.assert_allclose(tape.gradient(loss, y).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_elastic_gradient_in_mirror_mode_passes_finite_differences():
    # TensorFlow cannot be the oracle there (Keras 3.15 on TensorFlow refuses "mirror").
    noise = jnp.asarray(_RNG.normal(size=(2, 2, 24, 28)).astype(np.float32) * 20)  # far outside

    def elastic(x):
        return local._elastic(
            x,
            jnp.asarray([True, True]),
            jnp.float32(0.6),
            noise,
            order=1,
            fill_mode="mirror",
            fill_value=7.0,
            value_range=(0.0, 255.0),
            data_format="channels_last",
            taps=13,
        )

    check_grads(elastic, (jnp.asarray(IMAGES),), order=1, modes=("rev",), eps=1e-2, atol=1e-2, rtol=1e-2)


# -- CLAHE ---------------------------------------------------------------------------------------

CLAHE = "ContrastLimitedAdaptiveHistogramEqualization"
UNEVEN = dict(tile_grid_size=(5, 3), clip_limit=1.5)  # 16 rows = 5 tiles of 4 - 4, 16 columns = 3 of 6 - 2
CLAHE_CASES = {
    "default": (dict(), PIXELS),
    "uint8": (dict(tile_grid_size=(3, 4), clip_limit=2.0), UINT8),  # tiles do not divide 13 x 10 either
    "uint8_constant": (dict(tile_grid_size=(3, 4), clip_limit=2.0), np.full(UINT8.shape, 200, np.uint8)),
    "uneven": (UNEVEN, GRAY),
    "constant": (UNEVEN, np.full(GRAY.shape, 77.0, np.float32)),
    "unclipped": (dict(tile_grid_size=(5, 3), clip_limit=0.0), GRAY),
    "negative_clip": (dict(tile_grid_size=(5, 3), clip_limit=-1.0), GRAY),
}


def _clahe_pair(keras, **kwargs):
    return getattr(keras.layers, CLAHE)(**kwargs), getattr(gtf.keras.layers, CLAHE)(**kwargs)


@pytest.mark.parametrize("key", sorted(CLAHE_CASES))
def test_clahe_equals_keras(keras, key):
    kwargs, images = CLAHE_CASES[key]
    theirs, ours = _clahe_pair(keras, **kwargs)
    # Clip limits whose counts are short binary fractions (these) leave every sum exact, in any
    # order: the rest is the same float32 operations (see _same_pixels).
    _same_pixels(ours(images), theirs(images))
    if key == "uint8":  # one image
        _same_pixels(ours(images[0]), theirs(images[0]))


def test_clahe_with_an_inexact_clip_limit_and_a_unit_range_equals_keras_to_rounding(keras):
    # A clip of 0.3 makes fractional counts: TensorFlow and XLA add the excess (and the cumulative
    # counts) in other orders, ~1e-6 relative on a level.
    theirs, ours = _clahe_pair(keras, tile_grid_size=(4, 3), clip_limit=0.3)
    _same_pixels(ours(GRAY), theirs(GRAY), atol=2e-3)
    ints = GRAY.astype(np.uint8)
    # uint8 images: gradkit's output is its float output (for the same values) truncated.
    np.testing.assert_array_equal(ours(ints).numpy(), ours(ints.astype(np.float32)).numpy().astype(np.uint8))
    _same_pixels(ours(ints), theirs(ints))
    theirs, ours = _clahe_pair(keras, tile_grid_size=(2, 3), clip_limit=1.7, value_range=(0, 1))
    _same_pixels(ours(PIXELS / 255), theirs(PIXELS / 255), atol=1e-5)


def test_clahe_applies_in_inference_and_keeps_dtypes_as_keras(keras):
    theirs, ours = _clahe_pair(keras, **UNEVEN)
    for images in (GRAY, GRAY.astype(np.float64), GRAY.astype(np.int32)):  # uint8: see CLAHE_CASES
        for training in (True, False):
            _same_pixels(ours(images, training=training), theirs(images, training=training))
    assert ours.get_random_transformation(GRAY) is None


def test_clahe_channels_first_equals_keras(keras):
    theirs, ours = _clahe_pair(keras, tile_grid_size=(3, 4), clip_limit=2.0, data_format="channels_first")
    images = UINT8.transpose(0, 3, 1, 2)
    _same_pixels(ours(images), theirs(images))


def _np_clahe(images, value_range=(0, 255), clip_limit=4.0, grid=(8, 8)):
    """CLAHE tile by tile and pixel by pixel in float64, from Keras' description: histograms of
    whole levels per tile (the image padded symmetrically to whole tiles), clipped, equalized,
    and blended between the four nearest tile centres (Keras' positions: ``y / tile - 1/2``)."""
    low, high = value_range
    x = (images.astype(np.float64) - low) / (high - low) * 255
    batch, height, width, channels = x.shape
    tile_h, tile_w = math.ceil(height / grid[0]), math.ceil(width / grid[1])
    area = tile_h * tile_w
    x = np.pad(x, ((0, 0), (0, tile_h * grid[0] - height), (0, tile_w * grid[1] - width), (0, 0)), mode="symmetric")
    levels = np.clip(np.trunc(x), 0, 255).astype(int)
    lookups = np.zeros((batch, grid[0], grid[1], channels, 256))
    for b in range(batch):
        for i in range(grid[0]):
            for j in range(grid[1]):
                for c in range(channels):
                    tile = levels[b, i * tile_h : (i + 1) * tile_h, j * tile_w : (j + 1) * tile_w, c]
                    hist = np.bincount(tile.ravel(), minlength=256).astype(np.float64)
                    if clip_limit > 0:
                        clipped = np.minimum(hist, clip_limit * area / 256)
                        hist = clipped + (hist - clipped).sum() / 256
                    cdf = np.cumsum(hist)
                    lookups[b, i, j, c] = np.clip((cdf - cdf[0]) * 255 / ((area - cdf[0]) or 1), 0, 255)
    out = np.zeros((batch, height, width, channels))
    for y in range(height):
        fy = y / tile_h - 0.5
        i0 = math.floor(fy)
        wy = fy - i0
        rows = [(min(max(i0, 0), grid[0] - 1), 1 - wy), (min(max(i0 + 1, 0), grid[0] - 1), wy)]
        for xx in range(width):
            fx = xx / tile_w - 0.5
            j0 = math.floor(fx)
            wx = fx - j0
            cols = [(min(max(j0, 0), grid[1] - 1), 1 - wx), (min(max(j0 + 1, 0), grid[1] - 1), wx)]
            level = levels[:, y, xx, :]  # (batch, channels)
            for i, wi in rows:
                for j, wj in cols:
                    table = lookups[:, i, j]  # (batch, channels, 256)
                    out[:, y, xx, :] += wi * wj * np.take_along_axis(table, level[..., None], -1)[..., 0]
    return out / 255 * (high - low) + low


@pytest.mark.parametrize(
    "kwargs",
    [dict(grid=(3, 5), clip_limit=2.5), dict(grid=(16, 2), clip_limit=0.0)],
    ids=["uneven", "finer_than_the_image"],
)
def test_clahe_equals_the_numpy_derivation(kwargs):
    # (16, 2) tiles on 5 rows: the padding exceeds the image, where Keras 3.15 on TensorFlow
    # fails (tf.pad's symmetric mode) and its other backends pad as NumPy does.
    images = _RNG.uniform(0, 1, size=(2, 5, 9, 2)).astype(np.float32)
    grid = kwargs.pop("grid")
    layer = getattr(gtf.keras.layers, CLAHE)(value_range=(0, 1), tile_grid_size=grid, **kwargs)
    expected = _np_clahe(images, value_range=(0, 1), grid=grid, **kwargs)
    np.testing.assert_allclose(layer(images).numpy(), expected, rtol=0, atol=1e-5)


def test_clahe_gradient_is_zero_where_tensorflow_has_none(keras):
    tf = _tf()
    theirs, ours = _clahe_pair(keras, **UNEVEN)
    x = tf.constant(GRAY)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(theirs(x))
    assert tape.gradient(loss, x) is None
    y = gtf.constant(GRAY)
    with gtf.GradientTape() as tape:
        tape.watch(y)
        loss = gtf.reduce_sum(ours(y))
    np.testing.assert_array_equal(tape.gradient(loss, y).numpy(), np.zeros_like(GRAY))


# -- configs, models, errors ---------------------------------------------------------------------

CONFIGS = {
    "elastic": ("RandomElasticTransform", dict()),
    "elastic_args": (
        "RandomElasticTransform",
        dict(factor=(0.2, 0.7), scale=0.4, interpolation="nearest", fill_mode="mirror", fill_value=2.0, seed=3),
    ),
    "elastic_first": ("RandomElasticTransform", dict(value_range=(0, 1), data_format="channels_first")),
    "clahe": (CLAHE, dict()),
    "clahe_args": (CLAHE, dict(value_range=[0, 1], clip_limit=2, tile_grid_size=[4, 2], data_format="channels_first")),
}


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_get_config_equals_keras_and_round_trips(keras, key):
    keras.backend.clear_session(free_memory=False)
    gtf.keras.backend.clear_session(free_memory=False)
    name, kwargs = CONFIGS[key]
    theirs = getattr(keras.layers, name)(**kwargs).get_config()
    layer = getattr(gtf.keras.layers, name)(**kwargs)
    ours = layer.get_config()
    assert ours == theirs
    assert type(layer).from_config(ours).get_config() == ours
    assert getattr(keras.layers, name).from_config(ours).get_config() == theirs


def test_functional_model_records_the_calls_as_keras(keras):
    def model(module):
        inputs = module.Input(shape=IMAGES.shape[1:])
        outputs = getattr(module.layers, CLAHE)(name="clahe")(inputs)
        outputs = module.layers.RandomElasticTransform(factor=0.0, name="elastic")(outputs)  # draws nothing
        return module.Model(inputs, outputs, name="net")

    keras.backend.clear_session(free_memory=False)
    gtf.keras.backend.clear_session(free_memory=False)
    theirs, ours = (json.loads(json.dumps(model(m).get_config())) for m in (keras, gtf.keras))
    for their_layer, our_layer in zip(theirs["layers"], ours["layers"]):
        assert our_layer["config"] == their_layer["config"]
        assert our_layer["inbound_nodes"] == their_layer["inbound_nodes"]  # with training=True, as Keras


def test_layers_in_a_sequential_model_as_keras(keras):
    def model(module):
        return module.Sequential(
            [
                module.Input(shape=IMAGES.shape[1:]),
                module.layers.RandomElasticTransform(fill_mode="reflect", seed=2, **ELASTIC),
                getattr(module.layers, CLAHE)(**UNEVEN),
            ]
        )

    theirs, ours = model(keras), model(gtf.keras)
    # inference: the elastic layer passes the images, CLAHE equalizes them, as in Keras
    inferred = theirs(IMAGES, training=False)
    _same_pixels(ours.predict(IMAGES, verbose=0), inferred)
    _same_pixels(ours(IMAGES, training=False), inferred)
    # In training each image is transformed with a probability drawn per image (factor 1: uniform
    # in [0, 1], so a call leaves both images alone one time in four): some call of a few moves them.
    gtf.random.set_seed(0)
    trained = [ours(IMAGES, training=True).numpy() for _ in range(4)]
    assert all(t.shape == IMAGES.shape for t in trained)
    assert any(not np.array_equal(t, inferred) for t in trained)


ERRORS = {
    "elastic_factor": (lambda L: L.RandomElasticTransform(factor=1.5), ValueError, "factor"),
    "elastic_scale": (lambda L: L.RandomElasticTransform(scale=2.0), ValueError, "scale"),
    "elastic_scale_pair": (lambda L: L.RandomElasticTransform(scale=(0.1, 0.2, 0.3)), ValueError, "scale"),
    "elastic_interpolation": (
        lambda L: L.RandomElasticTransform(interpolation="bicubic"),
        NotImplementedError,
        "interpolation",
    ),
    "elastic_fill_mode": (lambda L: L.RandomElasticTransform(fill_mode="edge"), NotImplementedError, "fill_mode"),
    # Keras 3.15 takes these and fails when called: gradkit.tf refuses them when made
    "clahe_grid_number": (lambda L: getattr(L, CLAHE)(tile_grid_size=8)(PIXELS), TypeError, "tile_grid_size"),
    "clahe_grid_three": (lambda L: getattr(L, CLAHE)(tile_grid_size=(2, 2, 2))(PIXELS), ValueError, "tile_grid_size"),
    "clahe_clip": (lambda L: getattr(L, CLAHE)(clip_limit="4")(PIXELS), TypeError, "clip_limit"),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_bad_arguments_raise_keras_error_types(keras, key):
    make, error, text = ERRORS[key]
    with pytest.raises(error):
        make(keras.layers)
    with pytest.raises(error, match=r"\[gradkit\].*" + text):
        make(gtf.keras.layers)


def test_bad_arguments_keras_fails_on_differently_are_refused():
    layers = gtf.keras.layers
    for grid in ((0, 8), (2.0, 2), (-1, 2)):  # Keras: ZeroDivisionError, TypeError, TensorFlow's error
        with pytest.raises(ValueError, match=r"\[gradkit\].*tile_grid_size"):
            getattr(layers, CLAHE)(tile_grid_size=grid)
    for value_range in ((1, 1), 255, (0, "255")):  # Keras: NaN images, TypeError, TypeError
        with pytest.raises(ValueError, match=r"\[gradkit\].*value_range"):
            getattr(layers, CLAHE)(value_range=value_range)
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*bounding"):
        layers.RandomElasticTransform(bounding_box_format="xyxy")
    layer = layers.RandomElasticTransform()
    with pytest.raises(TypeError, match=r"\[gradkit\].*dict"):
        layer({"images": PIXELS}, training=True)
    with pytest.raises(KeyError, match=r"\[gradkit\].*'noise'"):  # Keras' transformation has a seed
        layer.transform_images(PIXELS, {"apply_transform": [True, True], "distortion_factor": 0.5, "seed": 1})
    transformation = _as_numpy(layer.get_random_transformation(GRAY))
    with pytest.raises(ValueError, match=r"\[gradkit\].*noise of shape \[2, 3, 16, 16\].*\[2, 2, 8, 8\]"):
        layer.transform_images(PIXELS, transformation)
    with pytest.raises(ValueError, match=r"\[gradkit\].*rank 3"):
        getattr(layers, CLAHE)()(np.zeros((8, 8), np.float32))
    with pytest.raises(TypeError, match=r"\[gradkit\].*seed"):
        layer.get_random_transformation(PIXELS, seed="1")
