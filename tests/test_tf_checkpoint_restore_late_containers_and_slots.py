"""Checkpoint and optimizer edges, against the values written and TensorFlow/Keras where installed.

- A Variable appended to a module's list, stored in its dict, or set on a built Keras layer after
  ``restore`` starts from the checkpoint at once (TensorFlow's trackable lists and dicts), and is not
  overwritten by it later.
- A ``tf.function`` returns a Variable's slice (``w[0]``) as a tensor.
- ``optimizer.variables`` lists the slots in Keras' groups: Adam's amsgrad maxima after every
  momentum and velocity, RMSprop's velocities, then momentums, then average gradients.
"""

import numpy as np
import pytest

import gradkit.tf as gtf


def _late_containers(tf, directory):
    saved = tf.Module()
    saved.lst = [tf.Variable(3.0)]
    saved.dct = {"a": tf.Variable(5.0)}
    path = tf.train.Checkpoint(m=saved).save(f"{directory}/c")
    fresh = tf.Module()
    tf.train.Checkpoint(m=fresh).restore(path)
    fresh.lst = []
    fresh.dct = {}
    fresh.lst.append(tf.Variable(0.0))
    fresh.dct["a"] = tf.Variable(0.0)
    restored = [float(fresh.lst[0].numpy()), float(fresh.dct["a"].numpy())]
    fresh.lst[0].assign(100.0)
    fresh.dct["a"].assign(200.0)
    fresh.other = tf.Variable(1.0)  # a later attribute must not bring the old values back
    return restored + [float(fresh.lst[0].numpy()), float(fresh.dct["a"].numpy())]


def test_variables_put_in_lists_and_dicts_after_restore(tmp_path):
    got = _late_containers(gtf, tmp_path / "gk")
    assert got == [3.0, 5.0, 100.0, 200.0]
    tf = pytest.importorskip("tensorflow")
    assert got == _late_containers(tf, tmp_path / "tf")


def test_a_variable_set_on_a_built_layer_after_restore(tmp_path):
    layer = gtf.keras.layers.Dense(2)
    layer.build((None, 2))
    layer.extra = gtf.Variable(5.0)
    path = gtf.train.Checkpoint(l=layer).save(str(tmp_path / "c"))
    other = gtf.keras.layers.Dense(2)
    other.build((None, 2))
    status = gtf.train.Checkpoint(l=other).restore(path)
    other.extra = gtf.Variable(0.0)
    assert float(other.extra.numpy()) == 5.0
    np.testing.assert_array_equal(other.kernel.numpy(), layer.kernel.numpy())
    status.assert_consumed()


def test_tf_function_returns_variable_slices():
    w = gtf.Variable([[1.0, 2.0], [3.0, 4.0]])
    first = gtf.function(lambda: w[0])
    parts = gtf.function(lambda: (w[0:1], {"a": w[1]}))
    np.testing.assert_array_equal(first(), [1.0, 2.0])
    top, rows = parts()
    np.testing.assert_array_equal(top, [[1.0, 2.0]])
    np.testing.assert_array_equal(rows["a"], [3.0, 4.0])
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(first() * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, w), [[3.0, 3.0], [0.0, 0.0]])


# The step counter and the rate, then the slots in Keras' groups, each listing the (2, 3) Variable's
# slots, then the (3,) one's: Adam's (momentum, velocity) per Variable, then its amsgrad maxima;
# RMSprop's velocities, then momentums, then average gradients.
MAKERS = {
    "adam_amsgrad": (lambda k: k.optimizers.Adam(amsgrad=True), [(), (), (2, 3), (2, 3), (3,), (3,), (2, 3), (3,)]),
    "rmsprop_momentum_centered": (
        lambda k: k.optimizers.RMSprop(momentum=0.5, centered=True),
        [(), (), (2, 3), (3,), (2, 3), (3,), (2, 3), (3,)],
    ),
}


def _slot_shapes(tf, make):
    variables = [tf.Variable(np.ones((2, 3), np.float32)), tf.Variable(np.ones(3, np.float32))]
    optimizer = make(tf.keras)
    optimizer.apply_gradients(zip([tf.ones((2, 3)), tf.ones(3)], variables))
    return [tuple(v.shape) for v in optimizer.variables]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_optimizer_variables_in_keras_groups(name):
    make, want = MAKERS[name]
    got = _slot_shapes(gtf, make)
    assert got == want
    tf = pytest.importorskip("tensorflow")
    assert got == _slot_shapes(tf, make)
