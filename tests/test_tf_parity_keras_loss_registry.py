"""tf.keras.losses.get, serialize and deserialize against Keras 3: names, serialize's dicts,
callables and classes, and the errors Keras gives."""

import numpy as np
import pytest

import gradkit.tf as gtf

tf_real = pytest.importorskip("tensorflow")


def my_loss(y_true, y_pred):
    return y_true - y_pred


def _both(fn):
    """fn applied to gradkit's and TensorFlow's tf.keras.losses, or the type of error each raised."""
    out = []
    for m in (gtf, tf_real):
        try:
            out.append(fn(m.keras.losses))
        except Exception as error:  # noqa: BLE001  (the test compares the error types)
            out.append(error)
    return out


def _describe(obj):
    if isinstance(obj, Exception):
        return (
            "raises",
            ValueError if isinstance(obj, ValueError) else TypeError if isinstance(obj, TypeError) else None,
        )
    if callable(obj) and not isinstance(obj, type):
        kind = "instance" if hasattr(obj, "get_config") else "function"
        name = type(obj).__name__ if kind == "instance" else obj.__name__
        # Keras' get_config drops Huber's delta and CosineSimilarity's axis (gradkit keeps them), and
        # numbers the default names of further instances (loss_1): reduction is what both keep.
        return (kind, name, obj.reduction if kind == "instance" else None)
    return ("value", obj)


IDENTIFIERS = [
    None,
    "mse",
    "MSE",
    "bce",
    "mean_squared_error",
    "Huber",
    "Dice",
    "ctc",
    "Loss",
    "foo",
    "CategoricalGeneralizedCrossEntropy",
    "Reduction",
    3,
    {"class_name": "Tversky", "config": {"alpha": 0.2, "beta": 0.8}},
    {"class_name": "Nope", "config": {}},
    {"module": "builtins", "class_name": "function", "config": "huber", "registered_name": "function"},
]


@pytest.mark.parametrize("identifier", IDENTIFIERS, ids=repr)
def test_get_matches_keras(identifier):
    ours, theirs = _both(lambda losses: losses.get(identifier))
    assert _describe(ours) == _describe(theirs)
    if isinstance(ours, Exception):
        assert str(ours).startswith("[gradkit]")


@pytest.mark.parametrize("identifier", IDENTIFIERS + ["MeanSquaredError", "logcosh"], ids=repr)
def test_deserialize_matches_keras(identifier):
    ours, theirs = _both(lambda losses: losses.deserialize(identifier))
    assert _describe(ours) == _describe(theirs)


LOSSES = [
    lambda L: L.MeanSquaredError(),
    lambda L: L.BinaryCrossentropy(from_logits=True, reduction=None),
    lambda L: L.Dice(axis=(1, 2)),
    lambda L: L.Tversky(axis=[1]),
    lambda L: L.Circle(gamma=10.0),
    lambda L: L.CTC(),
    lambda L: L.CategoricalGeneralizedCrossEntropy(q=0.3),
    lambda L: L.mse,
    lambda L: L.huber,
    lambda L: my_loss,
    lambda L: "mse",
    lambda L: None,
]


@pytest.mark.parametrize("index", range(len(LOSSES)))
def test_serialize_and_round_trip_match_keras(index):
    ours, theirs = _both(lambda losses: losses.serialize(LOSSES[index](losses)))
    assert ours == theirs
    back = _both(lambda losses: losses.deserialize(losses.serialize(LOSSES[index](losses)), {"my_loss": my_loss}))
    assert _describe(back[0]) == _describe(back[1])


def test_serialize_a_custom_loss_class_as_keras():
    classes = []
    for m in (gtf, tf_real):

        class MyLoss(m.keras.losses.Loss):
            def call(self, y_true, y_pred):
                return y_true - y_pred

        classes.append(MyLoss)
    ours, theirs = (m.keras.losses.serialize(c(reduction="sum")) for m, c in zip((gtf, tf_real), classes))
    assert ours == theirs
    made = gtf.keras.losses.deserialize(ours, custom_objects={"MyLoss": classes[0]})
    assert isinstance(made, classes[0]) and made.reduction == "sum"
    # Without it, Keras returns the class name; a class it cannot import (module None) it refuses.
    assert gtf.keras.losses.deserialize(ours) == tf_real.keras.losses.deserialize(theirs) == "MyLoss"
    with pytest.raises(TypeError, match=r"\[gradkit\].*custom_objects"):
        gtf.keras.losses.deserialize({**ours, "module": None})
    with pytest.raises(TypeError):
        tf_real.keras.losses.deserialize({**theirs, "module": None})


def test_get_instantiates_classes_and_keeps_callables():
    assert isinstance(gtf.keras.losses.get(gtf.keras.losses.Huber), gtf.keras.losses.Huber)
    loss = gtf.keras.losses.Dice()
    assert gtf.keras.losses.get(loss) is loss
    assert gtf.keras.losses.get(my_loss) is my_loss
    y = np.array([[1.0, 0.0]], np.float32)
    np.testing.assert_allclose(gtf.keras.losses.get("mse")(y, y * 0.5).numpy(), [0.125])


def test_serialize_refuses_a_lambda():
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*lambda"):
        gtf.keras.losses.serialize(lambda a, b: a)
