"""The functions gradkit.tf traces for a user (``tf.vectorized_map``'s ``fn``, ``tf.custom_gradient``'s
``f`` and its ``grad_fn``) take tensors, as in TensorFlow: a tape inside them records Python operators
and indexing on their arguments, and tensor methods work. Against TensorFlow (skipped without it)
and a hand derivation."""

import numpy as np
import pytest

import gradkit.tf as gtf

_X = np.array([[1.3, 2.7, -0.5], [0.2, -0.4, 0.9]], np.float32)
_W = np.array([[1.0], [0.5], [-1.0]], np.float32)


def _per_example_gradients(tf, inside_function):
    w = tf.Variable(_W)

    def per_example(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.tanh(tf.matmul(x[None], w))) + tf.reduce_sum(x * x)
        return t.gradient(y, x), tf.fill([2], x.get_shape()[0])

    run = (
        (lambda: tf.function(lambda: tf.vectorized_map(per_example, tf.constant(_X)))())
        if inside_function
        else (lambda: tf.vectorized_map(per_example, tf.constant(_X)))
    )
    grads, sizes = run()
    return np.asarray(grads), np.asarray(sizes)


@pytest.mark.parametrize("inside_function", [False, True])
def test_vectorized_map_hands_fn_tensors(inside_function):
    grads, sizes = _per_example_gradients(gtf, inside_function)
    # d/dx [sum tanh(x @ w) + sum x^2] = (1 - tanh(x @ w)^2) w^T + 2x, by hand.
    want = (1 - np.tanh(_X @ _W) ** 2) * _W.T + 2 * _X
    np.testing.assert_allclose(grads, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sizes, [[3, 3], [3, 3]])
    tf = pytest.importorskip("tensorflow")
    theirs = _per_example_gradients(tf, inside_function)
    np.testing.assert_allclose(grads, theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sizes, theirs[1])


def _custom_gradient_with_inner_tape(tf):
    @tf.custom_gradient
    def cube_ish(x):
        size = float(x.get_shape()[0])

        def grad_fn(dy):
            # The VJP recomputed with a tape of its own, on the tensors grad_fn was given.
            with tf.GradientTape() as t:
                t.watch(x)
                z = x * x * 3.0
            return t.gradient(z, x, output_gradients=dy * dy.get_shape()[0] / size)

        return x * x * 3.0, grad_fn

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(cube_ish(x))
    return np.asarray(t.gradient(y, x))


def test_custom_gradient_hands_f_and_grad_fn_tensors():
    got = _custom_gradient_with_inner_tape(gtf)
    np.testing.assert_allclose(got, [6.0, 12.0])  # d/dx 3x^2 = 6x, by hand
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _custom_gradient_with_inner_tape(tf))


def _straight_through(tf):
    # A quantizer's straight-through estimator whose scale is computed under the tape and closed
    # over: the gradient flows through the input alone, as TensorFlow records the call.
    w = tf.Variable([0.3, -1.2, 0.7])
    with tf.GradientTape() as tape:
        scale = tf.reduce_max(tf.abs(w)) / 7.0

        @tf.custom_gradient
        def quantize(x):
            return tf.round(x / scale) * scale, lambda dy: dy

        y = tf.reduce_sum(quantize(w) * tf.constant([1.0, 2.0, 3.0]))
    return float(y), np.asarray(tape.gradient(y, w))


def _keyword_tensor(tf):
    @tf.custom_gradient
    def scaled(x, scale=None):
        return x * scale, lambda dy: dy * scale * 100.0

    x, s = tf.constant(3.0), tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch([x, s])
        y = scaled(x, scale=s)
    gx, gs = tape.gradient(y, [x, s])
    return float(y), float(gx), gs


def _method(tf):
    class Doubler(tf.Module):
        @tf.custom_gradient
        def call(self, x):
            return x * 2.0, lambda dy: dy * 3.0

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = Doubler().call(x)
    return float(y), float(tape.gradient(y, x))


def _sparse_grad_fn(tf):
    @tf.custom_gradient
    def first(x):
        return x[0], lambda dy: tf.IndexedSlices(tf.reshape(dy, [1]), tf.constant([0]), tf.constant([3]))

    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = first(x)
    return np.asarray(tf.convert_to_tensor(tape.gradient(y, x)))


def test_custom_gradient_closures_keywords_methods_and_sparse_gradients():
    got = _straight_through(gtf), _keyword_tensor(gtf), _method(gtf), _sparse_grad_fn(gtf)
    # By hand: round(w / (1.2 / 7)) * (1.2 / 7) weighted, gradient the weights; 3 * 4 with the
    # keyword a constant (None); a bound method's gradient its grad_fn's; a densified row.
    scale = 1.2 / 7
    assert got[0][0] == pytest.approx(float(np.sum(np.round(np.array([0.3, -1.2, 0.7]) / scale) * scale * [1, 2, 3])))
    np.testing.assert_array_equal(got[0][1], [1.0, 2.0, 3.0])
    assert got[1] == (12.0, 400.0, None)
    assert got[2] == (4.0, 3.0)
    np.testing.assert_array_equal(got[3], [1.0, 0.0, 0.0])
    tf = pytest.importorskip("tensorflow")
    want = _straight_through(tf), _keyword_tensor(tf), _method(tf), _sparse_grad_fn(tf)
    assert got[0][0] == pytest.approx(want[0][0])
    np.testing.assert_array_equal(got[0][1], want[0][1])
    assert got[1:3] == want[1:3]
    np.testing.assert_array_equal(got[3], want[3])


def test_vectorized_map_falls_back_to_a_loop_and_keeps_dict_order():
    x = gtf.zeros([3, 2])
    generator = gtf.random.Generator.from_seed(1)
    drawn = gtf.vectorized_map(lambda r: r + generator.normal([2]), x)
    assert drawn.shape == (3, 2) and len({tuple(row) for row in np.asarray(drawn)}) == 3  # a draw per row
    doubled = gtf.vectorized_map(lambda r: gtf.py_function(lambda a: a * 2, [r + 1.0], gtf.float32), x)
    np.testing.assert_array_equal(doubled, np.full((3, 2), 2.0))
    assert list(gtf.vectorized_map(lambda r: {"z": r, "a": r}, x)) == ["z", "a"]
    with pytest.raises(TypeError, match=r"\[gradkit\] gk.vmap cannot vectorise a function that assigns"):
        gtf.vectorized_map(lambda r: r + generator.normal([2]), x, fallback_to_while_loop=False)
