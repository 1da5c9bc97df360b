"""gradkit.tf's tf.keras.losses against real TensorFlow 2.21 / Keras 3: values and gradients with
respect to y_pred and y_true, every reduction, sample weights, from_logits both ways, label
smoothing, and Keras' probability clipping (gradients at its bounds included)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_EPS = np.float32(1e-7)
_ONE_MINUS_EPS = np.float32(1 - 1e-7)

# Regression targets and predictions, with an exact zero error, an error of exactly 1 (Huber's
# delta) and a margin of exactly 0 for the hinge losses.
_REG_TRUE = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0], [1.0, -1.0, 1.0], [2.0, 1.0, 0.25]], np.float32)
_REG_PRED = np.array([[1.0, 3.0, -0.5], [0.4, 0.7, 2.0], [1.0, -2.0, 0.0], [1.5, 1.0, 0.3]], np.float32)
# Probabilities with values exactly at and beyond Keras' clipping bounds [1e-7, 1 - 1e-7].
_PROB_PRED = np.array([[0.0, _EPS, 0.5], [1.0, _ONE_MINUS_EPS, 0.2], [0.3, 0.6, 0.9], [1e-9, 0.999, 0.4]], np.float32)
_BIN_TRUE = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]], np.float32)
_LOGITS = _rs.randn(4, 3).astype(np.float32)
_ONE_HOT = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
_SOFT_TRUE = np.array([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0], [0.6, 0.4, 0.0], [0.1, 0.1, 0.8]], np.float32)
# Rows of probabilities that sum to one (categorical from probabilities renormalizes them),
# one of them exactly one-hot, so the clipping bounds are hit.
_CAT_PROBS = np.array([[1.0, 0.0, 0.0], [0.1, 0.2, 0.7], [0.25, 0.5, 0.25], [0.3, 0.3, 0.4]], np.float32)
_SPARSE = np.array([0, 2, 1, 1], np.int32)
_WEIGHTS = np.array([1.0, 0.5, 0.0, 2.0], np.float32)

# (class name, constructor options, y_true, y_pred)
_CASES = [
    ("MeanSquaredError", {}, _REG_TRUE, _REG_PRED),
    ("MeanAbsoluteError", {}, _REG_TRUE, _REG_PRED),
    ("MeanAbsolutePercentageError", {}, _REG_TRUE, _REG_PRED),
    ("MeanSquaredLogarithmicError", {}, _REG_TRUE, _REG_PRED),
    ("Huber", {}, _REG_TRUE, _REG_PRED),
    ("Huber", {"delta": 0.5}, _REG_TRUE, _REG_PRED),
    ("LogCosh", {}, _REG_TRUE, _REG_PRED),
    ("CosineSimilarity", {}, _REG_TRUE, np.vstack([_REG_PRED[:3], np.zeros((1, 3), np.float32)])),
    ("CosineSimilarity", {"axis": 0}, _REG_TRUE, _REG_PRED),
    ("Hinge", {}, _BIN_TRUE, _REG_PRED),
    ("Hinge", {}, 2 * _BIN_TRUE - 1, _REG_PRED),
    ("SquaredHinge", {}, _BIN_TRUE, _REG_PRED),
    ("CategoricalHinge", {}, _ONE_HOT, _REG_PRED),
    ("KLDivergence", {}, _SOFT_TRUE, _CAT_PROBS),
    ("Poisson", {}, np.abs(_REG_TRUE), np.abs(_REG_PRED) + 0.1),
    ("BinaryCrossentropy", {}, _BIN_TRUE, _PROB_PRED),
    ("BinaryCrossentropy", {"label_smoothing": 0.2}, _BIN_TRUE, _PROB_PRED),
    ("BinaryCrossentropy", {"from_logits": True}, _BIN_TRUE, _LOGITS),
    ("BinaryCrossentropy", {"from_logits": True, "label_smoothing": 0.1, "axis": 0}, _BIN_TRUE, _LOGITS),
    ("CategoricalCrossentropy", {}, _ONE_HOT, _CAT_PROBS),
    ("CategoricalCrossentropy", {}, _SOFT_TRUE, _PROB_PRED + 0.01),
    ("CategoricalCrossentropy", {"label_smoothing": 0.1}, _ONE_HOT, _CAT_PROBS),
    ("CategoricalCrossentropy", {"from_logits": True}, _SOFT_TRUE, _LOGITS),
    ("CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.3, "axis": 0}, _ONE_HOT, _LOGITS),
    ("SparseCategoricalCrossentropy", {}, _SPARSE, _CAT_PROBS),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, _SPARSE, _LOGITS),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, _SPARSE[:, None], _LOGITS),
]


def _ids(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("case", _CASES, ids=[_ids(c) for c in _CASES])
def test_loss_values_and_gradients_match_keras(case):
    cls_name, options, y_true, y_pred = case
    float_labels = y_true.dtype == np.float32

    def program(tf):
        cls = getattr(tf.keras.losses, cls_name)
        labels = tf.Variable(y_true) if float_labels else tf.constant(y_true)
        pred = tf.Variable(y_pred)
        with tf.GradientTape(persistent=True) as tape:
            per_sample = cls(reduction="none", **options)(labels, pred)
            weighted = cls(**options)(labels, pred, sample_weight=_WEIGHTS)
            plain = cls(**options)(labels, pred)
        out = [per_sample, weighted, plain, tape.gradient(plain, pred), tape.gradient(weighted, pred)]
        if float_labels:
            out.append(tape.gradient(weighted, labels))
        return out

    run_both(program)


_REDUCTIONS = ["sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight"]


@pytest.mark.parametrize(
    "weights",
    [None, _WEIGHTS, _WEIGHTS[:, None], 3.0, np.array([[1.0, 0.0, 2.0]] * 4, np.float32)],
    ids=["none", "per-sample", "column", "scalar", "per-element"],
)
def test_reductions_and_sample_weights_match_keras(weights):
    def program(tf):
        pred = tf.Variable(_PROB_PRED)
        out = []
        for reduction in _REDUCTIONS:
            with tf.GradientTape(persistent=True) as tape:
                # Per-sample values (BCE: (4,)) and per-element values (MSE over a new last axis: (4, 3)).
                bce = tf.keras.losses.BinaryCrossentropy(reduction=reduction)(_BIN_TRUE, pred, sample_weight=weights)
                mse = tf.keras.losses.MeanSquaredError(reduction=reduction)(
                    _REG_TRUE[..., None], pred[..., None], sample_weight=weights
                )
            out += [bce, mse, tape.gradient(bce, pred), tape.gradient(mse, pred)]
        return out

    run_both(program)


def test_a_weights_sum_of_zero_gives_zero_as_keras_divide_no_nan():
    def program(tf):
        pred = tf.Variable(_REG_PRED)
        with tf.GradientTape() as tape:
            loss = tf.keras.losses.MeanSquaredError(reduction="mean_with_sample_weight")(
                _REG_TRUE, pred, sample_weight=[0.0, 0.0, 0.0, 0.0]
            )
        return [loss, tape.gradient(loss, pred)]

    run_both(program)


@pytest.mark.parametrize(
    "fn, kwargs, y_true, y_pred",
    [
        ("mse", {}, _REG_TRUE, _REG_PRED),
        ("MSE", {}, _REG_TRUE[:, 0], _REG_PRED[:, :1]),  # (4,) against (4, 1): Keras expands y_true
        ("mae", {}, _REG_TRUE, _REG_PRED),
        ("mape", {}, _REG_TRUE, _REG_PRED),
        ("msle", {}, _REG_TRUE, _REG_PRED),
        ("kld", {}, _SOFT_TRUE, _CAT_PROBS),
        ("logcosh", {}, _REG_TRUE, _REG_PRED),
        ("huber", {"delta": 2.0}, _REG_TRUE, _REG_PRED),
        ("cosine_similarity", {"axis": 0}, _REG_TRUE, _REG_PRED),
        ("hinge", {}, _BIN_TRUE, _REG_PRED),
        ("poisson", {}, np.abs(_REG_TRUE), np.abs(_REG_PRED) + 0.1),
        ("binary_crossentropy", {}, _BIN_TRUE, _PROB_PRED),
        ("binary_crossentropy", {"from_logits": True, "label_smoothing": 0.1}, _BIN_TRUE, _LOGITS),
        ("categorical_crossentropy", {"label_smoothing": 0.2}, _ONE_HOT, _CAT_PROBS),
        ("categorical_crossentropy", {"from_logits": True}, _ONE_HOT, _LOGITS),
        ("sparse_categorical_crossentropy", {}, _SPARSE, _CAT_PROBS),
        ("sparse_categorical_crossentropy", {"from_logits": True}, _SPARSE, _LOGITS),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_function_forms_match_keras(fn, kwargs, y_true, y_pred):
    def program(tf):
        pred = tf.Variable(y_pred)
        with tf.GradientTape() as tape:
            values = getattr(tf.keras.losses, fn)(y_true, pred, **kwargs)
            total = tf.reduce_sum(
                values
                * np.arange(1, values.shape[0] + 1, dtype=np.float32).reshape((-1,) + (1,) * (len(values.shape) - 1))
            )
        return [values, tape.gradient(total, pred)]

    run_both(program)


def test_long_names_are_the_short_ones():
    # TensorFlow's tf.keras.losses exports only the short names of these (keras.losses has both).
    losses = gtf.keras.losses
    assert losses.mean_squared_error is losses.mse is losses.MSE
    assert losses.mean_absolute_error is losses.mae
    assert losses.kl_divergence is losses.kld is losses.KLD
    assert losses.log_cosh is losses.logcosh


def test_second_derivative_through_categorical_crossentropy_matches_tensorflow():
    def program(tf):
        logits = tf.Variable(_LOGITS)
        loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = loss_object(_ONE_HOT, logits)
            g = inner.gradient(loss, logits)
            s = tf.reduce_sum(g * g)
        return outer.gradient(s, logits)

    run_both(program)


def test_a_custom_loss_subclass_is_reduced_and_weighted_as_in_keras():
    def program(tf):
        class Cubed(tf.keras.losses.Loss):
            def call(self, y_true, y_pred):
                return tf.reduce_mean(tf.abs(y_true - y_pred) ** 3, axis=-1)

        pred = tf.Variable(_REG_PRED)
        loss_object = Cubed(reduction="sum")
        with tf.GradientTape() as tape:
            loss = loss_object(_REG_TRUE, pred, sample_weight=_WEIGHTS)
        return [loss, tape.gradient(loss, pred), loss_object.name]

    run_both(program)


def test_names_and_attributes_match_keras():
    def program(tf):
        objects = [
            tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            tf.keras.losses.BinaryCrossentropy(label_smoothing=0.1),
            tf.keras.losses.Huber(),
            tf.keras.losses.MeanSquaredError(reduction="sum", name="mine"),
        ]
        return [[o.name, str(o.reduction)] for o in objects] + [
            [str(objects[0].from_logits), str(objects[1].label_smoothing)]
        ]

    run_both(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.keras.losses.MeanSquaredError(reduction="auto"),
        lambda tf: tf.keras.losses.MeanSquaredError(reduction="average"),
        lambda tf: tf.keras.losses.BinaryCrossentropy()(tf.ones([4, 1]), tf.ones([4, 3]) * 0.5),
        lambda tf: tf.keras.losses.categorical_crossentropy(tf.ones([4, 2]), tf.ones([4, 3]) * 0.5),
        lambda tf: tf.keras.losses.sparse_categorical_crossentropy(tf.constant([0, 1]), tf.ones([2, 3, 4])),
        lambda tf: tf.keras.losses.categorical_crossentropy(tf.ones([4, 3]), tf.ones([4, 3]), axis=True),
        lambda tf: tf.keras.losses.MeanSquaredError(delta=1.0),
    ],
    ids=["auto", "unknown", "bce-shapes", "cce-shapes", "sparse-shapes", "bool-axis", "unknown-option"],
)
def test_refusals_match_keras(program):
    error = run_both(program)
    assert str(error).startswith("[gradkit]"), error


def test_sparse_labels_outside_the_classes_are_refused():
    # TensorFlow raises InvalidArgumentError; the gather would give NaN silently.
    run_both(lambda tf: tf.keras.losses.SparseCategoricalCrossentropy()([0, 3], tf.ones([2, 3]) / 3))
    with pytest.raises(ValueError, match=r"\[gradkit\].*outside the classes"):
        gtf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)([0, -1], gtf.ones([2, 3]))


def test_ignore_class_leaves_those_labels_out_of_the_mean():
    loss = gtf.keras.losses.SparseCategoricalCrossentropy(ignore_class=0)([0, 1], gtf.ones([2, 3]) / 3)
    np.testing.assert_allclose(float(loss), np.log(3.0), rtol=1e-6)  # only label 1 counts: -log(1/3), by hand


def test_a_loss_in_a_compiled_step_compiles_once_and_matches_tensorflow():
    from _oracles import count_compiles

    def make(tf):
        w = tf.Variable(_LOGITS[:3, :3])
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_object(y, tf.matmul(x, w))
            w.assign_sub(0.1 * tape.gradient(loss, w))
            return loss

        return w, step

    xs = [_rs.randn(4, 3).astype(np.float32) for _ in range(4)]

    def program(tf):
        w, step = make(tf)
        return [step(x, _SPARSE) for x in xs] + [w]

    run_both(program)
    w, step = make(gtf)
    step(xs[0], _SPARSE)
    traces = step.trace_count  # the first call may trace twice (to find the Variables it assigns)
    assert count_compiles(lambda: [step(x, _SPARSE).numpy() for x in xs[1:]]) == 0
    assert step.trace_count == traces


@pytest.mark.parametrize("loss", ["CategoricalCrossentropy", "CategoricalFocalCrossentropy"])
def test_categorical_gradients_of_tiny_probabilities_stay_finite(loss):
    # The renormalization's division has TensorFlow's gradient, finite where jax's x / y**2 overflows.
    def program(tf):
        v = tf.Variable(np.full((1, 3), 2e-21, np.float32))
        with tf.GradientTape() as tape:
            value = getattr(tf.keras.losses, loss)()(np.array([[1.0, 0.0, 0.0]], np.float32), v)
        return [value, tape.gradient(value, v)]

    value, grad = run_both(program)
    assert np.all(np.isfinite(np.asarray(grad)))
