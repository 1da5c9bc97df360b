"""``tf.train.Checkpoint`` takes a list or dict whatever it holds (an empty history list,
numbers), as TensorFlow wraps them; only the Variables are saved. Compared with TensorFlow's
saved keys where it is installed."""

import os

import pytest

import gradkit.tf as gtf


def _keys(tf, path, value):
    checkpoint = tf.train.Checkpoint(hist=value, step=tf.Variable(1))
    saved = checkpoint.save(os.path.join(str(path), "ck"))
    restored = tf.train.Checkpoint(hist=value, step=tf.Variable(0))
    restored.restore(saved)
    keys = sorted(k for k, _ in tf.train.list_variables(saved) if k != "_CHECKPOINTABLE_OBJECT_GRAPH")
    return keys, int(restored.step.numpy())


@pytest.mark.parametrize("value", [[], {}, [1, 2]], ids=["empty_list", "empty_dict", "numbers"])
def test_containers_of_no_variables_are_taken(tmp_path, value):
    got = _keys(gtf, tmp_path / "gk", value)
    assert got == (["save_counter/.ATTRIBUTES/VARIABLE_VALUE", "step/.ATTRIBUTES/VARIABLE_VALUE"], 1)
    tf = pytest.importorskip("tensorflow")
    assert got == _keys(tf, tmp_path / "tf", value)


def test_a_number_and_an_empty_tuple_are_still_refused():
    for value in (3, ()):  # as TensorFlow refuses them
        with pytest.raises(ValueError, match="trackable"):
            gtf.train.Checkpoint(step=value)
