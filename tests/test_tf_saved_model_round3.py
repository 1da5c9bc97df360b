"""``tf.saved_model`` and ``tf.train.Checkpoint`` cases from a third differential hunt: the one
function of an object whose outputs cannot be a signature is saved without a ``serving_default``
(as TensorFlow skips it), an object ``tf.saved_model.load`` made goes into a ``tf.train.Checkpoint``,
and ``tf.Module``'s default names split words as TensorFlow's (``MLPBlock`` is ``mlp_block``).
Each program runs on gradkit and, where it is installed, on TensorFlow."""

import numpy as np
from _two_sides import both


def _nested_outputs(tf, path):
    class Nested(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)

        @tf.function(input_signature=[tf.TensorSpec([2])])
        def f(self, x):
            return {"a": (x, 2.0 * x), "b": [3.0 * x]}

        @tf.function(input_signature=[tf.TensorSpec([])])
        def set(self, x):
            self.v.assign(x)

    tf.saved_model.save(Nested(), str(path / "nested"))
    loaded = tf.saved_model.load(str(path / "nested"))
    out = loaded.f(tf.ones([2]))
    return list(loaded.signatures), np.asarray(out["a"][1]).tolist(), np.asarray(out["b"][0]).tolist()


def test_a_function_whose_outputs_no_signature_takes_is_saved_without_one(tmp_path):
    got, want = both(_nested_outputs, tmp_path)
    assert got == ([], [2.0, 2.0], [3.0, 3.0])
    assert want is None or got == want


def _single_setter(tf, path):
    class Setter(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)

        @tf.function(input_signature=[tf.TensorSpec([])])
        def set(self, x):
            self.v.assign(x)

    tf.saved_model.save(Setter(), str(path / "setter"))
    loaded = tf.saved_model.load(str(path / "setter"))
    result = loaded.set(tf.constant(4.0))
    return list(loaded.signatures), result, float(loaded.v)


def test_a_function_returning_none_is_saved_without_a_signature(tmp_path):
    got, want = both(_single_setter, tmp_path)
    assert got == ([], None, 4.0)
    assert want is None or got == want


def _checkpoint_a_loaded_object(tf, path):
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([1.0, 2.0])

        @tf.function(input_signature=[tf.TensorSpec([2])])
        def f(self, x):
            return x * self.w

    tf.saved_model.save(M(), str(path / "sm"))
    loaded = tf.saved_model.load(str(path / "sm"))
    loaded.w.assign([5.0, 6.0])
    saved = tf.train.Checkpoint(model=loaded).save(str(path / "ck" / "c"))
    again = tf.saved_model.load(str(path / "sm"))
    tf.train.Checkpoint(model=again).restore(saved).assert_consumed()
    keys = sorted(name for name, _ in tf.train.list_variables(saved) if not name.startswith("_"))
    return np.asarray(again.f(tf.ones([2]))).tolist(), keys


def test_a_loaded_object_is_checkpointed_and_restored(tmp_path):
    got, want = both(_checkpoint_a_loaded_object, tmp_path)
    assert got[0] == [5.0, 6.0]
    assert "model/w/.ATTRIBUTES/VARIABLE_VALUE" in got[1]
    assert want is None or got == want


def _default_names(tf, path):
    names = ["MLPBlock", "HTTPServer", "Conv2DTranspose", "MyModule", "ResNet50V2", "getHTTPResponse"]
    modules = [type(name, (tf.Module,), {})() for name in names]
    with modules[0].name_scope:
        variable = tf.Variable(1.0, name="w")
    return [m.name for m in modules], variable.name


def test_module_default_names_split_words_as_tensorflow(tmp_path):
    got, want = both(_default_names, tmp_path)
    assert got[0][:3] == ["mlp_block", "http_server", "conv2_d_transpose"] and got[1] == "mlp_block/w:0"
    assert want is None or got == want
