"""The tape's fast paths give what its general path gives.

Indexing with ints and slices reuses the op recorded for the same index on a tensor of the
same shape and dtype; one-tensor functions, two-argument elementwise functions
(``gnp.maximum(t, 0.0)``), a Variable's reflected operators (``x @ v``) and assignments of
tensors take shortcuts of their own, and a Python float that recurs is held on the device. Each test runs a program whose fast path
is taken repeatedly, with shapes and indexes changing in between, against ``jax.grad`` of the
same program written with jax.numpy, or NumPy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.numpy as gnp
from gradkit import _errors

A = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(4, 6)
B = np.linspace(0.5, 2.0, 30, dtype=np.float32).reshape(5, 6)

INDEXES = [
    slice(None, 2),
    (slice(1, None), 0),
    (Ellipsis, slice(None, None, 2)),
    (None, 1, slice(2, 4)),
    -1,
    (slice(None), -2),
    (True, 0),
]


def _assert_rounds_match_jax(program, value, rtol=1e-5, atol=1e-6):
    """``program(xp, x)`` on a Variable, three rounds (the second and third take the cached
    ops), against jax.value_and_grad of the same program on jax.numpy."""
    v = gk.Variable(value)
    want_y, want_g = jax.value_and_grad(lambda x: program(jnp, x))(jnp.asarray(value))
    for _ in range(3):
        with gk.GradientTape() as tape:
            y = program(gnp, v)
        np.testing.assert_allclose(np.asarray(y), want_y, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(tape.gradient(y, v)), want_g, rtol=rtol, atol=atol)


def _sliced_sum(xp, x, indexes):
    return sum(xp.sum(xp.sin(x)[index] ** 2) for index in indexes)


@pytest.mark.parametrize("value", [A, B], ids=["4x6", "5x6"])
def test_repeated_indexes_match_jax(value):
    _assert_rounds_match_jax(lambda xp, x: _sliced_sum(xp, x, INDEXES), value)


def test_cached_index_op_is_per_shape():
    small, large = gk.Variable(A), gk.Variable(B)
    with gk.GradientTape():
        for _ in range(2):
            t_large, t_small = gnp.sin(large), gnp.sin(small)
            assert t_large[4].shape == (6,)
            assert t_large[1:].shape == (4, 6)
            assert t_small[1:].shape == (3, 6)
            # Row 4 exists in the 5x6 tensor, not in the 4x6 one: still refused there.
            with pytest.raises(_errors.GradkitIndexError, match="out of bounds"):
                t_small[4]
    np.testing.assert_allclose(np.asarray(t_small[-1]), np.sin(A)[-1], rtol=1e-6)


def test_integer_tensors_are_indexed_by_the_general_path():
    v = gk.Variable(A)
    with gk.GradientTape() as tape:
        for _ in range(2):
            idx = gnp.argmax(gnp.sin(v), axis=1)  # an integer result: no gradient, exact values
            np.testing.assert_array_equal(np.asarray(idx[1:3]), np.argmax(np.sin(A), axis=1)[1:3])
            assert int(idx[0]) == int(np.argmax(np.sin(A)[0]))
            y = gnp.sum(v[0:1] * v[1:3])
    want = jax.grad(lambda x: jnp.sum(x[0:1] * x[1:3]))(jnp.asarray(A))
    np.testing.assert_allclose(np.asarray(tape.gradient(y, v)), want, rtol=1e-6)


@pytest.mark.parametrize(
    "op",
    [
        lambda c, w: c @ w,
        lambda c, w: c - w,
        lambda c, w: c / (w + 2.0),
        lambda c, w: c**w,
    ],
    ids=["matmul", "sub", "truediv", "pow"],
)
@pytest.mark.parametrize("constant", ["jax", "numpy"])
def test_reflected_operators_of_a_variable_match_jax(op, constant):
    w0 = np.full((6, 6), 0.5, dtype=np.float32) + np.eye(6, dtype=np.float32)
    c = np.linspace(0.5, 1.5, 36, dtype=np.float32).reshape(6, 6)
    c = jnp.asarray(c) if constant == "jax" else c
    w = gk.Variable(w0)
    for _ in range(2):
        with gk.GradientTape() as tape:
            y = gnp.sum(op(c, w) ** 2)
        want = jax.grad(lambda x: jnp.sum(op(jnp.asarray(c), x) ** 2))(jnp.asarray(w0))
        np.testing.assert_allclose(np.asarray(tape.gradient(y, w)), want, rtol=1e-5)


def test_a_jax_array_times_a_variable_reads_the_variable_once(monkeypatch):
    # jax probes ``w.__jax_array__`` before deferring to ``w.__rmatmul__``; under a tape the
    # probe is answered without a read, so the program reads ``w`` as often as it names it.
    from gradkit._tape.frame import TapeFrame

    reads = []
    read = TapeFrame.read
    monkeypatch.setattr(TapeFrame, "read", lambda self, var: reads.append(var) or read(self, var))
    x = jnp.asarray(A)
    w = gk.Variable(np.linspace(-1.0, 1.0, 18, dtype=np.float32).reshape(6, 3))
    untracked = gk.Variable(np.ones((6, 3), np.float32), trainable=False)
    with gk.GradientTape() as tape:
        y = gnp.sum(gnp.tanh(x @ w) * 2.0) + gnp.sum(x @ w)  # first sight of w, then a bound read
        z = gnp.sum(x @ untracked)  # not watched: the probe reads it, and jax converts that value
    assert [v is w for v in reads] == [True, True, False]
    want = jax.grad(lambda v: jnp.sum(jnp.tanh(x @ v) * 2.0) + jnp.sum(x @ v))(w.numpy())
    np.testing.assert_allclose(np.asarray(tape.gradient(y, w)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(z), np.sum(A @ np.ones((6, 3), np.float32)), rtol=1e-5)


def test_reflected_operator_outside_a_tape_is_a_plain_array():
    w = gk.Variable(np.eye(3, dtype=np.float32))
    out = jnp.ones((2, 3)) @ w
    np.testing.assert_allclose(np.asarray(out), np.ones((2, 3)))


def test_one_tensor_functions_and_assignments_match_jax():
    """An inner SGD loop of unary functions and ``assign_sub`` of tensors, differentiated
    with respect to the learning rate (the meta-gradient), against jax.grad of its rewrite."""
    x = jnp.asarray(A)

    def loss(xp, w):
        return xp.mean(xp.tanh(x @ w) ** 2) + xp.sum(xp.exp(-(w**2)))

    def meta(lr, w):
        for _ in range(3):
            w = w - lr * jax.grad(lambda ww: loss(jnp, ww))(w)
        return loss(jnp, w)

    w0 = np.linspace(-0.5, 0.5, 36, dtype=np.float32).reshape(6, 6)
    w, lr = gk.Variable(w0), gk.Variable(np.float32(0.1))
    for _ in range(2):
        w.assign(w0)
        with gk.GradientTape() as outer:
            for _ in range(3):
                with gk.GradientTape() as inner:
                    ell = loss(gnp, w)
                w.assign_sub(lr * inner.gradient(ell, w))
            final = loss(gnp, w)
        want_value, want_grad = jax.value_and_grad(meta)(jnp.float32(0.1), jnp.asarray(w0))
        np.testing.assert_allclose(np.asarray(final), want_value, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(outer.gradient(final, lr)), want_grad, rtol=1e-4)


def test_assigning_a_tensor_of_the_wrong_shape_is_refused_and_changes_nothing():
    w = gk.Variable(A)
    with gk.GradientTape():
        t = gnp.sin(w)
        with pytest.raises(_errors.AssignmentError):
            w.assign(t[1:])
        with pytest.raises(_errors.AssignmentError):
            w.assign_sub(t[:, :2])
    np.testing.assert_array_equal(np.asarray(w.numpy()), A)


def _reductions(xp, x):
    n, m = x.shape
    y = xp.reshape(xp.sin(x), (m, n))
    y = xp.transpose(y, (1, 0)) * x
    s = xp.sum(y, axis=-1, keepdims=True) + xp.mean(y, axis=0, keepdims=True)
    z = xp.max(s, axis=(0, 1)) + xp.sum(xp.cumsum(y, axis=1)) + xp.var(y, axis=1, ddof=1).sum()
    return z + xp.sum(xp.expand_dims(y, 1) ** 2) + xp.sum(xp.squeeze(s, axis=None) ** 3)


@pytest.mark.parametrize("value", [A, B], ids=["4x6", "5x6"])
def test_functions_with_static_arguments_match_jax(value):
    _assert_rounds_match_jax(_reductions, value, rtol=1e-4, atol=1e-5)


def test_a_bad_static_argument_is_refused_each_time():
    v = gk.Variable(A)
    with gk.GradientTape():
        t = gnp.sin(v)
        assert gnp.sum(t, axis=1).shape == (4,)
        for _ in range(2):
            with pytest.raises(ValueError, match="gk.numpy.sum"):
                gnp.sum(t, axis=2)
        assert gnp.sum(t, axis=0).shape == (6,)


def _elementwise_pairs(xp, x, c):
    """Two-argument elementwise functions with every kind of second operand."""
    y = xp.sin(x)
    return (
        xp.sum(xp.maximum(y, 0.0) ** 2)
        + xp.sum(xp.minimum(y, 2) * y)  # an int: static
        + xp.sum(xp.arctan2(y, xp.cos(x)))  # two tensors
        + xp.sum(xp.maximum(y, c))  # a NumPy array: a constant
        + xp.sum(xp.hypot(y, jnp.asarray(c)))  # a JAX array
        + xp.sum(xp.clip(y, -0.25))
    )


@pytest.mark.parametrize("value", [A, B], ids=["4x6", "5x6"])
def test_two_argument_elementwise_functions_match_jax(value):
    c = np.full((1, value.shape[-1]), 0.1, np.float32)
    _assert_rounds_match_jax(lambda xp, x: _elementwise_pairs(xp, x, c), value)


def test_two_argument_elementwise_function_with_bad_shapes_is_refused():
    v = gk.Variable(A)
    with gk.GradientTape():
        t = gnp.sin(v)
        for _ in range(2):
            with pytest.raises(ValueError, match=r"\[gradkit\].*gk.numpy.maximum"):
                gnp.maximum(t, np.ones(5, np.float32))


def test_python_float_constants_keep_their_values_across_calls():
    # The same float recurs each call (a constant of the step), so from its second use it is
    # held on the device; -0.0 and 0.0 compare equal in Python but are different values.
    x0 = np.array([-1.0, -2.0, 3.0], np.float32)
    x = gk.Variable(x0)

    def f(xp, z, c):
        return xp.arctan2(c, z) + xp.maximum(z, c) * c

    for c in [0.0, 0.0, 0.0, -0.0, -0.0, 0.0, float("nan"), float("nan"), 2.5, 2.5]:
        with gk.GradientTape() as tape:
            y = f(gnp, x, c)
            total = gnp.sum(y)
        g = tape.gradient(total, x)
        want_y = f(jnp, jnp.asarray(x0), c)
        want_g = jax.grad(lambda z, c=c: jnp.sum(f(jnp, z, c)))(jnp.asarray(x0))
        np.testing.assert_allclose(np.asarray(y), want_y, rtol=1e-6)
        if c == c:
            np.testing.assert_array_equal(np.signbit(np.asarray(y)), np.signbit(want_y))
        np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-6)


def test_a_float_constant_that_changes_every_call_compiles_once():
    from tests._oracles import count_compiles

    x = gk.Variable(A)

    def step(scale):
        with gk.GradientTape() as tape:
            y = gnp.sum(gnp.maximum(gnp.sin(x), 0.0) * scale)
        return tape.gradient(y, x)

    step(0.5)  # compiles the program
    step(0.25)  # and now holds 0.0 on the device
    for scale in [0.125, 0.75, 0.75, 3.0]:
        assert count_compiles(lambda scale=scale: np.asarray(step(scale))) == 0
        want = jax.grad(lambda z, s=scale: jnp.sum(jnp.maximum(jnp.sin(z), 0.0) * s))(jnp.asarray(A))
        np.testing.assert_allclose(np.asarray(step(scale)), want, rtol=1e-6)


def _variable_first(xp, x):
    """gk.numpy functions whose first argument is the Variable itself (gnp.tanh(w))."""
    return xp.sum(xp.tanh(x)) + xp.sum(xp.maximum(x, 0.25)) + xp.sum(xp.sum(x, axis=1) ** 2) + xp.sum(xp.sin(x[1:]))


@pytest.mark.parametrize("value", [A, B], ids=["4x6", "5x6"])
def test_functions_of_a_variable_itself_match_jax(value):
    _assert_rounds_match_jax(_variable_first, value)


def test_functions_of_a_variable_outside_a_tape_give_arrays():
    v = gk.Variable(A)
    out = gnp.tanh(v)
    assert not isinstance(out, gk.Tensor) or not out._node.mask
    np.testing.assert_allclose(np.asarray(out), np.tanh(A), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gnp.maximum(v, 0.5)), np.maximum(A, 0.5))
