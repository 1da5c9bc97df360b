"""Keras patterns from its guides: a ``Model`` subclass built as ``CustomModel(inputs, outputs)``
(or with ``super().__init__(inputs=..., outputs=...)``) is a functional model with the
subclass's own methods; Keras 2's ``self.compiled_loss`` / ``self.compiled_metrics`` in a custom
``train_step``; and the cross-entropy of a Keras ``softmax``/``sigmoid`` output computed from the
logits behind it, as Keras' TensorFlow backend does, so a saturated output keeps its loss and
gradient. Oracles: Keras 3 where it is installed, and hand derivations."""

import math
import warnings

import numpy as np
import pytest

import gradkit.tf as gtf


def _custom_model_history(K, tf):
    class CustomModel(K.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.extra = 3

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            for m in self.metrics:
                m.update_state(loss) if m.name == "loss" else m.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = K.Input(shape=(4,))
    outputs = K.layers.Dense(1, kernel_initializer="ones")(inputs)
    model = CustomModel(inputs=inputs, outputs=outputs, name="cm")
    facts = (type(model).__name__, isinstance(model, CustomModel), model.name, model.extra, len(model.layers))
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    x = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
    h = model.fit(x, np.zeros((8, 1), np.float32), epochs=2, batch_size=4, verbose=0, shuffle=False)
    return facts, {k: np.asarray(v) for k, v in h.history.items()}, model.get_weights()


def test_a_subclass_called_with_inputs_and_outputs_is_a_functional_model():
    facts, history, weights = _custom_model_history(gtf.keras, gtf)
    assert facts == ("CustomModel", True, "cm", 3, 2)
    assert set(history) == {"loss", "mae"} and np.all(np.diff(history["loss"]) < 0)
    assert [w.shape for w in weights] == [(4, 1), (1,)]


def test_a_functional_subclass_trains_as_in_keras():
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    ours = _custom_model_history(gtf.keras, gtf)
    theirs = _custom_model_history(keras, tf)
    assert ours[0] == theirs[0]
    assert set(ours[1]) == set(theirs[1])
    for key in ours[1]:
        np.testing.assert_allclose(ours[1][key], theirs[1][key], rtol=1e-5)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _init_built(K):
    class Built(K.Model):
        def __init__(self, units):
            inp = K.Input((3,))
            out = K.layers.Dense(units, kernel_initializer="ones")(inp)
            super().__init__(inputs=inp, outputs=out)
            self.units = units

    model = Built(2)
    return type(model).__name__, isinstance(model, Built), model.units, np.asarray(model(np.ones((1, 3), np.float32)))


def test_super_init_with_inputs_and_outputs_makes_a_functional_model():
    name, is_built, units, out = _init_built(gtf.keras)
    assert (name, is_built, units) == ("Built", True, 2)
    np.testing.assert_array_equal(out, [[3.0, 3.0]])  # kernel of ones on ones: 3 (by hand)
    keras = pytest.importorskip("keras")
    theirs = _init_built(keras)
    assert theirs[:3] == (name, is_built, units)
    np.testing.assert_array_equal(out, theirs[3])


def test_positional_arguments_to_a_subclass_init_are_refused():
    class Bad(gtf.keras.Model):
        def __init__(self):
            super().__init__(3)

    with pytest.raises(TypeError, match=r"\[gradkit\] Bad.__init__ passed positional arguments"):
        Bad()


def _compiled_loss_history(K, tf):
    class M(K.Model):
        def __init__(self):
            super().__init__()
            self.d = K.layers.Dense(1, kernel_initializer="ones")

        def call(self, x):
            return self.d(x)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    m = M()
    m.compile(optimizer=K.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    x = np.arange(16, dtype=np.float32).reshape(8, 2) / 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = m.fit(x, np.ones((8, 1), np.float32), epochs=2, batch_size=4, verbose=0, shuffle=False)
    return {k: np.asarray(v) for k, v in h.history.items()}, m.get_weights()


def test_compiled_loss_and_compiled_metrics_work_in_a_custom_train_step():
    history, _ = _compiled_loss_history(gtf.keras, gtf)
    assert set(history) == {"loss", "mae"}
    with pytest.warns(UserWarning, match="compiled_loss"):
        model = gtf.keras.Sequential([gtf.keras.Input((2,)), gtf.keras.layers.Dense(1, kernel_initializer="zeros")])
        model.compile(loss="mse")
        loss = model.compiled_loss(np.ones((2, 1), np.float32), model(np.ones((2, 2), np.float32)))
    assert float(loss) == 1.0  # mean((1 - 0)^2), by hand


def test_compiled_loss_and_compiled_metrics_match_keras():
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _compiled_loss_history(gtf.keras, gtf), _compiled_loss_history(keras, tf)
    assert set(ours[0]) == set(theirs[0])
    for key in ours[0]:  # Keras 3 updates the loss tracker (a Mean) with y_pred here, as gradkit does
        np.testing.assert_allclose(ours[0][key], theirs[0][key], rtol=1e-5)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5)


_X = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
_LABELS = np.array([0, 1])
_WRONG = [np.array([[0.0, 40.0], [40.0, 0.0]], np.float32), np.zeros(2, np.float32)]  # confidently wrong


def _saturated(K):
    out = {}
    for label, last in (
        ("dense", lambda: [K.layers.Dense(2, activation="softmax")]),
        ("softmax layer", lambda: [K.layers.Dense(2), K.layers.Softmax()]),
        ("activation layer", lambda: [K.layers.Dense(2), K.layers.Activation("softmax")]),
    ):
        m = K.Sequential([K.Input((2,)), *last()])
        m.set_weights(_WRONG)
        m.compile(optimizer=K.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy")
        out[label + " evaluate"] = m.evaluate(_X, _LABELS, verbose=0)
        out[label + " loss object"] = float(K.losses.SparseCategoricalCrossentropy()(_LABELS, m(_X)))
        m.train_on_batch(_X, _LABELS)
        out[label + " kernel"] = m.get_weights()[0]
    onehot = np.eye(2, dtype=np.float32)[_LABELS]
    probs = K.activations.softmax(np.array([[0.0, 40.0], [40.0, 0.0]], np.float32))
    out["categorical function"] = np.asarray(K.losses.categorical_crossentropy(onehot, probs))
    out["ops categorical"] = np.asarray(
        K.ops.categorical_crossentropy(onehot, K.ops.softmax(probs * 0 + [[0.0, 40.0], [40.0, 0.0]]))
    )
    mb = K.Sequential([K.Input((2,)), K.layers.Dense(1, activation="sigmoid")])
    mb.set_weights([np.array([[-40.0], [40.0]], np.float32), np.zeros(1, np.float32)])
    mb.compile(optimizer=K.optimizers.SGD(0.01), loss="binary_crossentropy", metrics=["binary_crossentropy"])
    out["sigmoid evaluate"] = mb.evaluate(_X, np.array([[1.0], [0.0]], np.float32), verbose=0)
    return out


def test_a_saturated_softmax_output_keeps_its_loss_and_gradient():
    out = _saturated(gtf.keras)
    # Each example puts logit 40 on the wrong class: the loss is log(1 + e^40) = 40 (by hand),
    # not -log(1e-7) = 16.1 from clipped probabilities.
    expected = math.log1p(math.exp(40.0))
    for label in ("dense", "softmax layer", "activation layer"):
        assert out[label + " evaluate"] == pytest.approx(expected, rel=1e-6)
        assert out[label + " loss object"] == pytest.approx(expected, rel=1e-6)
    # And a gradient: d loss / d logits = softmax - onehot = (-1, 1) per example, mean over 2.
    np.testing.assert_allclose(out["dense kernel"], [[0.005, 39.995], [39.995, 0.005]], rtol=1e-5)
    np.testing.assert_allclose(out["categorical function"], [expected, expected], rtol=1e-6)
    np.testing.assert_allclose(out["ops categorical"], [expected, expected], rtol=1e-6)
    assert out["sigmoid evaluate"][0] == pytest.approx(expected, rel=1e-6)


def test_saturated_outputs_match_keras():
    keras = pytest.importorskip("keras")
    ours, theirs = _saturated(gtf.keras), _saturated(keras)
    assert set(ours) == set(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_probabilities_made_elsewhere_are_still_clipped():
    # A tensor that no Keras softmax made (tf.nn.softmax, a constant) is taken as probabilities,
    # clipped to [1e-7, 1 - 1e-7], as Keras takes it eagerly.
    probs = gtf.nn.softmax(gtf.constant([[0.0, 40.0]]))
    loss = gtf.keras.losses.sparse_categorical_crossentropy(np.array([0]), probs)
    np.testing.assert_allclose(loss.numpy(), [-math.log(1e-7)], rtol=1e-5)


def _wrapper(K):
    class Wrapper(K.Model):
        # Keras tensors given to a subclass's own __init__, which does not pass them on: it stays
        # a subclassed model (Keras decides in Model.__init__, by the arguments it gets).
        def __init__(self, inp, out):
            super().__init__()
            self.inner = K.Model(inp, out)

        def call(self, x):
            return self.inner(x) * 2

    i = K.Input((3,))
    w = Wrapper(i, K.layers.Dense(2, kernel_initializer="ones")(i))
    return type(w).__name__, np.asarray(w(np.ones((1, 3), np.float32))).tolist()


def test_keras_tensors_given_to_a_subclass_init_stay_its_own():
    assert _wrapper(gtf.keras) == ("Wrapper", [[6.0, 6.0]])  # (1 + 1 + 1) * 2 per output, by hand
    keras = pytest.importorskip("keras")
    assert _wrapper(keras) == _wrapper(gtf.keras)
