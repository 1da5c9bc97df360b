"""gk.vmap with Variables created inside the mapped function, States as vmap axes specs, and
gk.vmap against jax.vmap of the pure rewrite.

Every oracle is a pure-JAX program (jax.vmap / jax.grad of a rewrite without Variables) or a
hand derivation; no test compares gradkit with itself.
"""

import json
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import WITH_AND_WITHOUT_JIT, assert_close, assert_unchanged, maybe_jit, snapshot

import gradkit as gk
from gradkit._errors import GradkitTypeError, GradkitValueError

XS = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [-2.0, 0.3, 1.5], [0.0, 1.0, -1.0]], np.float32)
W0 = np.array([0.7, -1.2, 2.0], np.float32)


@pytest.fixture
def vs():
    w = gk.Variable(W0, name="w")
    s = gk.Variable(np.float32(1.5), name="s")
    before = snapshot([w, s])
    yield w, s
    # No gk.vmap (nor a failed call) changes a Variable that outlives it.
    assert_unchanged([w, s], before)


def _accumulate(w, s):
    """Per example: a local accumulator summing x_i * w_i, scaled by s: (x @ w) * s."""

    def per_example(x):
        acc = gk.Variable(0.0, name="acc")
        for i in range(3):
            acc.assign_add(x[i] * w[i])
        acc.assign(acc * s)
        return acc.value

    return per_example


def _pure_accumulate(wv, sv, x):
    return (x @ wv) * sv


# --- 1. Variables created inside the mapped function -------------------------------------------


@WITH_AND_WITHOUT_JIT
def test_vmap_local_accumulator_matches_jax_vmap(vs, jit):
    w, s = vs
    got = maybe_jit(gk.vmap(_accumulate(w, s)), jit)(XS)
    want = jax.vmap(_pure_accumulate, in_axes=(None, None, 0))(W0, np.float32(1.5), XS)
    assert_close(got, want)


def test_vmap_local_accumulator_from_a_jnp_array_eagerly(vs):
    _, s = vs

    def per_example(x):
        acc = gk.Variable(jnp.zeros(()), name="acc")
        for i in range(3):
            acc.assign_add(x[i] * s)
        return acc.value

    got = gk.vmap(per_example)(XS)
    assert_close(got, jax.vmap(lambda x: jnp.sum(x) * 1.5)(XS))


def test_local_variable_with_slice_assignment_returned_as_output(vs):
    w, s = vs

    def per_example(x):
        acc = gk.Variable(np.zeros(3, np.float32), name="acc")
        acc.assign(x * w)
        acc[0].assign(acc[1] + s)  # a slice assignment of a local Variable
        return acc  # a Variable returned: its per-example value

    got = gk.vmap(per_example)(XS)
    want = jax.vmap(lambda x: (x * W0).at[0].set(x[1] * W0[1] + 1.5))(XS)
    assert_close(got, want)


def test_a_created_variable_kept_after_the_call_is_not_local(vs):
    # Stored somewhere that outlives the call (a layer built on its first call), it is a
    # Variable like any other: per-example assignments to it are refused, and it keeps the
    # value it was created with.
    w, _ = vs
    made = []

    def per_example(x):
        acc = gk.Variable(np.zeros(3, np.float32), name="kept")
        made.append(acc)
        acc.assign(x * w)
        return acc

    with pytest.raises(gk.GradkitError, match=r"\[gradkit\].*assigns Variable 'kept'"):
        gk.vmap(per_example)(XS)
    np.testing.assert_array_equal(np.asarray(made[0].value), np.zeros(3, np.float32))


@WITH_AND_WITHOUT_JIT
def test_grad_of_vmap_with_local_accumulator(vs, jit):
    w, s = vs
    per_example = _accumulate(w, s)

    def loss(scale):
        return jnp.sum(gk.vmap(per_example)(XS * scale) ** 2)

    def pure(wv, sv, scale):
        return jnp.sum(jax.vmap(_pure_accumulate, in_axes=(None, None, 0))(wv, sv, XS * scale) ** 2)

    got = maybe_jit(gk.grad(loss, argnums=0, wrt=[w, s]), jit)(0.8)
    d_w, d_s, d_scale = jax.grad(pure, argnums=(0, 1, 2))(W0, np.float32(1.5), 0.8)
    assert_close(got, (d_scale, [d_w, d_s]), rtol=1e-5)


def test_hessian_and_jacrev_of_vmap_with_local_accumulator(vs):
    w, s = vs
    per_example = _accumulate(w, s)

    def pure(wv):
        return jnp.sum(jax.vmap(_pure_accumulate, in_axes=(None, None, 0))(wv, np.float32(1.5), XS) ** 3)

    got = gk.hessian(lambda: jnp.sum(gk.vmap(per_example)(XS) ** 3), wrt=w)()
    assert_close(got, jax.hessian(pure)(W0), rtol=1e-4)
    jac = gk.jacrev(lambda: gk.vmap(per_example)(XS), wrt=w)()
    # Hand derivation: d (x_n @ w) s / d w = s x_n.
    assert_close(jac, 1.5 * XS)


def test_gk_jit_of_vmap_and_of_grad_with_local_accumulator():
    # In a child process: before the fix gk.jit's discovery trace never ended (and kept growing).
    code = textwrap.dedent(
        """
        import json, jax, numpy as np, gradkit as gk
        w = gk.Variable(np.array([0.7, -1.2, 2.0], np.float32))
        def per_example(x):
            acc = gk.Variable(0.0)
            for i in range(3):
                acc.assign_add(x[i] * w[i])
            return acc.value
        xs = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
        step = gk.jit(gk.vmap(per_example))
        got = [step(xs), step(2 * xs), gk.jit(gk.grad(per_example))(xs[1])]
        print(json.dumps([np.asarray(g).tolist() for g in got]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = [np.array(v, np.float32) for v in json.loads(done.stdout.strip().splitlines()[-1])]
    xs = XS[:2]
    want = [xs @ W0, (2 * xs) @ W0, jax.grad(lambda x: x @ W0)(xs[1])]
    for g, e in zip(got, want):
        assert_close(g, e)


def test_functionalize_under_jax_vmap_with_local_accumulator(vs):
    # The workaround MSG_VMAP_ASSIGN names, with a local accumulator beside the outer assignment.
    w, s = vs

    def step(x):
        acc = gk.Variable(0.0, name="acc")
        for i in range(3):
            acc.assign_add(x[i] * w[i])
        w.assign(w * acc)
        return acc

    state = gk.State.of([w, s])
    out, new_state = jax.vmap(gk.functionalize(step), in_axes=(None, 0))(state, XS)
    dots = XS @ W0
    assert_close(out, dots)
    assert list(new_state.variables) == [w, s]  # the local accumulator is not part of it
    assert_close(new_state[w], dots[:, None] * W0[None, :])
    assert_close(new_state[s], np.float32(1.5))


def test_jax_jit_of_vmap_creating_a_variable_from_a_constant(vs):
    w, _ = vs

    def per_example(x):
        acc = gk.Variable(0.0, name="acc")
        acc.assign_add(x[0] * w[0])
        return acc.value

    with pytest.warns(gk.GradkitWarning, match="Variable 'w' was read inside jax.jit"):  # w is not in a State
        assert_close(jax.jit(gk.vmap(per_example))(XS), XS[:, 0] * W0[0])


def test_a_local_variable_may_start_from_a_traced_value(vs):
    w, _ = vs

    def per_example(x):
        acc = gk.Variable(jnp.zeros(()), name="acc")  # jnp.zeros inside jax.jit is traced
        acc.assign_add(x[0] * w[0])
        fast = gk.Variable(x * w, name="fast")  # per example, batched
        fast[1].assign(acc)
        return fast

    want = jax.vmap(lambda x: (x * W0).at[1].set(x[0] * W0[0]))(XS)
    with pytest.warns(gk.GradkitWarning, match="Variable 'w' was read inside jax.jit"):  # w is not in a State
        assert_close(jax.jit(gk.vmap(per_example))(XS), want)
    assert_close(gk.vmap(per_example)(XS), want)
    assert_close(gk.jit(per_example)(XS[0]), want[0])


def test_per_example_fast_weights_from_a_traced_variable_give_the_exact_meta_gradient(vs):
    # MAML-style: each example copies w into its own fast weights, takes one SGD step on them,
    # and the meta-loss is differentiated with respect to w through gk.vmap (w is traced by
    # gk.grad, so each copy starts from a traced value). Oracle: the pure-JAX rewrite.
    w, _ = vs
    lr = 0.1

    def inner_loss(v, x):
        return jnp.sum(jnp.sin(v * x))

    def adapted_loss(x):
        fast = gk.Variable(w, name="fast")
        fast.assign_sub(lr * jax.grad(inner_loss)(fast.value, x))
        return inner_loss(fast.value, x + 1.0)

    def pure(w0, x):
        v = w0 - lr * jax.grad(inner_loss)(w0, x)
        return inner_loss(v, x + 1.0)

    got = gk.grad(lambda: jnp.mean(gk.vmap(adapted_loss)(XS)), wrt=w)()
    want = jax.grad(lambda w0: jnp.mean(jax.vmap(lambda x: pure(w0, x))(XS)))(jnp.asarray(W0))
    assert_close(got, want, rtol=1e-5)


def test_a_variable_from_a_traced_value_outside_a_gradkit_call_is_a_clear_error():
    with pytest.raises(gk.GradkitError, match=r"\[gradkit\].*gk.Variable\(0.0\)"):
        jax.jit(lambda x: gk.Variable(x * 2.0).value)(1.0)


def test_a_kept_variable_from_a_traced_value_is_a_clear_error():
    kept = []

    def per_example(x):
        v = gk.Variable(x * 2.0, name="kept_traced")
        kept.append(v)
        return v.value

    with pytest.raises(gk.GradkitError, match=r"\[gradkit\].*kept_traced.*traced value"):
        gk.vmap(per_example)(XS)
    with pytest.raises(gk.GradkitError, match=r"\[gradkit\].*kept_traced.*traced value"):
        gk.jit(per_example)(XS[0])


def test_gk_jit_of_a_function_creating_a_variable_terminates():
    code = textwrap.dedent(
        """
        import jax, numpy as np, gradkit as gk
        w = gk.Variable(np.array([1.0, 2.0], np.float32))
        def f(x):
            acc = gk.Variable(0.0)
            acc.assign_add(x * w[0])
            return acc.value
        step = gk.jit(f)
        first = float(step(3.0))
        traces = step.trace_count
        print(first, float(step(4.0)), step.trace_count - traces)  # the second call does not retrace
        """
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("gk.jit never finished discovering the Variables of a function that creates one")
    assert done.returncode == 0 and done.stdout.split() == ["3.0", "4.0", "0"], done.stderr[-2000:]


# --- 1b. Variables that outlive the call: read fine, assignment refused ---------------------------


@WITH_AND_WITHOUT_JIT
def test_vmap_refuses_assigning_an_outer_variable_and_changes_nothing(vs, jit):
    w, s = vs

    def per_example(x):
        acc = gk.Variable(0.0, name="acc")
        acc.assign(jnp.sum(x))  # a local assignment first: allowed
        w.assign(x * acc)  # then an outer one: refused
        return acc.value

    with pytest.raises(GradkitTypeError, match=r"^\[gradkit\] gk.vmap cannot vectorise .* Variable 'w', which "):
        maybe_jit(gk.vmap(per_example), jit)(XS)
    with pytest.raises(GradkitTypeError, match=r"gk.functionalize\(fn\), in_axes=\(None, 0\)"):
        gk.grad(lambda: jnp.sum(gk.vmap(per_example)(XS)), wrt=s)()


def test_vmap_refuses_an_outer_variable_assigned_under_an_outer_gk_grad(vs):
    # Inside gk.grad the Variable lives in gk.grad's frame; it still outlives the mapped call.
    w, _ = vs

    def loss():
        w.assign(w * 2.0)
        return jnp.sum(gk.vmap(lambda x: w.assign_add(x))(XS))

    with pytest.raises(GradkitTypeError, match=r"Variable 'w', which existed before the call"):
        gk.grad(loss, wrt=w)()


def test_nested_vmap_refuses_assigning_the_outer_calls_local(vs):
    w, _ = vs

    def outer(x):
        acc = gk.Variable(0.0, name="acc")
        gk.vmap(lambda xi: acc.assign(xi))(x)  # acc outlives the inner call
        return acc.value

    with pytest.raises(GradkitTypeError, match=r"Variable 'acc', which existed before the call"):
        gk.vmap(outer)(XS)


def test_nested_vmap_with_a_local_in_each_level(vs):
    w, s = vs

    def inner(xi, wi):
        acc = gk.Variable(1.0, name="inner_acc")
        acc.assign(acc * xi * wi + s)
        return acc.value

    def outer(x):
        acc = gk.Variable(0.0, name="outer_acc")
        acc.assign(jnp.sum(gk.vmap(inner)(x, w)))
        return acc.value * x[0]

    got = gk.vmap(outer)(XS)
    want = jax.vmap(lambda x: jnp.sum(jax.vmap(lambda xi, wi: xi * wi + 1.5)(x, W0)) * x[0])(XS)
    assert_close(got, want)


def test_per_example_gradients_through_an_assignment_inside_vmap(vs):
    # gk.grad inside the mapped function holds its own frame: the assignment is its business.
    w, _ = vs

    def per_example(x):
        def loss():
            w.assign(w * x)
            return jnp.sum(w**2)

        return gk.grad(loss, wrt=w)()

    got = gk.vmap(per_example)(XS)
    want = jax.vmap(lambda x: jax.grad(lambda wv: jnp.sum((wv * x) ** 2))(W0))(XS)
    assert_close(got, want)


# --- 2. States as in_axes / out_axes specs ------------------------------------------------------


def _batched(state, variables, n=4):
    """``state`` with ``variables`` stacked n times along a new axis 0 (scaled per example)."""
    part = jax.tree.map(lambda x: jnp.stack([(k + 1.0) * x for k in range(n)]), gk.State.of(variables))
    return state | part


def test_state_axes_is_a_vmap_in_axes_spec(vs):
    w, s = vs
    state = gk.State.of([w, s])
    batch = _batched(state, [w])
    spec = state.axes({w: 0}, default=None)
    # Its structure is the State's, with None (not mapped) as a leaf, as jax.vmap reads in_axes.
    is_none = lambda x: x is None  # noqa: E731
    assert jax.tree.structure(spec, is_leaf=is_none) == jax.tree.structure(jax.tree.map(lambda _: 0, state))
    got = jax.vmap(lambda st: st[w] * st[s], in_axes=(spec,))(batch)
    # Hand derivation: example n holds w = (n + 1) W0, s = 1.5.
    assert_close(got, jnp.arange(1.0, 5.0)[:, None] * W0[None, :] * 1.5)
    everything = _batched(state, [w, s])
    got = jax.vmap(lambda st: st[w] * st[s], in_axes=(state.axes(0),))(everything)
    assert_close(got, (jnp.arange(1.0, 5.0) ** 2)[:, None] * W0[None, :] * 1.5)


def test_state_axes_with_gk_vmap_and_out_axes_over_functionalize(vs):
    w, s = vs

    def step(x):
        w.assign(w * x + s)
        return jnp.sum(w)

    state = gk.State.of([w, s])
    out, new_state = jax.vmap(
        gk.functionalize(step), in_axes=(state.axes(None), 0), out_axes=(0, state.axes({w: 1, s: None}))
    )(state, XS)
    want_w = XS * W0 + 1.5
    assert_close(out, want_w.sum(axis=1))
    assert_close(new_state[w], want_w.T)  # mapped along axis 1
    assert_close(new_state[s], np.float32(1.5))
    got = gk.vmap(lambda st, x: st[w] @ x * st[s], in_axes=(state.axes({w: 0}, default=None), 0))(
        _batched(state, [w]), XS
    )
    assert_close(got, jnp.arange(1.0, 5.0) * (XS @ W0) * 1.5)


def test_state_constructor_keeps_values_and_names_axes_on_an_axis_like_entry(vs):
    w, s = vs
    # gk.State({s: 0}) is the value 0.0 of s, as it always was: States hold values.
    zero = gk.State({s: 0})
    assert zero[s].dtype == jnp.float32 and float(zero[s]) == 0.0
    with pytest.raises(GradkitTypeError, match=r"got the int 0 for Variable 'w'.*state.axes\(\{v: 0\}"):
        gk.State({w: 0})
    with pytest.raises(GradkitTypeError, match=r"got None for Variable 's'.*jax.tree.map\(lambda _: 0, state\)"):
        gk.State({s: None})
    # Other bad values keep their own messages.
    with pytest.raises(gk.AssignmentError, match=r"shape \(2,\) to Variable 'w'"):
        gk.State({w: np.ones(2, np.float32)})


@pytest.mark.parametrize("where", ["in_axes", "out_axes"])
def test_gk_vmap_refuses_a_state_of_values_as_an_axes_spec(vs, where):
    _, s = vs
    state = gk.State.of([s])
    kwargs = {where: (gk.State({s: 0}),) if where == "in_axes" else gk.State({s: 0})}
    with pytest.raises(GradkitTypeError, match=rf"gk.vmap: {where} holds a gk.State of values.*state.axes\(0\)"):
        gk.vmap(lambda st: st, **kwargs)(state)


def test_state_axes_errors(vs):
    w, s = vs
    state = gk.State.of([w, s])
    other = gk.Variable(1.0, name="other")
    with pytest.raises(GradkitValueError, match=r"no axis for Variable\(s\) 's'.*default=None"):
        state.axes({w: 0})
    with pytest.raises(GradkitValueError, match=r"Variable 'other' is not in this State"):
        state.axes({other: 0}, default=None)
    for bad in (1.5, True, "0"):
        with pytest.raises(GradkitTypeError, match=r"the axis for Variable 'w' is .* an int .* or None"):
            state.axes({w: bad, s: None})
    with pytest.raises(GradkitTypeError, match=r"default= only with a mapping spec"):
        state.axes(0, default=None)
    spec = state.axes({w: 0}, default=None)
    assert repr(spec) == "State.axes({w: 0, s: None})"
    with pytest.raises(GradkitTypeError, match=r"cannot commit a State made by state.axes"):
        spec.commit()
    with pytest.raises(GradkitTypeError, match=r"cannot assign a State made by state.axes"):
        spec.assign(s, 2.0)


# --- 3. gk.vmap against jax.vmap of the pure rewrite ---------------------------------------------

# (gk.vmap program reading w and s, pure program of (w, s, ...), in_axes, out_axes, args)
CASES = {
    "in_axes=1": (
        lambda w, s: lambda x: x * w + s,
        lambda wv, sv: lambda x: x * wv + sv,
        dict(in_axes=1),
        (XS.T,),
    ),
    "in_axes=-1": (
        lambda w, s: lambda x: x * w,
        lambda wv, sv: lambda x: x * wv,
        dict(in_axes=-1),
        (XS.T,),
    ),
    "tuple with None": (
        lambda w, s: lambda x, c: jnp.sin(x @ w) * c + s,
        lambda wv, sv: lambda x, c: jnp.sin(x @ wv) * c + sv,
        dict(in_axes=(0, None)),
        (XS, np.float32(2.0)),
    ),
    "dict argument": (
        lambda w, s: lambda d: d["x"] @ w + d["b"] * s,
        lambda wv, sv: lambda d: d["x"] @ wv + d["b"] * sv,
        dict(in_axes=({"x": 0, "b": None},)),
        ({"x": XS, "b": np.float32(3.0)},),
    ),
    "out_axes=1": (
        lambda w, s: lambda x: x * w,
        lambda wv, sv: lambda x: x * wv,
        dict(out_axes=1),
        (XS,),
    ),
    "pytree out, out_axes None": (
        lambda w, s: lambda x: {"y": (x * w, x @ w), "w": w, "s": s},
        lambda wv, sv: lambda x: {"y": (x * wv, x @ wv), "w": wv, "s": sv},
        dict(out_axes={"y": (0, -1), "w": None, "s": None}),
        (XS,),
    ),
    "axis_size, nothing mapped": (
        lambda w, s: lambda: w * s,
        lambda wv, sv: lambda: wv * sv,
        dict(in_axes=(), axis_size=3),
        (),
    ),
    "nested": (
        lambda w, s: gk.vmap(lambda xi: xi * s + w[0]),
        lambda wv, sv: jax.vmap(lambda xi: xi * sv + wv[0]),
        dict(),
        (XS,),
    ),
    "Variable as an argument": (
        lambda w, s: lambda v, x: v * x,
        lambda wv, sv: lambda v, x: v * x,
        dict(in_axes=(None, 0)),
        ("w", XS),
    ),
}


@WITH_AND_WITHOUT_JIT
@pytest.mark.parametrize("case", CASES)
def test_vmap_matches_jax_vmap(vs, case, jit):
    w, s = vs
    make, make_pure, kwargs, args = CASES[case]
    args = tuple(w if isinstance(a, str) else a for a in args)
    pure_args = tuple(W0 if a is w else a for a in args)
    got = maybe_jit(lambda *a: gk.vmap(make(w, s), **kwargs)(*a), jit)(*args)
    want = jax.vmap(make_pure(W0, np.float32(1.5)), **kwargs)(*pure_args)
    assert_close(got, want)


def test_vmap_kwargs_and_axis_name(vs):
    w, s = vs

    def per_example(x, *, c):
        return (x - jax.lax.pmean(x, "batch")) * w * c + s

    cs = np.arange(4.0, dtype=np.float32)
    got = gk.vmap(per_example, axis_name="batch")(XS, c=cs)
    want = jax.vmap(lambda x, c: (x - jax.lax.pmean(x, "b")) * W0 * c + 1.5, axis_name="b")(XS, cs)
    assert_close(got, want)


@WITH_AND_WITHOUT_JIT
def test_vmap_inside_grad_wrt_variables_read_not_mapped(vs, jit):
    w, s = vs

    def loss(scale):
        ys = gk.vmap(lambda x, v: jnp.tanh(x @ w) * v * s, in_axes=(0, None))(XS, w)
        return jnp.sum(ys**2) * scale

    def pure(wv, sv, scale):
        ys = jax.vmap(lambda x, v: jnp.tanh(x @ wv) * v * sv, in_axes=(0, None))(XS, wv)
        return jnp.sum(ys**2) * scale

    got = maybe_jit(gk.grad(loss, argnums=0, wrt={"w": w, "s": s}), jit)(0.5)
    d_w, d_s, d_scale = jax.grad(pure, argnums=(0, 1, 2))(W0, np.float32(1.5), 0.5)
    assert_close(got, (d_scale, {"w": d_w, "s": d_s}), rtol=1e-5)


def test_vmap_keeps_the_function_name(vs):
    def per_example(x):
        return x

    assert gk.vmap(per_example).__name__ == "per_example"


def test_functionalize_refuses_assigning_a_created_variable_that_outlives_the_call():
    kept = []

    def build_and_assign(x):
        v = gk.Variable(0.0, name="built")
        kept.append(v)
        v.assign(x)
        return x

    with pytest.raises(gk.GradkitError, match=r"\[gradkit\].*built"):
        gk.functionalize(build_and_assign)(gk.State.of([]), 2.0)
    assert float(kept[0].value) == 0.0


def test_functionalize_local_accumulator_matches_pure_jax():
    w = gk.Variable(jnp.array([1.0, -2.0, 0.5]), name="w")

    def dot(x):
        acc = gk.Variable(0.0, name="acc")
        for i in range(3):
            acc.assign_add(x[i] * w[i])
        return acc

    out, new_state = gk.functionalize(dot)(gk.State.of([w]), XS[0])
    assert_close(out, jnp.dot(XS[0], jnp.array([1.0, -2.0, 0.5])))
    assert new_state.variables == (w,)


def test_grad_return_state_carries_a_created_variable_that_outlives_the_call():
    # A layer built lazily inside gk.grad: the Variable it creates and assigns is returned
    # in the new State (as a Variable that existed before would be), and the live one is unchanged.
    layer = {}

    def loss(x):
        if "count" not in layer:
            layer["count"] = gk.Variable(0.0, name="count")
        layer["count"].assign_add(1.0)
        return x**2

    g, state = gk.grad(loss, return_state=True)(3.0)
    assert float(g) == 6.0
    assert layer["count"] in state and float(state[layer["count"]]) == 1.0
    assert float(layer["count"].value) == 0.0


def test_gk_jit_of_a_function_keeping_a_new_variable_each_trace_is_a_clear_error():
    code = textwrap.dedent(
        """
        import gradkit as gk
        kept = []
        def f(x):
            v = gk.Variable(1.0, name="made_each_call")
            kept.append(v)
            return v.value * x
        try:
            gk.jit(f)(3.0)
        except gk.GradkitError as e:
            print("ERROR", str(e).startswith("[gradkit]"), "made_each_call" in str(e), "if self.v is None" in str(e))
        """
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("gk.jit kept tracing a function that keeps a new Variable at each trace")
    assert done.stdout.split() == ["ERROR", "True", "True", "True"], done.stderr[-2000:]


def test_gk_jit_builds_a_layer_on_its_first_call_and_then_reads_its_weights():
    # The weights a layer creates on its first call are arguments of the program afterwards:
    # a new value is seen by the next call (oracle: the same arithmetic in NumPy).
    class Scale:
        def __init__(self):
            self.w = None

        def __call__(self, x):
            if self.w is None:
                self.w = gk.Variable(np.full(3, 2.0, np.float32), name="w")
            return x * self.w

    layer = Scale()
    step = gk.jit(lambda x: layer(x))
    x = np.array([1.0, -2.0, 0.5], np.float32)
    assert_close(step(x), x * 2.0)
    layer.w.assign(np.array([1.0, 3.0, -1.0], np.float32))
    traces = step.trace_count
    assert_close(step(x), x * np.array([1.0, 3.0, -1.0], np.float32))
    assert step.trace_count == traces


def test_a_variable_kept_after_its_traced_creation_has_no_value_until_assigned():
    # A layer whose first call (traced, under gk.jit) builds its weight from a traced value: the
    # call fails, and the kept Variable must not later read as the placeholder it held.
    class Layer:
        def __init__(self):
            self.w = None

        def __call__(self, x):
            if self.w is None:
                self.w = gk.Variable(x * 0.0 + 1.0, name="w_from_trace")
            return jnp.sum(self.w.value * x)

    layer = Layer()
    step = gk.jit(lambda x: layer(x))
    with pytest.raises(gk.GradkitError, match=r"^\[gradkit\] Variable .w_from_trace. was created from a traced value"):
        step(jnp.ones(2))
    with pytest.raises(gk.GradkitError, match=r"^\[gradkit\] Variable .w_from_trace. was created from a traced value"):
        layer(jnp.ones(2))
    layer.w.assign(np.array([2.0, 3.0], np.float32))
    assert float(layer(jnp.ones(2))) == 5.0


def test_vmap_refuses_a_created_variable_kept_after_the_call_in_its_own_words():
    kept = []

    def build(x):
        layer = gk.Variable(1.0, name="layer")
        layer.assign(x[0])
        kept.append(layer)
        return x

    with pytest.raises(GradkitTypeError, match=r"creates and assigns Variable 'layer' and keeps it after the call"):
        gk.vmap(build)(XS)
