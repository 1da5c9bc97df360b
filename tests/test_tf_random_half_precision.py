"""Normal, truncated-normal and gamma draws in float16 and bfloat16 have the distribution of
float32 draws rounded to that dtype (TensorFlow draws in float32 and casts): many distinct
values and the tails a normal has. A negative Poisson rate draws zeros, as TensorFlow's kernel.
Oracles: the normal distribution's tail probabilities (erfc) and a hand count of the values
a half-precision dtype holds."""

import math

import numpy as np
import pytest

import gradkit.tf as gtf

N = 200_000


def _as_float(t):
    return gtf.cast(t, gtf.float32).numpy()


@pytest.mark.parametrize(
    "draw",
    [
        lambda dtype: gtf.random.normal([N], dtype=dtype, seed=1),
        lambda dtype: gtf.random.stateless_normal([N], [1, 2], dtype=dtype),
        lambda dtype: gtf.random.Generator.from_seed(3).normal([N], dtype=dtype),
        lambda dtype: gtf.keras.random.normal((N,), dtype=dtype, seed=4),
    ],
)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_normals_have_normal_tails(draw, dtype):
    z = _as_float(draw(getattr(gtf, dtype)))
    # P(|z| > 3) = erfc(3 / sqrt(2)) = 0.0027: 540 of 200,000 expected, ~23 standard deviation.
    assert abs(np.mean(np.abs(z) > 3) - math.erfc(3 / math.sqrt(2))) < 5 * math.sqrt(0.0027 / N)
    assert np.abs(z).max() > 3.8
    # bfloat16 holds 128 values per octave; a normal spreads over many octaves.
    assert len(np.unique(z)) > (1000 if dtype == "bfloat16" else 10_000)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_truncated_normals_fill_their_range(dtype):
    z = _as_float(gtf.random.truncated_normal([N], dtype=getattr(gtf, dtype), seed=2))
    assert np.abs(z).max() <= 2.0
    # P(|z| > 1.9 | |z| < 2) = (erfc(1.9/sqrt 2) - erfc(2/sqrt 2)) / (1 - erfc(2/sqrt 2)) = 0.0125
    tail = (math.erfc(1.9 / math.sqrt(2)) - math.erfc(2 / math.sqrt(2))) / (1 - math.erfc(2 / math.sqrt(2)))
    assert abs(np.mean(np.abs(z) > 1.9) - tail) < 5 * math.sqrt(tail / N)


def test_half_precision_gamma_has_many_values():
    g = _as_float(gtf.random.gamma([N], 2.0, dtype=gtf.float16, seed=5))
    assert len(np.unique(g)) > 4000
    # The lower tail of Gamma(2): P(g < 0.1) = 1 - e^-0.1 (1 + 0.1) = 0.00468.
    p = 1 - math.exp(-0.1) * 1.1
    assert abs(np.mean(g < 0.1) - p) < 5 * math.sqrt(p / N)


def test_a_negative_poisson_rate_draws_zeros():
    np.testing.assert_array_equal(gtf.random.poisson([4], -1.0, seed=1).numpy(), np.zeros(4, np.float32))
    np.testing.assert_array_equal(gtf.random.stateless_poisson([4], [1, 2], -1.0).numpy(), np.zeros(4, np.int32))
    counts = gtf.random.poisson([20_000], [-2.0, 3.0], seed=2).numpy()
    assert (counts[:, 0] == 0).all() and abs(counts[:, 1].mean() - 3.0) < 0.1


def test_truncated_normal_of_an_integer_dtype_is_refused():
    from gradkit import GradkitError

    with pytest.raises(GradkitError, match="float dtype"):
        gtf.random.truncated_normal([2], dtype=gtf.int32)
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(TypeError):
        tf.random.truncated_normal([2], dtype=tf.int32)
