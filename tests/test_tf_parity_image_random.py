"""``tf.image.random_*`` and ``stateless_random_*``: the streams differ from TensorFlow's, so
these check structure and statistics (each result is one that the op's own definition allows,
recomputed with real TensorFlow 2.21's deterministic op for the parameter drawn), the seed
rules, gradients, and the argument errors against TensorFlow's."""

import numpy as np
import pytest

import gradkit.tf as gtf

IMAGE = np.random.RandomState(0).uniform(0.1, 0.9, (4, 5, 3)).astype(np.float32)
BATCH = np.random.RandomState(1).uniform(0.1, 0.9, (6, 4, 5, 3)).astype(np.float32)
TRIALS = 40


def _seed(i):
    return [i, 7]


@pytest.mark.parametrize("direction, axis", [("left_right", 1), ("up_down", 0)])
@pytest.mark.parametrize("stateless", [False, True], ids=["seeded", "stateless"])
def test_flips_give_the_image_or_its_mirror_about_half_the_time(direction, axis, stateless):
    gtf.random.set_seed(3)
    op = getattr(gtf.image, f"{'stateless_' if stateless else ''}random_flip_{direction}")
    flips_single, flips_batch = 0, np.zeros(len(BATCH))
    for i in range(TRIALS):
        single = (op(IMAGE, _seed(i)) if stateless else op(IMAGE)).numpy()
        batch = (op(BATCH, _seed(i)) if stateless else op(BATCH)).numpy()
        flipped = np.array_equal(single, np.flip(IMAGE, axis))
        assert flipped or np.array_equal(single, IMAGE)
        flips_single += flipped
        for j in range(len(BATCH)):
            mirrored = np.array_equal(batch[j], np.flip(BATCH[j], axis))
            assert mirrored or np.array_equal(batch[j], BATCH[j])
            flips_batch[j] += mirrored
    # Binomial(40, 1/2): within 9 of 20 with probability > 0.995; each image of a batch flips on its own.
    assert abs(flips_single - TRIALS / 2) <= 9
    assert np.all(np.abs(flips_batch - TRIALS / 2) <= 9)
    assert np.all(np.abs(flips_batch.mean() - TRIALS / 2) <= 4)


def test_the_gradient_of_a_flip_is_the_flipped_upstream():
    x = gtf.Variable(BATCH)
    with gtf.GradientTape() as tape:
        y = gtf.image.stateless_random_flip_left_right(x, seed=[5, 5])
    weights = np.arange(BATCH.size, dtype=np.float32).reshape(BATCH.shape)
    gradient = tape.gradient(y, x, output_gradients=weights).numpy()
    for j, image in enumerate(y.numpy()):
        flipped = not np.array_equal(image, BATCH[j])
        np.testing.assert_array_equal(gradient[j], np.flip(weights[j], 1) if flipped else weights[j])


def test_stateless_ops_repeat_for_a_seed_and_inside_a_function():
    ops = [
        lambda x, s: gtf.image.stateless_random_flip_left_right(x, s),
        lambda x, s: gtf.image.stateless_random_brightness(x, 0.3, s),
        lambda x, s: gtf.image.stateless_random_contrast(x, 0.5, 1.5, s),
        lambda x, s: gtf.image.stateless_random_hue(x, 0.2, s),
        lambda x, s: gtf.image.stateless_random_saturation(x, 0.5, 1.5, s),
        lambda x, s: gtf.image.stateless_random_crop(x, [2, 3, 3], s),
    ]
    for op in ops:
        first, again = op(IMAGE, [4, 2]).numpy(), op(IMAGE, [4, 2]).numpy()
        np.testing.assert_array_equal(first, again)
        traced = gtf.function(op)(gtf.constant(IMAGE), gtf.constant([4, 2]))
        np.testing.assert_allclose(traced.numpy(), first, rtol=1e-6)
        results = {op(IMAGE, _seed(i)).numpy().tobytes() for i in range(8)}
        assert len(results) > 1


def test_inside_a_function_each_call_draws_afresh():
    batch = gtf.constant(BATCH)
    ops = [
        lambda x: gtf.image.random_flip_left_right(x),
        lambda x: gtf.image.random_brightness(x, 0.2),
        lambda x: gtf.image.random_crop(x, [6, 2, 2, 3]),
        lambda x: gtf.image.random_saturation(x, 0.5, 1.5),
    ]
    for op in ops:
        step = gtf.function(op)
        assert len({step(batch).numpy().tobytes() for _ in range(8)}) > 2


def test_seeded_ops_repeat_after_set_seed():
    def draws():
        gtf.random.set_seed(11)
        return [
            gtf.image.random_brightness(IMAGE, 0.4, seed=1).numpy(),
            gtf.image.random_crop(IMAGE, [2, 2, 3], seed=2).numpy(),
            gtf.image.random_hue(IMAGE, 0.3).numpy(),
        ]

    for a, b in zip(draws(), draws()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("stateless", [False, True], ids=["seeded", "stateless"])
def test_brightness_adds_one_delta_within_the_range(stateless):
    deltas = []
    for i in range(TRIALS):
        out = (
            gtf.image.stateless_random_brightness(BATCH, 0.25, _seed(i))
            if stateless
            else gtf.image.random_brightness(BATCH, 0.25)
        ).numpy()
        delta = out - BATCH
        np.testing.assert_allclose(delta, delta.flat[0], atol=1e-6)  # one delta for the whole batch
        deltas.append(delta.flat[0])
    deltas = np.array(deltas)
    assert np.all(np.abs(deltas) <= 0.25 + 1e-6)
    assert deltas.min() < -0.1 and deltas.max() > 0.1  # uniform on [-0.25, 0.25): both tails reached


@pytest.mark.parametrize("stateless", [False, True], ids=["seeded", "stateless"])
def test_contrast_hue_and_saturation_are_tensorflows_adjustment_for_a_drawn_parameter(stateless):
    # The parameter is read back from the result (a pixel of known hue or saturation), and the
    # whole result compared with TensorFlow's own adjust_* for it.
    tf = pytest.importorskip("tensorflow")
    image = IMAGE.copy()
    image[0, 0] = [1.0, 0.0, 0.0]  # hue 0: its hue after the turn is the delta
    image[0, 1] = [1.0, 0.5, 0.5]  # saturation 1/2: after scaling, half the factor
    factors = {"contrast": [], "hue": [], "saturation": []}
    prefix = "stateless_" if stateless else ""
    for i in range(12):
        args = [_seed(i)] if stateless else []
        contrast = getattr(gtf.image, prefix + "random_contrast")(image, 0.3, 1.8, *args).numpy()
        mean = image.mean(axis=(0, 1))
        factor = float(np.median((contrast - mean) / (image - mean)))
        np.testing.assert_allclose(contrast, tf.image.adjust_contrast(image, factor).numpy(), atol=2e-5)
        hue = getattr(gtf.image, prefix + "random_hue")(image, 0.4, *args).numpy()
        delta = float(tf.image.rgb_to_hsv(hue[0, 0]).numpy()[0])
        delta = delta - 1 if delta > 0.5 else delta
        np.testing.assert_allclose(hue, tf.image.adjust_hue(image, delta).numpy(), atol=2e-5)
        saturation = getattr(gtf.image, prefix + "random_saturation")(image, 0.2, 1.9, *args).numpy()
        scale = float(tf.image.rgb_to_hsv(saturation[0, 1]).numpy()[1]) * 2
        np.testing.assert_allclose(saturation, tf.image.adjust_saturation(image, scale).numpy(), atol=2e-5)
        factors["contrast"].append(factor)
        factors["hue"].append(delta)
        factors["saturation"].append(scale)
    for name, (low, high) in {"contrast": (0.3, 1.8), "hue": (-0.4, 0.4), "saturation": (0.2, 1.9)}.items():
        values = np.array(factors[name])
        assert np.all((values >= low - 1e-5) & (values < high + 1e-5)), (name, values)
        assert values.max() - values.min() > (high - low) / 3, (name, values)


@pytest.mark.parametrize("stateless", [False, True], ids=["seeded", "stateless"])
def test_random_crop_takes_every_window_and_its_gradient_is_the_window(stateless):
    value = np.arange(5 * 4 * 2, dtype=np.float32).reshape(5, 4, 2)
    offsets = set()
    for i in range(60):
        x = gtf.Variable(value)
        with gtf.GradientTape() as tape:
            crop = (
                gtf.image.stateless_random_crop(x, [3, 3, 2], _seed(i))
                if stateless
                else gtf.image.random_crop(x, [3, 3, 2])
            )
        top, left = divmod(int(crop.numpy()[0, 0, 0]) // 2, 4)
        np.testing.assert_array_equal(crop.numpy(), value[top : top + 3, left : left + 3])
        mask = np.zeros_like(value)
        mask[top : top + 3, left : left + 3] = 1
        np.testing.assert_array_equal(tape.gradient(crop, x).numpy(), mask)
        offsets.add((top, left))
    assert offsets == {(t, s) for t in range(3) for s in range(2)}


def p_negative_max_delta(tf):
    return tf.image.random_brightness(IMAGE, -0.1)


def p_hue_max_delta_past_a_half(tf):
    return tf.image.random_hue(IMAGE, 0.6)


def p_contrast_upper_below_lower(tf):
    return tf.image.random_contrast(IMAGE, 1.5, 0.5)


def p_saturation_negative_lower(tf):
    return tf.image.stateless_random_saturation(IMAGE, -0.5, 0.5, seed=[1, 2])


def p_stateless_saturation_without_a_seed(tf):
    return tf.image.stateless_random_saturation(IMAGE, 0.5, 1.0)


def p_crop_larger_than_the_value(tf):
    return tf.image.random_crop(IMAGE, [5, 2, 3])


def p_crop_of_the_whole_value(tf):
    return tf.image.stateless_random_crop(IMAGE, [4, 5, 3], seed=[1, 2])


def p_a_flip_keeps_the_dtype(tf):
    image = tf.cast(IMAGE * 255, tf.uint8)
    return [
        tf.image.stateless_random_flip_up_down(image, [1, 2]).dtype.name,
        tf.image.random_flip_left_right(image).dtype.name,
    ]


def p_brightness_of_a_uint8_image_keeps_the_dtype(tf):
    return tf.image.stateless_random_brightness(tf.cast(IMAGE * 255, tf.uint8), 0.1, [1, 2]).dtype.name


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)
