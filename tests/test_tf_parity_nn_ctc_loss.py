"""``tf.nn.ctc_loss`` (dense labels) against real TensorFlow: losses and gradients with respect to the
logits for sequences of different lengths, both layouts, every blank index, repeated labels, and
the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(0)
FRAMES, BATCH, CLASSES = 7, 3, 5
LOGITS = RNG.standard_normal((FRAMES, BATCH, CLASSES)).astype(np.float32)
LABELS = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 1, 2]], np.int32)
LABEL_LENGTH = np.array([3, 2, 4], np.int32)
LOGIT_LENGTH = np.array([7, 5, 6], np.int32)


def _loss_and_gradient(lib, logits, labels, time_major=True, blank_index=None, logit_length=LOGIT_LENGTH):
    x = lib.Variable(logits)
    with lib.GradientTape() as tape:
        loss = lib.nn.ctc_loss(
            labels, x, LABEL_LENGTH, logit_length, logits_time_major=time_major, blank_index=blank_index
        )
        total = lib.reduce_sum(loss * [1.0, 2.0, 0.5])
    return np.asarray(loss), np.asarray(tape.gradient(total, x))


@pytest.mark.parametrize("blank_index", [None, 0, 2, -1])
@pytest.mark.parametrize("time_major", [True, False])
def test_losses_and_gradients_match_tensorflow(time_major, blank_index):
    tf = pytest.importorskip("tensorflow")
    logits = LOGITS if time_major else np.swapaxes(LOGITS, 0, 1)
    labels = LABELS.copy()
    if blank_index not in (None, 0):
        blank = blank_index % CLASSES
        labels = np.where(labels == blank, 0 if blank else 1, labels)  # no label is the blank
        labels = np.where(np.arange(4)[None, :] < LABEL_LENGTH[:, None], labels, 0)
    want = _loss_and_gradient(tf, logits, labels, time_major, blank_index)
    got = _loss_and_gradient(gtf, logits, labels, time_major, blank_index)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-5)


def test_full_lengths_match_keras_ctc():
    tf = pytest.importorskip("tensorflow")
    full = np.full(BATCH, FRAMES, np.int32)
    want = _loss_and_gradient(tf, LOGITS, LABELS, logit_length=full)
    got = _loss_and_gradient(gtf, LOGITS, LABELS, logit_length=full)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.nn\.ctc_loss got label_length=None"):
        gtf.nn.ctc_loss(LABELS, LOGITS, None, LOGIT_LENGTH)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.nn\.ctc_loss got blank_index=5"):
        gtf.nn.ctc_loss(LABELS, LOGITS, LABEL_LENGTH, LOGIT_LENGTH, blank_index=5)
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.nn\.ctc_loss got float32 labels"):
        gtf.nn.ctc_loss(LABELS.astype(np.float32), LOGITS, LABEL_LENGTH, LOGIT_LENGTH)


def test_half_precision_logits_give_a_half_precision_loss():
    logits = np.zeros((4, 1, 3), np.float16)  # uniform over 3 classes at every frame
    loss = gtf.nn.ctc_loss([[1, 2]], gtf.constant(logits), label_length=[2], logit_length=[4])
    assert loss.dtype == np.float16
    # 15 of the 3^4 = 81 equally likely 4-frame paths collapse to [1, 2] (repeats merged, blanks
    # dropped): counted by enumerating them.
    np.testing.assert_allclose(np.asarray(loss, np.float32), [-np.log(15 / 81)], rtol=1e-3)


def test_float64_logits_are_differentiated_in_float64():
    # TensorFlow's dense CTC refuses float64; gradkit computes it in float64, so its first and
    # second derivatives pass central differences at float64's resolution (float32 would not).
    from _x64_subprocess import run_script

    out = run_script(
        """
        import json
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        from jax.test_util import check_grads
        from gradkit.tf._keras.losses_ctc import ctc_negative_log_likelihood

        logits = np.random.RandomState(0).randn(1, 8, 5)
        labels, lengths = np.array([[1, 2, 2]]), np.array([3])
        loss = lambda x: ctc_negative_log_likelihood(labels, lengths, x, np.array([8]))[0]
        check_grads(loss, (logits,), order=2, modes=["rev"], eps=1e-5, atol=1e-6, rtol=1e-6)
        print(json.dumps({"dtype": str(loss(logits).dtype)}))
        """,
        [],
    )
    assert out["dtype"] == "float64"


@pytest.mark.parametrize(
    "labels",
    [[[3, 4, 4, 3], [1, 1, 1, 1], [5, 0, 0, 2]], [[7]], [[2, 9, 2, 9, 5, 5]], [[3.0, 4.0, 3.0]]],
)
def test_ctc_unique_labels_matches_tensorflow(labels):
    from test_tf_parity import run_both_ok

    out = run_both_ok(lambda tf: tf.nn.ctc_unique_labels(tf.constant(labels)))
    assert len(out) == 2


def test_ctc_unique_labels_refuses_a_vector():
    from test_tf_parity import run_both

    out = run_both(lambda tf: tf.nn.ctc_unique_labels(tf.constant([3, 4])))
    assert str(out).startswith("[gradkit] ")
