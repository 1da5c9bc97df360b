"""A checkpoint restored before a ``tf.function`` creates its Variables (a module built lazily on
its first call) gives them the saved values at that first call, as TensorFlow restores them in
``init_scope``; the initial value the function computes does not overwrite them. Oracles: the
values saved, and TensorFlow."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _lazy_module(tf, initial):
    class Lazy(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(initial(tf))
            return self.v * x

    return Lazy()


INITIALS = {
    "op": lambda tf: tf.zeros([2]),
    "random": lambda tf: tf.random.normal([2]),
    "numpy": lambda tf: np.zeros(2, np.float32),
}


def _restored_calls(tf, initial, directory):
    saved = _lazy_module(tf, initial)
    saved(tf.ones([2]))
    saved.v.assign([3.0, 4.0])
    path = tf.train.Checkpoint(m=saved).save(str(directory / "ckpt"))
    fresh = _lazy_module(tf, initial)
    tf.train.Checkpoint(m=fresh).restore(path)
    return [fresh(tf.ones([2])).numpy() for _ in range(2)], fresh.v.numpy()


@pytest.mark.parametrize("name", sorted(INITIALS))
def test_the_first_call_sees_the_restored_values(name, tmp_path):
    calls, final = _restored_calls(gtf, INITIALS[name], tmp_path)
    for out in calls:
        np.testing.assert_array_equal(out, [3.0, 4.0])
    np.testing.assert_array_equal(final, [3.0, 4.0])


def test_matches_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    (tmp_path / "tf").mkdir()
    (tmp_path / "gk").mkdir()
    want = _restored_calls(tf, INITIALS["op"], tmp_path / "tf")
    got = _restored_calls(gtf, INITIALS["op"], tmp_path / "gk")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
