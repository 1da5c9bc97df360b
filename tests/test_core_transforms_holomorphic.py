"""``holomorphic=True`` on gradkit's transforms, as on jax's: the derivatives of a holomorphic
program over complex Variables, through their assignments, against jax's transforms of the pure
rewrite; without it, a ``[gradkit]`` error that names the option (and the Variables unchanged)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

Z0 = jnp.array([1 + 2j, -0.5 + 1j], jnp.complex64)


def _program(z):
    def fn():
        z.assign(z * (2 - 1j))
        z.assign(z * z + 1j * z)
        return z * 1.0

    return fn


def _pure(z):
    z = z * (2 - 1j)
    return z * z + 1j * z


@pytest.mark.parametrize(("ours", "theirs"), [(gk.jacrev, jax.jacrev), (gk.jacfwd, jax.jacfwd)])
def test_holomorphic_jacobians_match_jax(ours, theirs):
    z = gk.Variable(Z0, name="z")
    got = ours(_program(z), wrt=z, holomorphic=True)()
    np.testing.assert_allclose(got, theirs(_pure, holomorphic=True)(Z0), rtol=1e-6)
    np.testing.assert_array_equal(z.numpy(), Z0)


def test_holomorphic_grad_and_hessian_match_jax():
    z = gk.Variable(Z0, name="z")

    def loss():
        return jnp.sum(_program(z)() ** 3)

    def pure_loss(z):
        return jnp.sum(_pure(z) ** 3)

    np.testing.assert_allclose(
        gk.grad(loss, wrt=z, holomorphic=True)(), jax.grad(pure_loss, holomorphic=True)(Z0), rtol=1e-5
    )
    value, grads = gk.value_and_grad(loss, wrt=z, holomorphic=True)()
    np.testing.assert_allclose(value, pure_loss(Z0), rtol=1e-5)
    np.testing.assert_allclose(
        gk.hessian(loss, wrt=z, holomorphic=True)(), jax.hessian(pure_loss, holomorphic=True)(Z0), rtol=1e-5
    )


@pytest.mark.parametrize("transform", [gk.jacrev, gk.jacfwd, gk.hessian, gk.grad])
def test_complex_without_holomorphic_names_the_option(transform):
    z = gk.Variable(Z0, name="z")
    fn = (lambda: jnp.sum(_program(z)())) if transform is gk.grad else _program(z)
    with pytest.raises(TypeError, match=r"\[gradkit\] gk\.\w+ got complex values.*holomorphic=True"):
        transform(fn, wrt=z)()
    np.testing.assert_array_equal(z.numpy(), Z0)
