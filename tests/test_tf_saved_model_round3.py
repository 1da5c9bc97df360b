"""``tf.saved_model`` and ``tf.train.Checkpoint`` edge cases: the one function of an object whose
outputs cannot be a signature is saved without a ``serving_default`` (as TensorFlow skips it), an
object ``tf.saved_model.load`` made goes into a ``tf.train.Checkpoint``, ``tf.Module``'s default
names split words as TensorFlow's (``MLPBlock`` is ``mlp_block``), a function with no reverse
derivative is saved to run forward, a tf.random.Generator the object holds is saved with it, a loop
over rows of unknown count is refused clearly, and loading a directory gradkit did not write says
what it is.
Each program runs on gradkit and, where it is installed and it applies, on TensorFlow."""

import numpy as np
import pytest
from _two_sides import both

import gradkit.tf as gtf


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


def _loop_of_tensor_length(tf, path):
    class Loop(tf.Module):
        def __init__(self):
            super().__init__()
            self.k = tf.Variable(1.5)

        @tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.float32)])
        def loop(self, n, x):
            return tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * self.k + 1.0), (0, x))[1]

    tf.saved_model.save(Loop(), str(path / "loop"))
    return tf.saved_model.load(str(path / "loop"))


def test_a_loop_whose_length_is_a_tensor_is_saved_to_run_forward(tmp_path):
    loaded = _loop_of_tensor_length(gtf, tmp_path)
    # y -> 1.5 y + 1 three times from 2: 4, 7, 11.5.
    assert float(loaded.loop(3, 2.0)) == 11.5
    x = gtf.constant(2.0)
    with gtf.GradientTape() as tape:
        tape.watch(x)
        y = loaded.loop(3, x)
    with pytest.raises(NotImplementedError, match=r"\[gradkit\] a gradient through the loaded function 'loop'"):
        tape.gradient(y, x)


def test_loading_what_gradkit_did_not_save_says_what_it_is(tmp_path):
    with pytest.raises(OSError, match=r"\[gradkit\] SavedModel file does not exist at"):
        gtf.saved_model.load(str(tmp_path / "missing"))
    (tmp_path / "tf").mkdir()
    (tmp_path / "tf" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(OSError, match=r"holds a SavedModel that TensorFlow wrote"):
        gtf.saved_model.load(str(tmp_path / "tf"))


def _generator_module(tf, path):
    class Noisy(tf.Module):
        def __init__(self):
            super().__init__()
            self.g = tf.random.Generator.from_seed(1)

        @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
        def noisy(self, x):
            return x + self.g.normal([3])

    tf.saved_model.save(Noisy(), str(path))
    loaded = tf.saved_model.load(str(path))
    first, second = np.asarray(loaded.noisy(tf.zeros([3]))), np.asarray(loaded.noisy(tf.zeros([3])))
    return bool((first != second).all()), first.shape


def test_a_random_generator_the_module_holds_is_saved_with_it(tmp_path):
    # Each call of the loaded function draws afresh: it advances the saved generator's state.
    got, theirs = both(_generator_module, tmp_path)
    assert got == (True, (3,))
    assert theirs in (None, got)


@pytest.mark.parametrize("loop", ["map_fn", "vectorized_map", "scan"])
def test_a_loop_over_rows_of_unknown_count_is_refused_when_saved(tmp_path, loop):
    class Rows(gtf.Module):
        @gtf.function(input_signature=[gtf.TensorSpec([None, 4], gtf.float32)])
        def rows(self, x):
            if loop == "scan":
                return gtf.scan(lambda acc, row: acc + row, x)
            return getattr(gtf, loop)(gtf.reduce_sum, x)

    rows = Rows()
    np.testing.assert_allclose(rows.rows(np.ones((3, 4), np.float32)).numpy()[-1], 3.0 if loop == "scan" else 4.0)
    with pytest.raises(NotImplementedError, match=rf"\[gradkit\] tf.{loop} over an axis of unknown size"):
        gtf.saved_model.save(rows, str(tmp_path / "rows"))
    assert not (tmp_path / "rows").exists() or not any((tmp_path / "rows").iterdir())
