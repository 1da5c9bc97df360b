"""``tf.keras.metrics`` IoU metrics against real Keras on TensorFlow: each over two updates (the
second weighted), after ``reset_state``, with their configs; out-of-range and ignored labels,
one-hot inputs, float state with fractional weights, and a by-hand value."""

import numpy as np
import pytest

import gradkit.tf as gtf
from tests._metric_parity import assert_same_config, two_updates

RNG = np.random.default_rng(5)
LABELS = RNG.integers(0, 3, (4, 5)).astype(np.int32)
LABELS[0, 0], LABELS[1, 2] = 7, -1  # out of range: left out
PREDS = RNG.integers(0, 3, (4, 5)).astype(np.int32)
SCORES = RNG.random((4, 5, 3)).astype(np.float32)
ONE_HOT = np.eye(3, dtype=np.float32)[RNG.integers(0, 3, (4, 5))]
INT_WEIGHTS = RNG.integers(0, 3, (4, 5)).astype(np.int32)
FLOAT_WEIGHTS = RNG.random((4, 5)).astype(np.float32)
BINARY = (RNG.random((4, 5)) > 0.5).astype(np.int32)
PROBS = RNG.random((4, 5)).astype(np.float32)

METRICS = {
    "MeanIoU": (lambda m: m.MeanIoU(num_classes=3), LABELS, PREDS, INT_WEIGHTS),
    "MeanIoU-ignore": (lambda m: m.MeanIoU(num_classes=3, ignore_class=1), LABELS, PREDS, INT_WEIGHTS),
    "MeanIoU-float": (lambda m: m.MeanIoU(num_classes=3, dtype="float32"), LABELS, PREDS, FLOAT_WEIGHTS),
    "MeanIoU-dense-pred": (lambda m: m.MeanIoU(num_classes=3, sparse_y_pred=False), LABELS, SCORES, INT_WEIGHTS),
    "IoU": (lambda m: m.IoU(num_classes=3, target_class_ids=[0, 2]), LABELS, PREDS, INT_WEIGHTS),
    "BinaryIoU": (lambda m: m.BinaryIoU(), BINARY, PROBS, INT_WEIGHTS),
    "BinaryIoU-one-class": (lambda m: m.BinaryIoU(target_class_ids=[1], threshold=0.3), BINARY, PROBS, INT_WEIGHTS),
    "OneHotIoU": (lambda m: m.OneHotIoU(num_classes=3, target_class_ids=[1]), ONE_HOT, SCORES, INT_WEIGHTS),
    "OneHotMeanIoU": (lambda m: m.OneHotMeanIoU(num_classes=3), ONE_HOT, SCORES, INT_WEIGHTS),
}


@pytest.mark.parametrize("name", list(METRICS))
def test_metrics_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    make, *data = METRICS[name]
    *want, want_config = two_updates(tf, make, *data)
    *got, got_config = two_updates(gtf, make, *data)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert_same_config(got_config, want_config)


def test_mean_iou_by_hand():
    # Labels [0, 0, 1, 1], predictions [0, 1, 0, 1]: each class 1 / (2 + 2 - 1).
    m = gtf.keras.metrics.MeanIoU(num_classes=2)
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    np.testing.assert_allclose(float(m.result()), 1 / 3, rtol=1e-6)


def test_a_target_class_out_of_range_is_refused():
    with pytest.raises(ValueError, match=r"\[gradkit\].*out of range"):
        gtf.keras.metrics.IoU(num_classes=2, target_class_ids=[0, 2])


def test_counts_past_two_to_the_31_under_jax_64_bit_mode():
    # Keras counts in int64: a class seen 3e9 times (weights of 1.5e9) is counted, not wrapped.
    from _x64_subprocess import run_script

    script = """
        import json, sys
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import gradkit.tf as tf
        metric = tf.keras.metrics.MeanIoU(num_classes=2)
        for _ in range(json.loads(sys.argv[1])):
            metric.update_state(np.array([0, 1]), np.array([0, 0]), sample_weight=np.array([1.5e9, 1.0]))
        print(json.dumps([float(metric.result()), metric.total_cm.numpy().tolist(), metric.get_config()["dtype"]]))
    """
    result, matrix, dtype = run_script(script, 2)
    assert matrix == [[3_000_000_000, 0], [2, 0]] and dtype == "int64"
    assert result == pytest.approx(0.5 * 3e9 / (3e9 + 2))  # class 0's IoU; class 1 never right
