"""``tf.keras.callbacks`` against real Keras 3: the gradkit callback and Keras' own are driven with
the same hook calls and the same logs (no ``fit``), each on a small Sequential model of its
library with the same weights and optimizer, and what they do is compared: the epoch
``stop_training`` is set at, the weights restored, the learning rate after each epoch, History,
the CSV file's text, the printed lines, the hooks called in order, and each refusal and warning."""

import re
import types
import warnings

import numpy as np
import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402
from gradkit.tf._keras.callbacks_monitor import metric_direction  # noqa: E402

SIDES = {"keras": keras, "gradkit": gtf.keras}
RNG = np.random.default_rng(3)
WEIGHTS = [RNG.standard_normal((3, 2)).astype(np.float32), RNG.standard_normal(2).astype(np.float32)]


def _model(k, optimizer=None):
    """A Dense model of library ``k`` (keras or gtf.keras) with WEIGHTS and ``optimizer``."""
    model = k.Sequential([k.Input((3,)), k.layers.Dense(2)])
    model.set_weights(WEIGHTS)
    if optimizer is not None:
        model.optimizer = optimizer
    return model


def _weights_at(epoch):
    return [w + epoch for w in WEIGHTS]


def _both(fn):
    """``fn(k)`` on Keras and on gradkit: (Keras' result, gradkit's)."""
    return fn(keras), fn(gtf.keras)


def _quiet_warnings(fn):
    """fn's result and the messages of the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    # Keras' own DeprecationWarnings (NumPy 2 conversions) are not what is compared.
    return out, [str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)]


def _float(value):
    return float(np.asarray(value.numpy() if hasattr(value, "numpy") else value))


# ---- EarlyStopping ------------------------------------------------------------------------------

DOWN = [1.0, 0.9, 0.95, 0.85, 0.86, 0.87, 0.9, 0.7, 0.72, 0.71]
UP = [0.5, 0.6, 0.55, 0.7, 0.69, 0.68, 0.8, 0.79, 0.78, 0.77]
EARLY_STOPPING = {
    "patience0": (dict(monitor="val_loss"), DOWN),
    "patience2": (dict(monitor="val_loss", patience=2), DOWN),
    "min_delta": (dict(monitor="val_loss", patience=1, min_delta=0.06), DOWN),
    "max": (dict(monitor="val_acc", patience=1, mode="max"), UP),
    "min_on_up": (dict(monitor="val_acc", patience=2, mode="min"), UP),
    "baseline": (dict(monitor="val_loss", patience=2, baseline=0.88), DOWN),
    "baseline_never_beaten": (dict(monitor="val_loss", patience=3, baseline=0.5, restore_best_weights=True), DOWN),
    "restore": (dict(monitor="val_loss", patience=2, restore_best_weights=True), DOWN),
    "restore_max": (dict(monitor="val_acc", patience=1, mode="max", restore_best_weights=True), UP),
    "start_from_epoch": (dict(monitor="val_loss", patience=1, start_from_epoch=3, restore_best_weights=True), DOWN),
    "never_stops": (dict(monitor="val_loss", patience=20, restore_best_weights=True), DOWN),
    "train_loss": (dict(monitor="loss", patience=0), [0.5, 0.4, 0.3, 0.2]),
    # 0.1 - 1e-9 equals 0.1 in float32, where Keras compares Python floats: no improvement.
    "float32_compare": (dict(monitor="loss", patience=0), [0.1, 0.1 - 1e-9, 0.1 - 2e-9]),
    "verbose": (dict(monitor="val_loss", patience=1, verbose=1, restore_best_weights=True), DOWN),
}


def _early_stopping(k, kwargs, values, via_list=True):
    model = _model(k)
    cb = k.callbacks.EarlyStopping(**kwargs)
    driver = k.callbacks.CallbackList([cb], model=model) if via_list else cb
    cb.set_model(model)
    trace = []
    driver.on_train_begin()
    for epoch, value in enumerate(values):
        model.set_weights(_weights_at(epoch))
        name = kwargs["monitor"]
        driver.on_epoch_end(epoch, {name: value, "other": 1.0})
        stop = getattr(model, "stop_training", False)
        trace.append((epoch, stop, cb.wait, None if cb.best is None else _float(cb.best)))
        if stop:
            break
    driver.on_train_end()
    return trace, cb.stopped_epoch, cb.best_epoch, [w.tolist() for w in model.get_weights()]


@pytest.mark.parametrize("case", sorted(EARLY_STOPPING))
def test_early_stopping_matches_keras(case, capsys):
    kwargs, values = EARLY_STOPPING[case]
    want = _early_stopping(keras, kwargs, values)
    keras_out = capsys.readouterr().out
    got = _early_stopping(gtf.keras, kwargs, values)
    assert got == want
    assert capsys.readouterr().out == keras_out


def test_early_stopping_compares_numpy_float64_in_float64():
    # Logs handed straight to the callback keep their dtype: a float64 difference counts.
    kwargs, values = dict(monitor="loss", patience=0), [np.float64(0.1), np.float64(0.1 - 1e-9)]
    want, got = _both(lambda k: _early_stopping(k, kwargs, values, via_list=False))
    assert got == want and not want[0][-1][1]


def test_early_stopping_is_reusable_across_trainings():
    def run(k):
        model = _model(k)
        cb = k.callbacks.EarlyStopping(monitor="loss", patience=1)
        cb.set_model(model)
        stops = []
        for values in ([1.0, 2.0, 3.0], [5.0, 4.0, 4.5, 4.6]):
            model.stop_training = False
            cb.on_train_begin()
            for epoch, value in enumerate(values):
                cb.on_epoch_end(epoch, {"loss": value})
                if model.stop_training:
                    stops.append(epoch)
                    break
        return stops

    want, got = _both(run)
    assert got == want == [1, 2]


# ---- the "auto" mode's direction --------------------------------------------------------------

METRIC_ARGS = {
    "IoU": dict(num_classes=2, target_class_ids=[0]),
    "OneHotIoU": dict(num_classes=2, target_class_ids=[0]),
    "MeanIoU": dict(num_classes=2),
    "OneHotMeanIoU": dict(num_classes=2),
    "SensitivityAtSpecificity": dict(specificity=0.5),
    "SpecificityAtSensitivity": dict(sensitivity=0.5),
    "PrecisionAtRecall": dict(recall=0.5),
    "RecallAtPrecision": dict(precision=0.5),
}
SHARED_METRICS = sorted(
    name
    for name in vars(gtf.keras.metrics)
    if isinstance(getattr(gtf.keras.metrics, name), type)
    and name not in ("Metric", "MeanMetricWrapper")
    and isinstance(getattr(keras.metrics, name, None), type)
)


@pytest.mark.parametrize("name", SHARED_METRICS)
def test_each_metric_has_keras_direction(name):
    want = getattr(getattr(keras.metrics, name)(**METRIC_ARGS.get(name, {})), "_direction", None)
    assert metric_direction(getattr(gtf.keras.metrics, name)(**METRIC_ARGS.get(name, {}))) == want


@pytest.mark.parametrize("fn", ["mean_squared_error", "kl_divergence", "binary_accuracy"])
def test_a_wrapped_loss_is_minimized(fn):
    def direction(k):
        source = k.losses if hasattr(k.losses, fn) else k.metrics
        return metric_direction(k.metrics.MeanMetricWrapper(getattr(source, fn)))

    keras_metric = keras.metrics.MeanMetricWrapper(getattr(keras.losses, fn, None) or getattr(keras.metrics, fn))
    want = getattr(keras_metric, "_direction", None)
    assert direction(gtf.keras) == want


class _Compiled:
    """A compiled model's metrics container (Keras' CompileMetrics), as model.metrics holds it."""

    def __init__(self, metrics):
        self.metrics = metrics
        self.name = "compile_metrics"


def _auto_model(k):
    if k is keras:
        model = _model(k)
        model.compile(optimizer="sgd", loss="mse", metrics=["accuracy", "mae"])
        x = np.zeros((2, 3), np.float32)
        model.evaluate(x, np.zeros((2, 2), np.float32), verbose=0)  # builds the compiled metrics
        return model
    metrics = [gtf.keras.metrics.Accuracy(name="accuracy"), gtf.keras.metrics.MeanAbsoluteError(name="mae")]
    return types.SimpleNamespace(metrics=[gtf.keras.metrics.Mean(name="loss"), _Compiled(metrics)])


@pytest.mark.parametrize("monitor,values", [("val_accuracy", UP), ("accuracy", DOWN), ("val_mae", DOWN)])
def test_auto_mode_asks_the_compiled_metrics(monitor, values):
    def run(k):
        model = _auto_model(k)
        cb = k.callbacks.EarlyStopping(monitor=monitor, patience=1)
        cb.set_model(model)
        cb.on_train_begin()
        for epoch, value in enumerate(values):
            cb.on_epoch_end(epoch, {monitor: value})
            if getattr(model, "stop_training", False):
                return epoch, cb.best
        return None, cb.best

    want, got = _both(run)
    assert got == want


# ---- ReduceLROnPlateau --------------------------------------------------------------------------

PLATEAU = [1.0, 0.9, 0.9, 0.9, 0.9, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85]
REDUCE_LR = {
    "patience1": dict(monitor="val_loss", factor=0.5, patience=1),
    "patience2_cooldown2": dict(monitor="val_loss", factor=0.5, patience=2, cooldown=2),
    "min_lr": dict(monitor="val_loss", factor=0.5, patience=0, min_lr=0.025),
    "min_delta": dict(monitor="val_loss", factor=0.2, patience=1, min_delta=0.06),
    "max": dict(monitor="val_loss", factor=0.5, patience=1, mode="max"),
    "verbose": dict(monitor="val_loss", factor=0.5, patience=1, cooldown=1, verbose=1),
}


def _reduce_lr(k, kwargs, optimizer=None, values=PLATEAU):
    optimizer = optimizer or k.optimizers.SGD(0.1)
    model = _model(k, optimizer)
    seen = []
    # The logs are shared by the callbacks of a list: the next one sees the rate logged.
    recorder = k.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(dict(logs)))
    cb = k.callbacks.ReduceLROnPlateau(**kwargs)
    callbacks = k.callbacks.CallbackList([cb, recorder], model=model)
    callbacks.on_train_begin()
    rates = []
    for epoch, value in enumerate(values):
        callbacks.on_epoch_end(epoch, {"val_loss": value, "loss": 2 * value})
        opts = optimizer.optimizers if hasattr(optimizer, "optimizers") else [optimizer]
        rates.append([_float(o.learning_rate) for o in opts])
        rates[-1].append((cb.wait, cb.cooldown_counter))
    callbacks.on_train_end()
    return rates, seen


@pytest.mark.parametrize("case", sorted(REDUCE_LR))
def test_reduce_lr_on_plateau_matches_keras(case, capsys):
    want = _reduce_lr(keras, REDUCE_LR[case])
    keras_out = capsys.readouterr().out
    got = _reduce_lr(gtf.keras, REDUCE_LR[case])
    assert got == want
    assert capsys.readouterr().out == keras_out


def test_reduce_lr_on_plateau_reduces_each_optimizer_of_a_multi_optimizer(capsys):
    def multi(k):
        o = k.optimizers
        routing = o.OptimizerMap(o.SGD(0.1, name="head"), {"dense.*": o.Adam(0.01, name="body")})
        return o.MultiOptimizer(routing)

    kwargs = dict(monitor="val_loss", factor=0.5, patience=1, min_lr=0.004, verbose=1)
    want = _reduce_lr(keras, kwargs, multi(keras))
    keras_out = capsys.readouterr().out
    got = _reduce_lr(gtf.keras, kwargs, multi(gtf.keras))
    assert got == want and "learning_rate_body" in want[1][0]
    assert capsys.readouterr().out == keras_out


# ---- LearningRateScheduler ----------------------------------------------------------------------


def _halve(epoch, lr):
    return lr * 0.5 if epoch % 2 else lr


SCHEDULES = {
    "epoch_only": lambda epoch: 0.1 / (epoch + 1),
    "epoch_and_lr": _halve,
    "numpy_float32": lambda epoch, lr: np.float32(lr * 0.9),
    "numpy_float64": lambda epoch: np.float64(0.01 * epoch + 0.001),
}


def _scheduler(k, schedule, verbose=0, optimizer=None):
    optimizer = optimizer or k.optimizers.Adam(0.02)
    model = _model(k, optimizer)
    seen = []
    recorder = k.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(dict(logs)))
    callbacks = k.callbacks.CallbackList([k.callbacks.LearningRateScheduler(schedule, verbose), recorder], model=model)
    rates = []
    for epoch in range(5):
        callbacks.on_epoch_begin(epoch)
        opts = optimizer.optimizers if hasattr(optimizer, "optimizers") else [optimizer]
        rates.append([_float(o.learning_rate) for o in opts])
        callbacks.on_epoch_end(epoch, {"loss": 1.0})
    return rates, seen


@pytest.mark.parametrize("name", sorted(SCHEDULES))
@pytest.mark.parametrize("verbose", [0, 1])
def test_learning_rate_scheduler_matches_keras(name, verbose, capsys):
    want = _scheduler(keras, SCHEDULES[name], verbose)
    keras_out = capsys.readouterr().out
    got = _scheduler(gtf.keras, SCHEDULES[name], verbose)
    assert got == want
    assert capsys.readouterr().out == keras_out


def test_learning_rate_scheduler_sets_each_optimizer_of_a_multi_optimizer(capsys):
    def multi(k):
        o = k.optimizers
        return o.MultiOptimizer(o.OptimizerMap(o.SGD(0.1, name="head"), {"dense.*": o.Adam(0.01, name="body")}))

    want = _scheduler(keras, _halve, 1, multi(keras))
    keras_out = capsys.readouterr().out
    got = _scheduler(gtf.keras, _halve, 1, multi(gtf.keras))
    assert got == want
    assert capsys.readouterr().out == keras_out


# ---- History, TerminateOnNaN, LambdaCallback, CallbackList ------------------------------------


def test_history_matches_keras():
    def run(k):
        model = _model(k)
        callbacks = k.callbacks.CallbackList(add_history=True, model=model)
        history = model.history
        out = []
        for epochs in (3, 2):  # a second training keeps the values and restarts the epochs
            callbacks.on_train_begin()
            for epoch in range(epochs):
                callbacks.on_epoch_end(epoch, {"loss": 1.0 / (epoch + 1), "val_loss": np.float32(0.5), "n": 3})
            callbacks.on_train_end()
            out.append((dict(history.history), list(history.epoch)))
        return out, model.history is history, type(history).__name__

    want, got = _both(run)
    assert got == want


@pytest.mark.parametrize("raise_error", [False, True])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_terminate_on_nan_matches_keras(raise_error, bad, capsys):
    def run(k):
        model = _model(k)
        model.stop_training = False
        callbacks = k.callbacks.CallbackList([k.callbacks.TerminateOnNaN(raise_error=raise_error)], model=model)
        trace = []
        for batch, loss in enumerate([1.0, 0.5, bad, 0.2]):
            callbacks.on_test_batch_end(batch, {"loss": bad})  # only training batches are watched
            try:
                callbacks.on_train_batch_end(batch, {"loss": loss, "acc": 1.0})
            except RuntimeError as e:
                trace.append(("raised", batch, str(e)))
                break
            trace.append((batch, model.stop_training))
        return trace, capsys.readouterr().out

    (want, keras_out), (got, gk_out) = _both(run)
    assert gk_out == keras_out
    if raise_error:
        assert got[:-1] == want[:-1] and got[-1][:2] == want[-1][:2] == ("raised", 2)
        assert got[-1][2].startswith("[gradkit] " + want[-1][2].removesuffix("."))
    else:
        assert got == want and want[2] == (2, True)


def _recorder(k, name, calls, hooks):
    """A Callback of library ``k`` overriding ``hooks`` to record (name, hook, args, logs)."""

    def make(hook):
        def method(self, *args, **kwargs):
            calls.append((name, hook, args, sorted(kwargs), kwargs.get("logs", args[-1] if args else None)))

        return method

    return type(f"Recorder_{name}", (k.callbacks.Callback,), {hook: make(hook) for hook in hooks})()


ALL_HOOKS = [h for h in dir(gtf.keras.callbacks.Callback) if h.startswith("on_")]


def _script(k, callbacks):
    tensor = k.ops.convert_to_tensor(np.float32(0.25)) if k is keras else gtf.constant(0.25)
    callbacks.on_train_begin({"x": 1})
    callbacks.on_epoch_begin(0)
    callbacks.on_train_batch_begin(0)
    callbacks.on_train_batch_end(0, {"loss": np.float32(0.5), "nested": {"b": 2, "a": tensor}, "s": "text"})
    callbacks.on_batch_begin(1)
    callbacks.on_batch_end(1, {"loss": 0.4})
    callbacks.on_test_begin()
    callbacks.on_test_batch_begin(0)
    callbacks.on_test_batch_end(0, {"loss": 0.3, "vec": np.arange(2.0)})
    callbacks.on_test_end({"loss": 0.3})
    callbacks.on_epoch_end(0, {"val_loss": 0.3, "loss": 0.4})
    callbacks.on_predict_begin()
    callbacks.on_predict_batch_begin(0)
    callbacks.on_predict_batch_end(0, {"outputs": np.ones((2, 2))})
    callbacks.on_predict_end()
    callbacks.on_train_end({"loss": 0.4})


def test_callback_list_dispatches_every_hook_in_order():
    def run(k):
        calls = []
        every = _recorder(k, "every", calls, ALL_HOOKS)
        aliases = _recorder(k, "aliases", calls, ["on_batch_begin", "on_batch_end"])
        model = _model(k)
        callbacks = k.callbacks.CallbackList([[every], (aliases,)], model=model, verbose=0, epochs=1, steps=1)
        _script(k, callbacks)
        calls = [
            (n, h, a, kw, {key: np.asarray(v).tolist() for key, v in (logs or {}).items()})
            for n, h, a, kw, logs in calls
        ]
        return calls, every.params, every.model is model, aliases.model is model

    want, got = _both(run)
    assert got == want


def test_lambda_callback_matches_keras():
    def run(k):
        calls = []

        def note(hook):
            return lambda *args, **kwargs: calls.append((hook, args, sorted(kwargs)))

        cb = k.callbacks.LambdaCallback(
            on_epoch_begin=note("epoch_begin"),
            on_epoch_end=note("epoch_end"),
            on_train_begin=note("train_begin"),
            on_train_end=note("train_end"),
            on_train_batch_begin=note("batch_begin"),
            on_train_batch_end=note("batch_end"),
            on_test_end=note("test_end"),
            on_predict_batch_end=note("predict_batch_end"),
        )
        _script(k, k.callbacks.CallbackList([cb], model=_model(k)))
        return [
            (hook, [np.asarray(a).tolist() if not isinstance(a, dict) else sorted(a) for a in args], kw)
            for hook, args, kw in calls
        ]

    want, got = _both(run)
    assert got == want and len(want) == 8


@pytest.mark.parametrize(
    "given,add_history,add_progbar",
    [
        ([], True, True),
        (["History"], True, True),
        (["ProgbarLogger", "TerminateOnNaN"], True, False),
        ([], False, True),
    ],
)
def test_callback_list_adds_history_and_progbar_as_keras(given, add_history, add_progbar):
    def run(k):
        model = _model(k)
        callbacks = [getattr(k.callbacks, name)() for name in given]
        cl = k.callbacks.CallbackList(callbacks, add_history, add_progbar, model, verbose=2, epochs=3, steps=None)
        return [type(c).__name__ for c in cl.callbacks], [c.params for c in cl.callbacks], len(callbacks)

    want, got = _both(run)
    assert got == want


# ---- ProgbarLogger ----------------------------------------------------------------------------

TIMING = re.compile(r" - \d+s - ?\d+(s|ms|us)/step")


def _progbar(k, verbose, epochs, steps):
    cl = k.callbacks.CallbackList(add_progbar=True, model=_model(k), verbose=verbose, epochs=epochs, steps=steps)
    cl.on_train_begin()
    for epoch in range(epochs):
        cl.on_epoch_begin(epoch)
        for batch in range(4):
            cl.on_train_batch_begin(batch)
            cl.on_train_batch_end(batch, {"loss": 0.5})
        # Validation inside fit prints nothing.
        cl.on_test_begin()
        cl.on_test_batch_end(0, {"loss": 9.0})
        cl.on_test_end({"loss": 9.0})
        cl.on_epoch_end(epoch, {"loss": 0.1234 + epoch, "val_loss": 0.23456, "neg": -0.5, "tiny": 2e-5, "n": 3})
    cl.on_train_end()
    # evaluate, then predict, with a list of their own
    for hooks in ("test", "predict"):
        cl = k.callbacks.CallbackList(add_progbar=True, model=_model(k), verbose=verbose, epochs=1, steps=steps)
        getattr(cl, f"on_{hooks}_begin")()
        for batch in range(3):
            getattr(cl, f"on_{hooks}_batch_end")(batch, {"loss": 0.75, "outputs": None})
        getattr(cl, f"on_{hooks}_end")({"loss": 0.75} if hooks == "test" else None)


@pytest.mark.parametrize("steps", [4, None])
@pytest.mark.parametrize("epochs", [1, 2])
def test_progbar_logger_prints_keras_verbose_2_lines(steps, epochs, capsys):
    _progbar(keras, 2, epochs, steps)
    want = TIMING.sub(" - T", capsys.readouterr().out)
    _progbar(gtf.keras, 2, epochs, steps)
    got = TIMING.sub(" - T", capsys.readouterr().out)
    assert got == want
    assert "4/4 - T - loss: 0.1234 - n: 3.0000 - neg: -5.0000e-01 - tiny: 2.0000e-05 - val_loss: 0.2346\n" in want


def test_progbar_logger_verbose_1_prints_the_epoch_line_and_0_nothing(capsys):
    _progbar(gtf.keras, 1, 2, 4)
    lines = TIMING.sub(" - T", capsys.readouterr().out).splitlines()
    assert lines[:2] == [
        "Epoch 1/2",
        "4/4 - T - loss: 0.1234 - n: 3.0000 - neg: -0.5000 - tiny: 2.0000e-05 - val_loss: 0.2346",
    ]
    _progbar(gtf.keras, 0, 2, 4)
    assert capsys.readouterr().out == ""


# ---- CSVLogger ----------------------------------------------------------------------------------


def _csv(k, path, separator, append, epochs_logs):
    logger = k.callbacks.CSVLogger(path, separator=separator, append=append)
    logger.set_model(_model(k))
    for logs_of_training in epochs_logs:  # each a training
        logger.on_train_begin()
        for epoch, logs in enumerate(logs_of_training):
            logger.on_epoch_end(epoch, logs)
        logger.on_train_end()
    with open(path, newline="") as f:
        return f.read()


CSV_LOGS = {
    "no_val": [[{"loss": 0.5, "acc": np.float32(0.25)}, {"loss": 0.25, "acc": np.float32(0.5)}]],
    "val": [[{"loss": 0.5, "val_loss": 0.75}, {"val_loss": 0.5, "loss": 0.25, "extra": 1}]],
    "values": [[{"loss": np.float64(0.5), "vec": np.array([1.5, 2.0]), "text": "a,b", "zero_dim": np.array(3.0)}]],
    "two_trainings": [[{"loss": 0.5}], [{"loss": 0.25, "val_loss": 0.5}]],
}


@pytest.mark.parametrize("append", [False, True])
@pytest.mark.parametrize("separator", [",", ";"])
@pytest.mark.parametrize("case", sorted(CSV_LOGS))
def test_csv_logger_writes_keras_text(case, separator, append, tmp_path):
    texts = []
    for name, k in SIDES.items():
        path = tmp_path / f"{name}.csv"
        if append:
            path.write_text("")  # an empty file gets the header
        texts.append(_csv(k, path, separator, append, CSV_LOGS[case]))
    assert texts[1] == texts[0]


def test_csv_logger_appends_without_a_second_header(tmp_path):
    texts = []
    for name, k in SIDES.items():
        path = str(tmp_path / f"{name}.csv")
        _csv(k, path, ",", False, [[{"loss": 0.5}]])
        texts.append(_csv(k, path, ",", True, [[{"loss": 0.25}]]))
    assert texts[1] == texts[0] and texts[0].count("epoch") == 1


# ---- SwapEMAWeights -----------------------------------------------------------------------------


def _ema_model(k):
    optimizer = k.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5)
    model = _model(k, optimizer)
    for step in range(3):
        grads = [np.full(w.shape, step + 1.0, np.float32) for w in WEIGHTS]
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return model, optimizer


def _swap(k, swap_on_epoch):
    model, _ = _ema_model(k)
    cb = k.callbacks.SwapEMAWeights(swap_on_epoch=swap_on_epoch)
    callbacks = k.callbacks.CallbackList([cb], model=model, verbose=0, epochs=2, steps=1)
    trace = [model.get_weights()]
    callbacks.on_train_begin()
    for epoch in range(2):
        callbacks.on_epoch_begin(epoch)
        trace.append(model.get_weights())
        callbacks.on_test_begin()
        trace.append(model.get_weights())
        callbacks.on_test_end()
        trace.append(model.get_weights())
        callbacks.on_epoch_end(epoch)
        trace.append(model.get_weights())
    callbacks.on_train_end()
    return trace


@pytest.mark.parametrize("swap_on_epoch", [False, True])
def test_swap_ema_weights_matches_keras(swap_on_epoch):
    want, got = _both(lambda k: _swap(k, swap_on_epoch))
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
    assert not np.allclose(want[0][0], want[2][0])  # the test saw the averages


def test_swap_ema_weights_swaps_back_after_predict():
    def run(k):
        model, _ = _ema_model(k)
        callbacks = k.callbacks.CallbackList([k.callbacks.SwapEMAWeights()], model=model)
        before = model.get_weights()
        callbacks.on_predict_begin()
        during = model.get_weights()
        callbacks.on_predict_end()
        return before, during, model.get_weights()

    (k_before, k_during, k_after), (before, during, after) = _both(run)
    np.testing.assert_allclose(during[0], k_during[0], rtol=1e-6)
    np.testing.assert_allclose(after[0], before[0])
    # Keras' on_predict_end tests its flag the wrong way round and leaves the averages in place.
    np.testing.assert_allclose(k_after[0], k_during[0])


# ---- refusals and warnings ----------------------------------------------------------------------


def _early_stopping_unknown_metric(k):
    cb = k.callbacks.EarlyStopping(monitor="val_f00")
    cb.set_model(_model(k))
    cb.on_epoch_end(0, {"val_f00": 1.0})


def _schedule_returns(value):
    def run(k):
        cb = k.callbacks.LearningRateScheduler(lambda epoch: value)
        cb.set_model(_model(k, k.optimizers.SGD(0.1)))
        cb.on_epoch_begin(0)

    return run


def _on_a_schedule(callback):
    def run(k):
        decay = k.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
        model = _model(k, k.optimizers.SGD(decay))
        cb = callback(k)
        cb.set_model(model)
        cb.on_train_begin()
        cb.on_epoch_end(0, {"val_loss": 1.0})
        cb.on_epoch_begin(1)
        cb.on_epoch_end(1, {"val_loss": 2.0})

    return run


def _swap_without_ema(k):
    cb = k.callbacks.SwapEMAWeights()
    cb.set_model(_model(k, k.optimizers.SGD(0.1)))
    cb.on_test_begin()


def _swap_with_no_ema_in_multi(k):
    o = k.optimizers
    cb = k.callbacks.SwapEMAWeights()
    cb.set_model(_model(k, o.MultiOptimizer(o.OptimizerMap(o.SGD(0.1), {"x": o.Adam(0.1)}))))
    cb.on_test_begin()


def _end_without_begin(k):
    k.callbacks.CallbackList([k.callbacks.History()], model=_model(k)).on_test_end()


REFUSALS = {
    "factor": lambda k: k.callbacks.ReduceLROnPlateau(factor=1.0),
    "auto_mode_unknown_metric": _early_stopping_unknown_metric,
    "schedule_returns_int": _schedule_returns(1),
    "schedule_returns_str": _schedule_returns("0.1"),
    "reduce_lr_on_a_schedule": _on_a_schedule(lambda k: k.callbacks.ReduceLROnPlateau(patience=0)),
    "scheduler_on_a_schedule": _on_a_schedule(lambda k: k.callbacks.LearningRateScheduler(lambda e: 0.1)),
    "swap_without_ema": _swap_without_ema,
    "swap_multi_without_ema": _swap_with_no_ema_in_multi,
    "end_without_begin": _end_without_begin,
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals_match_keras(case):
    with pytest.raises(Exception) as keras_error:
        REFUSALS[case](keras)
    with pytest.raises(Exception) as gk_error:
        REFUSALS[case](gtf.keras)
    assert isinstance(gk_error.value, keras_error.type)
    message, keras_message = str(gk_error.value), str(keras_error.value)
    assert message.startswith("[gradkit] ")
    # Keras' words, then what to do instead.
    assert keras_message.rstrip(".").split(" Received: use_ema")[0] in message


WARNINGS = {
    "unknown_mode": lambda k: k.callbacks.EarlyStopping(mode="sideways"),
    "unknown_mode_reduce_lr": lambda k: k.callbacks.ReduceLROnPlateau(mode="up"),
    "early_stopping_missing_metric": lambda k: k.callbacks.CallbackList(
        [k.callbacks.EarlyStopping(monitor="val_acc", mode="max")], model=_model(k)
    ).on_epoch_end(0, {"loss": 1.0, "acc": 0.5}),
    "reduce_lr_missing_metric": lambda k: k.callbacks.CallbackList(
        [k.callbacks.ReduceLROnPlateau()], model=_model(k, k.optimizers.SGD(0.1))
    ).on_epoch_end(0, {"loss": 1.0}),
}


@pytest.mark.parametrize("case", sorted(WARNINGS))
def test_warnings_match_keras(case):
    (_, want), (_, got) = _both(lambda k: _quiet_warnings(lambda: WARNINGS[case](k)))
    assert got == want and len(want) == 1


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: gtf.keras.callbacks.CallbackList([object()]), "not a callback"),
        (lambda: gtf.keras.callbacks.History().on_epoch_end(0, {}), "set_model"),
        (lambda: gtf.keras.callbacks.CSVLogger("gs://bucket/log.csv"), "local files"),
        (lambda: gtf.keras.callbacks.CSVLogger("log.csv").on_epoch_end(0, {}), "on_train_begin"),
        (lambda: gtf.keras.callbacks.ProgbarLogger().set_params({"verbose": 1}), "epochs"),
        (lambda: setattr(gtf.keras.callbacks.Callback(), "model", None), "set_model"),
        (lambda: _attached(gtf.keras.callbacks.LearningRateScheduler(float)).on_epoch_begin(0), "no optimizer"),
        (lambda: _attached(gtf.keras.callbacks.SwapEMAWeights(), _ema_unbuilt()).on_test_begin(), "none yet"),
        (lambda: _swapping_without_params().on_epoch_end(0), "params"),
    ],
)
def test_gradkit_refusals(make, match):
    with pytest.raises(Exception, match=r"\[gradkit\] .*" + match):
        make()


def _attached(callback, optimizer=None):
    callback.set_model(_model(gtf.keras, optimizer))
    return callback


def _swapping_without_params():
    callback = gtf.keras.callbacks.SwapEMAWeights(swap_on_epoch=True)
    callback.set_model(_ema_model(gtf.keras)[0])
    return callback


def _ema_unbuilt():
    return gtf.keras.optimizers.SGD(0.1, use_ema=True)  # its averages come with its first step


def test_namespace_holds_keras_names_only():
    ours = {n for n in dir(gtf.keras.callbacks) if not n.startswith("_")}
    assert ours <= {n for n in dir(keras.callbacks) if not n.startswith("_")}
    assert len(ours) == 13
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        gtf.keras.callbacks.BackupAndRestore  # noqa: B018


def test_vector_metrics_reach_history_evaluate_and_the_csv_as_numpy_arrays(tmp_path):
    """A metric with one value per class (F1Score(average=None)): Keras hands NumPy arrays to the
    callbacks, History and evaluate, and CSVLogger writes their numbers."""
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[[0, 1, 1, 0, 1, 0]]

    def run(k):
        model = _model(k)
        model.compile("sgd", "categorical_crossentropy", metrics=[k.metrics.F1Score(average=None)])
        path = tmp_path / f"{'keras' if k is keras else 'gradkit'}.csv"
        history = model.fit(x, y, epochs=1, verbose=0, shuffle=False, callbacks=[k.callbacks.CSVLogger(str(path))])
        return history.history["f1_score"][0], model.evaluate(x, y, verbose=0, return_dict=True)["f1_score"], path

    (k_hist, k_eval, k_csv), (g_hist, g_eval, g_csv) = _both(run)
    for k_value, g_value in ((k_hist, g_hist), (k_eval, g_eval)):
        assert type(g_value) is type(k_value) is np.ndarray
        np.testing.assert_allclose(g_value, k_value, rtol=1e-5, atol=1e-6)
    k_row, g_row = (path.read_text().splitlines()[1] for path in (k_csv, g_csv))
    k_numbers, g_numbers = ([float(n) for n in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", row)] for row in (k_row, g_row))
    np.testing.assert_allclose(g_numbers, k_numbers, rtol=1e-5, atol=1e-6)
