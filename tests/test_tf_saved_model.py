"""``tf.saved_model`` round trips: the loaded functions compute what the saved ones did
(oracles: pure-JAX rewrites), and what cannot be saved raises a clear error."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as tf
from gradkit._errors import GradkitValueError

W = np.array([1.0, 2.0, 3.0], np.float32)


def test_two_arguments_with_unknown_dimensions_save_and_load(tmp_path):
    # Two TensorSpec([None]) arguments: each unknown dimension must come from one export scope,
    # and a function that adds them needs them equal (a shared leading dimension).
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32)])
        def add(self, x, y):
            return x * y + 1.0

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None], tf.float32)])
        def loss(self, x, y):
            return tf.reduce_mean((tf.reduce_sum(x, axis=1) - y) ** 2)

    tf.saved_model.save(M(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x, y = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0, 6.0], np.float32)
    np.testing.assert_allclose(np.asarray(loaded.add(x, y)), x * y + 1.0)
    xs = np.arange(8, dtype=np.float32).reshape(4, 2)
    ys = np.array([1.0, 0.0, 2.0, -1.0], np.float32)
    expected = jnp.mean((jnp.sum(xs, axis=1) - ys) ** 2)
    np.testing.assert_allclose(np.asarray(loaded.loss(xs, ys)), expected, rtol=1e-6)


def test_unrelated_unknown_dimensions_the_function_combines_raise_a_clear_error(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2, None], tf.float32), tf.TensorSpec([2, None], tf.float32)])
        def add(self, x, y):
            return x + y

    with pytest.raises(GradkitValueError, match=r"\[gradkit\] saved_model.save could not export add"):
        tf.saved_model.save(M(), str(tmp_path))


def test_a_tape_inside_a_saved_function_differentiates_its_arguments(tmp_path):
    # The traced arguments are tensors inside the function, as in tf.function, so a tape
    # watching one records its Python operators: the gradient is not None.
    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable(W)

        @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
        def grad_inside(self, x):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(x * x * self.w)
            return t.gradient(y, x)

    tf.saved_model.save(M(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = np.array([1.0, -2.0, 0.5], np.float32)
    expected = jax.grad(lambda x: jnp.sum(x * x * W))(x)
    np.testing.assert_allclose(np.asarray(loaded.grad_inside(x)), expected)


def test_a_loaded_function_assigns_the_loaded_variable(tmp_path):
    # TensorFlow saves the Variables a function assigns with it: each call of the loaded
    # function bumps the loaded Variable, and the saved object's stays as it was.
    class M(tf.Module):
        def __init__(self):
            self.count = tf.Variable(1.0)

        @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
        def bump(self, x):
            self.count.assign_add(tf.reduce_sum(x))
            return self.count * 2.0

    m = M()
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert [float(loaded.bump(x)), float(loaded.bump(x))] == [(1.0 + 6.0) * 2.0, (1.0 + 12.0) * 2.0]
    assert float(loaded.count.numpy()) == 13.0 and float(m.count.numpy()) == 1.0


def test_a_function_that_assigns_an_untracked_variable_is_refused_and_writes_nothing(tmp_path):
    outside = tf.Variable(0.0)  # not an attribute of the module: nothing would restore it

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
        def bump(self, x):
            outside.assign_add(tf.reduce_sum(x))
            return outside * 1.0

    with pytest.raises(GradkitValueError, match=r"\[gradkit\] saved_model.save cannot save bump: it assigns"):
        tf.saved_model.save(M(), str(tmp_path / "out"))
    assert float(outside.numpy()) == 0.0
    assert not (tmp_path / "out").exists()


def test_tf_functions_stored_on_the_instance_are_saved(tmp_path):
    # TensorFlow saves a tf.function kept as an instance attribute (of a bound method or a
    # lambda) as it saves a decorated method; gradkit skipped them silently.
    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable(W)
            self.scaled = tf.function(self._scaled, input_signature=[tf.TensorSpec([3], tf.float32)])
            self.tripled = tf.function(lambda x: x * 3.0, input_signature=[tf.TensorSpec([3], tf.float32)])

        def _scaled(self, x):
            return self.w * x

        @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
        def shifted(self, x):
            return x + 1.0

    tf.saved_model.save(M(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_allclose(np.asarray(loaded.scaled(x)), W * x)
    np.testing.assert_allclose(np.asarray(loaded.tripled(x)), x * 3.0)
    np.testing.assert_allclose(np.asarray(loaded.shifted(x)), x + 1.0)
    xv = tf.Variable(x)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(loaded.scaled(xv) ** 2)
    np.testing.assert_allclose(np.asarray(t.gradient(y, xv)), jax.grad(lambda x: jnp.sum((W * x) ** 2))(x))


def test_loaded_functions_take_their_arguments_by_name_and_refuse_a_wrong_count(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([3], tf.float32), tf.TensorSpec([], tf.float32)])
        def scale(self, x, factor):
            return x * factor

    tf.saved_model.save(M(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_allclose(np.asarray(loaded.scale(x, factor=2.0)), x * 2.0)
    np.testing.assert_allclose(np.asarray(loaded.scale(factor=3.0, x=x)), x * 3.0)
    # An extra argument was dropped silently (zip of the arguments with the signature).
    with pytest.raises(TypeError, match=r"\[gradkit\] the loaded function scale takes 2 argument"):
        loaded.scale(x, 2.0, 5.0)
    with pytest.raises(TypeError, match=r"\[gradkit\] the loaded function scale got an unexpected"):
        loaded.scale(x, scale=2.0)


def test_a_saved_function_that_draws_random_numbers_draws_afresh_at_each_call(tmp_path):
    # TensorFlow's loaded function runs its random ops at each call: two calls differ (the
    # saved one drew once when exported and gave that draw forever), a dropout mask too; a
    # tape through the loaded dropout gets 1 / (1 - rate) where kept and 0 where dropped
    # (hand derivation); and the draws repeat after set_seed, as gradkit's tf.function's do.
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
        def noisy(self, x):
            return x + tf.random.normal([4])

        @tf.function(input_signature=[tf.TensorSpec([1000], tf.float32)])
        def drop(self, x):
            return tf.nn.dropout(x, 0.5)

    tf.saved_model.save(M(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    zeros = np.zeros(4, np.float32)
    a, b = np.asarray(loaded.noisy(zeros)), np.asarray(loaded.noisy(zeros))
    assert not np.array_equal(a, b)
    ones = tf.Variable(np.ones(1000, np.float32))
    with tf.GradientTape() as tape:
        y = loaded.drop(ones)
        total = tf.reduce_sum(y)
    g = np.asarray(tape.gradient(total, ones))
    kept = np.asarray(y) != 0
    assert 300 < kept.sum() < 700
    np.testing.assert_allclose(g, np.where(kept, 2.0, 0.0))
    assert not np.array_equal(kept, np.asarray(loaded.drop(ones)) != 0)
    tf.random.set_seed(5)
    first = np.asarray(loaded.noisy(zeros))
    tf.random.set_seed(5)
    np.testing.assert_array_equal(np.asarray(loaded.noisy(zeros)), first)


def test_a_loaded_function_refuses_a_tensor_of_another_dtype(tmp_path):
    class Doubler(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def f(self, k):
            return k * 2

    tf.saved_model.save(Doubler(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    with pytest.raises(TypeError, match=r"\[gradkit\].*dtype float32.*int32"):
        loaded.f(tf.constant([1.7, 2.9]))  # TensorFlow refuses it; a cast would truncate silently
    np.testing.assert_array_equal(loaded.f(tf.constant([1, 2])).numpy(), [2, 4])
    np.testing.assert_array_equal(loaded.f([3, 4]).numpy(), [6, 8])  # Python values take the signature's dtype


def test_any_shape_signature_is_saved_for_scalars_and_says_so(tmp_path):
    module = tf.Module()
    module.square = tf.function(lambda x: x * x, input_signature=[tf.TensorSpec(None)])
    tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert float(loaded.square(tf.constant(3.0)).numpy()) == 9.0
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\] .*TensorSpec\(shape=None\).*TensorSpec\(\[None\]\)"):
        loaded.square(tf.constant([1.0, 2.0]))
