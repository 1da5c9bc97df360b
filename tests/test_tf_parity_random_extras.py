"""tf.random.categorical, shuffle, the stateless draws and Generator against real TensorFlow.

The numbers cannot equal TensorFlow's (another generator): the tests compare what both must
agree on (shapes, dtypes, determinism, refused arguments, gradients, fresh draws per
tf.function call) and check distributions with loose tolerances.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


def _shape_dtype(t):
    return [list(t.shape), np.dtype(t.dtype.as_numpy_dtype if hasattr(t.dtype, "as_numpy_dtype") else t.dtype).kind]


def _same(a, b) -> bool:
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


# --- shapes, dtypes and determinism ----------------------------------------------------------


@pytest.mark.parametrize(
    "draw",
    [
        lambda tf: tf.random.categorical([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]], 5),
        lambda tf: tf.random.categorical([[0.0, 1.0]], 0, dtype=tf.int32),
        lambda tf: tf.random.categorical(tf.zeros([0, 3]), 2),
        lambda tf: tf.random.shuffle(tf.reshape(tf.range(12.0), [4, 3])),
        lambda tf: tf.random.shuffle(tf.constant(3.0)),
        lambda tf: tf.random.stateless_normal([2, 3], seed=[1, 2]),
        lambda tf: tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.float16, alg="philox"),
        lambda tf: tf.random.stateless_uniform([4], seed=[3, 4], minval=0, maxval=5, dtype=tf.int32),
        lambda tf: tf.random.stateless_uniform([4], seed=[3, 4], minval=None, maxval=None, dtype=tf.int32),
        lambda tf: tf.random.stateless_truncated_normal([3, 1], seed=[5, 6], mean=1.0, stddev=2.0),
        lambda tf: tf.random.Generator.from_seed(7).normal([2, 2]),
        lambda tf: tf.random.Generator.from_seed(7).uniform([3], minval=0, maxval=4, dtype=tf.int32),
        lambda tf: tf.random.Generator.from_seed(7).make_seeds(3),
    ],
)
def test_shapes_and_dtype_kinds_match_tensorflow(draw):
    # int64 results are int32 in gradkit without jax_enable_x64 (README): compare the kind.
    assert _shape_dtype(draw(tf_real)) == _shape_dtype(draw(gtf))


def test_categorical_defaults_to_int64_and_takes_int32():
    run_both(lambda tf: tf.random.categorical([[0.0, 1.0]], 3, dtype=tf.int32).dtype == tf.int32)
    assert gtf.random.categorical([[0.0, 1.0]], 3, dtype=gtf.int32).dtype == np.int32


def test_stateless_draws_depend_on_the_seed_alone():
    def program(tf):
        out = []
        for fn in (tf.random.stateless_normal, tf.random.stateless_truncated_normal, tf.random.stateless_uniform):
            a = fn([50], seed=[1, 2])
            tf.random.normal([3])  # a stateful draw in between changes nothing
            out += [_same(a, fn([50], seed=[1, 2])), _same(a, fn([50], seed=[1, 3]))]
        return out

    assert run_both(program) == [True, False] * 3


def test_op_seeded_categorical_and_shuffle_repeat_after_set_seed():
    def program(tf):
        tf.random.set_seed(3)
        a = [tf.random.categorical([[0.0, 0.5, 1.0]], 20, seed=4), tf.random.shuffle(tf.range(20), seed=4)]
        tf.random.set_seed(3)
        b = [tf.random.categorical([[0.0, 0.5, 1.0]], 20, seed=4), tf.random.shuffle(tf.range(20), seed=4)]
        return [_same(x, y) for x, y in zip(a, b)] + [sorted(np.asarray(a[1]).tolist()) == list(range(20))]

    assert run_both(program) == [True, True, True]


def test_generators_from_the_same_seed_draw_the_same_numbers_and_advance():
    def program(tf):
        g, h = tf.random.Generator.from_seed(11), tf.random.Generator.from_seed(11)
        a, b = g.normal([4]), h.normal([4])
        a2 = g.normal([4])
        g.reset_from_seed(11)
        return [_same(a, b), _same(a, a2), _same(a, g.normal([4]))]

    assert run_both(program) == [True, False, True]


def test_generator_split_and_make_seeds_give_distinct_streams():
    def program(tf):
        g = tf.random.Generator.from_seed(5)
        first, second = g.split(2)
        seeds = g.make_seeds(2)
        a = tf.random.stateless_normal([8], seed=seeds[:, 0])
        b = tf.random.stateless_normal([8], seed=seeds[:, 1])
        return [_same(first.normal([8]), second.normal([8])), _same(a, b), list(seeds.shape)]

    assert run_both(program) == [False, False, [2, 2]]


def test_global_generator_can_be_set():
    def program(tf):
        g = tf.random.Generator.from_seed(2)
        tf.random.set_global_generator(g)
        return tf.random.get_global_generator() is g

    assert bool(run_both(program))


# --- distributions ---------------------------------------------------------------------------


def test_categorical_frequencies_follow_the_softmax():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    samples = np.asarray(gtf.random.categorical(np.log(probs).astype(np.float32), 20000, seed=1))
    freqs = np.stack([np.bincount(row, minlength=3) / row.size for row in samples])
    np.testing.assert_allclose(freqs, probs, atol=0.02)


def test_categorical_gives_num_classes_for_a_row_of_minus_infinity():
    run_both(lambda tf: tf.random.categorical([[-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, -np.inf]], 4))


@pytest.mark.parametrize(
    "draw, mean, std",
    [
        (lambda tf: tf.random.stateless_normal([20000], seed=[1, 2], mean=1.0, stddev=2.0), 1.0, 2.0),
        (lambda tf: tf.random.stateless_uniform([20000], seed=[1, 2], minval=-1.0, maxval=3.0), 1.0, 4 / 12**0.5),
        # A normal cut at two standard deviations has std 0.8796.
        (lambda tf: tf.random.stateless_truncated_normal([20000], seed=[1, 2], stddev=2.0), 0.0, 2 * 0.8796),
        (lambda tf: tf.random.Generator.from_seed(3).truncated_normal([20000], mean=-1.0), -1.0, 0.8796),
        (lambda tf: tf.random.Generator.from_seed(3).uniform([20000]), 0.5, 1 / 12**0.5),
    ],
)
def test_moments_match_tensorflows_draws(draw, mean, std):
    for tf in (tf_real, gtf):
        x = np.asarray(draw(tf), np.float64)
        assert abs(x.mean() - mean) < 0.05 and abs(x.std() - std) < 0.05, (tf.__name__, x.mean(), x.std())


def test_truncated_draws_stay_within_two_standard_deviations():
    x = np.asarray(gtf.random.stateless_truncated_normal([5000], seed=[9, 9], mean=1.0, stddev=0.5))
    assert x.min() >= 0.0 and x.max() <= 2.0


def test_integer_draws_cover_minval_to_maxval():
    x = np.asarray(gtf.random.stateless_uniform([5000], seed=[4, 4], minval=-2, maxval=3, dtype=gtf.int32))
    assert sorted(set(x.tolist())) == [-2, -1, 0, 1, 2]


def test_shuffle_permutes_rows_uniformly():
    firsts = [int(np.asarray(gtf.random.shuffle(gtf.range(4)))[0]) for _ in range(400)]
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / 400, [0.25] * 4, atol=0.08)


# --- refused arguments -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda tf: tf.random.categorical([1.0, 2.0], 3),
        lambda tf: tf.random.categorical([[[1.0, 2.0]]], 3),
        lambda tf: tf.random.categorical([[1.0, 2.0]], 3, dtype=tf.float32),
        lambda tf: tf.random.categorical([[1.0, 2.0]], -1),
        lambda tf: tf.random.categorical([[1.0, 2.0]], 2.0),
        lambda tf: tf.random.categorical([[1, 2]], 2),
        lambda tf: tf.random.categorical(tf.zeros([2, 0]), 2),
        lambda tf: tf.random.stateless_normal([2], seed=[1, 2, 3]),
        lambda tf: tf.random.stateless_normal([2], seed=1),
        lambda tf: tf.random.stateless_normal([2], seed=[1.0, 2.0]),
        lambda tf: tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.int32),
        lambda tf: tf.random.stateless_normal([-1], seed=[1, 2]),
        lambda tf: tf.random.stateless_normal([2], seed=[1, 2], alg="bogus"),
        lambda tf: tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.int32),
        lambda tf: tf.random.stateless_uniform([2], seed=[1, 2], minval=5, maxval=5, dtype=tf.int32),
        lambda tf: tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.bool),
        lambda tf: tf.random.stateless_truncated_normal([2], seed=[1, 2], dtype=tf.int32),
        lambda tf: tf.random.Generator.from_seed(1).uniform([2], dtype=tf.int32),
        lambda tf: tf.random.Generator.from_seed(1).normal([2], dtype=tf.int32),
    ],
)
def test_refuses_what_tensorflow_refuses(call):
    run_both(call)
    with pytest.raises((ValueError, TypeError), match=r"\[gradkit\]"):
        call(gtf)


def test_a_refused_generator_draw_leaves_the_state_alone():
    g = gtf.random.Generator.from_seed(1)
    before = g.state.numpy()
    with pytest.raises(ValueError):
        g.uniform([2], dtype=gtf.int32)
    assert _same(before, g.state.numpy())


def test_generator_methods_it_lacks_raise_a_clear_error():
    with pytest.raises(AttributeError, match=r"\[gradkit\].*no_such_draw"):
        _ = gtf.random.Generator.from_seed(1).no_such_draw


# --- gradients -------------------------------------------------------------------------------


def test_shuffle_has_no_gradient_as_in_tensorflow():
    # TensorFlow registers RandomShuffle as not differentiable: the tape gives None, also for a
    # value that reaches the loss by another path too (only that path's gradient counts).
    def program(tf):
        x = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.GradientTape(persistent=True) as tape:
            y = tf.random.shuffle(x, seed=1)
            only = tf.reduce_sum(y * y)
            both = only + tf.reduce_sum(3.0 * x)
        return [tape.gradient(only, x), tape.gradient(both, x), sorted(np.asarray(y)[:, 0].tolist())]

    assert run_both(program)[0] is None


def test_draws_differentiate_through_mean_and_stddev_and_categorical_has_no_gradient():
    def program(tf):
        mean, std, logits = tf.Variable(1.0), tf.Variable(2.0), tf.Variable([[0.0, 1.0]])
        g = tf.random.Generator.from_seed(4)
        with tf.GradientTape(persistent=True) as tape:
            a = tf.random.stateless_normal([5], seed=[1, 2], mean=mean, stddev=std)
            b = g.normal([5], mean=mean, stddev=std)
            c = tf.cast(tf.random.categorical(logits, 3), tf.float32)
            total = tf.reduce_sum(a) + tf.reduce_sum(b)
        d_mean, d_std = tape.gradient(total, [mean, std])
        # d/d std of sum(standard * std + mean) is the sum of the standard draws.
        standard = (np.asarray(a) - 1.0) / 2.0 + (np.asarray(b) - 1.0) / 2.0
        return [d_mean, bool(np.isclose(float(d_std), standard.sum(), atol=1e-4)), tape.gradient(c, logits)]

    assert run_both(program)[:2] == [10.0, True]


# --- inside tf.function ----------------------------------------------------------------------


def test_a_generator_in_a_tf_function_draws_anew_at_each_call_and_compiles_once():
    def program(tf):
        g = tf.random.Generator.from_seed(8)
        w = tf.Variable([1.0, 2.0])

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((w + g.normal([2], stddev=0.1)) * x)
            w.assign_sub(0.1 * tape.gradient(loss, w))
            return g.uniform([3]), g.make_seeds(1)

        draws = [step(tf.constant([1.0, -1.0])) for _ in range(3)]
        fresh = not _same(draws[0][0], draws[1][0]) and not _same(draws[1][1], draws[2][1])
        return [fresh, w], step

    run_both(lambda tf: program(tf)[0])
    step = program(gtf)[1]
    traces = step.trace_count
    step(gtf.constant([1.0, -1.0]))
    assert step.trace_count == traces


def test_categorical_and_shuffle_in_a_tf_function_are_fresh_at_each_call():
    def program(tf):
        @tf.function
        def f(logits):
            return tf.random.categorical(logits, 30), tf.random.shuffle(tf.range(30))

        a, b = f(tf.zeros([1, 5])), f(tf.zeros([1, 5]))
        return [_same(a[0], b[0]), _same(a[1], b[1]), sorted(np.asarray(a[1]).tolist()) == list(range(30))]

    assert run_both(program) == [False, False, True]


def test_stateless_draws_in_a_tf_function_take_a_traced_seed():
    def program(tf):
        @tf.function
        def f(seed):
            return tf.random.stateless_uniform([6], seed=seed)

        a = f(tf.constant([1, 2]))
        return [
            _same(a, f(tf.constant([1, 2]))),
            _same(a, f(tf.constant([1, 3]))),
            _same(a, tf.random.stateless_uniform([6], seed=[1, 2])),
        ]

    assert run_both(program) == [True, False, True]


def test_shuffle_in_vectorized_map_is_each_elements_own():
    def program(tf):
        out = tf.vectorized_map(lambda row: tf.random.shuffle(row), tf.tile(tf.range(8)[None], [4, 1]))
        rows = np.asarray(out)
        return [all(sorted(r.tolist()) == list(range(8)) for r in rows), len({tuple(r) for r in rows}) > 1]

    assert run_both(program) == [True, True]
