"""Keras' ``fit``/``evaluate``/``predict`` on a ``tf.data.Dataset`` against real Keras 3 on
TensorFlow: the same model from the same weights, fit on the same (unshuffled) pipeline, must
give the same History, weights, evaluations and predictions (Keras 3's TFDatasetAdapter:
``y``/``sample_weight`` refused beside a dataset, ``batch_size`` ignored, an epoch per pass of
a finite dataset, ``steps_per_epoch`` continuing across epochs of an endless one)."""

import warnings

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

_RNG = np.random.default_rng(3)
_X = _RNG.normal(size=(40, 5)).astype(np.float32)
_Y = (_X @ _RNG.normal(size=(5, 2))).astype(np.float32)
_CLASS = _RNG.integers(0, 3, size=(40,)).astype(np.int32)
_SW = _RNG.uniform(0.5, 2.0, size=(40,)).astype(np.float32)


def _model(tf, outputs=2, activation=None):
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(5,)),
            tf.keras.layers.Dense(6, activation="tanh"),
            tf.keras.layers.Dense(outputs, activation=activation),
        ]
    )
    model.set_weights(
        [
            np.random.default_rng(50 + i).normal(scale=0.5, size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    return model


def _assert_close(a, b, path="result"):
    if isinstance(a, dict):
        assert list(a) == list(b), (path, list(a), list(b))
        for k in a:
            _assert_close(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_close(x, y, f"{path}[{i}]")
    else:
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-4, atol=2e-5, err_msg=path)


def _regression_run(tf):
    model = _model(tf)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"], weighted_metrics=["mse"])
    data = tf.data.Dataset.from_tensor_slices((_X, _Y, _SW)).batch(16)  # 3 batches, the last one smaller
    validation = tf.data.Dataset.from_tensor_slices((_X[:12], _Y[:12])).batch(5)
    history = model.fit(data, epochs=3, verbose=0, shuffle=False, validation_data=validation, batch_size=7)
    features = tf.data.Dataset.from_tensor_slices(_X[:9]).batch(4)  # x alone
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "evaluate": model.evaluate(data, verbose=0, return_dict=True),
        "predict": model.predict(features, verbose=0),
        "predict_pairs": model.predict(validation, verbose=0),  # the targets are ignored
    }


def _endless_run(tf):
    model = _model(tf, 3, "softmax")
    model.compile(optimizer=tf.keras.optimizers.SGD(0.3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    endless = tf.data.Dataset.from_tensor_slices((_X, _CLASS)).batch(12).repeat()
    history = model.fit(
        endless,
        epochs=3,
        steps_per_epoch=2,  # epochs continue where the last stopped: batches 0-1, 2-3 (the short one), 0-1
        verbose=0,
        shuffle=False,
        validation_data=endless,
        validation_steps=2,
    )
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "evaluate": model.evaluate(endless, steps=3, verbose=0),
    }


def _class_weight_run(tf):
    model = _model(tf, 3)
    model.compile(
        optimizer=tf.keras.optimizers.SGD(0.2),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=["sparse_categorical_accuracy"],
    )
    data = tf.data.Dataset.from_tensor_slices((_X, _CLASS)).batch(10)
    history = model.fit(data, epochs=2, verbose=0, shuffle=False, class_weight={0: 0.5, 1: 2.0, 2: 1.0})
    return {"history": history.history, "weights": model.get_weights()}


def _dict_inputs_run(tf):
    class TwoInputs(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.a, self.b = tf.keras.layers.Dense(2), tf.keras.layers.Dense(2)

        def call(self, inputs):
            return self.a(inputs["u"]) + self.b(inputs["v"])

    model = TwoInputs()
    model({"u": _X[:1], "v": _X[:1, :3]})
    model.set_weights(
        [
            np.random.default_rng(60 + i).normal(size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    model.compile(optimizer="sgd", loss="mae")
    data = tf.data.Dataset.from_tensor_slices(({"u": _X, "v": _X[:, :3]}, _Y)).map(lambda x, y: (x, y * 0.5)).batch(8)
    history = model.fit(data, epochs=2, verbose=0, shuffle=False)
    return {"history": history.history, "weights": model.get_weights()}


@pytest.mark.parametrize(
    "program", [_regression_run, _endless_run, _class_weight_run, _dict_inputs_run], ids=lambda p: p.__name__
)
def test_fit_on_a_dataset_matches_keras(program):
    _assert_close(program(tf_real), program(gtf))


def _filtered_run(tf):
    """An unknown cardinality: the first epoch reads until the data runs out, as Keras does."""
    model = _model(tf)
    model.compile(optimizer="sgd", loss="mse")
    data = tf.data.Dataset.from_tensor_slices((_X, _Y)).filter(lambda x, y: x[0] > -0.5).batch(8)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        history = model.fit(data, epochs=2, verbose=0, shuffle=False)
    assert any("ran out of data" in str(w.message) for w in warned)
    return {"history": history.history, "weights": model.get_weights()}


def test_unknown_cardinality_runs_out_as_in_keras():
    _assert_close(_filtered_run(tf_real), _filtered_run(gtf))


def test_a_shuffled_dataset_is_reshuffled_each_epoch():
    seen = []

    def record(x, i):
        seen.append(int(i))
        return x, _Y[0]

    data = gtf.data.Dataset.from_tensor_slices((_X, np.arange(40))).shuffle(40, seed=1).map(record).batch(20)
    model = _model(gtf)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(data, epochs=3, verbose=0, shuffle=False)
    epochs = [seen[i : i + 40] for i in range(0, 120, 40)]
    assert len(seen) == 120 and all(sorted(e) == list(range(40)) for e in epochs)
    assert epochs[0] != epochs[1] != epochs[2]


def test_fit_warns_and_refuses_as_keras_does():
    model = _model(gtf)
    model.compile(optimizer="sgd", loss="mse")
    data = gtf.data.Dataset.from_tensor_slices((_X, _Y)).batch(8)
    with pytest.warns(UserWarning, match="`shuffle=True` was passed, but will be ignored.*tf.data.Dataset"):
        model.fit(data, epochs=1, verbose=0)  # fit's default shuffle=True
    before = model.get_weights()
    cases = [
        (lambda: model.fit(data, _Y, verbose=0, shuffle=False), "`y` should not be passed"),
        (lambda: model.fit(data, sample_weight=_SW, verbose=0, shuffle=False), "`sample_weights` should not be passed"),
        (lambda: model.fit(data, validation_split=0.2, verbose=0, shuffle=False), "only supported for tensors"),
        (lambda: model.evaluate(data, _Y, verbose=0), "`y` should not be passed"),
        (
            lambda: model.fit(
                gtf.data.Dataset.from_tensor_slices((_X, _CLASS, _SW)).batch(8),
                class_weight={0: 1.0},
                verbose=0,
                shuffle=False,
            ),
            "`class_weight` and `sample_weight`",
        ),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=r"\[gradkit\].*" + match):
            call()
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*not in \[0, 2\)"):
        model.fit(
            gtf.data.Dataset.from_tensor_slices((_X, _CLASS)).batch(8), class_weight={1: 2.0}, verbose=0, shuffle=False
        )
    with pytest.raises(TypeError, match=r"\[gradkit\].*TensorFlow tf.data.Dataset is not read"):
        model.fit(_X, tf_real.data.Dataset.from_tensor_slices(_Y), verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
