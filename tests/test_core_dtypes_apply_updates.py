"""``gk.apply_updates`` with parameters of another dtype than their updates.

Oracle: ``optax.apply_updates`` on the same values as a plain pytree, which adds ``p + u`` in
their common dtype and casts the sum to the parameter's once. An update of another kind than
its parameter (a float into an int Variable, a complex into a float one) is refused, as
assigning it is and as building the State of such updates is.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import gradkit as gk

# float32 updates whose bfloat16 rounding lands on a tie (or on zero) that the float32 sum does
# not: casting the update first rounds twice and misses the step.
P = np.array([1.0, 1.0, 2.0, -1.0, 256.0], np.float32)
U = np.array([0.0039064, 0.0039, 0.0078135, -0.0019532, 1.0001], np.float32)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_low_precision_variable_float32_update_matches_optax(dtype):
    p = jnp.asarray(P, dtype)
    w = gk.Variable(p, name="w")
    gk.apply_updates(w, jnp.asarray(U))
    want = optax.apply_updates(p, jnp.asarray(U))
    assert w.dtype == want.dtype == dtype
    np.testing.assert_array_equal(np.asarray(w.numpy(), np.float32), np.asarray(want, np.float32))


def test_low_precision_step_under_jit_and_a_python_scalar_update_match_optax():
    p = jnp.asarray(P, jnp.bfloat16)
    w = gk.Variable(p, name="w")
    gk.jit(lambda u: gk.apply_updates(w, u))(jnp.asarray(U))
    want = optax.apply_updates(p, jnp.asarray(U))
    np.testing.assert_array_equal(np.asarray(w.numpy(), np.float32), np.asarray(want, np.float32))
    s = gk.Variable(jnp.asarray(1.0, jnp.bfloat16), name="s")
    gk.apply_updates(s, 0.0039064)  # a Python float adds in the parameter's dtype, as in optax
    want = optax.apply_updates(jnp.asarray(1.0, jnp.bfloat16), 0.0039064)
    assert s.dtype == want.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(s.numpy(), np.float32), np.asarray(want, np.float32))


def test_the_gradient_of_a_step_of_a_low_precision_variable_is_the_rewrite_s():
    p = jnp.asarray([0.5, -1.25, 2.0], jnp.bfloat16)
    w = gk.Variable(p, name="w")
    u = jnp.asarray([0.1, 0.2, -0.3])

    def loss(u):
        gk.apply_updates(w, u)
        return jnp.sum(w.value.astype(jnp.float32) ** 2)

    def pure(u):
        return jnp.sum(optax.apply_updates(p, u).astype(jnp.float32) ** 2)

    got = gk.grad(loss)(u)
    want = jax.grad(pure)(u)
    assert got.dtype == want.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize(
    "var_dtype,update",
    [
        (jnp.int32, jnp.asarray([0.5, 0.7])),  # optax would truncate it to 0: the step vanishes
        (jnp.int32, 0.5),  # a scalar Variable below
        (jnp.float32, jnp.asarray([0.5j, 1.0])),  # the imaginary part would be dropped
    ],
    ids=["float_array_into_int", "python_float_into_int", "complex_into_float"],
)
def test_an_update_of_another_kind_raises_and_changes_nothing(var_dtype, update):
    a = gk.Variable(jnp.asarray([1.0, 2.0]), name="a")
    start = np.asarray(1 if isinstance(update, float) else [1, 2], var_dtype)
    v = gk.Variable(start, name="v")
    error = r"^\[gradkit\] cannot assign a value of dtype \w+ to Variable 'v'"
    with pytest.raises(gk.GradkitError, match=error):
        gk.apply_updates([a, v], [jnp.asarray([1.0, 1.0]), update])
    with pytest.raises(gk.GradkitError, match=error):  # the same error as building the State of such updates
        gk.State({v: update})
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(v.numpy(), start)


def test_integer_updates_of_integer_variables_still_add():
    n = gk.Variable(jnp.asarray([1, 2]), name="n")
    k = gk.Variable(0, name="k")
    gk.apply_updates(n, jnp.asarray([3, 4]))
    gk.apply_updates(k, 1)
    assert n.dtype == k.dtype == jnp.int32
    np.testing.assert_array_equal(n.numpy(), optax.apply_updates(jnp.asarray([1, 2]), jnp.asarray([3, 4])))
    assert int(k.numpy()) == 1
