"""gradkit.tf's RandAugment and AugMix against real Keras 3 on TensorFlow: the same
transformation (drawn by Keras, handed to both, and gradkit's handed back to Keras) gives the
same images and segmentation masks, eagerly and inside ``tf.function`` (where RandAugment
selects among all its layers, as Keras does); inference, configs and argument errors are
Keras'; gradkit's own draws have Keras' nesting, keys, shapes and dtypes, are fixed by an int
seed and new at each call; image gradients equal TensorFlow's of the same program (and, through
the geometric layers, the exact adjoint of Keras' sampling). Where Keras 3.15 goes wrong (AugMix
clipping to a reversed value_range, NaN weights for a negative alpha, a crash on rank-3 masks)
gradkit is checked against NumPy or against Keras on a reshaped input.

Layers that round to whole levels (RandomPosterization, Equalization, Solarization's threshold)
turn a last-bit difference in their input into a whole level, so the cases apply them before the
layers that resample or average, never after."""

import random
import sys
from pathlib import Path

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
keras = tf_real.keras

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_RNG = np.random.default_rng(23)
PIXELS = _RNG.uniform(0, 255, size=(2, 8, 8, 3)).astype(np.float32)  # value_range (0, 255)
UNIT = _RNG.uniform(0, 1, size=(2, 8, 8, 3)).astype(np.float32)  # value_range (0, 1)
MASKS = _RNG.integers(0, 4, size=(2, 8, 8, 1)).astype(np.int32)  # class ids
# Images whose third channel puts exact halves in Equalization's lookup table (5355 / 126 =
# 42.5): Keras divides the integers exactly (in float64) and rounds half to even.
TIES = np.random.default_rng(0).uniform(0, 255, size=(2, 8, 8, 3)).astype(np.float32)

# RandAugment's layers, in Keras' order (the indices of its layer_idxes).
NAMES = keras.layers.RandAugment._AUGMENT_LAYERS
SHEAR, TRANSLATION, ROTATION, BRIGHTNESS, DEGENERATION, CONTRAST, SHARPNESS = range(7)
POSTERIZATION, SOLARIZATION, AUTO_CONTRAST, EQUALIZATION = range(7, 11)


def _as_numpy(transformation):
    """A transformation (nested dicts and lists of tensors and Python values) as NumPy."""
    if isinstance(transformation, dict):
        return {k: _as_numpy(v) for k, v in transformation.items()}
    if isinstance(transformation, list):
        return [_as_numpy(v) for v in transformation]
    return transformation.numpy() if hasattr(transformation, "numpy") else transformation


def _close(got, expected, atol):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    expected = expected.numpy() if hasattr(expected, "numpy") else np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=atol)


def _rand_pair(**kwargs):
    # Keras' layer is seeded: its draws are the same at every run.
    return keras.layers.RandAugment(**{"seed": 7, **kwargs}), gtf.keras.layers.RandAugment(**kwargs)


def _keras_rand_transformation(theirs, images, layer_idxes):
    """Keras' drawn transformation with the layers to apply fixed."""
    transformation = theirs.get_random_transformation(images, training=True)
    transformation["layer_idxes"] = tf_real.constant(layer_idxes, tf_real.int32)
    return transformation


# -- RandAugment: the same transformation in both libraries -------------------------------------


def test_rand_augment_equals_keras_for_the_same_transformation_compiled():
    # One compiled program (tf.function) takes the transformation as an argument, so its layer
    # index is traced: every layer runs and the drawn one is selected, as Keras does. It applies
    # Keras' draw with each layer (and with 11, which matches none: Keras applies none), then
    # gradkit's own draw (Keras' structure: the same program), which Keras applies as gradkit
    # does; the eager tests apply layers one after the other. The program also draws, new at
    # each call: RandAugment's transformation (in Keras' structure) and AugMix's weights (its
    # chains are picked when the function traces, in Python, as Keras does).
    gtf.random.set_seed(5)
    theirs, ours = _rand_pair(num_ops=1)
    mix = gtf.keras.layers.AugMix(num_chains=2, chain_depth=1, all_ops=False, seed=3)

    def step(images, transformation):
        weights = mix.get_random_transformation(images)["chain_mixing_weights"]
        return ours.transform_images(images, transformation), ours.get_random_transformation(images), weights

    step = gtf.function(step)
    drawn = _as_numpy(theirs.get_random_transformation(PIXELS, training=True))
    draws = []
    for index in range(12):
        given = {**drawn, "layer_idxes": np.array([index], np.int32)}
        got, own, weights = step(PIXELS, given)
        # What Keras' RandAugment gives: the layer it selects (the eager tests check that).
        expected = (
            PIXELS
            if index == 11
            else getattr(theirs, NAMES[index]).transform_images(PIXELS, drawn["transforms"][NAMES[index]])
        )
        _close(got, expected, 1e-4)
        draws.append((own, weights))
    equalize = {**drawn, "layer_idxes": np.array([EQUALIZATION], np.int32)}
    _close(step(TIES, equalize)[0], theirs.equalization.transform_images(TIES, None), 0)
    own = _as_numpy(ours.get_random_transformation(PIXELS, seed=4))
    own["layer_idxes"] = np.array([ROTATION], np.int32)
    _close(step(PIXELS, own)[0], theirs.transform_images(PIXELS, own), 1e-4)
    assert count_compiles(lambda: step(PIXELS, own)) == 0
    assert step.experimental_get_tracing_count() == 1
    for transformation, _ in draws:
        _same_structure(_as_numpy(transformation), drawn)
    assert len({tuple(_flat(t)) for t, _ in draws}) == 12
    assert len({w.numpy().tobytes() for _, w in draws}) == 12


# name -> (constructor kwargs, images, layer_idxes): known indices, applied eagerly
EAGER_CASES = {
    "brightness_contrast": (dict(factor=(0.2, 0.7)), PIXELS, [BRIGHTNESS, CONTRAST]),
    "unit": (dict(value_range=(0, 1), factor=1.0), UNIT, [SOLARIZATION, 11]),
    "no_op": (dict(num_ops=0), PIXELS, []),
}


@pytest.mark.parametrize("key", sorted(EAGER_CASES))
def test_rand_augment_eagerly_equals_keras(key):
    kwargs, images, layer_idxes = EAGER_CASES[key]
    theirs, ours = _rand_pair(**kwargs)
    transformation = _keras_rand_transformation(theirs, images, layer_idxes)
    atol = 1e-4 if images.max() > 1 else 1e-6
    expected = theirs.transform_images(images, transformation)
    _close(ours.transform_images(images, _as_numpy(transformation)), expected, atol)
    by_hand = images  # what Keras applies: its drawn layers, one after the other
    for index in layer_idxes[: theirs.num_ops]:
        if index < len(NAMES):
            by_hand = getattr(theirs, NAMES[index]).transform_images(
                by_hand, transformation["transforms"][NAMES[index]]
            )
    _close(expected, by_hand, 0)


def test_rand_augment_on_one_image_equals_keras():
    # Drawn for one image: the parts' parameters for a batch of one (of rank 3 for some layers).
    theirs, ours = _rand_pair(factor=0.9)
    transformation = _keras_rand_transformation(theirs, PIXELS[0], [BRIGHTNESS, CONTRAST])
    expected = theirs.transform_single_image(PIXELS[0], transformation)
    _close(ours.transform_single_image(PIXELS[0], _as_numpy(transformation)), expected, 1e-4)


def test_rand_augment_segmentation_masks_equal_keras():
    # The geometric layers move the masks, sampled "nearest"; the others leave them.
    theirs, ours = _rand_pair()
    transformation = _keras_rand_transformation(theirs, PIXELS, [ROTATION, BRIGHTNESS])
    given = _as_numpy(transformation)
    for masks in (MASKS, MASKS.astype(np.float32)):
        expected = theirs.transform_segmentation_masks(masks, transformation)
        _close(ours.transform_segmentation_masks(masks, given), expected, 0)
    # Keras 3.15 fails on masks without a channel axis; gradkit moves them as one channel.
    flat = ours.transform_segmentation_masks(MASKS[..., 0], given)
    _close(flat, theirs.transform_segmentation_masks(MASKS, transformation).numpy()[..., 0], 0)
    labels = np.eye(2, dtype=np.float32)
    _close(ours.transform_labels(labels, given), theirs.transform_labels(labels, transformation), 0)


# -- AugMix: the same transformation in both libraries ------------------------------------------


def _mix_pair(**kwargs):
    return keras.layers.AugMix(**kwargs), gtf.keras.layers.AugMix(**kwargs)


def _chains(library_layer, images, chains, seed):
    """Chain steps for ``chains``, each drawn by ``library_layer``'s own part, with fixed seeds
    (Keras picks its chains with Python's random: the tests give them)."""
    return [
        [
            {
                "layer_name": name,
                "transformation": getattr(library_layer, name).get_random_transformation(
                    images, training=True, seed=seed + 10 * c + d
                ),
            }
            for d, name in enumerate(chain)
        ]
        for c, chain in enumerate(chains)
    ]


def _keras_mix_transformation(theirs, images, chains, seed):
    """Keras' drawn weights (fixed by ``seed``) with the chains given, drawn by Keras' layers."""
    transformation = theirs.get_random_transformation(images, training=True, seed=seed)
    transformation["chain_transforms"] = _chains(theirs, images, chains, seed)
    return transformation


def test_keras_gives_gradkits_results_for_gradkits_aug_mix_transformation():
    theirs, ours = _mix_pair(value_range=(0, 1))
    own = ours.get_random_transformation(UNIT, seed=5)  # gradkit's weights, with chains given:
    own["chain_transforms"] = _chains(ours, UNIT, [["random_contrast", "solarization"], ["random_brightness"], []], 20)
    _close(ours.transform_images(UNIT, own), theirs.transform_images(UNIT, _as_numpy(own)), 1e-6)


# name -> (constructor kwargs, images, the chains' layers): applied eagerly
MIX_CASES = {
    "empty_chain": (
        dict(num_chains=3, chain_depth=2, alpha=0.5, factor=0.8),
        PIXELS,
        [["random_color_degeneration", "random_brightness"], [], ["random_contrast"]],
    ),
    "unit_some_ops": (
        dict(value_range=(0, 1), all_ops=False, num_chains=2),
        UNIT,
        [["solarization", "auto_contrast"], ["auto_contrast"]],
    ),
}


@pytest.mark.parametrize("key", sorted(MIX_CASES))
def test_aug_mix_eagerly_equals_keras(key):
    kwargs, images, chains = MIX_CASES[key]
    theirs, ours = _mix_pair(**kwargs)
    transformation = _keras_mix_transformation(theirs, images, chains, seed=6)
    atol = 1e-4 if images.max() > 1 else 1e-6
    _close(
        ours.transform_images(images, _as_numpy(transformation)), theirs.transform_images(images, transformation), atol
    )


def test_aug_mix_segmentation_masks_and_labels_equal_keras():
    # The geometric layers move the masks (the others leave them), then the masks are mixed.
    theirs, ours = _mix_pair()
    chains = [["random_rotation", "random_contrast"], ["solarization"], ["random_shear", "random_translation"]]
    transformation = _keras_mix_transformation(theirs, PIXELS, chains, seed=7)
    given = _as_numpy(transformation)
    masks = MASKS.astype(np.float32)
    _close(
        ours.transform_segmentation_masks(masks, given),
        theirs.transform_segmentation_masks(masks, transformation),
        1e-6,
    )
    labels = np.eye(2, dtype=np.float32)
    _close(ours.transform_labels(labels, given), theirs.transform_labels(labels, transformation), 0)
    # Integer masks cannot be mixed in proportions: TensorFlow's InvalidArgumentError in both.
    with pytest.raises(tf_real.errors.InvalidArgumentError):
        theirs.transform_segmentation_masks(MASKS, transformation)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*int32 masks.*floats"):
        ours.transform_segmentation_masks(MASKS, given)


def _brighter(deltas):
    return {"layer_name": "random_brightness", "transformation": {"rgb_delta": np.reshape(deltas, (-1, 1, 1, 1))}}


def test_aug_mix_equals_a_numpy_mixture_and_sorts_a_reversed_value_range():
    # Keras 3.15 clips to value_range as given: with (255, 0) every pixel becomes 255.
    weights, weight_sample = np.array([0.2, 0.3, 0.5], np.float32), np.float32(0.25)
    deltas = [np.array(d, np.float32) for d in ([40.0, -30.0], [100.0, 5.0])]
    transformation = {
        "chain_mixing_weights": weights,
        "weight_sample": weight_sample,
        "chain_transforms": [[_brighter(deltas[0])], [_brighter(deltas[0]), _brighter(deltas[1])], []],
    }
    assert (keras.layers.AugMix(value_range=(255, 0)).transform_images(PIXELS, transformation).numpy() == 255).all()
    got = gtf.keras.layers.AugMix(value_range=(255, 0)).transform_images(PIXELS, transformation).numpy()
    shift = [d.reshape(-1, 1, 1, 1) for d in deltas]
    chains = [
        np.clip(PIXELS + shift[0], 0, 255),
        np.clip(np.clip(PIXELS + shift[0], 0, 255) + shift[1], 0, 255),
        PIXELS,
    ]
    mixed = sum(w * c for w, c in zip(weights, chains))
    expected = np.clip(weight_sample * PIXELS + (1 - weight_sample) * mixed, 0, 255)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-4)


# -- inference and the call --------------------------------------------------------------------


def _fixed(layer, transformation):
    """``layer`` drawing ``transformation`` at each call in training (the same one in both libraries)."""
    layer.get_random_transformation = lambda data, training=True, seed=None: transformation if training else None
    return layer


# The policies the call tests compare (RandAugment with one op: Keras runs all its layers per op).
POLICY_ARGS = {"RandAugment": dict(num_ops=1), "AugMix": dict()}


def _cheap(cls, images):
    """Keras' transformation of a ``cls`` (POLICY_ARGS) drawn for ``images``, with layers whose
    operations the eager parity tests compile anyway."""
    if cls == "RandAugment":
        return _as_numpy(_keras_rand_transformation(_rand_pair(num_ops=1)[0], images, [CONTRAST]))
    chains = [["random_contrast"], [], ["random_brightness"]]
    return _as_numpy(_keras_mix_transformation(keras.layers.AugMix(), images, chains, seed=8))


@pytest.mark.parametrize("cls", ["RandAugment", "AugMix"])
def test_call_equals_keras_in_training_and_not(cls):
    theirs, ours = getattr(keras.layers, cls)(**POLICY_ARGS[cls]), getattr(gtf.keras.layers, cls)(**POLICY_ARGS[cls])
    assert theirs.get_random_transformation(PIXELS, training=False) is None
    assert ours.get_random_transformation(PIXELS, training=False) is None
    for images in (PIXELS, PIXELS[0], PIXELS.astype(np.float64), PIXELS.astype(np.int32)):
        got, expected = ours(images, training=False), theirs(images, training=False)
        _close(got, expected, 0)  # float32, integers included, as in Keras
        np.testing.assert_array_equal(got.numpy(), images.astype(np.float32))
    drawn = {3: _cheap(cls, PIXELS[0]), 4: _cheap(cls, PIXELS)}  # for one image, for a batch
    for images in (PIXELS, PIXELS[0], PIXELS.astype(np.int32)):
        transformation = drawn[images.ndim]
        _fixed(theirs, transformation), _fixed(ours, transformation)
        _close(ours(images), theirs(images), 1e-4)  # training: integer images come out as floats
        _close(ours.transform_images(images, transformation, training=False), images.astype(np.float32), 0)


def test_layers_in_a_sequential_model():
    gtf.keras.utils.set_random_seed(0)
    L = gtf.keras.layers
    transformations = {cls: _cheap(cls, PIXELS) for cls in ("RandAugment", "AugMix")}
    policies = [_fixed(getattr(L, cls)(**POLICY_ARGS[cls]), transformations[cls]) for cls in ("RandAugment", "AugMix")]
    head = [L.Flatten(), L.Dense(2)]
    model = gtf.keras.Sequential([gtf.keras.Input(shape=(8, 8, 3)), *policies, *head])
    plain = gtf.keras.Sequential([gtf.keras.Input(shape=(8, 8, 3)), *head])  # the same Flatten and Dense
    np.testing.assert_array_equal(model(PIXELS, training=False).numpy(), plain(PIXELS).numpy())
    augmented = PIXELS
    for policy, cls in zip(policies, ("RandAugment", "AugMix")):
        augmented = policy.transform_images(augmented, transformations[cls])
    np.testing.assert_allclose(model(PIXELS, training=True).numpy(), plain(augmented).numpy(), rtol=1e-6, atol=1e-5)
    assert not np.allclose(augmented.numpy(), PIXELS)
    np.testing.assert_array_equal(model.predict(PIXELS, verbose=0), plain.predict(PIXELS, verbose=0))


# -- configs -------------------------------------------------------------------------------------

CONFIGS = {
    "rand": ("RandAugment", dict()),
    "rand_args": (
        "RandAugment",
        dict(value_range=[1, 0], num_ops=3, factor=[0.7, 0.2], interpolation="nearest", seed=5),
    ),
    "rand_channels_first": ("RandAugment", dict(factor=1.0, data_format="channels_first")),
    "mix": ("AugMix", dict()),
    "mix_args": ("AugMix", dict(value_range=(0, 1), num_chains=2, chain_depth=4, factor=0.6, alpha=0.5, seed=2)),
    "mix_some_ops": ("AugMix", dict(all_ops=False, interpolation="nearest", data_format="channels_first")),
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


@pytest.mark.parametrize("cls", ["RandAugment", "AugMix"])
def test_parts_are_configured_as_keras_configures_them(cls):
    kwargs = dict(value_range=(0, 1), factor=0.6, interpolation="nearest", seed=7, data_format="channels_first")
    theirs, ours = getattr(keras.layers, cls)(**kwargs), getattr(gtf.keras.layers, cls)(**kwargs)
    for name in NAMES:
        expected = {k: v for k, v in getattr(theirs, name).get_config().items() if k != "name"}
        assert {k: v for k, v in getattr(ours, name).get_config().items() if k != "name"} == expected, name


# -- the draws -----------------------------------------------------------------------------------


def _same_structure(ours, theirs, where="transformation"):
    """Nested dicts and lists with Keras' keys and lengths; arrays of Keras' shapes and dtypes;
    Python values (shapes, sizes, layer names) equal."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), where
        for k in theirs:
            _same_structure(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _same_structure(o, t, f"{where}[{i}]")
    elif hasattr(theirs, "dtype"):
        ours = np.asarray(ours)
        dtype = np.dtype(getattr(theirs.dtype, "as_numpy_dtype", theirs.dtype))
        assert ours.shape == tuple(theirs.shape) and ours.dtype == dtype, where
    else:
        assert ours == theirs, where


def _flat(transformation):
    if isinstance(transformation, dict):
        return [x for k in sorted(transformation) for x in _flat(transformation[k])]
    if isinstance(transformation, list):
        return [x for v in transformation for x in _flat(v)]
    if isinstance(transformation, str):
        return [transformation]
    return [] if transformation is None else [np.asarray(transformation).tobytes()]


def test_rand_augment_draws_have_keras_structure_and_are_fixed_by_a_seed():
    images = PIXELS
    theirs, ours = keras.layers.RandAugment(num_ops=3), gtf.keras.layers.RandAugment(num_ops=3)
    keras_draw = theirs.get_random_transformation(images, training=True)
    draws = [ours.get_random_transformation(images) for _ in range(3)]
    for drawn in draws:
        _same_structure(_as_numpy(drawn), keras_draw)
        indices = drawn["layer_idxes"].numpy()
        assert ((indices >= 0) & (indices < 11)).all()
    assert len({tuple(_flat(d)) for d in draws}) == 3
    assert _flat(ours.get_random_transformation(images, seed=5)) == _flat(
        ours.get_random_transformation(images, seed=5)
    )


def test_aug_mix_draws_have_keras_structure_and_are_fixed_by_a_seed():
    theirs, ours = keras.layers.AugMix(all_ops=False), gtf.keras.layers.AugMix(all_ops=False)
    draws = [ours.get_random_transformation(PIXELS) for _ in range(3)]
    for drawn in draws:
        keras_draw = theirs.get_random_transformation(PIXELS, training=True)
        chains = drawn["chain_transforms"]
        # Keras' structure, with gradkit's chains: each step as Keras' own layer draws it.
        keras_draw["chain_transforms"] = [
            [
                {
                    "layer_name": step["layer_name"],
                    "transformation": getattr(theirs, step["layer_name"]).get_random_transformation(PIXELS),
                }
                for step in chain
            ]
            for chain in chains
        ]
        _same_structure(_as_numpy(drawn), keras_draw)
        assert len(chains) == 3 and all(len(chain) <= 3 for chain in chains)
        assert all(step["layer_name"] in ours._augment_layers for chain in chains for step in chain)
        weights = drawn["chain_mixing_weights"].numpy()
        assert (weights >= 0).all() and abs(weights.sum() - 1) < 1e-6 and 0 <= drawn["weight_sample"].numpy() <= 1
    assert len({tuple(_flat(d)) for d in draws}) == 3
    assert _flat(ours.get_random_transformation(PIXELS, seed=8)) == _flat(
        ours.get_random_transformation(PIXELS, seed=8)
    )
    # Over many draws a chain has 0 to chain_depth steps, and every layer takes part.
    many = [ours.get_random_transformation(PIXELS, seed=s)["chain_transforms"] for s in range(12)]
    assert {len(chain) for chains in many for chain in chains} == {0, 1, 2, 3}
    assert {step["layer_name"] for chains in many for chain in chains for step in chain} == set(ours._augment_layers)


def test_layer_seed_fixes_the_sequence():
    runs = []
    for _ in range(2):
        gtf.random.set_seed(11)
        random.seed(0)  # AugMix's chains without a layer seed; with one, its own generator
        layers = [gtf.keras.layers.RandAugment(seed=4), gtf.keras.layers.AugMix(seed=4)]
        random.seed(1)
        runs.append([_flat(layer.get_random_transformation(PIXELS)) for layer in layers for _ in range(2)])
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1] and runs[0][2] != runs[0][3]


# -- gradients -----------------------------------------------------------------------------------

WEIGHTS = _RNG.normal(size=PIXELS.shape).astype(np.float32)


def _gradient(library, transform_images, images, transformation, weights):
    x = library.constant(images)
    with library.GradientTape() as tape:
        tape.watch(x)
        loss = library.reduce_sum(transform_images(x, transformation) * weights)
    return tape.gradient(loss, x).numpy()


@pytest.mark.parametrize(
    "layer_idxes",
    [[AUTO_CONTRAST, SOLARIZATION, SHARPNESS]],
)
def test_rand_augment_gradients_equal_tensorflow(layer_idxes):
    # (AugMix's test takes the other layers that have a gradient. AutoContrast comes first: its gradient goes to each channel's
    # lowest and highest pixel, found by comparing with the values its compiled gradient
    # recomputes, which XLA at the suite's optimization level 0 may round differently after an
    # inexact layer such as RandomSharpness, giving 0 / 0 there.)
    theirs, ours = _rand_pair(num_ops=3)
    transformation = _keras_rand_transformation(theirs, PIXELS, layer_idxes)
    expected = _gradient(tf_real, theirs.transform_images, PIXELS, transformation, WEIGHTS)
    got = _gradient(gtf, ours.transform_images, PIXELS, _as_numpy(transformation), WEIGHTS)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_rand_augment_geometric_gradient_is_the_adjoint_of_keras_sampling():
    # Keras' shear then translation is linear in the images: its Jacobian, column by column,
    # from images of one pixel each (TensorFlow's registered gradient only approximates it).
    # (RandAugment applies its drawn layers one after the other: the parity tests check that.)
    theirs, ours = _rand_pair()
    images = PIXELS[..., :1] / 255.0  # one channel: the masks' shape, whose sampling the mask tests compile
    transformation = _as_numpy(_keras_rand_transformation(theirs, images, [SHEAR, TRANSLATION]))
    weights = WEIGHTS[..., :1]
    expected = np.zeros_like(images)
    for b in range(2):  # each image's Jacobian, from its parameters applied to the 64 basis images
        columns = np.eye(64, dtype=np.float32).reshape(64, 8, 8, 1)
        for name, key in (("random_shear", "shear_factor"), ("random_translation", "translations")):
            part = {key: np.repeat(transformation["transforms"][name][key][b : b + 1], 64, axis=0)}
            columns = getattr(theirs, name).transform_images(columns, part)
        expected[b] = (columns.numpy().reshape(64, 64) @ weights[b].reshape(64)).reshape(8, 8, 1)
    got = _gradient(gtf, ours.transform_images, images, transformation, weights)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_aug_mix_gradient_equals_tensorflow():
    theirs, ours = _mix_pair()
    chains = [
        ["random_brightness", "random_color_degeneration"],
        ["random_contrast"],
        ["random_sharpness", "solarization"],
    ]
    transformation = _keras_mix_transformation(theirs, PIXELS, chains, seed=9)
    expected = _gradient(tf_real, theirs.transform_images, PIXELS, transformation, WEIGHTS)
    got = _gradient(gtf, ours.transform_images, PIXELS, _as_numpy(transformation), WEIGHTS)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


# -- errors --------------------------------------------------------------------------------------

_INVALID = (tf_real.errors.InvalidArgumentError, gtf.errors.InvalidArgumentError)
# name -> (make, Keras' error, gradkit's error, what gradkit's message names). Keras checks the
# counts only when it draws, so those cases call the layer.
ERRORS = {
    "rand_factor": (lambda L: L.RandAugment(factor=1.5), ValueError, ValueError, "factor=1.5"),
    "rand_factor_pair": (lambda L: L.RandAugment(factor=(-0.5, 0.5)), ValueError, ValueError, r"factor=\(-0.5, 0.5\)"),
    "rand_factor_text": (lambda L: L.RandAugment(factor="x"), ValueError, ValueError, "factor='x'"),
    "rand_interpolation": (
        lambda L: L.RandAugment(interpolation="bicubic"),
        NotImplementedError,
        NotImplementedError,
        "interpolation='bicubic'",
    ),
    "rand_value_range": (lambda L: L.RandAugment(value_range=5), ValueError, ValueError, "value_range=5"),
    "rand_seed": (lambda L: L.RandAugment(seed="1"), ValueError, ValueError, "seed='1'"),
    "rand_data_format": (lambda L: L.RandAugment(data_format="x"), ValueError, ValueError, "data_format"),
    "rand_num_ops_negative": (lambda L: L.RandAugment(num_ops=-1)(PIXELS), *_INVALID, "num_ops=-1"),
    "rand_num_ops_float": (lambda L: L.RandAugment(num_ops=1.5)(PIXELS), *_INVALID, "num_ops=1.5"),
    "rand_num_ops_none": (lambda L: L.RandAugment(num_ops=None)(PIXELS), ValueError, ValueError, "num_ops=None"),
    "rand_two_channels": (
        lambda L: L.RandAugment()(np.zeros((2, 8, 8, 2), np.float32)),
        ValueError,
        ValueError,
        "channels",
    ),
    "mix_factor": (lambda L: L.AugMix(factor=-0.2), ValueError, ValueError, "factor=-0.2"),
    "mix_interpolation": (lambda L: L.AugMix(interpolation=None), NotImplementedError, NotImplementedError, "None"),
    "mix_value_range": (lambda L: L.AugMix(value_range=(0, 1, 2)), ValueError, ValueError, "value_range"),
    "mix_seed": (lambda L: L.AugMix(seed=1.5), ValueError, ValueError, "seed=1.5"),
    "mix_num_chains_negative": (lambda L: L.AugMix(num_chains=-1)(PIXELS), *_INVALID, "num_chains=-1"),
    "mix_num_chains_text": (lambda L: L.AugMix(num_chains="3")(PIXELS), *_INVALID, "num_chains='3'"),
    "mix_num_chains_none": (lambda L: L.AugMix(num_chains=None)(PIXELS), ValueError, ValueError, "num_chains=None"),
    "mix_chain_depth": (lambda L: L.AugMix(chain_depth=1.5)(PIXELS), TypeError, TypeError, "chain_depth=1.5"),
    "mix_chain_depth_none": (lambda L: L.AugMix(chain_depth=None)(PIXELS), TypeError, TypeError, "chain_depth=None"),
    "mix_alpha_text": (lambda L: L.AugMix(alpha="x")(PIXELS), TypeError, TypeError, "alpha='x'"),
    "mix_alpha_none": (lambda L: L.AugMix(alpha=None)(PIXELS), ValueError, ValueError, "alpha=None"),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_bad_arguments_raise_keras_error_types(key):
    make, keras_error, our_error, text = ERRORS[key]
    with pytest.raises(keras_error):
        make(keras.layers)
    with pytest.raises(our_error, match=r"\[gradkit\].*" + text):
        make(gtf.keras.layers)


def test_gradkit_refuses_what_keras_takes_but_gets_wrong():
    # Keras draws NaN weights for a negative alpha and takes a negative chain depth as 0.
    assert np.isnan(keras.layers.AugMix(alpha=-1.0)(PIXELS).numpy()).all()
    with pytest.raises(ValueError, match=r"\[gradkit\].*alpha=-1.0.*positive"):
        gtf.keras.layers.AugMix(alpha=-1.0)
    keras.layers.AugMix(chain_depth=-1)(PIXELS)
    with pytest.raises(ValueError, match=r"\[gradkit\].*chain_depth=-1.*>= 0"):
        gtf.keras.layers.AugMix(chain_depth=-1)
    # Keras fails with an IndexError on images of rank 2.
    with pytest.raises(IndexError):
        keras.layers.RandAugment()(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[gradkit\].*\[2, 3\].*rank 3"):
        gtf.keras.layers.RandAugment()(np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("cls", ["RandAugment", "AugMix"])
def test_bounding_boxes_are_refused(cls):
    layer = getattr(gtf.keras.layers, cls)()
    getattr(keras.layers, cls)(bounding_box_format="xyxy")  # Keras takes them
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*bounding_box_format='xyxy'"):
        getattr(gtf.keras.layers, cls)(bounding_box_format="xyxy")
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*no bounding boxes"):
        layer.transform_bounding_boxes({"boxes": np.zeros((2, 1, 4), np.float32)}, None)
    with pytest.raises(TypeError, match=r"\[gradkit\].*dict"):
        layer({"images": PIXELS, "bounding_boxes": {"boxes": np.zeros((2, 1, 4), np.float32)}})
    with pytest.raises(TypeError, match=r"\[gradkit\].*seed='1'"):
        layer.get_random_transformation(PIXELS, seed="1")


def test_malformed_transformations_are_refused():
    ours = gtf.keras.layers.RandAugment(num_ops=2)
    drawn = ours.get_random_transformation(PIXELS, seed=1)
    with pytest.raises(ValueError, match=r"\[gradkit\].*layer_idxes of shape \[1\].*\[2\]"):
        ours.transform_images(PIXELS, {**drawn, "layer_idxes": np.array([1], np.int32)})
    with pytest.raises(KeyError, match="random_shear"):
        ours.transform_images(PIXELS, {"transforms": {}, "layer_idxes": np.array([0, 0], np.int32)})
    mix = gtf.keras.layers.AugMix(all_ops=False)
    step = {"layer_name": "random_brightness", "transformation": {"rgb_delta": np.zeros((2, 1, 1, 1), np.float32)}}
    bad = {
        "chain_mixing_weights": np.ones(1, np.float32),
        "weight_sample": np.float32(0.5),
        "chain_transforms": [[step]],
    }
    with pytest.raises(ValueError, match=r"\[gradkit\].*'random_brightness'.*all_ops=False"):
        mix.transform_images(PIXELS, bad)
    with pytest.raises(ValueError, match=r"\[gradkit\].*chain_mixing_weights of shape \[1\] for 2 chains"):
        mix.transform_images(PIXELS, {**bad, "chain_transforms": [[], []]})
