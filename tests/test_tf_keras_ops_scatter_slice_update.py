"""``keras.ops.scatter_update`` with a reduction (``add``, ``max``, ``min``, ``mul``: repeated
indices combine), ``slice_update`` with negative starts (taken as 0, as TensorFlow's
dynamic_update_slice under Keras' TensorFlow backend) and ``multi_hot`` of no index. Oracles:
NumPy written out here, finite-difference-free hand derivatives, and Keras where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

ops = gtf.keras.ops
BASE = np.array([1.0, 2.0, 3.0], np.float32)
INDICES = np.array([[0], [0], [2]], np.int32)
UPDATES = np.array([1.5, 2.0, 3.0], np.float32)
WEIGHTS = np.array([1.0, 2.0, 3.0], np.float32)


def _numpy(reduction):
    out = BASE.copy()
    for (i,), u in zip(INDICES, UPDATES):
        out[i] = {"add": out[i] + u, "max": max(out[i], u), "min": min(out[i], u), "mul": out[i] * u}[reduction]
    return out


@pytest.mark.parametrize("reduction", ["add", "max", "min", "mul"])
def test_reductions_combine_repeated_indices(reduction):
    np.testing.assert_allclose(
        ops.scatter_update(BASE, INDICES, UPDATES, reduction=reduction).numpy(), _numpy(reduction)
    )


def test_the_product_is_differentiable_in_both():
    b, u = gtf.Variable(BASE), gtf.Variable(UPDATES)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(ops.scatter_update(b, INDICES, u, reduction="mul") * WEIGHTS)
    grad_b, grad_u = tape.gradient(loss, [b, u])
    # out[0] = b0 u0 u1, out[2] = b2 u2: d/db = (u0 u1, 1, u2) * w, d/du = (b0 u1, b0 u0, b2) * w
    np.testing.assert_allclose(grad_b.numpy(), [1.5 * 2.0, 2.0, 3.0 * 3.0])
    np.testing.assert_allclose(grad_u.numpy(), [1.0 * 2.0, 1.0 * 1.5, 3.0 * 3.0])


@pytest.mark.parametrize("reduction", ["add", "max", "min", "mul"])
def test_reductions_match_keras(reduction):
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    results = []
    for k, lib in ((keras, tf), (gtf.keras, gtf)):
        b, u = lib.Variable(BASE), lib.Variable(UPDATES)
        with lib.GradientTape() as tape:
            y = k.ops.scatter_update(b, INDICES, u, reduction=reduction)
            loss = lib.reduce_sum(y * WEIGHTS)
        results.append([np.asarray(y), *(np.asarray(g) for g in tape.gradient(loss, [b, u]))])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("start", [(-1, 0), (0, -1), (-2, 1), (2, 3)])
def test_slice_update_takes_a_negative_start_as_zero(start):
    x = np.zeros((3, 4), np.float32)
    block = np.full((1, 2), 7.0, np.float32)
    want = x.copy()
    row, col = min(max(start[0], 0), 2), min(max(start[1], 0), 2)  # clamped into range as TensorFlow does
    want[row : row + 1, col : col + 2] = block
    np.testing.assert_array_equal(ops.slice_update(x, start, block).numpy(), want)


def test_multi_hot_of_no_index_is_minus_infinity():
    np.testing.assert_array_equal(ops.multi_hot(np.array([], np.int32), 3).numpy(), [-np.inf] * 3)
