"""Random streams that TensorFlow keeps apart stay apart: a ``tf.function``'s draws are not the
eager sequence's, a ``Generator.from_seed(s)`` does not replay ``tf.random.set_seed(s)``'s; with a
global seed two functions of the same ops draw the same numbers, as TensorFlow's per-graph op
seeds make them; ``set_seed(None)`` clears the seed; ``Dropout(rate, seed=s)`` layers draw from a
SeedGenerator of their own; ``copy.copy`` of a Variable is the Variable. Oracles: TensorFlow 2.21
and Keras 3 where installed (equality patterns, never bits), and the rules themselves."""

import copy

import numpy as np
import pytest

import gradkit.tf as gtf


def _function_then_eager(tf):
    tf.random.set_seed(3)
    first = tf.random.uniform([64]).numpy()

    @tf.function
    def f():
        return tf.random.uniform([64])

    inside = f().numpy()
    after = tf.random.uniform([64]).numpy()
    return [np.array_equal(a, b) for a, b in ((first, inside), (inside, after), (first, after))]


def test_a_tf_function_does_not_replay_the_eager_sequence():
    assert _function_then_eager(gtf) == [False, False, False]


def test_function_and_eager_streams_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _function_then_eager(gtf) == _function_then_eager(tf)


def _generator_against_global(tf):
    tf.random.set_seed(42)
    eager = [tf.random.normal([32]).numpy() for _ in range(4)]
    g = tf.random.Generator.from_seed(42)
    drawn = [g.normal([32]).numpy() for _ in range(4)]
    return [(i, j) for i, a in enumerate(eager) for j, b in enumerate(drawn) if np.array_equal(a, b)]


def test_a_generator_from_the_global_seed_is_a_stream_of_its_own():
    assert _generator_against_global(gtf) == []


def test_generator_independence_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _generator_against_global(gtf) == _generator_against_global(tf)


def _two_functions(tf):
    tf.random.set_seed(1234)

    @tf.function
    def f():
        return tf.random.uniform([8]), tf.random.uniform([8])

    @tf.function
    def g():
        return tf.random.uniform([8]), tf.random.uniform([8])

    f1, g1, f2 = f(), g(), f()
    same = np.array_equal(f1[0].numpy(), g1[0].numpy()) and np.array_equal(f1[1].numpy(), g1[1].numpy())
    return same, np.array_equal(f1[0].numpy(), f1[1].numpy()), np.array_equal(f1[0].numpy(), f2[0].numpy())


def test_with_a_global_seed_functions_of_the_same_ops_draw_alike():
    # TensorFlow's documented rule (tf.random.set_seed): f() and g() both give (A1, A2); a second
    # call of f draws anew.
    assert _two_functions(gtf) == (True, False, False)


def test_two_functions_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _two_functions(gtf) == _two_functions(tf)


def test_set_seed_none_clears_the_global_seed():
    gtf.random.set_seed(None)
    a = gtf.random.normal([16]).numpy()
    gtf.random.set_seed(None)
    b = gtf.random.normal([16]).numpy()
    assert a.shape == (16,) and not np.array_equal(a, b)
    gtf.random.set_seed(7)
    c = gtf.random.normal([16]).numpy()
    gtf.random.set_seed(7)
    np.testing.assert_array_equal(c, gtf.random.normal([16]).numpy())


def _dropout_masks(tf):
    tf.random.set_seed(0)
    x = tf.ones([4, 16])
    d1, d2 = tf.keras.layers.Dropout(0.5, seed=1), tf.keras.layers.Dropout(0.5, seed=1)
    a1, b1 = d1(x, training=True).numpy(), d2(x, training=True).numpy()
    a2 = d1(x, training=True).numpy()
    tf.random.set_seed(99)
    d3 = tf.keras.layers.Dropout(0.5, seed=1)
    c1 = d3(x, training=True).numpy()
    kept = float((a1 != 0).mean())
    return (
        np.array_equal(a1, b1),
        np.array_equal(a1, a2),
        np.array_equal(a1, c1),
        set(np.unique(a1)) <= {0.0, 2.0},
        kept,
    )


def test_seeded_dropout_layers_draw_from_their_own_seed_generators():
    same_first, same_next, same_after_reseed, values, kept = _dropout_masks(gtf)
    assert (same_first, same_next, same_after_reseed, values) == (True, False, True, True)
    assert 0.2 < kept < 0.8


def test_seeded_dropout_matches_keras():
    tf = pytest.importorskip("tensorflow")
    pytest.importorskip("keras")
    assert _dropout_masks(gtf)[:4] == _dropout_masks(tf)[:4]


def test_copy_of_a_tf_variable_is_the_variable_and_deepcopy_a_new_one():
    v = gtf.Variable([1.0, 2.0])
    assert copy.copy(v) is v
    deep = copy.deepcopy(v)
    deep.assign([5.0, 5.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(deep.numpy(), [5.0, 5.0])
