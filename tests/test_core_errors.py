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
    "non_scalar_after_assign": (
        lambda v: gk.grad(_assign_then(v, lambda v: v.w * 1.0), wrt=v.a)(),
        TypeError,
        r"gk.grad needs a function that returns a scalar",
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
}


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
