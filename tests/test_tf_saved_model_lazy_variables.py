"""A ``tf.function`` with an ``input_signature`` that creates its Variables on its first call (a
layer built lazily) makes them at ``get_concrete_function()`` (None dimensions too) and at
``tf.saved_model.save`` of a module never called, as TensorFlow traces it there; the save holds
them. Against TensorFlow (skipped without it) and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _lazy_module(tf):
    class Lazy(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = None
            self.calls = tf.Variable(0)

        @tf.function(input_signature=[tf.TensorSpec([None, 3])])
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(tf.ones([3, 2]))
            self.calls.assign_add(1)
            return tf.matmul(x, self.w)

    return Lazy()


def _concrete(tf):
    module = _lazy_module(tf)
    concrete = module.__call__.get_concrete_function()
    spec = concrete.structured_outputs
    return module.w is not None, int(module.calls.numpy()), (tuple(spec.shape), spec.dtype.name)


def _saved(tf, path):
    module = _lazy_module(tf)
    tf.saved_model.save(module, str(path))
    loaded = tf.saved_model.load(str(path))
    out = loaded(tf.ones([2, 3])).numpy()
    return module.w is not None, int(module.calls.numpy()), out, sorted(tuple(v.shape) for v in module.variables)


def test_get_concrete_function_makes_first_call_variables_without_running_the_function():
    # By hand: the Variable is made, the assignment is only traced (calls stays 0), x @ ones(3, 2).
    assert _concrete(gtf) == (True, 0, ((None, 2), "float32"))


def test_saving_a_module_never_called_saves_its_lazy_variables(tmp_path):
    made, calls, out, shapes = _saved(gtf, tmp_path / "gk")
    assert (made, calls, shapes) == (True, 0, [(), (3, 2)])
    np.testing.assert_array_equal(out, np.full((2, 2), 3.0))


def test_matches_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    assert _concrete(gtf) == _concrete(tf)
    ours, theirs = _saved(gtf, tmp_path / "gk"), _saved(tf, tmp_path / "tf")
    assert ours[:2] == theirs[:2] and ours[3] == theirs[3]
    np.testing.assert_array_equal(ours[2], theirs[2])
