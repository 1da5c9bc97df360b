"""``tf.keras.backend``'s legacy functions (``K.int_shape``, ``K.get_value``/``K.set_value``,
``K.mean``, ``K.clip``, ...): hand-computed values, and Keras' own functions where TensorFlow is
installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf

K = gtf.keras.backend
X = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)

UNARY = (
    "int_shape get_value count_params cast_to_floatx ndim dtype eval mean std var sum max min prod any all "
    "sqrt square abs exp sign round sigmoid tanh softplus softsign elu sin cos transpose ones_like zeros_like "
    "argmax argmin expand_dims flatten batch_flatten softmax relu l2_normalize"
).split()


def test_hand_computed_values():
    x = gtf.constant(X)
    assert K.int_shape(x) == (2, 3) and K.ndim(x) == 2 and K.count_params(x) == 6 and K.dtype(x) == "float32"
    np.testing.assert_allclose(K.mean(x, axis=1, keepdims=True).numpy(), [[2 / 3], [1.0]], rtol=1e-6)
    np.testing.assert_allclose(K.sqrt(x).numpy(), np.sqrt(np.maximum(X, 0)))  # negatives count as 0
    np.testing.assert_allclose(K.clip(x, 2.0, 0.0).numpy(), np.full_like(X, 2.0))  # max below min: the min
    np.testing.assert_allclose(K.clip(x, None, 1.0).numpy(), np.minimum(X, 1.0))
    np.testing.assert_allclose(K.dot(x, gtf.constant(X.T)).numpy(), X @ X.T)
    np.testing.assert_allclose(K.batch_flatten(gtf.ones([2, 3, 4])).numpy(), np.ones((2, 12)))
    assert K.mean(gtf.constant([True, False, True, True])).numpy() == pytest.approx(0.75)


def test_get_and_set_value_of_a_variable():
    v = gtf.Variable([1.0, 2.0])
    K.set_value(v, [3, 4])
    assert K.get_value(v).tolist() == [3.0, 4.0]
    K.batch_set_value([(v, [5.0, 6.0])])
    assert K.batch_get_value([v])[0].tolist() == [5.0, 6.0]
    assert K.get_value(1.5) == 1.5


def test_keras_tensors_and_the_backend_name():
    assert K.is_keras_tensor(gtf.keras.Input((3,))) and not K.is_keras_tensor(gtf.constant(1.0))
    assert gtf.keras.config.backend() == K.backend() == "tensorflow"
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        K.softmax(gtf.constant([1.0, 2.0]))


@pytest.mark.parametrize("name", UNARY)
def test_against_keras(name):
    tf = pytest.importorskip("tensorflow")
    theirs = getattr(tf.keras.backend, name)(tf.constant(X))
    ours = getattr(K, name)(gtf.constant(X))
    theirs, ours = (np.asarray(t.numpy() if hasattr(t, "numpy") else t) for t in (theirs, ours))
    if theirs.dtype.kind in "US":
        assert ours.tolist() == theirs.tolist()
    else:
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours.astype(float), theirs.astype(float), rtol=1e-6, atol=1e-7)
