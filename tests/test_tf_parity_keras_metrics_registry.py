"""``tf.keras.metrics.get``/``serialize``/``deserialize`` against real Keras: the same names
known, the same classes made, the same dicts written, and a round trip that keeps the config."""

import numpy as np
import pytest

import gradkit.tf as gtf

MADE = {
    "AUC": lambda m: m.AUC(num_thresholds=50, curve="PR"),
    "Precision": lambda m: m.Precision(thresholds=[0.2, 0.6], class_id=1),
    "F1Score": lambda m: m.F1Score(average="macro", threshold=0.4),
    "MeanIoU": lambda m: m.MeanIoU(num_classes=3, ignore_class=0),
    "BinaryIoU": lambda m: m.BinaryIoU(target_class_ids=[1], threshold=0.3),
    "R2Score": lambda m: m.R2Score(class_aggregation=None),
    "SparseTopKCategoricalAccuracy": lambda m: m.SparseTopKCategoricalAccuracy(k=2),
    "BinaryAccuracy": lambda m: m.BinaryAccuracy(threshold=0.7),
    "SensitivityAtSpecificity": lambda m: m.SensitivityAtSpecificity(0.4, num_thresholds=30),
}


def _without_dtype(config):
    return {k: v for k, v in config.items() if k != "dtype"}


@pytest.mark.parametrize("name", list(MADE))
def test_serialize_matches_keras_and_round_trips(name):
    tf = pytest.importorskip("tensorflow")
    want = tf.keras.metrics.serialize(MADE[name](tf.keras.metrics))
    got = gtf.keras.metrics.serialize(MADE[name](gtf.keras.metrics))
    assert {**got, "config": None} == {**want, "config": None}
    want_config = {**want["config"], "name": got["config"]["name"]}  # Keras numbers default names
    assert _without_dtype(got["config"]) == _without_dtype(want_config)
    again = gtf.keras.metrics.deserialize(got)
    assert type(again).__name__ == name
    assert again.get_config() == got["config"]


def test_get_knows_the_names_keras_knows():
    tf = pytest.importorskip("tensorflow")
    from keras.src import metrics as keras_metrics

    for name in keras_metrics.ALL_OBJECTS_DICT:
        if name in ("Metric", "metric", "MeanMetricWrapper", "mean_metric_wrapper"):
            continue  # abstract in Keras, or needing a function: not made with defaults
        try:
            want = tf.keras.metrics.get(name)
        except TypeError:  # a metric with a required argument (RecallAtPrecision): no defaults to make it with
            with pytest.raises(TypeError):
                gtf.keras.metrics.get(name)
            continue
        got = gtf.keras.metrics.get(name)
        assert type(got).__name__ == type(want).__name__, name


def test_get_and_deserialize_of_other_identifiers():
    m = gtf.keras.metrics
    assert m.get(None) is None
    assert m.get(m.binary_accuracy) is m.binary_accuracy
    assert isinstance(m.get(m.AUC), m.AUC)
    assert m.deserialize("not_a_metric") == "not_a_metric"  # returned unchanged, as Keras does
    # A serialized function comes back as itself (Keras 3 fails: it looks for the class of that name).
    assert m.deserialize(m.serialize(m.binary_accuracy)) is m.binary_accuracy
    assert m.deserialize(m.serialize(m.pearson_correlation)) is m.pearson_correlation
    with pytest.raises(ValueError, match=r"\[gradkit\].*metric identifier"):
        m.get("not_a_metric")
    auc = m.get("auc")
    auc.update_state(np.array([0, 1, 1], np.float32), np.array([0.2, 0.9, 0.6], np.float32))
    np.testing.assert_allclose(float(auc.result()), 1.0, atol=1e-2)
