"""``tf.grad_pass_through(f)``: the value is ``f(x)`` exactly (large arguments, inf, integer and
reduced outputs included), the gradient the identity. Oracles: ``f`` applied directly, the
identity by hand, and TensorFlow where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

CASES = {
    "sign of large values": (lambda T: T.sign, [1e9, 3e7, -5e8]),
    "a tiny scale": (lambda T: lambda a: a * 1e-10, [1e8]),
    "clip of inf": (lambda T: lambda a: T.clip_by_value(a, -5.0, 5.0), [np.inf, 1.0]),
    "round": (lambda T: T.math.round, [2.6, -1.2]),
}


def _run(lib, make, xs):
    x = lib.constant(np.array(xs, np.float32))
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = lib.grad_pass_through(make(lib))(x)
    return y.numpy(), tape.gradient(y, x).numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_value_is_f_and_the_gradient_the_identity(name):
    make, xs = CASES[name]
    value, grad = _run(gtf, make, xs)
    np.testing.assert_array_equal(value, make(gtf)(gtf.constant(np.array(xs, np.float32))).numpy())
    np.testing.assert_array_equal(grad, np.ones(len(xs), np.float32))


def test_integer_and_reduced_outputs():
    x = gtf.constant([1.7, 2.2])
    with gtf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        rounded = gtf.grad_pass_through(lambda a: gtf.cast(gtf.round(a), gtf.int32))(x)
        total = gtf.grad_pass_through(gtf.reduce_sum)(x)
    assert rounded.dtype == gtf.int32 and rounded.numpy().tolist() == [2, 2]
    assert tape.gradient(rounded, x) is None
    assert total.shape == () and float(total) == pytest.approx(3.9)
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [1.0, 1.0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    make, xs = CASES[name]
    for got, want in zip(_run(gtf, make, xs), _run(tf, make, xs)):
        np.testing.assert_array_equal(got, want)
