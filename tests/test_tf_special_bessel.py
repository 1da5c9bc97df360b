"""``tf.math.special``'s Bessel functions ``j0``, ``j1``, ``y0``, ``y1``, ``k0``, ``k0e``, ``k1``,
``k1e``: values against SciPy's (double precision, a dependency of jax) over arguments from
1e-6 to 1e4, TensorFlow's values where the functions are undefined, gradients against
``check_grads`` and TensorFlow's gradient formulas, and values against TensorFlow itself."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp
from jax.test_util import check_grads

import gradkit.tf as gtf
from gradkit.tf import _special_bessel

NAMES = ["j0", "j1", "y0", "y1", "k0", "k0e", "k1", "k1e"]
X = np.concatenate([np.geomspace(1e-6, 1e4, 1500), -np.geomspace(1e-6, 50, 100)]).astype(np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_values_are_within_a_few_float32_roundings_of_scipys(name):
    got = getattr(gtf.math.special, f"bessel_{name}")(X).numpy()
    want = getattr(sp, name)(X.astype(np.float64))
    # Where the double-precision value is a normal float32 (k0(1e4) underflows).
    defined = np.isfinite(want) & (np.abs(want) > 1e-37) & ((X > 0) if name[0] in "yk" else True)
    error = np.abs(got[defined] - want[defined])
    # Relative where the value is large, absolute near the zeros of J and Y.
    assert (np.minimum(error, error / np.abs(want[defined])) < 2e-6).all()


def test_values_where_the_functions_are_undefined_are_tensorflows():
    x = np.array([-1.0, 0.0], np.float32)
    special = gtf.math.special
    np.testing.assert_array_equal(special.bessel_y0(x).numpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(special.bessel_y1(x).numpy(), [-np.inf, np.nan])
    for name in ("k0", "k0e", "k1", "k1e"):
        np.testing.assert_array_equal(getattr(special, f"bessel_{name}")(x).numpy(), [np.inf, np.inf])
    np.testing.assert_array_equal(special.bessel_j0(x).numpy()[1], 1.0)
    np.testing.assert_array_equal(special.bessel_j1(x).numpy()[1], 0.0)


def test_k_at_infinity_nan_and_the_largest_floats():
    # K and its scaled form fall to 0 at +inf (e^x K(x) as sqrt(pi / 2x)), NaN stays NaN; near the
    # largest float32, sqrt(pi / 2x) (1 + (4 n^2 - 1) / 8x) by hand, as TensorFlow gives it.
    x = np.array([np.inf, np.nan, 3e38], np.float32)
    special = gtf.math.special
    for name in ("k0", "k0e", "k1", "k1e"):
        got = getattr(special, f"bessel_{name}")(x).numpy()
        assert got[0] == 0.0 and np.isnan(got[1]), name
        order = int(name[1])
        want = 0.0 if not name.endswith("e") else np.sqrt(np.pi / 2) / np.sqrt(3e38) * (1 + (4 * order**2 - 1) / 24e38)
        np.testing.assert_allclose(got[2], want, rtol=1e-6, atol=0)
        tf = pytest.importorskip("tensorflow")
        np.testing.assert_allclose(got, getattr(tf.math.special, f"bessel_{name}")(x).numpy(), rtol=1e-6)


def test_float64_edges_are_tensorflows():
    # Y1(0) is -inf in TensorFlow's float64 kernel (NaN in float32's); K near the largest float64.
    pytest.importorskip("tensorflow")
    from _x64_subprocess import run_script

    out = run_script(
        """
        import json, sys
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np, tensorflow as tf, gradkit.tf as gtf
        rows = {}
        for name in ("y1", "k0", "k0e", "k1", "k1e"):
            x = np.array([0.0, np.inf, np.nan, 2.5] + ([] if name == "y1" else [1.7e308]))
            rows[name] = [
                [repr(float(v)) for v in getattr(m.math.special, "bessel_" + name)(x).numpy()] for m in (gtf, tf)
            ]
        print(json.dumps(rows))
        """,
        [],
    )
    for name, (got, want) in out.items():
        np.testing.assert_allclose(np.array(got, float), np.array(want, float), rtol=1e-9, err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_first_and_second_derivatives_match_finite_differences_of_scipys(name):
    # Central differences of SciPy's double-precision values: float32 differences of gradkit's
    # own would drown the derivatives in rounding.
    fn = getattr(_special_bessel, f"_{name}")
    x = jnp.array([0.3, 0.9, 1.2, 3.7, 15.0], jnp.float32)
    first = jax.vmap(jax.grad(fn))(x)
    second = jax.vmap(jax.grad(jax.grad(fn)))(x)
    exact, h = np.asarray(x, np.float64), 1e-4
    f = getattr(sp, name)
    np.testing.assert_allclose(first, (f(exact + h) - f(exact - h)) / (2 * h), rtol=2e-5)
    # k0e'' = k0e - 2 k1e + ... loses digits to cancellation where k0e and k1e are close (x = 15).
    np.testing.assert_allclose(second, (f(exact + h) - 2 * f(exact) + f(exact - h)) / h**2, rtol=1e-3)
    check_grads(fn, (x[1:4],), order=1, modes=("fwd", "rev"), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_gradients_are_tensorflows_formulas():
    x = gtf.Variable(np.array([0.0, 0.5, 2.0, 30.0], np.float32))
    s = gtf.math.special
    with gtf.GradientTape(persistent=True) as tape:
        outs = {name: getattr(s, f"bessel_{name}")(x) for name in NAMES}
    g = {name: tape.gradient(y, x).numpy() for name, y in outs.items()}
    v = {name: y.numpy() for name, y in outs.items()}
    xs = x.numpy()
    np.testing.assert_allclose(g["j0"], -v["j1"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g["j1"], np.where(xs == 0, 0.5, v["j0"] - v["j1"] / np.where(xs == 0, 1, xs)), atol=1e-6)
    positive = xs > 0
    np.testing.assert_allclose(g["y0"][positive], -v["y1"][positive], rtol=1e-6)
    k = {name: v[name][positive] for name in ("k0", "k0e", "k1", "k1e")}
    np.testing.assert_allclose(g["k0e"][positive], k["k0e"] - k["k1e"], rtol=1e-5)
    np.testing.assert_allclose(g["k1"][positive], -k["k0"] - k["k1"] / xs[positive], rtol=1e-5)


def test_dtypes_are_tensorflows():
    half = gtf.math.special.bessel_k1e(np.array([1.0], np.float16))
    assert half.dtype == gtf.float16 and abs(float(half.numpy()[0]) - sp.k1e(1.0)) < 2e-3
    with pytest.raises(TypeError, match="bessel_j0"):
        gtf.math.special.bessel_j0(np.array([1.0], jnp.bfloat16))


@pytest.mark.parametrize("name", NAMES)
def test_values_match_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    x = np.concatenate([X, [0.0]]).astype(np.float32)
    got = getattr(gtf.math.special, f"bessel_{name}")(x).numpy()
    want = getattr(tf.math.special, f"bessel_{name}")(x).numpy()
    both = np.isfinite(want) & (np.abs(want) > 1e-30)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    error = np.abs(got[both] - want[both])
    assert (np.minimum(error, error / np.abs(want[both])) < 2e-5).all()
