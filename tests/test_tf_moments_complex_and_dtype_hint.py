"""``tf.nn.moments``, ``weighted_moments`` and ``sufficient_statistics(shift=)`` of complex
tensors use TensorFlow's squared difference, ``conj(d) d`` (a real, non-negative variance), and
``tf.convert_to_tensor(dtype_hint=)`` gives a Python value or NumPy array the hinted dtype where
it holds it. Oracles: NumPy's variance of the same values, and the dtypes written out by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

Z = np.array([1j, -1j, 2 + 1j], np.complex64)


def test_complex_variances_are_real_and_non_negative():
    want = np.mean(np.abs(Z - Z.mean()) ** 2)
    mean, variance = gtf.nn.moments(gtf.constant(Z), axes=[0])
    np.testing.assert_allclose(mean.numpy(), Z.mean(), rtol=1e-6)
    np.testing.assert_allclose(variance.numpy(), want, rtol=1e-6)
    _, weighted = gtf.nn.weighted_moments(
        gtf.constant(Z), axes=[0], frequency_weights=gtf.constant(np.ones(3, np.complex64))
    )
    np.testing.assert_allclose(weighted.numpy(), want, rtol=1e-6)
    shift = np.complex64(1j)
    _, _, v_ss, _ = gtf.nn.sufficient_statistics(gtf.constant(Z), axes=[0], shift=gtf.constant(shift))
    np.testing.assert_allclose(v_ss.numpy(), np.sum(np.abs(Z - shift) ** 2), rtol=1e-6)


@pytest.mark.parametrize(
    "value, hint, dtype, values",
    [
        ([1, 2], "float32", "float32", [1.0, 2.0]),
        (np.array([1, 2]), "float32", "float32", [1.0, 2.0]),
        (127, "int8", "int8", 127),
        ([], "bool", "bool", []),
        (1.5, "int32", "float32", 1.5),  # a hint the value does not fit: the default
        (np.array([1.5]), "int32", "int32", [1]),  # a NumPy array is cast, as TensorFlow casts it
    ],
)
def test_dtype_hint(value, hint, dtype, values):
    out = gtf.convert_to_tensor(value, dtype_hint=getattr(gtf, hint))
    assert out.dtype == getattr(gtf, dtype) and out.numpy().tolist() == values
    assert float(gtf.reduce_mean(gtf.convert_to_tensor([1, 2], dtype_hint=gtf.float32))) == 1.5


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(
        gtf.nn.moments(gtf.constant(Z), axes=[0])[1].numpy(),
        tf.nn.moments(tf.constant(Z), axes=[0])[1].numpy(),
        rtol=1e-6,
    )
    for value, hint in [([1, 2], "float32"), (np.array([1.5]), "int32"), (1.5, "int32"), (127, "int8")]:
        ours = gtf.convert_to_tensor(value, dtype_hint=getattr(gtf, hint))
        theirs = tf.convert_to_tensor(value, dtype_hint=getattr(tf, hint))
        assert ours.dtype.name == theirs.dtype.name and ours.numpy().tolist() == theirs.numpy().tolist()
