"""``tf.approx_top_k``, ``tf.math.approx_max_k`` and ``approx_min_k`` against real TensorFlow 2.21:
its eager CPU kernel (the largest entries along the last axis) and, for the other axes and the
smallest entries, its XLA kernel (``jit_compile=True``), which is exact on a CPU as gradkit's is;
values, indices, gradients, ``tf.function`` and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.random.default_rng(11).permutation(60).reshape(3, 4, 5).astype(np.float32) / 7.0


def _top(tf, fn, **kwargs):
    x = tf.Variable(X)
    with tf.GradientTape() as tape:
        values, indices = fn(tf)(x, **kwargs)
        loss = tf.reduce_sum(values * values)
    return np.asarray(values), np.asarray(indices), np.asarray(tape.gradient(loss, x))


def _compare(want, got):
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_largest_along_the_last_axis_matches_tensorflow_eagerly(k):
    tf = pytest.importorskip("tensorflow")
    _compare(_top(tf, lambda t: t.approx_top_k, k=k), _top(gtf, lambda t: t.approx_top_k, k=k))
    _compare(_top(tf, lambda t: t.math.approx_max_k, k=k), _top(gtf, lambda t: t.nn.approx_max_k, k=k))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("largest", [True, False], ids=["max", "min"])
def test_other_axes_and_smallest_match_tensorflow_under_xla(axis, largest):
    tf = pytest.importorskip("tensorflow")

    def program(lib):
        x = lib.constant(X)
        return lib.approx_top_k(x, 2, reduction_dimension=axis, is_max_k=largest, recall_target=0.9)

    want = tf.function(lambda: program(tf), jit_compile=True)()
    got = gtf.function(lambda: program(gtf))()
    np.testing.assert_allclose(np.asarray(got.values), np.asarray(want.values), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(got.indices), np.asarray(want.indices))
    fn = gtf.math.approx_max_k if largest else gtf.math.approx_min_k
    np.testing.assert_array_equal(np.asarray(fn(X, 2, reduction_dimension=axis).indices), np.asarray(want.indices))


def test_gradient_goes_to_the_entries_chosen():
    x = gtf.Variable(X)
    with gtf.GradientTape() as tape:
        values, indices = gtf.math.approx_min_k(x, 2, reduction_dimension=1)
        loss = gtf.reduce_sum(values * 3.0)
    want = np.zeros_like(X)
    order = np.argsort(X, axis=1, kind="stable")[:, :2, :]
    np.put_along_axis(want, order, 3.0, axis=1)
    np.testing.assert_array_equal(np.asarray(tape.gradient(loss, x)), want)
    np.testing.assert_array_equal(np.asarray(indices), order)


BAD = {
    "k past the axis": (dict(k=6), "at least k columns"),
    "integers": (dict(input=X.astype(np.int32)), "takes float16, bfloat16 and float32"),
    "a scalar": (dict(input=np.float32(1.0), k=1), ">= 1-D"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_are_tensorflows(case):
    tf = pytest.importorskip("tensorflow")
    change, message = BAD[case]
    args = dict(input=X, k=2) | change
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.approx_top_k(**args)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] tf\.approx_top_k got .*" + message):
        gtf.approx_top_k(**args)
