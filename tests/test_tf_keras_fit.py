"""Keras' training loop (compile/fit/evaluate/predict, train_on_batch, a custom train_step)
against real Keras 3 on TensorFlow: the same model from the same weights, trained on the same
batches (shuffle=False), must give the same History, weights, evaluations and predictions."""

import sys
from pathlib import Path

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_RNG = np.random.default_rng(7)
_X = _RNG.normal(size=(50, 5)).astype(np.float32)
_Y_CLASS = _RNG.integers(0, 3, size=(50,)).astype(np.int32)
_Y_BINARY = (_X[:, :1] + 0.3 * _RNG.normal(size=(50, 1)) > 0).astype(np.float32)
_Y_REG = (_X @ _RNG.normal(size=(5, 2))).astype(np.float32)
_SW = _RNG.uniform(0.2, 2.0, size=(50,)).astype(np.float32)


def _model(tf, outputs: int, activation=None, regularizer=None):
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(5,)),
            tf.keras.layers.Dense(8, activation="tanh", kernel_regularizer=regularizer),
            tf.keras.layers.Dense(outputs, activation=activation),
        ]
    )
    model.set_weights(  # the same weights for both models
        [
            np.random.default_rng(s).normal(scale=0.5, size=w.shape).astype(np.float32)
            for s, w in zip([11, 12, 13, 14], model.get_weights())
        ]
    )
    return model


# name -> (outputs, activation, y, compile kwargs (tf -> dict), fit kwargs)
CASES = {
    "sparse_ce_accuracy_adam": (
        3,
        "softmax",
        _Y_CLASS,
        lambda tf: dict(
            optimizer=tf.keras.optimizers.Adam(0.05),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
        ),
        dict(validation_split=0.2),
    ),
    "binary_ce_by_name_acc_weighted": (
        1,
        "sigmoid",
        _Y_BINARY,
        lambda tf: dict(
            optimizer="sgd", loss="ce", metrics=["acc"], weighted_metrics=["acc", tf.keras.metrics.AUC(name="auc")]
        ),
        dict(sample_weight=_SW),
    ),
    "mse_loss_object_mae_eager": (
        2,
        None,
        _Y_REG,
        lambda tf: dict(
            optimizer=tf.keras.optimizers.RMSprop(0.01),
            loss=tf.keras.losses.MeanSquaredError(),
            metrics=["mae", tf.keras.metrics.RootMeanSquaredError()],
            loss_weights=0.5,
            run_eagerly=True,
        ),
        dict(validation_data=(_X[:20], _Y_REG[:20]), validation_freq=2),
    ),
    "repeated_metric_names": (
        2,
        None,
        _Y_REG,
        lambda tf: dict(optimizer="adam", loss="huber", metrics=["mae", "mae"], weighted_metrics=["mae", "mae", "mse"]),
        dict(sample_weight=_SW, validation_split=0.1),
    ),
    "class_weight_regularized": (
        3,
        None,
        _Y_CLASS,
        lambda tf: dict(
            optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=[tf.keras.metrics.SparseCategoricalAccuracy(), "sparse_top_k_categorical_accuracy"],
        ),
        dict(class_weight={0: 1.0, 1: 3.0, 2: 0.5}),
    ),
}


def _run(tf, case, regularizer=False):
    outputs, activation, y, compile_kwargs, fit_kwargs = CASES[case]
    reg = tf.keras.regularizers.L2(0.01) if regularizer else None
    model = _model(tf, outputs, activation, reg)
    model.compile(**compile_kwargs(tf))
    history = model.fit(_X, y, batch_size=16, epochs=3, shuffle=False, verbose=0, **fit_kwargs)
    return {
        "history": history.history,
        "epochs": history.epoch,
        "weights": model.get_weights(),
        "evaluate": model.evaluate(_X, y, batch_size=20, verbose=0),
        "evaluate_dict": model.evaluate(_X, y, batch_size=64, verbose=0, return_dict=True),
        "predict": model.predict(_X[:7], batch_size=4, verbose=0),
        "train_on_batch": model.train_on_batch(_X[:10], y[:10], return_dict=True),
        "test_on_batch": model.test_on_batch(_X[10:20], y[10:20]),
        "predict_on_batch": model.predict_on_batch(_X[:3]),
        "metrics_names": model.metrics_names,
    }


def _assert_close(a, b, path="result"):
    if isinstance(a, dict):
        assert list(a) == list(b), (path, list(a), list(b))
        for k in a:
            _assert_close(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], str)):
        assert len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, (str, list)):
        assert a == b, (path, a, b)
    else:
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-4, atol=2e-5, err_msg=path)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_evaluate_predict_match_keras(case):
    expected = _run(tf_real, case, regularizer=case == "class_weight_regularized")
    got = _run(gtf, case, regularizer=case == "class_weight_regularized")
    _assert_close(expected, got)


def _guide_model(tf):
    """Keras' guide "Customizing what happens in fit()": its train_step and test_step, its
    own loss tracker and metric as attributes, listed by ``metrics``."""

    class CustomModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(6, activation="relu")
            self.out = tf.keras.layers.Dense(2)
            self.loss_tracker = tf.keras.metrics.Mean(name="loss")
            self.mae_metric = tf.keras.metrics.MeanAbsoluteError(name="mae")

        def call(self, x):
            return self.out(self.hidden(x))

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = tf.reduce_mean(tf.square(y - y_pred))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            self.loss_tracker.update_state(tf.reduce_mean(tf.square(y - y_pred)))
            self.mae_metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    model = CustomModel()
    model(tf.constant(_X[:1]))
    model.set_weights(
        [
            np.random.default_rng(20 + i).normal(scale=0.5, size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02))
    history = model.fit(_X, _Y_REG, batch_size=10, epochs=3, shuffle=False, verbose=0, validation_split=0.2)
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "evaluate": model.evaluate(_X, _Y_REG, verbose=0),
    }


def test_custom_train_step_from_keras_guide_matches_keras():
    _assert_close(_guide_model(tf_real), _guide_model(gtf))


def _callbacks_run(tf):
    model = _model(tf, 3, "softmax")
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    seen = []
    callbacks = [
        tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=1, restore_best_weights=True),
        tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5),
        tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append((epoch, sorted(logs)))),
    ]
    # A validation set unlike the training set, so that the validation loss turns up early.
    history = model.fit(
        _X[:40],
        _Y_CLASS[:40],
        batch_size=8,
        epochs=12,
        shuffle=False,
        verbose=0,
        callbacks=callbacks,
        validation_data=(_X[40:], (_Y_CLASS[40:] + 1) % 3),
    )
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "seen": [s[0] for s in seen],
        "keys": seen[0][1],
    }


def test_callbacks_in_fit_match_keras():
    expected, got = _callbacks_run(tf_real), _callbacks_run(gtf)
    assert len(expected["history"]["loss"]) < 12  # early stopping did stop
    _assert_close(expected, got)


def test_same_shaped_batches_compile_once():
    model = _model(gtf, 3, "softmax")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(_X, _Y_CLASS, batch_size=16, epochs=1, verbose=0)  # full batches and the last, smaller one
    assert count_compiles(lambda: model.fit(_X, _Y_CLASS, batch_size=16, epochs=3, verbose=0)) == 0


def test_fit_trains_through_the_tape_exactly():
    """One full-batch SGD epoch: the weights move by exactly -lr * the gradient of the compiled
    loss, computed here by an independent tape over the same model."""
    model = _model(gtf, 2)
    before = [np.array(w) for w in model.get_weights()]
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_mean(gtf.square(model(_X) - _Y_REG))
    grads = [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]
    model.compile(optimizer=gtf.keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(_X, _Y_REG, batch_size=len(_X), epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], float(loss), rtol=1e-6)
    for w0, g, w1 in zip(before, grads, model.get_weights()):
        np.testing.assert_allclose(w1, w0 - 0.1 * g, rtol=1e-5, atol=1e-7)


def test_shuffle_uses_numpy_seed_and_sees_every_example():
    runs = []
    for _ in range(2):
        gtf.keras.utils.set_random_seed(0)
        model = _model(gtf, 2)
        model.compile(optimizer="sgd", loss="mse")
        runs.append(model.fit(_X, _Y_REG, batch_size=8, epochs=2, verbose=0).history["loss"])
    assert runs[0] == runs[1]
    model = _model(gtf, 2)
    model.compile(optimizer="sgd", loss="mse")
    unshuffled = model.fit(_X, _Y_REG, batch_size=8, epochs=2, verbose=0, shuffle=False).history["loss"]
    assert runs[0] != unshuffled


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda m: m.fit(_X, _Y_REG, steps_per_epoch=0, verbose=0), ValueError, r"steps_per_epoch is 0"),
        (lambda m: m.fit(_X, iter([_Y_REG]), verbose=0), TypeError, r"is not an array"),
        (lambda m: m.fit(iter([(_X, _Y_REG)]), _Y_REG, verbose=0), ValueError, r"gives whole batches"),
        (lambda m: m.fit(iter([(_X, _Y_REG)]), validation_split=0.5, verbose=0), ValueError, r"validation_split"),
        (lambda m: m.fit(_X, _Y_REG[:10], verbose=0), ValueError, r"different numbers of examples"),
        (lambda m: m.fit(_X, _Y_REG, batch_size=0, verbose=0), ValueError, r"batch_size is 0"),
        (lambda m: m.fit(_X, _Y_REG, validation_split=0.99, verbose=0), ValueError, r"not sufficient to split"),
        (lambda m: m.fit(_X, _Y_REG, sample_weight=_SW, class_weight={0: 1.0}, verbose=0), ValueError, "same time"),
    ],
)
def test_bad_input_is_refused_and_leaves_weights_unchanged(call, error, match):
    model = _model(gtf, 2)
    model.compile(optimizer="sgd", loss="mse")
    before = model.get_weights()
    with pytest.raises(error, match=r"\[gradkit\].*" + match):
        call(model)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_mismatched_losses_and_missing_compile_are_refused():
    model = _model(gtf, 2)
    with pytest.raises(ValueError, match=r"\[gradkit\].*compile\(\)"):
        model.evaluate(_X, _Y_REG, verbose=0)
    model.compile(optimizer="sgd", loss=["mse", "mae"])  # two losses for a model with one output
    with pytest.raises(ValueError, match=r"\[gradkit\].*loss has 2 entries, but the model has 1 outputs"):
        model.fit(_X, _Y_REG, verbose=0)
    with pytest.raises(ValueError, match=r"\[gradkit\].*Could not interpret optimizer"):
        model.compile(optimizer=object(), loss="mse")


def _batch_norm_run(tf):
    """Built by fit's first step (no Input); BatchNormalization's moving statistics are
    updated inside the compiled step."""
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(2)]
    )
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse", metrics=["mse"])
    model.build((None, 5))
    model.set_weights(
        [
            np.random.default_rng(30 + i).uniform(0.5, 1.5, size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    history = model.fit(_X, _Y_REG, batch_size=10, epochs=2, shuffle=False, verbose=0)
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "evaluate": model.evaluate(_X, _Y_REG, verbose=0),
    }


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
            np.random.default_rng(40 + i).normal(size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    model.compile(optimizer="sgd", loss="mae")
    history = model.fit({"u": _X, "v": _X[:, :3]}, _Y_REG, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return {"history": history.history, "predict": model.predict({"u": _X[:5], "v": _X[:5, :3]}, verbose=0)}


@pytest.mark.parametrize("program", [_batch_norm_run, _dict_inputs_run], ids=lambda p: p.__name__)
def test_more_models_match_keras(program):
    _assert_close(program(tf_real), program(gtf))


def test_unbuilt_sequential_is_built_by_its_first_step():
    model = gtf.keras.Sequential([gtf.keras.layers.Dense(3), gtf.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(_X, _Y_REG, batch_size=10, epochs=2, shuffle=False, verbose=0)
    assert [w.shape for w in model.get_weights()] == [(5, 3), (3,), (3, 2), (2,)]
    assert len(history.history["loss"]) == 2 and history.history["loss"][1] < history.history["loss"][0]


def _py_dataset_class(tf):
    class Batches(tf.keras.utils.PyDataset):
        """Batches of 16 (the last one smaller), by index, as Keras' guide writes a PyDataset."""

        def __init__(self, x, y, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y = x, y
            self.epochs_ended = 0

        def __len__(self):
            return -(-len(self.x) // 16)

        def __getitem__(self, index):
            return self.x[index * 16 : (index + 1) * 16], self.y[index * 16 : (index + 1) * 16]

        def on_epoch_end(self):
            self.epochs_ended += 1

    return Batches


def _py_dataset_run(tf):
    batches = _py_dataset_class(tf)
    model = _model(tf, 3, "softmax")
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    train = batches(_X[:40], _Y_CLASS[:40])
    history = model.fit(train, epochs=3, verbose=0, shuffle=False, validation_data=batches(_X[40:], _Y_CLASS[40:]))
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "epochs_ended": train.epochs_ended,
        "evaluate": model.evaluate(batches(_X, _Y_CLASS), verbose=0),
        "predict": model.predict(batches(_X[:20], _Y_CLASS[:20]), verbose=0),
    }


def _generator_steps_run(tf):
    def endless():
        while True:
            for i in range(0, 48, 12):
                yield _X[i : i + 12], _Y_REG[i : i + 12], _SW[i : i + 12]

    model = _model(tf, 2)
    model.compile(optimizer="sgd", loss="mse", weighted_metrics=["mae"])
    history = model.fit(
        endless(), steps_per_epoch=3, epochs=3, verbose=0, shuffle=False, validation_data=endless(), validation_steps=2
    )
    with pytest.warns(UserWarning, match="ran out of data"):  # a finite generator, read to its end
        predicted = model.predict(((_X[i : i + 5],) for i in range(0, 15, 5)), verbose=0)
    return {
        "history": history.history,
        "weights": model.get_weights(),
        "evaluate": model.evaluate(endless(), steps=3, verbose=0),
        "evaluate_arrays": model.evaluate(_X, _Y_REG, steps=4, verbose=0),  # 4 batches of ceil(50 / 4)
        "predict": predicted,
    }


@pytest.mark.parametrize("program", [_py_dataset_run, _generator_steps_run], ids=lambda p: p.__name__)
def test_py_dataset_and_generators_match_keras(program):
    _assert_close(program(tf_real), program(gtf))


def _finite_generator_run(tf):
    model = _model(tf, 2)
    model.compile(optimizer="sgd", loss="mse")
    batches = ((_X[i : i + 10], _Y_REG[i : i + 10]) for i in range(0, 50, 10))
    with pytest.warns(UserWarning, match="ran out of data"):
        history = model.fit(batches, epochs=3, verbose=0, shuffle=False)
    return {"history": history.history, "weights": model.get_weights()}


def test_a_generator_is_not_shuffled_and_takes_no_class_weight():
    model = _model(gtf, 2)
    model.compile(optimizer="sgd", loss="mse")
    with pytest.warns(UserWarning) as warned:
        model.fit(((_X[:10], _Y_REG[:10]) for _ in range(2)), verbose=0)
    messages = [str(w.message) for w in warned]
    assert any("`shuffle=True` was passed, but will be ignored" in m for m in messages), messages
    assert any("ran out of data" in m for m in messages), messages
    with pytest.raises(ValueError, match=r"\[gradkit\].*class_weight"):
        model.fit(((_X[:10], _Y_REG[:10]) for _ in range(2)), class_weight={0: 1.0}, shuffle=False, verbose=0)


def test_finite_generator_runs_out_as_in_keras():
    _assert_close(_finite_generator_run(tf_real), _finite_generator_run(gtf))


def test_py_dataset_shuffle_permutes_the_batches_each_epoch_reproducibly():
    class Recorded(_py_dataset_class(gtf)):
        def __getitem__(self, index):
            self.seen.append(index)
            return super().__getitem__(index)

    orders = []
    for shuffle, seed in [(True, 3), (True, 3), (False, 3)]:
        data = Recorded(_X, _Y_CLASS)
        data.seen = []
        model = _model(gtf, 3, "softmax")
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        gtf.keras.utils.set_random_seed(seed)
        model.fit(data, epochs=3, verbose=0, shuffle=shuffle)
        orders.append([data.seen[i : i + 4] for i in range(0, 12, 4)])
    assert all(sorted(epoch) == [0, 1, 2, 3] for epoch in orders[0])
    assert orders[0] == orders[1] and orders[0] != orders[2]
    assert orders[2] == [[0, 1, 2, 3]] * 3


def _bare_dataset_run(tf, run_eagerly):
    """The Keras GAN guide's step: a dataset of bare tensors reaches train_step as that tensor,
    so tf.shape(data)[0] is the batch size."""

    class Critic(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(1)])

        def train_step(self, real):
            batch = tf.shape(real)[0]
            fake = tf.ones((batch, 5))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.d(real) - self.d(fake)))
            grads = tape.gradient(loss, self.d.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.d.trainable_weights))
            return {"loss": loss, "batch": tf.cast(batch, tf.float32), "tuple": float(isinstance(real, tuple))}

    model = Critic()
    model.d.set_weights([np.linspace(-1.0, 1.0, 5, dtype=np.float32).reshape(5, 1), np.zeros(1, np.float32)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), run_eagerly=run_eagerly)
    history = model.fit(tf.data.Dataset.from_tensor_slices(_X[:12]).batch(4), epochs=2, shuffle=False, verbose=0)
    plain = _model(tf, 2)
    plain.compile(optimizer="sgd", loss="mse")
    predicted = plain.predict(tf.data.Dataset.from_tensor_slices(_X[:7]).batch(3), verbose=0)
    return {"history": history.history, "weights": model.get_weights(), "predict": predicted}


@pytest.mark.parametrize("run_eagerly", [False, True], ids=["compiled", "eager"])
def test_a_dataset_of_bare_tensors_reaches_the_step_as_the_tensor(run_eagerly):
    ours = _bare_dataset_run(gtf, run_eagerly)
    assert ours["history"]["batch"][-1] == 4.0 and ours["history"]["tuple"][-1] == 0.0
    _assert_close(_bare_dataset_run(tf_real, run_eagerly), ours)
