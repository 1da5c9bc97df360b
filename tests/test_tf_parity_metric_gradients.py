"""A Keras metric updated under a tape: its result has no gradient, as in TensorFlow."""

import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402


@pytest.mark.parametrize("track_assignments", [True, False])
@pytest.mark.parametrize("metric", ["Mean", "Sum", "MeanSquaredError", "SparseCategoricalAccuracy"])
def test_a_metric_result_has_no_gradient_under_any_tape(metric, track_assignments):
    # Mean's update was recorded by a default gradkit tape: its result's gradient was 0, not None.
    def program(tf):
        w = tf.Variable([[2.0, -1.0], [0.5, 3.0]])
        m = getattr(tf.keras.metrics, metric)()
        tape_args = {} if tf is tf_real else {"track_assignments": track_assignments}
        with tf.GradientTape(persistent=True, **tape_args) as tape:
            logits = w * 3.0
            loss = tf.reduce_sum(logits**2)
            if metric in ("Mean", "Sum"):
                m.update_state(loss)
            elif metric == "MeanSquaredError":
                m.update_state(tf.zeros([2, 2]), logits)
            else:
                m.update_state(tf.constant([0, 1]), logits)
            result = m.result()
        return [tape.gradient(result, w), tape.gradient(loss, w), result]

    out = run_both(program)
    assert out[0] is None
