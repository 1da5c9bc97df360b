"""Bad input: a clear "[gradkit] ..." error, and every Variable exactly as it was."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_unchanged, snapshot

import gradkit as gk


class Vars:
    def __init__(self):
        self.a = gk.Variable(1.0, name="a")
        self.w = gk.Variable(np.arange(3.0, dtype=np.float32), name="w")
        self.n = gk.Variable(np.array([1, 2], np.int32), name="n")
        self.all = [self.a, self.w, self.n]


def _assign_then(v, bad):
    """A function that assigns a first, then does something bad: the assignment must not stick."""

    def fn(*args):
        v.a.assign(v.a * 10.0)
        v.w.assign_add(1.0)
        return bad(v)

    return fn


# name -> (call that fails, the exception type, the start of its message after "[gradkit] ")
BAD_CALLS = {
    "wrong_shape_assign": (
        lambda v: v.w.assign(jnp.ones(4)),
        gk.AssignmentError,
        r"cannot assign a value of shape \(4,\) to Variable 'w' of shape \(3,\)",
    ),
    "wrong_shape_slice": (
        lambda v: v.w[1:].assign(jnp.ones(3)),
        gk.AssignmentError,
        r"cannot assign a value of shape \(3,\) to the slice",
    ),
    "float_into_int": (
        lambda v: v.n.assign(np.array([1.5, 2.5], np.float32)),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n' of dtype int32",
    ),
    "python_float_into_int": (
        lambda v: v.n.assign([1.5, 2.5]),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n'",
    ),
    "float_into_int_slice": (
        lambda v: v.n[0].assign(jnp.float32(1.5)),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n'",
    ),
    "wrt_array": (
        lambda v: gk.grad(lambda: v.a * 2.0, wrt=jnp.ones(2))(),
        TypeError,
        r"wrt= takes Variables .* but got a ArrayImpl of shape \(2,\)",
    ),
    "wrt_string": (
        lambda v: gk.grad(lambda: v.a * 2.0, wrt="a")(),
        TypeError,
        r"wrt= takes Variables .* but got str 'a'",
    ),
    "wrt_list_with_array": (
        lambda v: gk.grad(lambda: v.a * 2.0, wrt=[v.a, np.ones(2)])(),
        TypeError,
        r"wrt= takes Variables",
    ),
    "non_scalar_output": (
        lambda v: gk.grad(lambda: v.w * 2.0, wrt=v.w)(),
        TypeError,
        r"gk.grad needs a function that returns a scalar, but it returned shape \(3,\)",
    ),
    "none_output": (
        lambda v: gk.grad(lambda: None, wrt=v.w)(),
        TypeError,
        r"gk.grad needs a function that returns a scalar, but it returned None \(NoneType\)",
    ),
    "non_scalar_after_assign": (
        lambda v: gk.grad(_assign_then(v, lambda v: v.w * 1.0), wrt=v.a)(),
        TypeError,
        r"gk.grad needs a function that returns a scalar",
    ),
    "value_and_grad_non_scalar": (
        lambda v: gk.value_and_grad(lambda: v.w * 2.0, wrt=v.w)(),
        TypeError,
        r"gk.value_and_grad needs a function that returns a scalar, but it returned shape \(3,\)",
    ),
    "value_and_grad_tuple_without_has_aux": (
        lambda v: gk.value_and_grad(lambda: (v.a * 2.0, v.a), wrt=v.a)(),
        TypeError,
        r"gk.value_and_grad needs a function that returns a scalar, but it returned a tuple of 2 "
        r"\(leaves of shapes \(\), \(\)\)",
    ),
    "jacrev_integer_output": (
        lambda v: gk.jacrev(lambda: (v.w * 2.0).astype(jnp.int32), wrt=v.w)(),
        TypeError,
        r"gk.jacrev got an output of an integer or bool dtype",
    ),
    "variable_of_none": (
        lambda v: gk.Variable(None),
        ValueError,
        r"a Variable needs an initial value, but got None",
    ),
    "variable_of_a_string": (
        lambda v: gk.Variable("abc"),
        TypeError,
        r"a Variable's initial value must be an array, a number or a nested list of numbers, but got str",
    ),
    "integer_wrt": (
        lambda v: gk.grad(lambda: jnp.sum(v.n * 1.0), wrt=v.n)(),
        TypeError,
        r"cannot differentiate with respect to Variable 'n' of dtype int32",
    ),
    "integer_wrt_jacobian": (
        lambda v: gk.jacrev(lambda: v.n * 1.0, wrt=[v.a, v.n])(),
        TypeError,
        r"cannot differentiate with respect to Variable 'n'",
    ),
    "assign_in_vmap": (
        lambda v: gk.vmap(lambda x: v.w.assign(x))(jnp.ones((2, 3))),
        TypeError,
        r"gk.vmap cannot vectorise a function that assigns Variable 'w'",
    ),
    "strict_functionalize": (
        lambda v: gk.functionalize(_assign_then(v, lambda v: v.a))(gk.State.of([v.w])),
        gk.AssignmentError,
        r"the function assigned Variable 'a', which the State .* does not hold",
    ),
    "bad_assign_inside_grad": (
        lambda v: gk.grad(_assign_then(v, lambda v: v.w.assign(jnp.ones(2))), wrt=v.a)(),
        gk.AssignmentError,
        r"cannot assign a value of shape \(2,\) to Variable 'w'",
    ),
    "jit_fails_mid_function": (
        lambda v: gk.jit(_assign_then(v, lambda v: v.n.assign(jnp.ones(2))))(),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n'",
    ),
    "functionalize_without_state": (
        lambda v: gk.functionalize(lambda: v.a)([v.a]),
        TypeError,
        r"a functionalized function takes a gk.State first",
    ),
    "argnums_out_of_range": (
        lambda v: gk.grad(lambda x: x * v.a, argnums=2)(1.0),
        ValueError,
        r"gk.grad: argnums=2 does not fit a call with 1 positional argument",
    ),
    "argnums_not_an_int": (
        lambda v: gk.grad(_assign_then(v, lambda v: v.a * 2.0), argnums="0")(1.0),
        TypeError,
        r"gk.grad: argnums='0' is not an int or a sequence of ints",
    ),
    "string_argument_to_differentiate": (
        lambda v: gk.jacrev(_assign_then(v, lambda v: v.a * 2.0))("x"),
        TypeError,
        r"gk.jacrev differentiates argument 0, but it is a str \('x'\), not an array or a number",
    ),
    "string_primal": (
        lambda v: gk.vjp(_assign_then(v, lambda v: v.a * 2.0), "x"),
        TypeError,
        r"gk.vjp differentiates argument 0, but it is a str",
    ),
    "holomorphic_with_real_input": (
        lambda v: gk.grad(_assign_then(v, lambda v: v.a * 2.0), holomorphic=True)(1.0),
        TypeError,
        r"gk.grad got holomorphic=True with real values: .* leave holomorphic out for a real function",
    ),
    "custom_gradient_not_returning_a_pair": (
        lambda v: gk.grad(_assign_then(v, lambda v: gk.custom_gradient(lambda x: x * 2.0)(v.a)))(1.0),
        TypeError,
        r"a function decorated with custom_gradient must return \(y, grad_fn\)",
    ),
    # A slice assignment may not do what a whole assignment may not (a float into an int Variable).
    "python_float_into_int_slice": (
        lambda v: v.n[0].assign(2.7),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n' of dtype int32",
    ),
    "python_float_added_to_int_slice": (
        lambda v: v.n[1].assign_add(0.6),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n' of dtype int32",
    ),
    "python_float_into_int_state_slice": (
        lambda v: gk.State.of([v.n]).at[v.n][0].set(9.9),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n' of dtype int32",
    ),
    "float_into_int_slice_inside_grad": (
        lambda v: gk.grad(_assign_then(v, lambda v: (v.n[0].assign(2.5), v.a * 1.0)[1]), wrt=v.a)(),
        gk.AssignmentError,
        r"cannot assign a value of dtype float32 to Variable 'n' of dtype int32",
    ),
    "wrong_shape_state_slice": (
        lambda v: gk.State.of([v.w]).at[v.w][0:2].set(jnp.ones(3)),
        gk.AssignmentError,
        r"cannot assign a value of shape \(3,\) to the slice slice\(0, 2, None\) of Variable 'w', which has "
        r"shape \(2,\)",
    ),
    "assign_none": (
        lambda v: v.w.assign(None),
        TypeError,
        r"cannot assign None to Variable 'w', which holds an array of shape \(3,\) and dtype float32: it is not a "
        r"number",
    ),
    "assign_string": (
        lambda v: v.w.assign("abc"),
        TypeError,
        r"cannot assign the str 'abc' to Variable 'w'",
    ),
    "assign_string_to_slice": (
        lambda v: v.w[0].assign("abc"),
        TypeError,
        r"cannot assign the str 'abc' to Variable 'w'",
    ),
    "assign_add_wrong_shape": (
        lambda v: v.w.assign_add([1.0, 2.0]),
        gk.AssignmentError,
        r"cannot add a value of shape \(2,\) to Variable 'w' of shape \(3,\)",
    ),
    "assign_sub_wrong_shape_inside_jit": (
        lambda v: gk.jit(_assign_then(v, lambda v: v.w.assign_sub(jnp.ones((2, 3)))))(),
        gk.AssignmentError,
        r"cannot subtract a value of shape \(2, 3\) from Variable 'w' of shape \(3,\)",
    ),
    "state_assign_add_wrong_shape": (
        lambda v: gk.State.of([v.w]).assign_add(v.w, jnp.ones(2)),
        gk.AssignmentError,
        r"cannot add a value of shape \(2,\) to Variable 'w' of shape \(3,\)",
    ),
    "jvp_tangent_wrong_shape": (
        lambda v: gk.jvp(lambda: v.w * 2.0, (), (), wrt=v.w, wrt_tangents=jnp.ones(2)),
        ValueError,
        r"gk.jvp: the tangent for Variable 'w' has shape \(2,\), but the Variable has shape \(3,\)",
    ),
    "jvp_integer_tangent": (
        lambda v: gk.jvp(lambda: v.w * 2.0, (), (), wrt=v.w, wrt_tangents=jnp.ones(3, jnp.int32)),
        TypeError,
        r"gk.jvp: the tangent for Variable 'w' has dtype int32, but the Variable has dtype float32",
    ),
    "grad_integer_argument": (
        lambda v: gk.grad(lambda x: x * v.a)(1),
        TypeError,
        r"gk.grad cannot differentiate with respect to positional argument 0, a Python int of dtype int32",
    ),
    "grad_integer_argnums": (
        lambda v: gk.grad(lambda x, k: jnp.sum(x * k) * v.a, argnums=(0, 1))(1.0, np.array([1, 2], np.int32)),
        TypeError,
        r"gk.grad cannot differentiate with respect to positional argument 1, an array of dtype int32",
    ),
    "jacrev_boolean_argument": (
        lambda v: gk.jacrev(lambda x: v.w * x)(True),
        TypeError,
        r"gk.jacrev cannot differentiate with respect to positional argument 0, a Python bool of dtype bool",
    ),
    # A live Variable outlives every jax trace, so it must never keep a tracer.
    "assign_under_jax_jit": (
        lambda v: _reading_as_constant(jax.jit(_assign_then(v, lambda v: v.w.value))),
        gk.AssignmentError,
        r"Variable 'a' was assigned a traced value inside a jax transform .* Use gk.jit instead of jax.jit",
    ),
    "assign_in_lax_loop_without_gradkit": (
        lambda v: _reading_as_constant(lambda: _assign_in_fori_loop(v)),
        gk.AssignmentError,
        r"Variable 'w' was assigned a traced value inside a jax transform",
    ),
    # Under a gradkit transform the loop body's tracer would escape into the transform's State.
    "assign_in_lax_loop_under_grad": (
        lambda v: gk.grad(_assign_then(v, _assign_in_fori_loop), wrt=v.a)(),
        gk.AssignmentError,
        r"Variable 'w' was assigned inside a jax transform or control-flow body \(lax.fori_loop",
    ),
    "assign_in_lax_loop_under_jit": (
        lambda v: gk.jit(_assign_then(v, _assign_in_fori_loop))(),
        gk.AssignmentError,
        r"Variable 'w' was assigned inside a jax transform or control-flow body",
    ),
    "assign_in_lax_cond_under_grad": (
        lambda v: _reading_as_constant(
            gk.grad(lambda: jax.lax.cond(v.a > 0, lambda: jnp.sum(v.w.assign(v.w * v.a).value), lambda: v.a), wrt=v.a)
        ),
        gk.AssignmentError,
        r"Variable 'w' was assigned inside a jax transform or control-flow body",
    ),
}


def _reading_as_constant(fn):
    """``fn()``, which reads a Variable inside a plain jax.jit or lax loop (gradkit warns of that:
    the value becomes a constant) before it assigns one."""
    with pytest.warns(gk.GradkitWarning, match="constant of the compiled program"):
        return fn()


def _assign_in_fori_loop(v):
    def body(i, carry):
        v.w.assign(jnp.sin(v.w * 2.0))
        return carry + v.w[0]

    return jax.lax.fori_loop(0, 2, body, 0.0)


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_input_raises_clear_error_and_changes_nothing(case):
    bad, exc_type, message = BAD_CALLS[case]
    v = Vars()
    before = snapshot(v.all)
    with pytest.raises(exc_type, match=r"^\[gradkit\] " + message) as info:
        bad(v)
    assert isinstance(info.value, gk.GradkitError)
    assert_unchanged(v.all, before)


def test_failed_commit_changes_nothing():
    v = Vars()
    before = snapshot(v.all)
    # A State whose values went bad after it was built: jax rebuilds States without checks.
    state = gk.State.of([v.a, v.w])
    broken = jax.tree.map(lambda x: jnp.ones(2) if x.ndim else x + 4.0, state)
    with pytest.raises(gk.AssignmentError, match=r"^\[gradkit\] cannot assign a value of shape \(2,\) to Variable 'w'"):
        broken.commit()
    assert_unchanged(v.all, before)


def test_errors_are_builtin_exception_types_too():
    assert issubclass(gk.AssignmentError, ValueError)
    assert issubclass(gk.GradkitError, Exception)


def test_integer_entry_of_a_state_argument_is_named():
    # The argument is a State, not an array: the error says which of its entries is an integer.
    a, n = gk.Variable(1.0, name="a"), gk.Variable(jnp.int32(1), name="n")
    with pytest.raises(gk.GradkitError, match=r"^\[gradkit\] .*argument 0, a State whose leaf \['n'\] is an array"):
        gk.grad(lambda st: st[a] * 2)(gk.State.of([a, n]))


def test_a_variables_operator_names_inputs_that_do_not_fit():
    # The Variable on the left: as with a tensor there, a [gradkit] error both a ValueError and a
    # TypeError (JAX's own would be a bare TypeError), the Variable unchanged.
    v = gk.Variable(jnp.array([1.0, 2.0]))
    for apply in (lambda: v * jnp.ones(3), lambda: v - np.ones(3), lambda: v @ jnp.ones((3, 3))):
        with pytest.raises(ValueError, match=r"\[gradkit\] the operator .* cannot take float32\[2\]"):
            apply()
        with pytest.raises(TypeError):
            apply()
    np.testing.assert_array_equal(v.value, [1.0, 2.0])


def test_a_tape_target_no_tape_computed_is_refused():
    x = gk.Variable(jnp.array([1.0, 2.0]))
    with gk.GradientTape() as tape:
        _ = x * 2.0
    for target in ("y", 3.0, np.ones(2)):
        with pytest.raises(TypeError, match=r"\[gradkit\].*which no tape computed"):
            tape.gradient(target, x)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda a: gk.jvp(lambda x: x * a, (jnp.ones(2),), (jnp.ones(3),)), ValueError, "tangent shape as (3,)"),
        (
            lambda a: gk.jvp(lambda x: x * a, (jnp.ones(2),), (jnp.ones(2, jnp.int32),)),
            TypeError,
            "tangent dtype int32",
        ),
        (lambda a: gk.vjp(lambda x: x * a, jnp.ones(2))[1](jnp.ones(3)), ValueError, "got float32[3]"),
        (lambda a: gk.vjp(lambda x: x * a, jnp.ones(2))[1]((jnp.ones(2),) * 2), ValueError, "tree structure"),
        (
            lambda a: gk.grad(lambda: jnp.sum(a), wrt=a, has_aux=True)(),
            TypeError,
            "returned an array of shape () and dtype float32",
        ),
    ],
)
def test_tangents_cotangents_and_aux_that_do_not_fit(call, error, words):
    a = gk.Variable(jnp.array([1.0, 2.0]), name="a")
    before = snapshot([a])
    with pytest.raises(error, match=r"^\[gradkit\] ") as info:
        call(a)
    assert words in str(info.value)
    assert "Tracer" not in str(info.value)
    assert_unchanged([a], before)


@pytest.mark.parametrize("argnums", [np.int64(1), (np.int32(1),), [np.int64(0), 1]], ids=repr)
def test_numpy_integers_as_argnums_as_jax_takes_them(argnums):
    def f(x, y):
        return x * y * y

    np.testing.assert_allclose(
        np.asarray(gk.grad(f, argnums=argnums)(2.0, 3.0), dtype=object).astype(float),
        np.asarray(jax.grad(f, argnums=argnums)(2.0, 3.0), dtype=object).astype(float),
    )


def test_numpy_integer_static_argnums_of_jit():
    step = gk.jit(lambda x, n: x * n if n > 1 else x, static_argnums=np.int64(1))
    assert float(step(2.0, 3)) == float(jax.jit(lambda x, n: x * n if n > 1 else x, static_argnums=np.int64(1))(2.0, 3))
