"""gradkit.tf's tf.keras.metrics against real TensorFlow 2.21 / Keras 3: results over several
update_state calls with and without sample weights, reset, calling the metric, its Variables,
updates inside a tf.function step (compiled once) and under a tape (gradients unchanged)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from _oracles import count_compiles  # noqa: E402
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(1)
_LOGITS = _rs.randn(3, 4, 5).astype(np.float32)  # three batches of 4 samples, 5 classes
_LABELS = np.array([[0, 1, 4, 4], [2, 2, 3, 0], [1, 0, 0, 4]], np.int32)
_LABELS[0, :2] = _LOGITS[0, :2].argmax(-1)  # some hits
_WEIGHTS = np.array([[1.0, 0.0, 2.0, 0.5], [1.0, 1.0, 1.0, 1.0], [0.0, 3.0, 1.0, 1.0]], np.float32)
_REG_TRUE = _rs.randn(3, 4, 2).astype(np.float32)
_REG_PRED = _rs.randn(3, 4, 2).astype(np.float32)
_W0 = _rs.randn(5, 5).astype(np.float32) * 0.1 + np.eye(5, dtype=np.float32)


def _stream(metric, batches, weights=None):
    """Results after each of several update_state calls, after a __call__, and after a reset."""
    out = []
    for i, batch in enumerate(batches):
        metric.update_state(*batch, **({} if weights is None else {"sample_weight": weights[i]}))
        out.append(metric.result())
    out.append(metric(*batches[0]))
    metric.reset_state()
    out.append(metric.result())
    metric.update_state(*batches[-1])
    out.append(metric.result())
    return out


_ONE_HOT = np.eye(5, dtype=np.float32)[_LABELS]
_BINARY_TRUE = (_REG_TRUE > 0).astype(np.float32)
_BINARY_PRED = 1 / (1 + np.exp(-_REG_PRED))

# (metric class, constructor options, batches of update_state arguments)
_CASES = [
    ("SparseCategoricalAccuracy", {}, list(zip(_LABELS, _LOGITS))),
    ("SparseCategoricalAccuracy", {}, list(zip(_LABELS[..., None], _LOGITS))),
    ("CategoricalAccuracy", {}, list(zip(_ONE_HOT, _LOGITS))),
    ("BinaryAccuracy", {}, list(zip(_BINARY_TRUE, _BINARY_PRED))),
    ("BinaryAccuracy", {"threshold": 0.7}, list(zip(_BINARY_TRUE, _BINARY_PRED))),
    ("Accuracy", {}, list(zip(_LABELS, _LOGITS.argmax(-1).astype(np.int32)))),
    ("MeanSquaredError", {}, list(zip(_REG_TRUE, _REG_PRED))),
    ("MeanAbsoluteError", {}, list(zip(_REG_TRUE, _REG_PRED))),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, list(zip(_LABELS, _LOGITS))),
    ("CategoricalCrossentropy", {"label_smoothing": 0.1}, list(zip(_ONE_HOT, _BINARY_PRED[..., :1] * _ONE_HOT + 0.1))),
    ("BinaryCrossentropy", {}, list(zip(_BINARY_TRUE, _BINARY_PRED))),
    ("KLDivergence", {}, list(zip(_BINARY_PRED, _BINARY_PRED[::-1]))),
]


@pytest.mark.parametrize("case", _CASES, ids=[f"{c[0]}-{c[1]}" for c in _CASES])
def test_metric_results_over_several_updates_match_keras(case):
    cls_name, options, batches = case

    def program(tf):
        cls = getattr(tf.keras.metrics, cls_name)
        return [_stream(cls(**options), batches), _stream(cls(**options), batches, _WEIGHTS)]

    run_both(program)


@pytest.mark.parametrize(
    "values, weights",
    [
        ([1.0, 3.0, 5.0, 7.0], None),
        ([1.0, 3.0, 5.0, 7.0], [1.0, 1.0, 0.0, 0.0]),
        (2.5, None),
        (2.5, 4.0),
        (_REG_TRUE[0], None),  # (4, 2): one value per sample by the mean (Mean) or sum (Sum)
        (_REG_TRUE[0], _WEIGHTS[0]),
        (_REG_TRUE[0], _WEIGHTS[0][:, None]),
        (_REG_TRUE[0], 2.0),  # a scalar weight counts once per element, as in Keras
        (_REG_TRUE, _WEIGHTS),  # (3, 4, 2) against weights (3, 4)
    ],
    ids=[
        "list",
        "list-weighted",
        "scalar",
        "scalar-weighted",
        "matrix",
        "matrix-weighted",
        "column",
        "matrix-scalar",
        "rank3",
    ],
)
@pytest.mark.parametrize("cls_name", ["Mean", "Sum"])
def test_mean_and_sum_match_keras(cls_name, values, weights):
    def program(tf):
        metric = getattr(tf.keras.metrics, cls_name)(name="running")
        out = []
        for _ in range(2):
            metric.update_state(values, sample_weight=weights)
            out.append(metric.result())
        out.append(metric(values))
        return out + [[v.numpy() for v in metric.variables], metric.name]

    run_both(program)


def test_mean_of_nothing_is_zero_and_reset_states_is_reset_state():
    run_both(lambda tf: tf.keras.metrics.Mean().result())
    metric = gtf.keras.metrics.Mean()
    metric.update_state([2.0, 4.0])
    metric.reset_states()  # Keras 2's name, kept for code written against it
    assert float(metric.result()) == 0.0
    assert [float(v.numpy()) for v in metric.variables] == [0.0, 0.0]


def test_variables_are_non_trainable_as_in_keras():
    def program(tf):
        metrics = [tf.keras.metrics.Mean(), tf.keras.metrics.Sum(), tf.keras.metrics.SparseCategoricalAccuracy()]
        return [[(str(v.trainable), v.numpy()) for v in m.variables] for m in metrics] + [[m.name for m in metrics]]

    run_both(program)


def _training(tf):
    """A Keras-style custom training loop: loss object, optimizer and two metrics in a tf.function step."""
    w = tf.Variable(_W0)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.SGD(0.5)
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @tf.function
    def train_step(x, labels):
        with tf.GradientTape() as tape:
            predictions = tf.matmul(x, w)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(gradients, [w]))
        train_loss(loss)
        train_accuracy(labels, predictions)

    return w, train_step, train_loss, train_accuracy


def test_metrics_in_a_compiled_training_step_match_tensorflow_and_compile_once():
    def program(tf):
        w, train_step, train_loss, train_accuracy = _training(tf)
        out = []
        for _epoch in range(2):
            train_loss.reset_state()
            train_accuracy.reset_state()
            for x, labels in zip(_LOGITS, _LABELS):
                train_step(x, labels)
                out.append([train_loss.result(), train_accuracy.result()])
        return out + [w]

    run_both(program)

    w, train_step, train_loss, train_accuracy = _training(gtf)
    train_step(_LOGITS[0], _LABELS[0])
    traces = train_step.trace_count

    def rest():
        for x, labels in zip(_LOGITS[1:], _LABELS[1:]):
            train_step(x, labels)
        train_loss.result().numpy()

    assert count_compiles(rest) == 0
    assert train_step.trace_count == traces


def test_a_metric_updated_under_a_tape_leaves_the_gradients_as_tensorflows():
    def program(tf):
        w = tf.Variable(_LOGITS[0])
        metric = tf.keras.metrics.Mean()
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        with tf.GradientTape(persistent=True) as tape:
            logits = w * 1.0
            loss = tf.keras.losses.sparse_categorical_crossentropy(_LABELS[0], logits, from_logits=True)
            metric(loss)
            accuracy.update_state(_LABELS[0], logits)
            total = tf.reduce_mean(loss) * 2.0
        return [tape.gradient(total, w), metric.result(), accuracy.result()]

    run_both(program)


def test_a_metrics_result_has_no_gradient_as_in_tensorflow():
    def program(tf):
        w = tf.Variable(_LOGITS[0])
        metric = tf.keras.metrics.SparseCategoricalCrossentropy(from_logits=True)
        kw = {"track_assignments": False} if tf is gtf else {}  # gradkit's TensorFlow-parity tape
        with tf.GradientTape(persistent=True, **kw) as tape:
            result = metric(_LABELS[0], w * 1.0)
        return [result, tape.gradient(result, w), tape.gradient(metric.result(), w)]

    run_both(program)


def test_unknown_options_are_refused():
    run_both(lambda tf: tf.keras.metrics.BinaryAccuracy(thresh=0.3))
    with pytest.raises(TypeError, match=r"\[gradkit\].*thresh"):
        gtf.keras.metrics.BinaryAccuracy(thresh=0.3)
