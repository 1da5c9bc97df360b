"""``v += x`` on a ``tf.Variable`` raises (TensorFlow refuses it: the name would be rebound to a new tensor
and the Variable left unchanged); on a Keras variable it makes a new tensor, as in Keras. Against
TensorFlow and Keras (skipped without them) and by hand."""

import re

import numpy as np
import pytest

import gradkit.tf as gtf

_AUGMENTED = {
    "+=": ("assign_add", lambda v, x: v + x),
    "-=": ("assign_sub", lambda v, x: v - x),
    "*=": ("variable * value", lambda v, x: v * x),
    "/=": ("variable / value", lambda v, x: v / x),
    "**=": ("variable ** value", lambda v, x: v**x),
}


def _augment(v, operator, x):
    scope = {"v": v, "x": x}
    exec(f"v {operator} x", scope)
    return scope["v"]


@pytest.mark.parametrize("operator", sorted(_AUGMENTED))
def test_augmented_assignment_on_a_variable_raises_and_leaves_it_unchanged(operator):
    v = gtf.Variable([1.0, 2.0], name="w")
    said, instead = re.escape(operator), re.escape(_AUGMENTED[operator][0])
    with pytest.raises(RuntimeError, match=rf"\[gradkit\] `variable {said} value`.*Use `.*{instead}"):
        _augment(v, operator, gtf.constant(2.0))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("operator", sorted(_AUGMENTED))
def test_tensorflow_refuses_the_same_augmented_assignments(operator):
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(RuntimeError, match="not supported"):
        _augment(tf.Variable([1.0, 2.0]), operator, tf.constant(2.0))


def test_floor_division_rebinds_to_a_tensor_as_in_tensorflow():
    v = gtf.Variable([3.0, 7.0])
    out = _augment(v, "//=", 2.0)
    assert not isinstance(out, gtf.Variable)
    np.testing.assert_array_equal(out.numpy(), [1.0, 3.0])  # by hand
    np.testing.assert_array_equal(v.numpy(), [3.0, 7.0])


@pytest.mark.parametrize("operator", sorted(_AUGMENTED))
def test_a_keras_variable_and_a_layer_weight_rebind_to_a_new_tensor(operator):
    layer = gtf.keras.layers.Dense(2, kernel_initializer="ones")
    layer.build((None, 1))
    for variable in (gtf.keras.Variable(np.array([1.0, 2.0], np.float32)), layer.kernel):
        before = variable.numpy()
        out = _augment(variable, operator, 2.0)
        assert not isinstance(out, gtf.Variable)
        np.testing.assert_allclose(out.numpy(), _AUGMENTED[operator][1](before, 2.0))
        np.testing.assert_array_equal(variable.numpy(), before)


def test_keras_rebinds_a_keras_variable_too():
    pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    variable = keras.Variable(np.array([1.0, 2.0], np.float32))
    out = _augment(variable, "+=", 2.0)
    assert not isinstance(out, keras.Variable)
    np.testing.assert_allclose(np.asarray(out), [3.0, 4.0])


def test_a_metric_state_variable_rebinds_as_in_keras():
    metric = gtf.keras.metrics.Mean()
    metric.update_state(2.0)
    total = metric.variables[0]
    out = _augment(total, "+=", 1.0)
    np.testing.assert_allclose(out.numpy(), 3.0)  # by hand: the total 2 plus 1
    np.testing.assert_allclose(metric.result().numpy(), 2.0)  # the metric's state is unchanged
