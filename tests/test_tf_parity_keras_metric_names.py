"""An unnamed metric takes the next free name of its class, as Keras 3's auto_name gives it
('auc', 'auc_1', ...; counted with the layers' names and restarted by clear_session), so History
keys of a second model are Keras'. Oracle: Keras 3 itself, and the names by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _names(keras):
    keras.backend.clear_session()
    made = [keras.metrics.AUC(), keras.metrics.AUC(), keras.metrics.Precision(), keras.metrics.MeanIoU(3)]
    made += [keras.metrics.Precision(name="p"), keras.metrics.Mean(), keras.metrics.Mean()]
    return [m.name for m in made]


def _history_keys(keras):
    keras.backend.clear_session()
    keras.metrics.AUC()  # an earlier metric of the class takes 'auc'
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile("sgd", "binary_crossentropy", metrics=[keras.metrics.AUC()])
    x, y = np.ones((4, 3), np.float32), np.array([0.0, 1.0, 0.0, 1.0], np.float32)
    return sorted(model.fit(x, y, epochs=1, verbose=0).history)


def test_unnamed_metrics_are_numbered_per_class():
    got = _names(gtf.keras)
    assert got == ["auc", "auc_1", "precision", "mean_io_u", "p", "mean", "mean"]
    keras = pytest.importorskip("keras")
    assert got == _names(keras)


def test_history_keys_follow_the_metric_names():
    got = _history_keys(gtf.keras)
    assert got == ["auc_1", "loss"]
    keras = pytest.importorskip("keras")
    assert got == _history_keys(keras)


def test_metric_state_variables_have_keras_paths():
    def paths(module):
        return [
            [v.path for v in module.keras.metrics.Mean(name="mm").variables],
            [v.path for v in module.keras.metrics.AUC(name="auc_named").variables],
        ]

    assert paths(gtf)[0] == ["mm/total", "mm/count"]  # by hand: the metric's name, then the variable's
    tf = pytest.importorskip("tensorflow")
    assert paths(gtf) == paths(tf)
