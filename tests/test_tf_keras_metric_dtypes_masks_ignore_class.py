"""Keras metrics and losses at three edges, against hand derivations and Keras 3 where installed.

- A metric's count Variables are float32 whatever its dtype, as Keras makes them (``add_variable``
  without a dtype is floatx): a float16 ``TruePositives`` counts past 2048. ``Mean``/``Sum``/F-scores
  and IoUs keep the metric's dtype, as Keras passes it. A dtype policy (``"mixed_float16"``) is
  taken as Keras takes it: its compute dtype.
- ``Mean``/``Sum`` given sample weights also weigh 0 where the values carry a Keras mask.
- ``SparseCategoricalCrossentropy(ignore_class=...)`` of a softmax output: Keras zeroes the ignored
  rows first, so the cross-entropy is of the clipped probabilities (capped at -log 1e-7), not of the logits.
"""

import numpy as np
import pytest

import gradkit.tf as gtf

LABELS = np.array([1, 1, 1, 1, 1, 1, 1, 0], np.float32)
SCORES = np.full(8, 0.9, np.float32)


def _counted(tf, dtype):
    metrics = [tf.keras.metrics.TruePositives(dtype=dtype), tf.keras.metrics.Precision(dtype=dtype)]
    for _ in range(1000):
        for m in metrics:
            m.update_state(LABELS, SCORES)
    return [np.asarray(m.result()) for m in metrics]


@pytest.mark.parametrize("dtype", ["float16", "mixed_float16", "bfloat16"])
def test_counts_are_kept_in_float32(dtype):
    tp, precision = _counted(gtf, dtype)
    assert tp.dtype == np.float32 and float(tp) == 7000.0  # 7 true positives a batch, 1000 batches
    assert precision.dtype == np.float32 and float(precision) == 0.875
    tf = pytest.importorskip("tensorflow")
    want = _counted(tf, dtype)
    np.testing.assert_array_equal([tp, precision], want)


def test_mean_and_iou_keep_the_metric_dtype_and_policies_give_their_compute_dtype():
    assert gtf.keras.metrics.Mean(dtype="float16").total.dtype == np.float16
    assert gtf.keras.metrics.MeanIoU(2, dtype="float16").total_cm.dtype == np.float16
    assert gtf.keras.metrics.Mean(dtype="mixed_bfloat16").dtype == "bfloat16"
    assert gtf.keras.losses.MeanSquaredError(dtype="mixed_float16").dtype == "float16"
    loss = gtf.keras.losses.MeanSquaredError(dtype=gtf.keras.mixed_precision.Policy("mixed_float16"))
    assert np.asarray(loss([1.0, 2.0], [1.5, 2.0])).dtype == np.float16


def test_r2_score_in_float16_accumulates_in_float32():
    metric = gtf.keras.metrics.R2Score(dtype="float16")
    predictions = np.where(LABELS == 1, 0.75, 0.25).astype(np.float32)  # exact in float16
    for _ in range(3):
        metric.update_state(LABELS[:, None], predictions[:, None])
    # Residuals all 0.25: 1 - 8 (1/16) / (7 (1/8)^2 + (7/8)^2) = 1 - 0.5 / 0.875.
    np.testing.assert_allclose(float(metric.result()), 1 - 0.5 / 0.875, rtol=1e-6)
    assert metric.sum.dtype == np.float32


def _masked_reductions(tf):
    ids = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], np.int32)
    embedding = tf.keras.layers.Embedding(5, 3, mask_zero=True)
    embedding.build((None, 4))
    embedding.set_weights([np.arange(15, dtype=np.float32).reshape(5, 3) / 10])
    values = embedding(ids)
    found = []
    for name in ("Mean", "Sum"):
        for weights in (np.ones((2, 4), np.float32), None):
            metric = getattr(tf.keras.metrics, name)()
            metric.update_state(values, sample_weight=weights)
            found.append(float(metric.result()))
    return found


def test_mean_and_sum_with_weights_leave_out_masked_values():
    # Rows 1, 2, 3 of the table: [.3 .4 .5], [.6 .7 .8], [.9 1 1.1]; kept positions (0,0), (0,1), (1,0).
    # Mean: per-position means .4, .7, 1.0 over 4 positions a sample -> (.275 + .25) / (2/4 + 1/4) = 0.7.
    # Sum: 1.2 + 2.1 + 3.0 = 6.3. Without weights Keras reads no mask: the padded rows (row 0) count.
    want = [0.7, (0.4 + 0.7 + 0.1 * 2 + 1.0 + 0.1 * 3) / 8, 6.3, 1.2 + 2.1 + 0.3 * 2 + 3.0 + 0.3 * 3]
    got = _masked_reductions(gtf)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _masked_reductions(tf), rtol=1e-6)


def _ignore_class(tf, ignore_class):
    x = tf.Variable(np.array([[20.0, 0.0, -20.0], [0.0, 1.0, 2.0]], np.float32))
    with tf.GradientTape() as tape:
        probabilities = tf.keras.layers.Softmax()(x)
        loss = tf.keras.losses.SparseCategoricalCrossentropy(ignore_class=ignore_class, reduction="none")(
            np.array([2.0, 1.0]), probabilities
        )
    return np.asarray(loss), np.asarray(tape.gradient(loss, x))


def test_ignore_class_takes_the_clipped_probabilities_of_a_softmax_output():
    loss, grad = _ignore_class(gtf, 0)
    # Row 0's class 2 has probability e^-40, clipped to 1e-7: loss -log(1e-7), no gradient. Row 1 kept.
    row1 = -np.log(np.exp(1.0) / np.exp([0.0, 1.0, 2.0]).sum())
    np.testing.assert_allclose(loss, [-np.log(1e-7), row1], rtol=1e-4)
    np.testing.assert_array_equal(grad[0], 0.0)
    softmax = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(grad[1], softmax - [0, 1, 0], rtol=1e-4, atol=1e-6)
    # Without ignore_class the logits are used: the exact 40.
    np.testing.assert_allclose(_ignore_class(gtf, None)[0][0], 40.0, rtol=1e-5)
    tf = pytest.importorskip("tensorflow")
    for ignore_class in (0, 1, None):
        for got, want in zip(_ignore_class(gtf, ignore_class), _ignore_class(tf, ignore_class)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
