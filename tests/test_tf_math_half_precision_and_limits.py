"""tf.linalg.inv / qr of float16 matrices (computed in float32, as TensorFlow's kernels do),
matmul's refusal of transpose and adjoint together, and igamma/igammac at x = +inf."""

import numpy as np
import pytest

import gradkit.tf as gtf

A = np.array([[4.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 5.0]], np.float32)


def test_inverse_and_qr_of_float16():
    half = gtf.constant(A, gtf.float16)
    inverse = gtf.linalg.inv(half)
    q, r = gtf.linalg.qr(half)
    assert (inverse.dtype, q.dtype, r.dtype) == (np.float16, np.float16, np.float16)
    np.testing.assert_allclose(np.asarray(inverse, np.float32), np.linalg.inv(A), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(np.asarray(q, np.float32) @ np.asarray(r, np.float32), A, rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(np.abs(np.asarray(r, np.float32)), np.abs(np.linalg.qr(A)[1]), rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize("side", ["a", "b"])
def test_matmul_refuses_transpose_and_adjoint_together(side):
    with pytest.raises(ValueError, match=r"^\[gradkit\] .*transpose_" + side):
        gtf.matmul(A, A, **{f"transpose_{side}": True, f"adjoint_{side}": True})


def test_igamma_at_infinite_x_is_one_with_zero_gradient():
    # P(a, x) -> 1 and Q(a, x) -> 0 as x -> inf for every a > 0: flat in a there.
    a = gtf.constant([1.0, 2.5])
    x = gtf.constant([np.inf, np.inf])
    with gtf.GradientTape(persistent=True) as tape:
        tape.watch(a)
        lower, upper = gtf.math.igamma(a, x), gtf.math.igammac(a, x)
    np.testing.assert_array_equal(lower.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(upper.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(lower, a).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(upper, a).numpy(), [0.0, 0.0])


def test_half_precision_and_limits_match_tensorflow():
    tf = pytest.importorskip("tensorflow")

    def run(module):
        half = module.constant(A, module.float16)
        a = module.constant([1.0, 2.5])
        with module.GradientTape() as tape:
            tape.watch(a)
            y = module.math.igamma(a, module.constant([np.inf, np.inf]))
        return [
            np.asarray(module.linalg.inv(half), np.float32),
            np.asarray(module.linalg.qr(half)[1], np.float32),
            y.numpy(),
            tape.gradient(y, a).numpy(),
        ]

    for ours, theirs in zip(run(gtf), run(tf)):
        np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=2e-3)
