"""Saving and restoring where an object is reachable twice, and a loaded layer whose computation
reads values made from its weights, against TensorFlow 2.21 / Keras 3 where they are installed
and hand-derived values otherwise: a layer saved as ``Checkpoint(model=m, encoder=m.layers[0])``
restores into ``Checkpoint(model=m2)`` (TensorFlow keeps every edge of its object graph); an
adapted ``Normalization`` normalizes with its loaded mean and variance after ``load_weights``
and ``load_model``; ``Checkpoint(save_counter=...)`` is refused, as TensorFlow refuses it."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _model(tf, init):
    return tf.keras.Sequential(
        [
            tf.keras.Input((2,)),
            tf.keras.layers.Dense(3, kernel_initializer=init),
            tf.keras.layers.Dense(1, kernel_initializer=init),
        ]
    )


def test_an_object_saved_under_two_paths_restores_through_either(tmp_path):
    model = _model(gtf, "ones")
    path = gtf.train.Checkpoint(model=model, encoder=model.layers[0]).save(str(tmp_path / "ck"))
    restored = _model(gtf, "zeros")
    status = gtf.train.Checkpoint(model=restored).restore(path)
    status.assert_existing_objects_matched()
    for got, want in zip(restored.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)
    v = gtf.Variable([1.0, 2.0])
    path = gtf.train.Checkpoint(a=v, b=v).save(str(tmp_path / "shared"))
    x = gtf.Variable([0.0, 0.0])
    gtf.train.Checkpoint(b=x).restore(path)
    assert x.numpy().tolist() == [1.0, 2.0]


def _normalization_model(tf):
    return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Normalization()])


@pytest.mark.parametrize("how", ["load_weights", "load_model"])
def test_an_adapted_normalization_normalizes_with_what_it_loaded(tmp_path, how):
    model = _normalization_model(gtf)
    model.layers[0].adapt(np.array([[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]], np.float32))  # mean 1,2,3; variance 1,4,9
    x = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]], np.float32)
    expected = (x - [1.0, 2.0, 3.0]) / np.sqrt([1.0, 4.0, 9.0])
    if how == "load_weights":
        model.save_weights(str(tmp_path / "n.weights.h5"))
        loaded = _normalization_model(gtf)
        loaded.load_weights(str(tmp_path / "n.weights.h5"))
    else:
        model.save(str(tmp_path / "n.keras"))
        loaded = gtf.keras.models.load_model(str(tmp_path / "n.keras"))
    np.testing.assert_allclose(np.asarray(loaded(x)), expected, rtol=1e-6)


def test_a_keras_written_normalization_file_loads_into_gradkit(tmp_path):
    tf_real = pytest.importorskip("tensorflow")
    model = _normalization_model(tf_real)
    model.layers[0].adapt(np.array([[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]], np.float32))
    model.save_weights(str(tmp_path / "k.weights.h5"))
    loaded = _normalization_model(gtf)
    loaded.load_weights(str(tmp_path / "k.weights.h5"))
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    np.testing.assert_allclose(np.asarray(loaded(x)), np.asarray(model(x)), atol=1e-6)


def test_save_counter_is_not_a_name_a_checkpoint_takes():
    with pytest.raises(AttributeError, match=r"\[gradkit\] .*save_counter"):
        gtf.train.Checkpoint(v=gtf.Variable(1.0), save_counter=gtf.Variable(7))
