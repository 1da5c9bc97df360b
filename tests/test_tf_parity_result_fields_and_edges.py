"""Named results (``tf.linalg.lu(x).p``, ``qr(x).q``, ``slogdet(x).log_abs_determinant``,
``combined_non_max_suppression(...).valid_detections``), ``tf.tensordot``'s axes as NumPy values
and tensors, ``tf.clip_by_norm`` with a negative ``clip_norm``, ``tf.searchsorted`` on empty rows and
``tf.math.betainc`` outside its domain: against TensorFlow (skipped without it), NumPy and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

_M = np.array([[0.0, 2.0], [3.0, 1.0]], np.float32)


def _fields(tf):
    x = tf.constant(_M)
    lu, qr, slogdet = tf.linalg.lu(x), tf.linalg.qr(x), tf.linalg.slogdet(x)
    nms = tf.image.combined_non_max_suppression(
        tf.constant([[[[0.0, 0.0, 1.0, 1.0]], [[0.0, 0.0, 0.5, 0.5]]]]), tf.constant([[[0.9], [0.8]]]), 2, 2
    )
    return {
        "lu": (type(lu).__name__, lu._fields, np.asarray(lu.lu), np.asarray(lu.p)),
        "qr": (type(qr).__name__, qr._fields, np.abs(np.asarray(qr.q)), np.abs(np.asarray(qr.r))),
        "slogdet": (type(slogdet).__name__, slogdet._fields, float(slogdet.sign), float(slogdet.log_abs_determinant)),
        "nms": (type(nms).__name__, nms._fields, np.asarray(nms.valid_detections), np.asarray(nms.nmsed_scores)),
    }


def test_results_have_tensorflows_fields():
    got = _fields(gtf)
    # By hand: det = -6, so sign -1 and log 6; the pivot row of lu is [3, 1].
    assert got["slogdet"][2:] == (-1.0, pytest.approx(np.log(6.0)))
    np.testing.assert_array_equal(got["lu"][3], [1, 0])
    tf = pytest.importorskip("tensorflow")
    want = _fields(tf)
    for key in got:
        assert got[key][:2] == want[key][:2]
        for g, w in zip(got[key][2:], want[key][2:]):
            np.testing.assert_allclose(g, w, rtol=1e-6)


_A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
_B = np.arange(20, dtype=np.float32).reshape(4, 5)


@pytest.mark.parametrize(
    "axes",
    [np.int64(1), np.array([[2], [0]]), [np.array([2]), np.array([0])], "tensor", [2, 0]],
    ids=["np_int", "np_2xk", "list_of_arrays", "tensor_2xk", "pair_of_ints"],
)
def test_tensordot_takes_numpy_and_tensor_axes(axes):
    if isinstance(axes, str):
        axes = gtf.constant([[2], [0]])
    np.testing.assert_allclose(gtf.tensordot(_A, _B, axes), np.tensordot(_A, _B, 1), rtol=1e-6)


def _clip_negative(tf):
    x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
    c = tf.Variable(-1.0)
    with tf.GradientTape() as tape:
        y = tf.clip_by_norm(x, c, axes=[1])
        loss = tf.reduce_sum(tf.where(tf.math.is_nan(y), 0.0, y))
    return np.asarray(tf.clip_by_norm(x, -1.0)), np.nan_to_num(np.asarray(y), nan=7.0), float(tape.gradient(loss, c))


def test_clip_by_norm_takes_a_negative_clip_norm_as_zero():
    got = _clip_negative(gtf)
    np.testing.assert_array_equal(got[0], np.zeros((2, 2)))
    np.testing.assert_array_equal(got[1], [[0.0, 0.0], [7.0, 7.0]])  # 0 / max(0, 0) is NaN on the zero row
    assert got[2] == 0.0
    tf = pytest.importorskip("tensorflow")
    want = _clip_negative(tf)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_searchsorted_on_empty_rows_and_values():
    np.testing.assert_array_equal(gtf.searchsorted(gtf.zeros([2, 0]), [[1.0], [2.0]]), [[0], [0]])
    np.testing.assert_array_equal(gtf.searchsorted(gtf.zeros([0]), [1.0, 2.0]), np.searchsorted(np.zeros(0), [1, 2]))
    assert gtf.searchsorted(gtf.constant([[1.0, 2.0]]), gtf.zeros([1, 0])).shape == (1, 0)


def test_betainc_is_nan_outside_tensorflows_domain():
    a, b = np.array([0.0, 1.0, 0.0, -1.0, 2.0], np.float32), np.array([1.0, 0.0, 0.0, 1.0, 1.0], np.float32)
    got = np.asarray(gtf.math.betainc(a, b, np.full(5, 0.5, np.float32)))
    assert np.isnan(got[:4]).all()
    assert got[4] == pytest.approx(0.25)  # I_x(2, 1) = x^2, by hand
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, tf.math.betainc(a, b, np.full(5, 0.5, np.float32)).numpy(), rtol=1e-6)
