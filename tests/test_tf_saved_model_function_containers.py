"""``tf.function``s held in a module's list or dict attribute are saved and come back in the loaded
object's list or dict, as TensorFlow saves them. Against TensorFlow (skipped without it) and by hand."""

import pytest

import gradkit.tf as gtf


def _round_trip(tf, path):
    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(2.0)
            self.fns = [tf.function(lambda x: x * self.v, input_signature=[tf.TensorSpec([])])]
            self.table = {"double": tf.function(lambda x: x * 2.0, input_signature=[tf.TensorSpec([])])}

    module = Module()
    tf.saved_model.save(module, str(path))
    module.v.assign(5.0)  # after the save: the loaded function reads the saved value
    loaded = tf.saved_model.load(str(path))
    x = tf.constant(3.0)
    return float(loaded.fns[0](x)), float(loaded.table["double"](x)), float(loaded.v.numpy())


def test_functions_in_lists_and_dicts_are_saved(tmp_path):
    assert _round_trip(gtf, tmp_path) == (6.0, 6.0, 2.0)  # 3 * 2, 3 * 2, the saved v


def test_matches_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    assert _round_trip(gtf, tmp_path / "gk") == _round_trip(tf, tmp_path / "tf")
