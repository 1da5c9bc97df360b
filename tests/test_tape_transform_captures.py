"""A gk transform called while a tape records, on a function that closes over a tensor the
tape recorded: the tensor is an input of the recorded program, so the outer gradient flows
through it, as it would if it were passed as an argument.

Oracles: jax.value_and_grad of the same program written with jax.numpy, where a value the
inner transform's function closes over is, as in JAX, a constant of that transform; and
hypothesis-drawn programs (which functions, which transform, whether the closure also holds
a Variable's recorded read) against the same rewrite.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk
import gradkit.numpy as gnp
from tests._oracles import count_compiles

W0 = np.array([1.0, 2.0], np.float32)
V0 = np.array([3.0, -4.0], np.float32)
ROWS = np.ones((3, 1), np.float32)


def _transforms_over_a_recorded_tensor(w, v):
    with gk.GradientTape() as tape:
        y = gnp.sin(w) * 2.0
        g = gk.grad(lambda: jnp.sum(y * v.read_value() ** 2), wrt=v)()
        jr = gk.jacrev(lambda: jnp.tanh(y) * v.read_value(), wrt=v)()
        val, g2 = gk.value_and_grad(lambda s: jnp.sum(jnp.exp(s * y) * v.read_value()), argnums=0)(0.5)
        vm = gk.vmap(lambda r: r * y)(ROWS)
        out = gnp.sum(g * w) + gnp.sum(jr) + g2 + val + gnp.sum(vm)
    return out, tape.gradient(out, w)


def _transforms_oracle(w):
    y = jnp.sin(w) * 2.0
    g = jax.grad(lambda u: jnp.sum(y * u**2))(jnp.asarray(V0))
    jr = jax.jacrev(lambda u: jnp.tanh(y) * u)(jnp.asarray(V0))
    val, g2 = jax.value_and_grad(lambda s: jnp.sum(jnp.exp(s * y) * V0))(0.5)
    vm = jax.vmap(lambda r: r * y)(ROWS)
    return jnp.sum(g * w) + jnp.sum(jr) + g2 + val + jnp.sum(vm)


def test_transforms_closing_over_a_recorded_tensor_match_jax():
    w, v = gk.Variable(W0), gk.Variable(V0)
    want_out, want_g = jax.value_and_grad(_transforms_oracle)(jnp.asarray(W0))
    for _ in range(3):  # a new tensor is recorded each round, and each round's is the one used
        out, g = _transforms_over_a_recorded_tensor(w, v)
        np.testing.assert_allclose(np.asarray(out), want_out, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-5, atol=1e-6)


def test_closing_over_a_new_tensor_each_step_compiles_nothing_new():
    w, v = gk.Variable(W0), gk.Variable(V0)
    _transforms_over_a_recorded_tensor(w, v)
    _transforms_over_a_recorded_tensor(w, v)
    assert count_compiles(lambda: [np.asarray(x) for x in _transforms_over_a_recorded_tensor(w, v)]) == 0


def test_the_closed_over_tensor_is_the_one_recorded_now():
    # The closure's tensor changes between calls of one transform object: each call uses its own.
    w = gk.Variable(W0)
    u = gk.Variable(V0)
    holder = {}
    grad_u = gk.grad(lambda: jnp.sum(holder["y"] * u.read_value() ** 2), wrt=u)
    for scale in (1.0, 3.0):
        with gk.GradientTape() as tape:
            holder["y"] = w * scale
            g = grad_u()  # 2 * scale * w * u
        want = 2 * scale * W0 * V0
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(tape.gradient(g, w)), 2 * scale * V0, rtol=1e-6)


def test_an_inner_sgd_step_on_recorded_features_gives_the_meta_gradient():
    # Features from an encoder the outer tape records; an inner step fits a head on them with gk.grad
    # (closing over the features); the validation loss after the step is differentiated with
    # respect to the encoder, through the inner gradient.
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)
    enc0 = (rng.standard_normal((3, 4)) * 0.5).astype(np.float32)
    head0 = (rng.standard_normal((4, 1)) * 0.5).astype(np.float32)
    enc, head = gk.Variable(enc0), gk.Variable(head0)
    lr = 0.1

    with gk.GradientTape() as tape:
        feats = gnp.tanh(x @ enc)
        g = gk.grad(lambda: jnp.mean((feats @ head.read_value() - y) ** 2), wrt=head)()
        fitted = head - lr * g
        val = gnp.mean((feats @ fitted - y) ** 2)
    got = tape.gradient(val, enc)

    def oracle(e):
        f = jnp.tanh(x @ e)
        inner = jax.grad(lambda h: jnp.mean((f @ h - y) ** 2))(jnp.asarray(head0))
        return jnp.mean((f @ (head0 - lr * inner) - y) ** 2)

    want_val, want = jax.value_and_grad(oracle)(jnp.asarray(enc0))
    np.testing.assert_allclose(np.asarray(val), want_val, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-6)


def test_a_transform_differentiating_a_variable_the_closed_over_tensor_depends_on():
    # y depends on w through the tape; inside gk.grad(wrt=w) the closed-over y is a constant (as a
    # closure is in jax.grad), and the outer tape still differentiates through it.
    w = gk.Variable(W0)
    with gk.GradientTape() as tape:
        y = gnp.exp(w)
        g = gk.grad(lambda: jnp.sum(y * w.read_value() ** 2), wrt=w)()  # 2 y w
        out = gnp.sum(g)
    got = tape.gradient(out, w)

    def oracle(wv):
        y = jnp.exp(wv)
        return jnp.sum(jax.grad(lambda u: jnp.sum(y * u**2))(wv))

    want_out, want = jax.value_and_grad(oracle)(jnp.asarray(W0))
    np.testing.assert_allclose(np.asarray(out), want_out, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


_FUNCTIONS = {
    "sin": (gnp.sin, jnp.sin),
    "tanh": (gnp.tanh, jnp.tanh),
    "square": (gnp.square, jnp.square),
    "scaled_exp": (lambda x: gnp.exp(0.3 * gnp.tanh(x)), lambda x: jnp.exp(0.3 * jnp.tanh(x))),
}
_TRANSFORMS = ("grad", "value_and_grad", "jacrev_sum", "vmap_sum")


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(
    st.sampled_from(list(_FUNCTIONS)),
    st.sampled_from(list(_FUNCTIONS)),
    st.sampled_from(list(_FUNCTIONS)),
    st.sampled_from(_TRANSFORMS),
    st.booleans(),
)
def test_random_closures_over_recorded_tensors_match_jax(f1, f2, f3, transform, uses_w_inside):
    # y = f1(w) recorded; a transform whose function closes over y (and perhaps reads w itself);
    # its result combined with w again; the outer gradient against jax.grad of the same program.
    w0, v0 = np.array([0.3, -0.8, 1.1], np.float32), np.array([0.5, 1.5, -0.7], np.float32)
    g1, j1 = _FUNCTIONS[f1]
    g3, j3 = _FUNCTIONS[f3]

    def jax_side(w):
        y = j1(w)

        def inner(u):
            extra = jnp.sum(w) if uses_w_inside else 0.0
            return jnp.sum(_FUNCTIONS[f2][1](y) * u**2) + extra * jnp.sum(u)

        u0 = jnp.asarray(v0)
        if transform == "grad":
            r = jax.grad(inner)(u0)
        elif transform == "value_and_grad":
            val, g = jax.value_and_grad(inner)(u0)
            r = g * val
        elif transform == "jacrev_sum":
            r = jnp.sum(jax.jacrev(lambda u: _FUNCTIONS[f2][1](y) * u**2)(u0), axis=0)
        else:
            r = jnp.sum(jax.vmap(lambda row: row * y)(jnp.stack([u0, 2 * u0])), axis=0)
        return jnp.sum(j3(r) * w)

    w, v = gk.Variable(w0), gk.Variable(v0)
    with gk.GradientTape() as tape:
        y = g1(w)
        w_now = w.read_value()

        def inner():
            extra = jnp.sum(w_now) if uses_w_inside else 0.0
            u = v.read_value()
            return jnp.sum(_FUNCTIONS[f2][1](y) * u**2) + extra * jnp.sum(u)

        if transform == "grad":
            r = gk.grad(inner, wrt=v)()
        elif transform == "value_and_grad":
            val, g = gk.value_and_grad(inner, wrt=v)()
            r = g * val
        elif transform == "jacrev_sum":
            r = gnp.sum(gk.jacrev(lambda: _FUNCTIONS[f2][1](y) * v.read_value() ** 2, wrt=v)(), axis=0)
        else:
            r = gnp.sum(gk.vmap(lambda row: row * y)(jnp.stack([jnp.asarray(v0), 2 * jnp.asarray(v0)])), axis=0)
        out = gnp.sum(g3(r) * w)
    want_out, want = jax.value_and_grad(jax_side)(jnp.asarray(w0))
    np.testing.assert_allclose(np.asarray(out), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(tape.gradient(out, w)), want, rtol=1e-4, atol=1e-5)
