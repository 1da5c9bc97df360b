"""Keras 3's newer activations (celu, glu, hard_tanh, hard_shrink, soft_shrink, tanh_shrink,
threshold, sparse_plus, sparse_sigmoid, squareplus, sparsemax) against real Keras on TensorFlow:
values and gradients, at their kinks too; ``deserialize``; sparsemax against its definition."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array([[-3.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.5, 1e-3]], np.float32)
CASES = {
    "celu": lambda a: a.celu,
    "celu_alpha": lambda a: lambda x: a.celu(x, alpha=0.5),
    "glu": lambda a: a.glu,
    "hard_tanh": lambda a: a.hard_tanh,
    "hard_shrink": lambda a: a.hard_shrink,
    "hard_shrink_0.25": lambda a: lambda x: a.hard_shrink(x, threshold=0.25),
    "soft_shrink": lambda a: a.soft_shrink,
    "tanh_shrink": lambda a: a.tanh_shrink,
    "threshold": lambda a: lambda x: a.threshold(x, 0.25, -2.0),
    "sparse_plus": lambda a: a.sparse_plus,
    "sparse_sigmoid": lambda a: a.sparse_sigmoid,
    "squareplus": lambda a: a.squareplus,
    "squareplus_b1": lambda a: lambda x: a.squareplus(x, b=1),
    "sparsemax_one_winner": lambda a: lambda x: a.sparsemax(x * 4.0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    weights = np.linspace(-1.0, 2.0, X.size // (2 if name == "glu" else 1), dtype=np.float32)[None, :]
    out = {}
    for lib in (tf, gtf):
        x = lib.Variable(X)
        with lib.GradientTape() as tape:
            y = CASES[name](lib.keras.activations)(x)
            loss = lib.reduce_sum(y * weights)
        out[lib is gtf] = (np.asarray(y), np.asarray(tape.gradient(loss, x)))
    np.testing.assert_allclose(out[True][0], out[False][0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out[True][1], out[False][1], rtol=1e-6, atol=1e-7)


def _sparsemax(z):
    """The definition (Martins and Astudillo 2016, algorithm 1), row by row, in float64."""
    out = []
    for row in np.asarray(z, np.float64):
        ranked = np.sort(row)[::-1]
        k = np.arange(1, row.size + 1)
        support = 1 + k * ranked > np.cumsum(ranked)
        size = k[support][-1]
        tau = (ranked[:size].sum() - 1) / size
        out.append(np.maximum(row - tau, 0))
    return np.array(out)


def test_sparsemax_is_the_projection_onto_the_simplex():
    z = np.random.default_rng(3).standard_normal((6, 7)).astype(np.float32)
    z[0] = 0.5  # every entry in the support
    got = gtf.keras.activations.sparsemax(z).numpy()
    np.testing.assert_allclose(got, _sparsemax(z), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(gtf.keras.activations.sparsemax(z.T, axis=0).numpy(), _sparsemax(z).T, rtol=1e-5)


def test_sparsemax_gradient_matches_finite_differences():
    z = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float64) * 0.5
    weights = np.random.default_rng(5).standard_normal((3, 5))
    x = gtf.Variable(z.astype(np.float32))
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.keras.activations.sparsemax(x) * weights.astype(np.float32))
    grad = tape.gradient(loss, x).numpy()
    eps = 1e-4
    numeric = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        up, down = z.copy(), z.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = ((_sparsemax(up) - _sparsemax(down)) * weights).sum() / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-3, atol=1e-3)


def test_glu_needs_an_even_axis():
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf.keras.activations.glu(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"^\[gradkit\] .*divisible by 2"):
        gtf.keras.activations.glu(np.ones((2, 3), np.float32))


@pytest.mark.parametrize("name", ["celu", "glu", "sparsemax", "squareplus", "relu"])
def test_deserialize_and_names_reach_the_layers(name):
    tf = pytest.importorskip("tensorflow")
    assert gtf.keras.activations.deserialize(name) is getattr(gtf.keras.activations, name)
    assert tf.keras.activations.deserialize(name) is getattr(tf.keras.activations, name)
    assert gtf.keras.activations.get(name) is getattr(gtf.keras.activations, name)
    custom = {"mine": gtf.keras.activations.relu}
    assert gtf.keras.activations.deserialize("mine", custom_objects=custom) is gtf.keras.activations.relu
    with pytest.raises(ValueError, match=r"^\[gradkit\]"):
        gtf.keras.activations.deserialize("no_such_activation")
