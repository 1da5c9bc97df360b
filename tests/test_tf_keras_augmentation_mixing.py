"""gradkit.tf's MixUp and CutMix against real Keras 3 on TensorFlow: the same transformation
(drawn by Keras with a seed, handed to both, and gradkit's handed back to Keras) gives the same
images, labels and segmentation masks; the call on images and on dicts, ``training=False``,
configs and argument errors are Keras'; gradkit's own draws have Keras' keys, shapes and dtypes,
are fixed by an int seed and new at each call; image and label gradients equal TensorFlow's of
the same program. Where Keras 3.15 gives shapes no program can want (labels of rank 1, MixUp's
segmentation masks, CutMix's one-channel masks), the result is checked against NumPy or against
Keras' own arithmetic on a reshaped input."""

import sys
from pathlib import Path

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
keras = tf_real.keras

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_RNG = np.random.default_rng(11)
IMAGES = _RNG.uniform(0, 255, size=(4, 8, 8, 3)).astype(np.float32)
LABELS = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]] * 0.9 + 0.1 / 3  # smoothed one-hot
MASKS = _RNG.uniform(0, 1, size=(4, 8, 8, 3)).astype(np.float32)  # float masks, the images' channels

# name -> (class name, constructor kwargs)
CASES = {
    "mix_up": ("MixUp", dict()),
    "mix_up_wide": ("MixUp", dict(alpha=0.8)),
    "cut_mix": ("CutMix", dict()),
    "cut_mix_narrow": ("CutMix", dict(factor=(0.2, 0.6))),
}


def _as_numpy(transformation):
    """A transformation (a dict of tensors, or None) as NumPy."""
    if isinstance(transformation, dict):
        return {k: _as_numpy(v) for k, v in transformation.items()}
    return transformation.numpy() if hasattr(transformation, "numpy") else transformation


def _pair(key, **extra):
    name, kwargs = CASES[key]
    return getattr(keras.layers, name)(**kwargs, **extra), getattr(gtf.keras.layers, name)(**kwargs, **extra)


def _close(got, expected):
    """Equal to float32 rounding (pixels up to 255)."""
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    expected = expected.numpy() if hasattr(expected, "numpy") else np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * max(1.0, float(np.abs(expected).max())))


# -- the same transformation in both libraries --------------------------------------------------


@pytest.mark.parametrize("key", sorted(CASES))
@pytest.mark.parametrize("seed", [1, 2])
def test_transform_images_and_labels_equal_keras_for_keras_transformation(key, seed):
    theirs, ours = _pair(key)
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=seed)
    given = _as_numpy(transformation)
    _close(ours.transform_images(IMAGES, given), theirs.transform_images(IMAGES, transformation))
    _close(ours.transform_labels(LABELS, given), theirs.transform_labels(LABELS, transformation))
    if CASES[key][0] == "CutMix":  # masks of the images' channels are cut and pasted as images
        _close(
            ours.transform_segmentation_masks(MASKS, given),
            theirs.transform_segmentation_masks(MASKS, transformation),
        )


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_keras_gives_gradkits_results_for_gradkits_transformation(key):
    theirs, ours = _pair(key)
    transformation = ours.get_random_transformation(IMAGES, training=True, seed=3)
    given = _as_numpy(transformation)
    _close(ours.transform_images(IMAGES, transformation), theirs.transform_images(IMAGES, given))
    _close(ours.transform_labels(LABELS, transformation), theirs.transform_labels(LABELS, given))


@pytest.mark.parametrize("key", ["mix_up", "cut_mix_narrow"])
def test_channels_first_equals_keras(key):
    theirs, ours = _pair(key, data_format="channels_first")
    images = IMAGES.transpose(0, 3, 1, 2)
    transformation = theirs.get_random_transformation(images, training=True, seed=4)
    _close(ours.transform_images(images, _as_numpy(transformation)), theirs.transform_images(images, transformation))
    # The layout only moves the channels: the channels_last result, transposed.
    last = ours.transform_images(IMAGES, {k: _channels_last(k, v) for k, v in _as_numpy(transformation).items()})
    np.testing.assert_array_equal(
        ours.transform_images(images, _as_numpy(transformation)), last.numpy().transpose(0, 3, 1, 2)
    )


def _channels_last(key, value):
    return value.transpose(0, 2, 3, 1) if key == "batch_masks" else value


def test_mix_up_on_one_image_equals_keras():
    # Keras draws for a batch of one and mixes the image with itself.
    theirs, ours = _pair("mix_up")
    transformation = theirs.get_random_transformation(IMAGES[0], training=True, seed=5)
    given = _as_numpy(transformation)
    _close(ours.transform_single_image(IMAGES[0], given), theirs.transform_single_image(IMAGES[0], transformation))
    _close(ours.transform_single_label(LABELS[0], given), theirs.transform_single_label(LABELS[0], transformation))


def test_cut_mix_leaves_one_image_as_keras():
    theirs, ours = _pair("cut_mix")
    assert ours.get_random_transformation(IMAGES[0]) is None
    assert theirs.get_random_transformation(IMAGES[0]) is None
    ints = IMAGES[0].astype(np.int32)
    _close(ours(ints), theirs(ints))
    out = ours({"images": IMAGES[0], "labels": LABELS[0]})
    np.testing.assert_array_equal(out["labels"].numpy(), LABELS[0])


def test_one_channel_segmentation_masks_take_the_rectangles():
    # Keras 3.15 broadcasts a one-channel mask to the images' channels (each the same); gradkit
    # keeps the mask's shape: Keras' first channel.
    theirs, ours = _pair("cut_mix")
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=6)
    masks = MASKS[..., :1]
    expected = theirs.transform_segmentation_masks(masks, transformation).numpy()
    np.testing.assert_array_equal(expected, np.broadcast_to(expected[..., :1], expected.shape))
    _close(ours.transform_segmentation_masks(masks, _as_numpy(transformation)), expected[..., :1])
    _close(ours.transform_segmentation_masks(masks[..., 0], _as_numpy(transformation)), expected[..., 0])


def test_mix_up_segmentation_masks_mix_as_labels():
    # Keras 3.15 takes MixUp's masks without an axis (a (batch, 1, 1, batch) result); gradkit
    # mixes each example's mask as Keras mixes labels: Keras' labels arithmetic on flat masks.
    theirs, ours = _pair("mix_up")
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=7)
    expected = theirs.transform_labels(MASKS.reshape(4, -1), transformation).numpy().reshape(MASKS.shape)
    _close(ours.transform_segmentation_masks(MASKS, _as_numpy(transformation)), expected)


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_labels_of_any_rank_mix_per_example(key):
    # Keras broadcasts its (batch, 1) weights against the labels, per example only for rank 2.
    _, ours = _pair(key)
    transformation = _as_numpy(ours.get_random_transformation(IMAGES, seed=8))
    weights, order = transformation["mix_weight"].reshape(4), transformation["permutation_order"]
    for labels in (LABELS[:, 0], np.stack([LABELS, 1 - LABELS], axis=1)):
        shaped = weights.reshape((4,) + (1,) * (labels.ndim - 1))
        expected = shaped * labels + (1.0 - shaped) * labels[order]
        np.testing.assert_allclose(
            ours.transform_labels(labels, transformation).numpy(), expected, rtol=1e-6, atol=1e-7
        )


# -- the call: images, dicts, training=False ------------------------------------------------------


def _fixed(layer, transformation):
    """``layer`` drawing ``transformation`` at each call (the same one in both libraries)."""
    layer.get_random_transformation = lambda data, training=True, seed=None: transformation if training else None
    return layer


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_dict_call_equals_keras_for_the_same_transformation(key):
    theirs, ours = _pair(key)
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=9)
    _fixed(theirs, transformation)
    _fixed(ours, _as_numpy(transformation))
    extra = np.arange(4.0)  # float64: both cast float entries to the layer's dtype
    data = {"images": IMAGES, "labels": LABELS.astype(np.float64), "extra": extra}
    if key == "cut_mix":
        data["segmentation_masks"] = MASKS
    expected = theirs(dict(data))
    given = dict(data)
    got = ours(given)
    assert given == data  # the caller's dict is left as it was
    assert sorted(got) == sorted(expected)
    for name in expected:
        _close(got[name], expected[name])
    _close(ours(IMAGES), theirs(IMAGES))


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_training_false_returns_the_input_as_keras(key):
    theirs, ours = _pair(key)
    for images in (IMAGES, IMAGES[0], IMAGES.astype(np.int32)):
        got, expected = ours(images, training=False), theirs(images, training=False)
        _close(got, expected)
        np.testing.assert_array_equal(got.numpy(), images)  # MixUp keeps int images; CutMix casts them
    got = ours({"images": IMAGES, "labels": LABELS}, training=False)
    np.testing.assert_array_equal(got["images"].numpy(), IMAGES)
    np.testing.assert_array_equal(got["labels"].numpy(), LABELS)
    transformation = ours.get_random_transformation(IMAGES, seed=1)
    np.testing.assert_array_equal(ours.transform_images(IMAGES, transformation, training=False).numpy(), IMAGES)
    np.testing.assert_array_equal(ours.transform_labels(LABELS, transformation, training=False).numpy(), LABELS)


def test_integer_images_in_training_come_out_as_keras():
    ints = IMAGES.astype(np.int32)
    for key in ("mix_up", "cut_mix"):
        theirs, ours = _pair(key)
        assert ours(ints).dtype == np.dtype(theirs(ints).dtype.as_numpy_dtype) == np.float32


def test_layers_in_a_sequential_model():
    gtf.keras.utils.set_random_seed(0)
    L = gtf.keras.layers
    head = [L.Flatten(), L.Dense(2)]
    model = gtf.keras.Sequential([gtf.keras.Input(shape=(8, 8, 3)), L.MixUp(), L.CutMix(), *head])
    plain = gtf.keras.Sequential([gtf.keras.Input(shape=(8, 8, 3)), *head])  # the same Flatten and Dense
    np.testing.assert_array_equal(model(IMAGES, training=False).numpy(), plain(IMAGES).numpy())
    mixed = model(IMAGES, training=True).numpy()
    assert mixed.shape == (4, 2) and np.isfinite(mixed).all()
    assert not np.allclose(mixed, plain(IMAGES).numpy())
    np.testing.assert_array_equal(model.predict(IMAGES, verbose=0), plain.predict(IMAGES, verbose=0))


# -- configs -------------------------------------------------------------------------------------

CONFIGS = {
    "mix_up": ("MixUp", dict()),
    "mix_up_args": ("MixUp", dict(alpha=0.5, seed=3, data_format="channels_first")),
    "cut_mix": ("CutMix", dict()),
    "cut_mix_args": ("CutMix", dict(factor=[0.7, 0.2], seed=1)),
    "cut_mix_number": ("CutMix", dict(factor=0.4, data_format="channels_first")),
}


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_get_config_equals_keras_and_round_trips(key):
    # Fresh default names in both libraries (the memory is left to the test module's teardown).
    keras.backend.clear_session(free_memory=False)
    gtf.keras.backend.clear_session(free_memory=False)
    name, kwargs = CONFIGS[key]
    theirs = getattr(keras.layers, name)(**kwargs).get_config()
    ours_layer = getattr(gtf.keras.layers, name)(**kwargs)
    ours = ours_layer.get_config()
    assert ours == theirs  # the default name included
    assert type(ours_layer).from_config(ours).get_config() == ours
    assert getattr(keras.layers, name).from_config(ours).get_config() == theirs


# -- the draws -----------------------------------------------------------------------------------

MANY = _RNG.uniform(0, 1, size=(8, 6, 7, 3)).astype(np.float32)


@pytest.mark.parametrize("key", sorted(CASES))
def test_draws_have_keras_keys_shapes_dtypes_and_ranges(key):
    theirs, ours = _pair(key)
    keras_draw = _as_numpy(theirs.get_random_transformation(MANY, training=True, seed=1))
    draws = []
    for _ in range(4):
        drawn = _as_numpy(ours.get_random_transformation(MANY))
        assert sorted(drawn) == sorted(keras_draw)
        for k in keras_draw:
            assert drawn[k].shape == keras_draw[k].shape, k
            expected_dtype = keras_draw[k].dtype
            if k == "permutation_order" and expected_dtype == np.int64:  # JAX without jax_enable_x64
                expected_dtype = np.dtype(gtf.constant(np.zeros(1, np.int64)).dtype)
            assert drawn[k].dtype == expected_dtype, k
        assert sorted(drawn["permutation_order"].tolist()) == list(range(8))
        weights = drawn["mix_weight"]
        assert ((weights >= 0) & (weights <= 1)).all()
        if "batch_masks" in drawn:  # one rectangle per image, the same in every channel
            masks = drawn["batch_masks"]
            np.testing.assert_array_equal(masks, np.broadcast_to(masks[..., :1], masks.shape))
            rows, cols = masks[..., 0].any(axis=2), masks[..., 0].any(axis=1)
            np.testing.assert_array_equal(masks[..., 0], rows[:, :, None] & cols[:, None, :])
            # The pixels pasted never exceed the area not kept (rounded to whole pixels).
            assert (masks[..., 0].mean(axis=(1, 2)) <= 1 - weights.reshape(8) + 1 / 6 + 1 / 7 + 1e-6).all()
        draws.append(np.concatenate([np.ravel(drawn[k]).astype(np.float32) for k in sorted(drawn)]))
    assert len({d.tobytes() for d in draws}) > 1
    fixed = [_as_numpy(ours.get_random_transformation(MANY, seed=5)) for _ in range(2)]
    for k in fixed[0]:
        np.testing.assert_array_equal(fixed[0][k], fixed[1][k])


def test_cut_mix_draws_channels_first_masks():
    ours = gtf.keras.layers.CutMix(data_format="channels_first")
    masks = ours.get_random_transformation(MANY.transpose(0, 3, 1, 2), seed=2)["batch_masks"].numpy()
    assert masks.shape == (8, 3, 6, 7)
    np.testing.assert_array_equal(masks, np.broadcast_to(masks[:, :1], masks.shape))


def test_layer_seed_fixes_the_sequence():
    runs = []
    for _ in range(2):
        gtf.random.set_seed(11)
        layer = gtf.keras.layers.MixUp(seed=4)
        runs.append([layer(MANY).numpy() for _ in range(2)])
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[0][1])


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_compiled_calls_draw_anew_and_compile_once(key):
    _, ours = _pair(key)
    step = gtf.function(lambda x, y: ours({"images": x, "labels": y}, training=True))
    labels = np.eye(8, dtype=np.float32)
    outputs = [step(MANY, labels)["labels"].numpy() for _ in range(3)]
    assert count_compiles(lambda: step(MANY, labels)) == 0
    assert step.experimental_get_tracing_count() == 1
    assert len({o.tobytes() for o in outputs}) > 1
    np.testing.assert_allclose(outputs[0].sum(axis=1), 1.0, rtol=1e-6)  # mixed one-hot rows still sum to 1


# -- gradients -----------------------------------------------------------------------------------


LABEL_WEIGHTS = _RNG.normal(size=LABELS.shape).astype(np.float32)


def _gradients(library, transform_images, transform_labels, transformation, weights):
    x, y = library.constant(IMAGES), library.constant(LABELS)
    with library.GradientTape() as tape:
        tape.watch([x, y])
        loss = library.reduce_sum(transform_images(x, transformation) * weights) + library.reduce_sum(
            transform_labels(y, transformation) * LABEL_WEIGHTS
        )
    return [g.numpy() for g in tape.gradient(loss, [x, y])]


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_gradients_equal_tensorflow(key):
    theirs, ours = _pair(key)
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=10)
    # A permutation with a fixed point and a swap, so some images are their own partner.
    transformation["permutation_order"] = tf_real.constant([0, 2, 1, 3], transformation["permutation_order"].dtype)
    weights = _RNG.normal(size=IMAGES.shape).astype(np.float32)
    expected = _gradients(tf_real, theirs.transform_images, theirs.transform_labels, transformation, weights)
    got = _gradients(gtf, ours.transform_images, ours.transform_labels, _as_numpy(transformation), weights)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# -- errors --------------------------------------------------------------------------------------

# Keras checks alpha only when it draws, so those cases draw once.
ERRORS = {
    "mix_up_alpha_text": (lambda L: L.MixUp(alpha="x").get_random_transformation(IMAGES), TypeError, "alpha='x'"),
    "mix_up_alpha_none": (lambda L: L.MixUp(alpha=None).get_random_transformation(IMAGES), ValueError, "alpha"),
    "mix_up_seed": (lambda L: L.MixUp(seed="1"), ValueError, "seed='1'"),
    "cut_mix_seed": (lambda L: L.CutMix(seed=1.5), ValueError, "seed=1.5"),
    "cut_mix_factor_high": (lambda L: L.CutMix(factor=1.5), ValueError, "factor=1.5"),
    "cut_mix_factor_low": (lambda L: L.CutMix(factor=-1), ValueError, "factor=-1"),
    "cut_mix_factor_three": (lambda L: L.CutMix(factor=(0.1, 0.2, 0.3)), ValueError, "factor"),
    "cut_mix_factor_text": (lambda L: L.CutMix(factor="x"), ValueError, "factor='x'"),
    "data_format": (lambda L: L.MixUp(data_format="channels_middle"), ValueError, "data_format"),
    "rank_2_images": (lambda L: L.MixUp()(np.zeros((2, 3), np.float32)), ValueError, r"\[2, 3\]"),
    "boxes": (
        lambda L: L.CutMix()({"images": IMAGES, "bounding_boxes": {"boxes": np.zeros((4, 1, 4), np.float32)}}),
        ValueError,
        "bounding_boxes",
    ),
    "no_images": (lambda L: L.MixUp()({"labels": LABELS}), KeyError, "images"),
    "transform_boxes": (
        lambda L: L.CutMix().transform_bounding_boxes({"boxes": np.zeros((4, 1, 4))}, None),
        NotImplementedError,
        "bounding boxes",
    ),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_bad_arguments_raise_keras_error_types(key):
    make, error, text = ERRORS[key]
    with pytest.raises(error):
        make(keras.layers)
    with pytest.raises(error, match=r"\[gradkit\].*" + text):
        make(gtf.keras.layers)


@pytest.mark.parametrize("key", ["mix_up", "cut_mix"])
def test_integer_labels_and_bad_permutations_raise_invalid_argument_as_keras(key):
    theirs, ours = _pair(key)
    transformation = theirs.get_random_transformation(IMAGES, training=True, seed=1)
    with pytest.raises(tf_real.errors.InvalidArgumentError):
        theirs.transform_labels(tf_real.constant([[1], [0], [2], [1]]), transformation)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*int32.*one_hot"):
        ours.transform_labels(np.array([[1], [0], [2], [1]], np.int32), _as_numpy(transformation))
    bad = {**_as_numpy(transformation), "permutation_order": np.array([0, 1, 2, 7], np.int32)}
    with pytest.raises(tf_real.errors.InvalidArgumentError):
        theirs.transform_images(IMAGES, bad)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*\[0, 1, 2, 7\].*\[0, 4\)"):
        ours.transform_images(IMAGES, bad)
    with pytest.raises(ValueError, match=r"\[gradkit\].*\[3, 3\].*permutation_order of shape \[4\]"):
        ours.transform_labels(LABELS[:3], _as_numpy(transformation))


def test_gradkit_refuses_what_keras_takes_but_gets_wrong():
    # Keras draws NaN weights for a negative alpha; gradkit refuses it.
    assert np.isnan(keras.layers.MixUp(alpha=-1.0).get_random_transformation(IMAGES)["mix_weight"].numpy()).all()
    with pytest.raises(ValueError, match=r"\[gradkit\].*alpha=-1.0.*positive"):
        gtf.keras.layers.MixUp(alpha=-1.0)
    # gradkit's layers take no bounding boxes, so no bounding_box_format.
    keras.layers.CutMix(bounding_box_format="xyxy")
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*bounding_box_format='xyxy'"):
        gtf.keras.layers.CutMix(bounding_box_format="xyxy")
    with pytest.raises(TypeError, match=r"\[gradkit\].*seed='1'"):
        gtf.keras.layers.CutMix().get_random_transformation(IMAGES, seed="1")
