"""``tf.sparse.segment_sum/mean/sqrt_n`` (with and without ``num_segments``): values and gradients
with respect to ``data`` against TensorFlow (skipped without it) and a NumPy rewrite."""

import numpy as np
import pytest

import gradkit.tf as gtf

DATA = np.arange(12, dtype=np.float32).reshape(4, 3) / 4 - 1
_CASES = {
    "basic": ([0, 2, 1, 3], [0, 0, 1, 2], None),
    "repeated_index": ([1, 1, 3], [0, 1, 1], None),
    "gap": ([0, 1], [0, 2], None),
    "num_segments": ([3, 0, 2], [0, 1, 1], 4),
}


def _numpy(kind, indices, ids, num):
    num = (max(ids) + 1) if num is None else num
    out = np.zeros((num, DATA.shape[1]), np.float32)
    for i in range(num):
        rows = [DATA[j] for j, s in zip(indices, ids) if s == i]
        if rows:
            total = np.sum(rows, axis=0)
            out[i] = total if kind == "sum" else total / (len(rows) if kind == "mean" else np.sqrt(len(rows)))
    return out


def _run(tf, kind, case):
    indices, ids, num = _CASES[case]
    data = tf.Variable(DATA)
    with tf.GradientTape() as tape:
        out = getattr(tf.sparse, f"segment_{kind}")(data, indices, ids, num_segments=num)
        loss = tf.reduce_sum(out * out)
    return out.numpy(), tape.gradient(loss, data).numpy()


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_sparse_segment_reductions(kind, case):
    value, grad = _run(gtf, kind, case)
    np.testing.assert_allclose(value, _numpy(kind, *_CASES[case]), rtol=1e-6, atol=1e-6)
    tf = pytest.importorskip("tensorflow")
    want_value, want_grad = _run(tf, kind, case)
    np.testing.assert_allclose(value, want_value, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-6, atol=1e-6)


def test_sparse_segment_errors():
    with pytest.raises(gtf.errors.InvalidArgumentError, match="sorted"):
        gtf.sparse.segment_sum(DATA, [0, 1], [1, 0])
    with pytest.raises(gtf.errors.InvalidArgumentError, match="same length"):
        gtf.sparse.segment_sum(DATA, [0, 1, 2], [0, 0])


def test_sparse_gradient_and_integer_data():
    data = gtf.Variable(DATA)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.sparse.segment_sum(data, [0, 1], [0, 0], sparse_gradient=True))
    np.testing.assert_allclose(tape.gradient(loss, data), [[1] * 3, [1] * 3, [0] * 3, [0] * 3])
    with pytest.raises(gtf.errors.InvalidArgumentError, match="float data"):
        gtf.sparse.segment_mean(np.arange(4).reshape(2, 2), [0, 1], [0, 0])
