"""``gk.jvp``'s ``wrt_tangents=`` take a Python number in the Variable's dtype (a real direction of a
complex Variable too) and refuse an array of another dtype. Oracle: jax.jvp of the pure rewrite."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk


def test_a_python_float_tangent_of_a_complex_variable_is_a_real_direction():
    z0 = jnp.array(1 + 1j, jnp.complex64)
    z = gk.Variable(z0, name="z")
    out, tangent = gk.jvp(lambda: z * z, (), (), wrt=[z], wrt_tangents=[1.0])
    want_out, want_tangent = jax.jvp(lambda v: v * v, (z0,), (jnp.array(1 + 0j, jnp.complex64),))
    np.testing.assert_allclose(out, want_out)
    np.testing.assert_allclose(tangent, want_tangent)


def test_a_tangent_array_of_another_dtype_is_refused():
    w = gk.Variable(jnp.float32(1.0), name="w")
    with pytest.raises(TypeError, match=r"\[gradkit\] gk.jvp: the tangent for Variable 'w' has dtype complex64"):
        gk.jvp(lambda: w * w, (), (), wrt=[w], wrt_tangents=[jnp.array(1j, jnp.complex64)])


def test_a_variable_primal_is_pushed_forward_as_its_value():
    w = gk.Variable(2.0, name="w")
    got = gk.jvp(lambda v: v["a"] * v["a"], ({"a": w},), ({"a": 1.0},))
    want = jax.jvp(lambda v: v["a"] * v["a"], ({"a": jnp.float32(2.0)},), ({"a": jnp.float32(1.0)},))
    np.testing.assert_allclose(got, want)
    assert float(w.value) == 2.0
