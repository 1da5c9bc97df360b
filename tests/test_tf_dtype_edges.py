"""Dtype edges TensorFlow takes: Python integers past int32 into a uint32 or bfloat16 that holds
them, ``tf.size`` of any integer ``out_type``, complex ``pow`` of a zero base, and the
half-precision gradient of ``sigmoid_cross_entropy_with_logits`` as accurate as TensorFlow's.
Oracles: the values written out by hand, and the closed-form derivative in float64."""

import numpy as np
import pytest

import gradkit.tf as gtf


def test_large_python_integers_into_a_dtype_that_holds_them():
    big = 3_000_000_000
    assert gtf.constant(big, dtype=gtf.uint32).numpy() == big
    assert gtf.cast(big, gtf.uint32).numpy() == big
    assert gtf.Variable(big, dtype=gtf.uint32).numpy() == big
    assert gtf.math.add(gtf.constant([1], gtf.uint32), big).numpy().tolist() == [big + 1]
    assert float(gtf.constant(2**31, dtype=gtf.bfloat16)) == 2.0**31
    assert gtf.cast(300, gtf.int8).numpy() == 44  # an integer the target cannot hold wraps, as in TensorFlow


def test_size_of_any_integer_dtype():
    for dtype in (gtf.int16, gtf.uint8, gtf.int32):
        out = gtf.size(gtf.zeros([2, 3]), out_type=dtype)
        assert out.dtype == dtype and int(out) == 6


def test_complex_zero_to_a_positive_power_is_zero():
    got = gtf.pow(gtf.constant([0j, 0j, 2j], gtf.complex64), gtf.constant([1 + 2j, 0.5 + 1j, 2 + 0j], gtf.complex64))
    np.testing.assert_allclose(got.numpy(), [0, 0, -4], atol=1e-6)


@pytest.mark.parametrize("dtype, tolerance", [("bfloat16", 0.02), ("float16", 0.003)])
def test_half_precision_sigmoid_cross_entropy_gradient(dtype, tolerance):
    x = np.linspace(-4, 4, 401).astype(np.float32)
    logits = gtf.Variable(gtf.cast(x, getattr(gtf, dtype)))
    for z in (0.0, 1.0):
        with gtf.GradientTape() as tape:
            loss = gtf.reduce_sum(
                gtf.nn.sigmoid_cross_entropy_with_logits(
                    labels=gtf.fill([401], gtf.cast(z, getattr(gtf, dtype))), logits=logits
                )
            )
        got = gtf.cast(tape.gradient(loss, logits), gtf.float32).numpy()
        exact = 1 / (1 + np.exp(-x.astype(np.float64))) - z
        assert np.max(np.abs(got - exact) / np.abs(exact)) < tolerance
