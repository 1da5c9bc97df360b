"""An iterator made outside a ``tf.function`` and read inside it with ``next`` / ``get_next`` gives
the next element at every call, as in TensorFlow's custom training loops (``train_step(it)``).

Oracles: the dataset's own elements (NumPy), a hand-written NumPy SGD loop, and TensorFlow where
it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0
Y = np.array([[1.0], [0.0], [1.0], [2.0], [0.5], [-1.0]], np.float32)
W0 = np.array([[0.5], [-0.5]], np.float32)


def _train(tf, as_argument=True):
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(2)
    w = tf.Variable(W0)
    opt = tf.keras.optimizers.SGD(0.1)
    it = iter(ds)

    def step(iterator):
        x, y = next(iterator)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    train_step = tf.function(step) if as_argument else tf.function(lambda: step(it))
    losses = [float(train_step(it) if as_argument else train_step()) for _ in range(3)]
    return losses, w.numpy(), train_step


def _numpy_sgd():
    w, losses = W0.copy(), []
    for k in range(3):
        x, y = X[2 * k : 2 * k + 2], Y[2 * k : 2 * k + 2]
        r = x @ w - y
        losses.append(float(np.mean(r**2)))
        w = w - 0.1 * (2 * x.T @ r / len(x))
    return losses, w


@pytest.mark.parametrize("as_argument", [True, False])
def test_each_call_trains_on_the_next_batch(as_argument):
    losses, w, _ = _train(gtf, as_argument)
    want_losses, want_w = _numpy_sgd()
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(w, want_w, rtol=1e-5)


def test_the_steps_compile_once():
    *_, step = _train(gtf)
    # Two traces for a first call that reads Variables (see gk.jit), none after.
    assert step.trace_count == 2


def test_a_closed_over_iterator_and_get_next():
    ds = gtf.data.Dataset.from_tensor_slices(X).batch(2)
    it = iter(ds)

    @gtf.function
    def first_rows():
        return it.get_next()[:, 0]

    got = [first_rows().numpy().tolist() for _ in range(3)]
    assert got == [X[0:2, 0].tolist(), X[2:4, 0].tolist(), X[4:6, 0].tolist()]
    with pytest.raises(gtf.errors.OutOfRangeError, match=r"\[gradkit\] End of sequence"):
        first_rows()


def test_the_end_and_a_batch_of_another_shape_raise_and_assign_nothing():
    ds = gtf.data.Dataset.from_tensor_slices(X[:5]).batch(2)
    total = gtf.Variable(0.0)
    it = iter(ds)

    @gtf.function
    def step():
        total.assign_add(gtf.reduce_sum(next(it)))

    step()
    step()
    assert float(total) == pytest.approx(float(X[:4].sum()))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*drop_remainder=True"):
        step()  # the last batch has one row, the step was traced for two
    with pytest.raises(gtf.errors.OutOfRangeError):
        step()
    assert float(total) == pytest.approx(float(X[:4].sum()))


def test_an_iterator_made_inside_the_function_starts_afresh_at_each_call():
    ds = gtf.data.Dataset.from_tensor_slices(X).batch(2)

    @gtf.function
    def first_batch():
        return next(iter(ds))

    assert first_batch().numpy().tolist() == first_batch().numpy().tolist() == X[:2].tolist()


def test_a_for_loop_over_an_outside_iterator_is_refused():
    it = iter(gtf.data.Dataset.from_tensor_slices(X).batch(2))

    @gtf.function
    def loop():
        return sum(gtf.reduce_sum(x) for x in it)

    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*for x in dataset"):
        loop()


def test_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    theirs, their_w, _ = _train(tf)
    ours, our_w, _ = _train(gtf)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    np.testing.assert_allclose(our_w, their_w, rtol=1e-5)
