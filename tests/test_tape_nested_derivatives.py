"""A Jacobian or a JVP taken while an outer tape records, and differentiated by that tape.

The outer derivative must see every path, including paths through an intermediate tensor
the outer tape watches, and an unrolled loop of Jacobian-based steps must record each step
over only its own part of the graph. Expected values: jax.grad / jax.jacfwd of pure-JAX
rewrites.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import count_compiles

import gradkit as gk

gnp = gk.numpy


def close(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual is not None
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def test_outer_gradient_of_a_jacobian_with_respect_to_an_intermediate_tensor():
    x = gk.Variable(2.0)
    with gk.GradientTape(persistent=True) as outer:
        y = x * 3.0
        outer.watch(y)
        with gk.GradientTape() as inner:
            inner.watch(y)
            z = y**3
        j = inner.jacobian(z, y)
    # j = 3 y^2, so dj/dy = 6 y = 36 and dj/dx = 6 y * 3 = 108 (y = 6).
    close(j, 108.0)
    close(outer.gradient(j, y), 36.0)
    close(outer.gradient(j, x), 108.0)


def test_outer_gradient_of_a_batch_jacobian_with_respect_to_an_intermediate_tensor():
    x0 = jnp.arange(6.0).reshape(3, 2) / 4
    xb = gk.Variable(x0)
    with gk.GradientTape(persistent=True) as outer:
        h = xb * 2.0
        outer.watch(h)
        with gk.GradientTape() as inner:
            inner.watch(h)
            out = gnp.sin(h) * h
        bj = inner.batch_jacobian(out, h)
    per_example = jax.vmap(jax.jacrev(lambda r: jnp.sin(r) * r))
    close(outer.gradient(bj, h), jax.grad(lambda hh: per_example(hh).sum())(x0 * 2.0))
    close(outer.gradient(bj, xb), jax.grad(lambda xx: per_example(xx * 2.0).sum())(x0))


def test_outer_gradient_of_a_forward_accumulator_jvp_with_respect_to_an_intermediate_tensor():
    x0 = jnp.array([0.4, -1.2, 0.9])
    v = jnp.array([1.0, 0.5, -2.0])
    x = gk.Variable(x0)
    with gk.GradientTape(persistent=True) as tape:
        y = x * 3.0
        tape.watch(y)
        with gk.ForwardAccumulator(y, v) as acc:
            z = gnp.sum(gnp.sin(y) * y)
        jvp = acc.jvp(z)

    def f(yy):
        return jnp.sum(jnp.sin(yy) * yy)

    def pure_jvp(yy):
        return jax.jvp(f, (yy,), (v,))[1]

    close(jvp, pure_jvp(x0 * 3.0))
    close(tape.gradient(jvp, y), jax.grad(pure_jvp)(x0 * 3.0))
    close(tape.gradient(jvp, x), jax.grad(lambda xx: pure_jvp(xx * 3.0))(x0))


def test_an_outer_tape_that_first_sees_a_variable_after_an_inner_tape_watched_it():
    # The inner tape (or accumulator) watches w before the outer tape reads it: the outer
    # tape's source must stay reachable through the inner derivative recorded as one op.
    w0, v = jnp.array([0.5, -0.3, 1.2]), jnp.array([1.0, 2.0, -1.0])
    w = gk.Variable(w0)

    def f(x):
        return jnp.sum(jnp.sin(x) * x**2)

    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            inner.watch(w)
            y = gnp.sum(gnp.sin(w) * w**2)
        g = inner.gradient(y, w)
        s = gnp.sum(g * v)
    close(outer.gradient(s, w), jax.grad(lambda x: jnp.sum(jax.grad(f)(x) * v))(w0), rtol=1e-5)

    with gk.GradientTape() as outer:
        with gk.ForwardAccumulator(w, v) as acc:
            y = gnp.sum(gnp.sin(w) * w**2)
        jv = acc.jvp(y)
    close(outer.gradient(jv, w), jax.grad(lambda x: jax.jvp(f, (x,), (v,))[1])(w0), rtol=1e-5)


def test_two_tapes_watching_one_array_each_keep_their_own_uses():
    x = jnp.array(2.0)
    with gk.GradientTape(persistent=True) as t1:
        t1.watch(x)
        a = gnp.sin(x)  # a use of x that only t1 sees
        y1 = gnp.multiply(x, x)
        with gk.GradientTape() as t2:
            t2.watch(x)
            y2 = gnp.multiply(y1, x)
            y3 = gnp.power(x, 3)
        dy = t2.gradient(y3, x)  # 3 x^2, recorded by t1
        z = dy * a
    close(t1.gradient(y2, x), jax.grad(lambda u: u**3)(2.0))
    close(t1.gradient(y1, x), jax.grad(lambda u: u**2)(2.0))
    close(t1.gradient(z, x), jax.grad(lambda u: 3 * u**2 * jnp.sin(u))(2.0), rtol=1e-5)
    # As a tensor, watched by both tapes:
    xt = gk.Tensor(jnp.array(2.0))
    with gk.GradientTape(persistent=True) as t1:
        t1.watch(xt)
        y1 = xt * xt
        with gk.GradientTape() as t2:
            t2.watch(xt)
            y2 = y1 * xt
        g2 = t2.gradient(y2, xt)  # t2 sees only its own use: y1 is a constant to it
    close(t1.gradient(y2, xt), 12.0)
    close(g2, 4.0)


def test_third_derivative_from_nested_jacobians():
    x0 = jnp.array([0.3, -0.7, 1.1])
    x = gk.Variable(x0)

    def f(v):
        return jnp.sum(jnp.sin(v) * v[0] + v**3)

    with gk.GradientTape() as t3:
        with gk.GradientTape() as t2:
            with gk.GradientTape() as t1:
                y = gnp.sum(gnp.sin(x) * x[0] + x**3)
            g = t1.gradient(y, x)
        h = t2.jacobian(g, x)
    third = t3.jacobian(h, x)
    close(h, jax.hessian(f)(x0), rtol=1e-5, atol=1e-5)
    close(third, jax.jacfwd(jax.hessian(f))(x0), rtol=1e-5, atol=1e-5)


def _newton_meta(theta0, x0, steps):
    """Pure JAX: Newton's method on f(x) = x^3 + theta x - 1 (elementwise), then a loss."""

    def run(theta):
        x = x0
        for _ in range(steps):
            r = x**3 + theta * x - 1.0
            jac = jax.jacrev(lambda xx: xx**3 + theta * xx - 1.0)(x)
            x = x - jnp.linalg.solve(jac, r)
        return jnp.sum(x**2)

    return jax.value_and_grad(run)(theta0)


def test_unrolled_newton_steps_with_recorded_jacobians_give_the_exact_meta_gradient_and_compile_once():
    theta0, x0 = jnp.float32(2.0), jnp.array([0.5, 0.4, 0.6])
    theta, x = gk.Variable(theta0), gk.Variable(x0)

    def meta_step():
        x.assign(x0)
        with gk.GradientTape() as outer:
            for _ in range(4):
                with gk.GradientTape() as inner:
                    inner.watch(x)
                    r = x**3 + theta * x - 1.0
                jac = inner.jacobian(r, x)
                x.assign_sub(gnp.linalg.solve(jac, r))
            loss = gnp.sum(x**2)
        return loss, outer.gradient(loss, theta)

    expected_loss, expected_grad = _newton_meta(theta0, x0, 4)
    loss, grad = meta_step()
    close(loss, expected_loss, rtol=1e-4)
    close(grad, expected_grad, rtol=1e-4, atol=1e-5)
    results = []
    assert count_compiles(lambda: results.extend(np.asarray(meta_step()[1]) for _ in range(3))) == 0
    grad = results[-1]
    close(grad, expected_grad, rtol=1e-4, atol=1e-5)


def test_a_gk_jit_step_with_its_own_tape_differentiated_by_an_outer_tape():
    @gk.jit
    def inner_grad(x):
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = gnp.sum(gnp.sin(x) * x)
        return tape.gradient(y, x)

    w0 = np.array([0.3, -1.2], np.float32)
    w = gk.Variable(w0)
    for _ in range(2):  # the second call reuses the compiled step
        with gk.GradientTape() as outer:
            s = gnp.sum(inner_grad(w * 2.0))
        got = outer.gradient(s, w)

    def pure(x):
        return jnp.sum(jax.grad(lambda u: jnp.sum(jnp.sin(u) * u))(x * 2.0))

    close(got, jax.grad(pure)(w0), rtol=1e-5)


def test_a_use_of_a_variable_from_before_a_tape_saw_it_is_not_that_tapes_path():
    w, z = gk.Variable(2.0), gk.Variable(5.0)
    with gk.GradientTape() as t1:
        r = w.read_value()  # t1 reads w: t2 does not exist yet
        with gk.GradientTape() as t2:
            e = r * z  # uses w's value through r, which t2 never saw
            y = w * 3.0  # t2 first sees w here
            s = e + y
        g2 = t2.gradient(s, [w, z])
    # t2: ds/dw counts only the read t2 saw (3); ds/dz = r = 2. t1 sees both paths to w.
    close(g2[0], 3.0)
    close(g2[1], 2.0)
    close(t1.gradient(s, w), 5.0 + 3.0)
