"""The static proof that a graph's examples do not interact (``batch_independence``), which
lets ``batch_jacobian`` skip its random check.

The oracle is the full ``jax.jacrev`` Jacobian of the same pure-JAX program: whenever the
proof says "independent", every off-diagonal block (target example i, source example j != i)
must be exactly zero, and the tape's batch Jacobian, checked or not, must equal the diagonal
blocks. Random programs mix steps that keep examples apart with steps that mix them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk
from gradkit._tape.batch_independence import function_rows_independent

gnp = gk.numpy
B, S = 6, 4
X = np.asarray(jax.random.normal(jax.random.PRNGKey(7), (B, S)), np.float32)
W = np.asarray(jax.random.normal(jax.random.PRNGKey(8), (S, S)), np.float32) / 2
C = np.asarray(jax.random.normal(jax.random.PRNGKey(9), (B, S)), np.float32)
V = np.asarray(jax.random.normal(jax.random.PRNGKey(10), (S, 1)), np.float32)
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None)

# Steps (B, S) -> (B, S), written once for jnp and gk.numpy alike (``xp``).
KEEP_APART = {
    "tanh": lambda xp, h: xp.tanh(h),
    "matmul": lambda xp, h: h @ W,
    "relu": lambda xp, h: xp.maximum(h, 0.0),
    "softmax": lambda xp, h: xp.exp(h) / xp.sum(xp.exp(h), axis=1, keepdims=True),
    "row_max": lambda xp, h: h * xp.max(h, axis=1, keepdims=True),
    "reshape": lambda xp, h: xp.reshape(xp.reshape(h, (B, 2, S // 2)) * 2.0, (B, S)),
    "transpose": lambda xp, h: xp.transpose(xp.transpose(h) * V),
    "rotate_features": lambda xp, h: xp.concatenate([h[:, 2:], h[:, :2]], axis=1),
    "cumsum_features": lambda xp, h: xp.cumsum(h, axis=1),
    "sort_features": lambda xp, h: xp.sort(h, axis=1),
    "pad_features": lambda xp, h: xp.pad(h, ((0, 0), (1, 0)))[:, :S],
    "outer": lambda xp, h: xp.sum(h[:, :, None] * h[:, None, :], axis=2),
    "batch_sized_constant": lambda xp, h: h * C,
    "per_example_dot": lambda xp, h: h * xp.einsum("bi,bi->b", h, h)[:, None],
    "take_features": lambda xp, h: xp.take(h, np.array([2, 0, 3, 1]), axis=1),
}
MIX = {
    "batch_mean": lambda xp, h: h - xp.mean(h, axis=0, keepdims=True),
    "roll_batch": lambda xp, h: xp.roll(h, 1, axis=0),
    "cumsum_batch": lambda xp, h: xp.cumsum(h, axis=0),
    "sort_batch": lambda xp, h: xp.sort(h, axis=0),
    "gram": lambda xp, h: h @ xp.tanh(xp.transpose(h) @ h),
    "flip_batch": lambda xp, h: h[::-1],
    "kernel_rows": lambda xp, h: xp.tanh(h @ xp.transpose(h)) @ h,
    "take_examples": lambda xp, h: xp.take(h, np.array([1, 0, 2, 3, 5, 4]), axis=0),
}
STEPS = {**KEEP_APART, **MIX}


def run(xp, names, x):
    for name in names:
        x = STEPS[name](xp, x)
    return x


def full_jacobian(names):
    """(B, S, B, S): d out[b, i] / d x[c, j] of the pure-JAX program."""
    return np.asarray(jax.jacrev(lambda x: run(jnp, names, x))(jnp.asarray(X)))


def off_diagonal(full):
    mask = ~np.eye(B, dtype=bool)
    return np.moveaxis(full, 2, 1)[mask]  # (B * (B - 1), S, S)


def diagonal(full):
    return np.moveaxis(full, 2, 1)[np.arange(B), np.arange(B)]


def proven(names, primal=False):
    program = lambda _, x: run(jnp, names, x)  # noqa: E731
    return function_rows_independent(program, [], jax.ShapeDtypeStruct((B, S), jnp.float32), primal)


def one_example_jacobians(f, x):
    """Each example's Jacobian of ``f`` run on that example alone (the per-example algorithm's
    premise), or None where ``f`` on one example does not even give one row."""
    try:
        if jax.eval_shape(f, jax.ShapeDtypeStruct((1, *x.shape[1:]), x.dtype)).shape[0] != 1:
            return None
    except TypeError:  # a shape written for the batch's size
        return None
    return np.asarray(jax.vmap(jax.jacrev(lambda e: f(e[None])[0]))(x))


def tape_batch_jacobian(names, **kwargs):
    xt = gk.Tensor(jnp.asarray(X))
    with gk.GradientTape() as tape:
        tape.watch(xt)
        y = run(gnp, names, xt)
    return np.asarray(tape.batch_jacobian(y, xt, **kwargs).numpy())


@SETTINGS
@given(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4))
def test_proof_is_sound_and_the_tape_agrees_with_the_full_jacobian(names):
    full = full_jacobian(names)
    leaks = off_diagonal(full)
    if proven(names):
        assert np.all(leaks == 0), f"proven independent, yet example blocks interact: {names}"
    one = one_example_jacobians(lambda x: run(jnp, names, x), jnp.asarray(X))
    if proven(names, primal=True) and one is not None:
        np.testing.assert_allclose(one, diagonal(full), rtol=2e-5, atol=1e-5)
    if np.all(leaks == 0):
        for _ in range(3):  # every call: checked (per-example), or as the proof allows (whole-batch)
            np.testing.assert_allclose(tape_batch_jacobian(names), diagonal(full), rtol=2e-5, atol=1e-5)
    elif np.max(np.abs(leaks)) > 1e-2 * np.max(np.abs(full)):
        with pytest.warns(gk.GradkitWarning, match=r"\[gradkit\].*examples interact"):
            warned = tape_batch_jacobian(names)
        np.testing.assert_allclose(warned, np.einsum("bias->ais", full), rtol=2e-5, atol=1e-5)


def test_examples_that_interact_are_found_where_the_checks_forward_derivative_overflows():
    """The check's JVP of this softmax divides by a squared sum of exp(54)-sized terms, which
    overflows float32 (NaN), while the reverse-mode Jacobian stays finite: the check then asks
    the same question in reverse mode instead of letting the NaN pass."""
    names = ["batch_mean", "batch_sized_constant", "per_example_dot", "softmax"]
    full = full_jacobian(names)
    assert np.all(np.isfinite(full)) and np.max(np.abs(off_diagonal(full))) > 1.0  # they interact
    with pytest.warns(gk.GradkitWarning, match=r"\[gradkit\].*examples interact"):
        tape_batch_jacobian(names)
    np.testing.assert_allclose(
        tape_batch_jacobian(names, check_independence=False), np.einsum("bias->ais", full), rtol=2e-5, atol=1e-5
    )


@pytest.mark.parametrize("name", sorted(KEEP_APART))
def test_steps_that_keep_examples_apart_are_proven(name):
    assert proven([name, "tanh", name])


@pytest.mark.parametrize("name", sorted(KEEP_APART))
def test_steps_that_keep_examples_apart_are_proven_per_example(name):
    assert proven([name, "tanh", name], primal=True)


@pytest.mark.parametrize("name", sorted(MIX))
def test_steps_that_mix_examples_are_not_proven(name):
    assert not proven(["tanh", name])
    assert not proven(["tanh", name], primal=True)


# Programs whose derivative keeps examples apart (the full Jacobian is block diagonal) while
# it reads values computed from other examples: run on one example, they differ.
READ_OTHER_EXAMPLES = {
    "sign_of_batch_sum": lambda x: x * jnp.sign(jnp.sum(x, axis=0, keepdims=True)),
    "floor_of_batch_mean": lambda x: jnp.tanh(x) * jnp.floor(jnp.mean(x, axis=0, keepdims=True)),
    # out[i] = sum_k x[i, argmax(x[k])]: example k's indices choose what example i reads.
    "indices_of_other_examples": lambda x: jnp.sum(x[:, jnp.argmax(x, axis=1)], axis=1, keepdims=True) * x,
    "sorted_by_batch_max": lambda x: jnp.take_along_axis(x, jnp.argsort(jnp.max(x, axis=0))[None], axis=1),
}


@pytest.mark.parametrize("name", sorted(READ_OTHER_EXAMPLES))
def test_values_read_from_other_examples_are_not_proven_per_example(name):
    f = READ_OTHER_EXAMPLES[name]
    x = jnp.asarray(X)
    full = np.asarray(jax.jacrev(f)(x))
    assert np.all(off_diagonal(full) == 0)  # the derivative keeps examples apart
    assert not np.allclose(one_example_jacobians(f, x), diagonal(full))  # one example at a time differs
    assert not function_rows_independent(lambda _, x: f(x), [], jax.ShapeDtypeStruct((B, S), jnp.float32), True)


def test_the_per_example_algorithm_is_checked_where_values_read_other_examples():
    """The first call's values hide the difference (positive examples: the sign of each one's
    sum is the batch's); later calls must still give the batch's Jacobians, not the graph's
    run on one example."""

    def program(xp, x):
        return x * xp.sign(xp.sum(x, axis=0, keepdims=True))

    for x in (np.abs(X), X, C):
        full = np.asarray(jax.jacrev(lambda x: program(jnp, x))(jnp.asarray(x)))
        xt = gk.Tensor(jnp.asarray(x))
        with gk.GradientTape() as tape:
            tape.watch(xt)
            y = program(gnp, xt)
        np.testing.assert_allclose(np.asarray(tape.batch_jacobian(y, xt).numpy()), diagonal(full), atol=1e-6)


def test_convolution_pooling_and_custom_rules_are_proven():
    """A small CNN in NHWC: convolution, max pooling, jax.nn's custom-JVP activations."""
    kernel = jax.random.normal(jax.random.PRNGKey(0), (3, 3, 2, 4))

    def cnn(_, x):
        y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y)
        y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jax.nn.log_softmax(jnp.reshape(y, (y.shape[0], -1)), axis=-1)

    assert function_rows_independent(cnn, [], jax.ShapeDtypeStruct((5, 6, 6, 2), jnp.float32))
    # Pooling across the batch axis, or a kernel that reads the examples, is not.
    pool_batch = lambda _, x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 1), (1, 1), "VALID")  # noqa: E731
    assert not function_rows_independent(pool_batch, [], jax.ShapeDtypeStruct((5, 3), jnp.float32))


def test_a_graph_run_on_one_example_that_differs_still_gets_exact_jacobians():
    """Independent examples, but an op reads the batch's size (``ones_like(x).sum()``): the
    proof holds, the one-example graph computes other numbers, and every call must give the
    batch's own per-example Jacobians (the first call's check finds the difference)."""

    def program(xp, x):
        return xp.tanh(x) * xp.sum(xp.ones_like(x))

    assert function_rows_independent(lambda _, x: program(jnp, x), [], jax.ShapeDtypeStruct((B, S), jnp.float32))
    full = np.asarray(jax.jacrev(lambda x: program(jnp, x))(jnp.asarray(X)))
    xt = gk.Tensor(jnp.asarray(X))
    for _ in range(3):
        with gk.GradientTape() as tape:
            tape.watch(xt)
            y = program(gnp, xt)
        got = np.asarray(tape.batch_jacobian(y, xt).numpy())
        np.testing.assert_allclose(got, diagonal(full), rtol=1e-5, atol=1e-6)


# Independent examples whose graph reads the batch's size only for some values: run on one
# example it agrees with the batch for small values and not for large ones.
READS_THE_BATCH_SIZE_FOR_SOME_VALUES = {
    "relu": lambda xp, x: x * (1.0 + xp.maximum(x - 5.0, 0.0) * xp.sum(xp.ones_like(x))),
    "clip": lambda xp, x: xp.sin(x) + xp.clip(x - 5.0, 0.0, 1.0) * xp.sum(xp.ones_like(x)) * x,
}


@pytest.mark.parametrize("name", sorted(READS_THE_BATCH_SIZE_FOR_SOME_VALUES))
def test_a_check_passed_on_one_call_does_not_vouch_for_the_next_call_s_values(name):
    """The proof holds and the first call's values pass the check; the next call's values
    must still get the batch's own Jacobians, not those of the graph run on one example."""
    program = READS_THE_BATCH_SIZE_FOR_SOME_VALUES[name]
    assert function_rows_independent(lambda _, x: program(jnp, x), [], jax.ShapeDtypeStruct((B, S), jnp.float32), True)
    large = X + 10.0
    full = np.asarray(jax.jacrev(lambda x: program(jnp, x))(jnp.asarray(large)))
    assert not np.allclose(one_example_jacobians(lambda x: program(jnp, x), jnp.asarray(large)), diagonal(full))
    for x in (X, large, X, large):
        full = np.asarray(jax.jacrev(lambda x: program(jnp, x))(jnp.asarray(x)))
        xt = gk.Tensor(jnp.asarray(x))
        with gk.GradientTape() as tape:
            tape.watch(xt)
            y = program(gnp, xt)
        np.testing.assert_allclose(np.asarray(tape.batch_jacobian(y, xt).numpy()), diagonal(full), rtol=1e-5, atol=1e-5)


def test_a_custom_gradient_that_mixes_examples_is_not_proven():
    """The forward keeps examples apart, its gradient rule does not: the rule decides."""

    @jax.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (x * 2.0, None), lambda _, g: (g + jnp.mean(g, axis=0, keepdims=True),))
    assert not function_rows_independent(lambda _, x: f(x), [], jax.ShapeDtypeStruct((B, S), jnp.float32))


def test_interacting_examples_warn_also_while_an_outer_tape_records():
    # The outer tape records the batch Jacobian as one op; the check still runs on the values.
    x = gk.Tensor(jnp.asarray(np.random.default_rng(3).standard_normal((4, 3)), jnp.float32))
    with gk.GradientTape():
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = gnp.sum(x * x, axis=1, keepdims=True)
            z = y - gnp.mean(y, axis=0, keepdims=True)  # examples interact
        with pytest.warns(gk.GradkitWarning, match=r"^\[gradkit\] batch_jacobian assumes.*interact"):
            got = tape.batch_jacobian(z, x)
    # TensorFlow's result: per target column, the gradient of that column summed over the batch.
    full = jax.jacrev(lambda v: (lambda y: y - jnp.mean(y, axis=0, keepdims=True))(jnp.sum(v * v, 1, keepdims=True)))(
        x.numpy()
    )
    np.testing.assert_allclose(got.numpy(), np.einsum("bias->ais", full), rtol=1e-5, atol=1e-6)


def test_a_batch_jacobian_recorded_by_an_outer_tape_is_differentiated_exactly():
    x0 = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    x = gk.Tensor(jnp.asarray(x0))
    with gk.GradientTape() as outer:
        outer.watch(x)
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = gnp.tanh(x) * x[:, :1]  # per-example, but not proven elementwise
        jac = tape.batch_jacobian(y, x)
        penalty = gnp.sum(jac**2)

    def pure(xv):
        j = jax.vmap(jax.jacrev(lambda r: jnp.tanh(r) * r[:1]))(xv)
        return jnp.sum(j**2), j

    (want_penalty, want_jac), want_grad = jax.value_and_grad(pure, has_aux=True)(jnp.asarray(x0))
    np.testing.assert_allclose(np.asarray(jac), want_jac, rtol=1e-5)
    np.testing.assert_allclose(float(penalty), float(want_penalty), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(outer.gradient(penalty, x)), want_grad, rtol=1e-5, atol=1e-6)
