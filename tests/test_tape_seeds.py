"""The seed programs (001, 004, 000, 002) on the native tape API, each against its pure-JAX rewrite.

Every expected value comes from ``jax.grad``/``jax.jacrev``/``jax.hessian`` of a function of
plain arrays, or from a hand derivation written next to it; never from gradkit itself.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

gnp = gk.numpy
elu = gk.lift(jax.nn.elu)
sigmoid = gk.lift(jax.nn.sigmoid)

RTOL, ATOL = 1e-5, 1e-5


def close(actual, expected, rtol=RTOL, atol=ATOL):
    assert actual is not None
    np.testing.assert_allclose(
        np.asarray(actual.numpy() if hasattr(actual, "numpy") else actual), np.asarray(expected), rtol=rtol, atol=atol
    )


def relu(z):
    return gnp.maximum(z, 0.0)


def dense(x, w, b, act):
    """A Dense layer over gk.Variables (kernel w: (in, out), bias b: (out,))."""
    return act(gnp.matmul(x, w) + gnp.expand_dims(b, 0))


def pure_dense(x, w, b, act):
    return act(x @ w + b[None, :])


def make_layer(key, n_in, n_out):
    kw, kb = jax.random.split(key)
    w = np.asarray(jax.random.normal(kw, (n_in, n_out), jnp.float32)) * 0.5
    b = np.asarray(jax.random.normal(kb, (n_out,), jnp.float32)) * 0.1
    return w, b


X75 = np.asarray(jax.random.normal(jax.random.PRNGKey(7), (7, 5), jnp.float32))


# --- seed 001: controlling recording --------------------------------------------------------------


def test_stop_recording():
    x, y = gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert set(grad) == {"x", "y"}
    close(grad["x"], jax.grad(lambda a: a * a + jax.lax.stop_gradient(3.0 * 3.0))(2.0))  # 4
    assert grad["y"] is None
    np.testing.assert_allclose(float(z), 13.0)


def test_reset():
    x, y = gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape() as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    close(grad["x"], 4.0)  # d(x^2)/dx = 2x
    assert grad["y"] is None


def test_stop_gradient_cuts_path():
    x, y = gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape() as t:
        y_sq = y**2
        z = x**2 + gk.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    close(grad["x"], jax.grad(lambda a, b: a**2 + jax.lax.stop_gradient(b**2))(2.0, 3.0))
    assert grad["y"] is None


def test_custom_gradient_clip_by_norm():
    @gk.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            norm = gnp.sqrt(gnp.sum(dy * dy))
            return dy * gnp.minimum(1.0, 0.5 / norm)

        return y, backward

    v = gk.Variable(2.0)
    with gk.GradientTape() as t:
        output = clip_gradients(v * v)
    # backward receives dy = 1 at the identity; the chain through v*v gives 2v * clip(1) = 4 * 0.5 = 2.
    close(t.gradient(output, v), 2.0)


def test_multiple_tapes_each_own_watched_set():
    x0 = gk.Tensor(jnp.asarray(0.0))
    x1 = gk.Tensor(jnp.asarray(0.0))
    with gk.GradientTape() as tape0, gk.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = gnp.sin(x0)
        y1 = sigmoid(x1)
        ys = gnp.sum(y0 + y1)
    close(tape0.gradient(ys, x0), jax.grad(jnp.sin)(0.0))  # cos(0) = 1
    close(tape1.gradient(ys, x1), jax.grad(jax.nn.sigmoid)(0.0))  # 0.25


def test_second_derivative_nested_tapes():
    x = gk.Variable(1.0)
    with gk.GradientTape() as t2:
        with gk.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    f = lambda a: a * a * a  # noqa: E731
    close(dy_dx, jax.grad(f)(1.0))  # 3
    close(d2y_dx2, jax.grad(jax.grad(f))(1.0))  # 6
    np.testing.assert_allclose([float(dy_dx), float(d2y_dx2)], [3.0, 6.0])


def test_input_gradient_regularisation():
    w0, b0 = make_layer(jax.random.PRNGKey(1), 5, 10)
    w, b = gk.Variable(w0, name="kernel"), gk.Variable(b0, name="bias")
    x = gk.Tensor(jnp.asarray(X75))
    with gk.GradientTape() as t2:
        with gk.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            _ = dense(x, w, b, relu)
            out = gnp.sum(dense(x, w, b, relu) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = gnp.linalg.norm(g1)
    dg1_mag = t2.gradient(g1_mag, [w, b])
    assert [tuple(g.shape) for g in dg1_mag] == [(5, 10), (10,)]

    def pure(wv, bv):
        g = jax.grad(lambda xv: jnp.sum(pure_dense(xv, wv, bv, jax.nn.relu) ** 2))(jnp.asarray(X75))
        return jnp.linalg.norm(g)

    expected = jax.grad(pure, argnums=(0, 1))(w0, b0)
    close(dg1_mag[0], expected[0], rtol=1e-4)
    close(dg1_mag[1], expected[1], rtol=1e-4)


def test_jacobian_scalar_source():
    xs = jnp.linspace(-10.0, 10.0, 201)
    delta = gk.Variable(0.0)
    with gk.GradientTape() as tape:
        y = sigmoid(gk.Tensor(xs) + delta)
    dy_dx = tape.jacobian(y, delta)
    assert tuple(y.shape) == (201,)
    assert tuple(dy_dx.shape) == (201,)
    close(dy_dx, jax.jacrev(lambda d: jax.nn.sigmoid(xs + d))(0.0))


def test_jacobian_tensor_source_and_sum_equals_gradient():
    w0, b0 = make_layer(jax.random.PRNGKey(2), 5, 10)
    w, b = gk.Variable(w0), gk.Variable(b0)
    x = jnp.asarray(X75)
    with gk.GradientTape(persistent=True) as tape:
        y = dense(x, w, b, relu)
    assert tuple(y.shape) == (7, 10)
    j = tape.jacobian(y, w)
    assert tuple(j.shape) == (7, 10, 5, 10)
    expected = jax.jacrev(lambda wv: pure_dense(x, wv, b0, jax.nn.relu))(w0)
    close(j, expected)
    g = tape.gradient(y, w)
    assert tuple(g.shape) == (5, 10)
    close(g, jax.grad(lambda wv: jnp.sum(pure_dense(x, wv, b0, jax.nn.relu)))(w0))
    np.testing.assert_allclose(np.sum(j.numpy(), axis=(0, 1)), g.numpy(), rtol=1e-5, atol=1e-4)


def test_hessian_and_newton_step():
    w1, b1 = make_layer(jax.random.PRNGKey(3), 5, 8)
    w2, b2 = make_layer(jax.random.PRNGKey(4), 8, 6)
    k1, c1, k2, c2 = (gk.Variable(v) for v in (w1, b1, w2, b2))
    x = jnp.asarray(X75)
    with gk.GradientTape() as t2:
        with gk.GradientTape() as t1:
            h1 = dense(x, k1, c1, relu)
            h2 = dense(h1, k2, c2, relu)
            loss = gnp.mean(h2**2)
        g = t1.gradient(loss, k1)
    h = t2.jacobian(g, k1)
    assert tuple(h.shape) == (5, 8, 5, 8)

    def pure_loss(kv):
        return jnp.mean(pure_dense(pure_dense(x, kv, b1, jax.nn.relu), w2, b2, jax.nn.relu) ** 2)

    close(g, jax.grad(pure_loss)(w1))
    h_expected = jax.hessian(pure_loss)(w1)
    close(h, h_expected, rtol=1e-4, atol=1e-5)

    n = 5 * 8
    h_mat = jnp.reshape(h.numpy(), (n, n))
    np.testing.assert_allclose(h_mat, h_mat.T, atol=1e-5)
    eps = 1e-3
    update = jnp.linalg.solve(h_mat + jnp.eye(n) * eps, jnp.reshape(g.numpy(), (n, 1)))
    expected_update = jnp.linalg.solve(
        jnp.reshape(h_expected, (n, n)) + jnp.eye(n) * eps, jnp.reshape(jax.grad(pure_loss)(w1), (n, 1))
    )
    k1.assign_sub(gnp.reshape(update, k1.shape))
    np.testing.assert_allclose(
        np.asarray(k1.value),
        w1 - np.reshape(np.asarray(expected_update), (5, 8)),
        rtol=1e-3,
        atol=1e-3,
    )


def _two_elu_layers():
    w1, b1 = make_layer(jax.random.PRNGKey(5), 5, 8)
    w2, b2 = make_layer(jax.random.PRNGKey(6), 8, 6)
    return w1, b1, w2, b2


def test_batch_jacobian_equals_einsum_diagonal():
    w1, b1, w2, b2 = _two_elu_layers()
    vs = [gk.Variable(v) for v in (w1, b1, w2, b2)]
    x = gk.Tensor(jnp.asarray(X75))
    with gk.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = dense(dense(x, vs[0], vs[1], elu), vs[2], vs[3], elu)
    assert tuple(y.shape) == (7, 6)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (7, 6, 7, 5)
    full = jax.jacrev(lambda xv: pure_dense(pure_dense(xv, w1, b1, jax.nn.elu), w2, b2, jax.nn.elu))(jnp.asarray(X75))
    close(j, full)
    jb = tape.batch_jacobian(y, x)
    assert tuple(jb.shape) == (7, 6, 5)
    close(jb, jnp.einsum("bxby->bxy", full))
    close(jb, jnp.sum(full, axis=2))


def test_batch_jacobian_batchnorm_like_warns_with_tf_behaviour():
    w1, b1, w2, b2 = _two_elu_layers()
    vs = [gk.Variable(v) for v in (w1, b1, w2, b2)]
    x = gk.Tensor(jnp.asarray(X75))
    with gk.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        h = dense(x, vs[0], vs[1], elu)
        h = h - gnp.mean(h, axis=0, keepdims=True)
        y = dense(h, vs[2], vs[3], elu)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (7, 6, 7, 5)
    with pytest.warns(gk.GradkitWarning, match=r"^\[gradkit\] batch_jacobian") as info:
        warned = tape.batch_jacobian(y, x)  # the guide's program runs, and is told why not to
    assert info[0].filename == __file__  # the warning points at the user's line
    jb = tape.batch_jacobian(y, x, check_independence=False)
    assert tuple(jb.shape) == (7, 6, 5)
    close(warned, jb)

    def pure(xv):
        hv = pure_dense(xv, w1, b1, jax.nn.elu)
        hv = hv - jnp.mean(hv, axis=0, keepdims=True)
        return pure_dense(hv, w2, b2, jax.nn.elu)

    # TensorFlow's batch_jacobian is, per target column, the gradient of that column summed over the
    # batch: result[c, x, :] = sum_b dy[b, x] / dx[c, :] (checked against tensorflow-cpu 2.21).
    close(jb, jnp.einsum("bxcy->cxy", jax.jacrev(pure)(jnp.asarray(X75))), rtol=1e-4)


# --- seed 004 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x0, expected_y",
    [
        ([[1.0, 2.0], [3.0, 4.0]], None),
        ([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]], None),
    ],
)
def test_comp_gradient_dy_dx(x0, expected_y):
    x0 = np.asarray(x0, np.float32)
    k = np.arange(20, dtype=np.float32).reshape(x0.shape[-1], 20 // x0.shape[-1])
    x = gk.Variable(x0)
    with gk.GradientTape() as tape:
        y = gnp.matmul(x**2, k)
    dy_dx = tape.gradient(y, x)
    close(y, (x0**2) @ k)
    close(dy_dx, jax.grad(lambda xv: jnp.sum((xv**2) @ k))(x0))
    # Hand derivation: d sum((x^2) k) / dx_ij = 2 x_ij * sum_j' k_jj'.
    close(dy_dx, 2 * x0 * k.sum(axis=1)[None, :])


def test_linear_model_dc_dw_dc_db():
    w0 = np.asarray(jax.random.normal(jax.random.PRNGKey(11), (3, 2), jnp.float32))
    b0 = np.zeros(2, np.float32)
    w, b = gk.Variable(w0, name="w"), gk.Variable(b0, name="b")
    x = jnp.asarray([[1.0, 2.0, 3.0]])
    with gk.GradientTape(persistent=True) as tape:
        y = gnp.matmul(x, w) + gnp.expand_dims(b, 0)
        cost = gnp.mean(y**2)
        dc_dw, dc_db = tape.gradient(cost, [w, b])

    def pure(wv, bv):
        return jnp.mean((x @ wv + bv[None, :]) ** 2)

    close(cost, pure(w0, b0))
    ew, eb = jax.grad(pure, argnums=(0, 1))(w0, b0)
    close(dc_dw, ew)
    close(dc_db, eb)


def test_dict_sources_dense_relu():
    w0, b0 = make_layer(jax.random.PRNGKey(12), 3, 2)
    w, b = gk.Variable(w0, name="w"), gk.Variable(b0, name="b")
    x = jnp.asarray([[1.0, 2.0, 3.0]])
    with gk.GradientTape() as tape:
        loss = gnp.mean(dense(x, w, b, relu) ** 2)
    grad = tape.gradient(loss, {"w": w, "b": b})
    assert set(grad) == {"w", "b"}
    ew, eb = jax.grad(lambda wv, bv: jnp.mean(pure_dense(x, wv, bv, jax.nn.relu) ** 2), argnums=(0, 1))(w0, b0)
    close(grad["w"], ew)
    close(grad["b"], eb)
    assert tuple(grad["w"].shape) == (3, 2) and tuple(grad["b"].shape) == (2,)


# --- seeds 000 / 002: gradients through assignment ------------------------------------------------


def pure_000(a, b, c):
    c = a + b  # c's entry value is overwritten
    return jnp.mean(c**2)


def test_assign_linear_combination_b_is_6():
    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")
    with gk.GradientTape() as tape:
        c.assign(a + b)
        loss = gnp.mean(c**2)
    close(tape.gradient(loss, b), jax.grad(pure_000, argnums=1)(1.0, 2.0, 3.0))  # 2(a+b) = 6
    np.testing.assert_allclose(np.asarray(c.value), 3.0)  # written back after the tape


def test_assign_linear_combination_list_sources():
    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")
    with gk.GradientTape() as tape:
        c.assign(a + b)
        loss = gnp.mean(c**2)
    ga, gb, gc = tape.gradient(loss, [a, b, c])
    ea, eb, _ = jax.grad(pure_000, argnums=(0, 1, 2))(1.0, 2.0, 3.0)
    close(ga, ea)
    close(gb, eb)
    assert gc is None  # c's entry value is never used (structurally)
    np.testing.assert_allclose([float(ga), float(gb)], [6.0, 6.0])


def test_assign_watch_accessed_false_watch_b_c():
    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")
    with gk.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([b, c])
        c.assign(a + b)
        loss = gnp.mean(c**2)
    gb, gc, ga = tape.gradient(loss, [b, c, a])
    close(gb, 6.0)
    assert gc is None
    assert ga is None  # a was never watched


def pure_mix(x, a, b):
    c_ = jax.tree.map(lambda _a, _b: (1 - x) * _a + x * _b, a, b)
    return c_


def test_assign_list_extension_gradient_wrt_x():
    a0, b0, c0 = [1.0, 4.0], [2.0, 9.0], [3.0, 0.0]
    a = [gk.Variable(v) for v in a0]
    b = [gk.Variable(v) for v in b0]
    c = [gk.Variable(v) for v in c0]
    x = gk.Variable(0.01)
    with gk.GradientTape(persistent=True) as tape:
        c_ = [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]
        for ci, vi in zip(c, c_):
            ci.assign(vi)
        loss = gnp.linalg.norm(gnp.stack(c))

    def pure(xv, av, bv):
        return jnp.linalg.norm(jnp.stack(pure_mix(xv, av, bv)))

    av, bv = [jnp.float32(v) for v in a0], [jnp.float32(v) for v in b0]
    close(tape.gradient(loss, x), jax.grad(pure)(jnp.float32(0.01), av, bv))  # 5.0933886 in the seed
    np.testing.assert_allclose(float(tape.gradient(loss, x)), 5.0933886, rtol=1e-5)
    ga = tape.gradient(loss, a)
    gb = tape.gradient(loss, b)
    ea = jax.grad(pure, argnums=1)(jnp.float32(0.01), av, bv)
    eb = jax.grad(pure, argnums=2)(jnp.float32(0.01), av, bv)
    for got, want in zip(ga + gb, list(ea) + list(eb)):
        close(got, want)
    assert tape.gradient(loss, c) == [None, None]


def test_assign_nested_structures():
    a0 = [np.array([1.0, 2.0], np.float32), np.array([5.0], np.float32), np.float32(7.0)]
    b0 = [np.array([3.0, 4.0], np.float32), np.array([6.0], np.float32), np.float32(8.0)]
    c0 = [np.array([1.0, 1.0], np.float32), np.array([1.0], np.float32), np.float32(1.0)]
    a = [gk.Variable(v) for v in a0]
    b = [gk.Variable(v) for v in b0]
    c = [gk.Variable(v) for v in c0]
    x = gk.Variable(0.5, name="x")
    with gk.GradientTape(persistent=True) as tape:
        c_ = [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]
        for ci, vi in zip(c, c_):
            ci.assign(vi)
        loss = gnp.linalg.norm(gnp.stack([gnp.linalg.norm(e) for e in c]))

    def pure(xv, av, bv):
        cs = pure_mix(xv, av, bv)
        return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(e) for e in cs]))

    np.testing.assert_allclose(float(loss), float(pure(0.5, a0, b0)), rtol=1e-6)  # 9.974969
    grads = tape.gradient(loss, {"x": x, "a": a, "b": b, "c": c})
    close(grads["x"], jax.grad(pure)(jnp.float32(0.5), a0, b0))
    for got, want in zip(grads["a"], jax.grad(pure, argnums=1)(jnp.float32(0.5), a0, b0)):
        close(got, want)
    for got, want in zip(grads["b"], jax.grad(pure, argnums=2)(jnp.float32(0.5), a0, b0)):
        close(got, want)
    assert grads["c"] == [None, None, None]


X0 = np.array([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]], np.float32)
PATCH0 = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)


def pure_002(xv, pv):
    xv = jnp.asarray(xv).at[:2, :2].set(pv)
    y = jnp.tensordot(xv, xv.T, axes=1)
    return jnp.mean(y)


def test_slice_assign_patch_gradient():
    x, patch = gk.Variable(X0), gk.Variable(PATCH0)
    with gk.GradientTape(persistent=True) as g:
        g.watch(patch)
        x[:2, :2].assign(patch)
        y = gnp.tensordot(x, gnp.transpose(x), axes=1)
        o = gnp.mean(y)
    do_dpatch = g.gradient(o, patch)
    close(do_dpatch, jax.grad(pure_002, argnums=1)(X0, PATCH0))
    close(do_dpatch, [[1.0, 2.0], [1.0, 2.0]])
    do_dx = g.gradient(o, x)
    expected_dx = jax.grad(pure_002, argnums=0)(X0, PATCH0)
    close(do_dx, expected_dx)
    np.testing.assert_array_equal(do_dx.numpy()[:2, :2], 0.0)  # overwritten block
    close(do_dx.numpy()[:, 2], [52.0, 52.0])  # hand: d mean(x x^T)/dx_i2 = 2 * sum_k x_k2 / 4
