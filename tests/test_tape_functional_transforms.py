"""The functional transforms (gk.grad, value_and_grad, jacrev, jacfwd, hessian, jvp, vjp) called
while a tape records: each call is one recorded op over the values of the Variables its function
reads and its arguments, so an outer tape differentiates through it (meta-gradients with a
functional inner step, Hessians as the tape's Jacobian of gk.grad, ...).

Oracles: jax.grad / jax.hessian / jax.jvp / jax.vjp of the pure-JAX rewrites (hypothesis-generated
programs too); compilations counted, never timed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, count_compiles
from hypothesis import given, settings
from test_core_property import ArrayStore, VariableStore, interpret
from test_core_property import programs as random_programs

import gradkit as gk
from gradkit import GradkitError

gnp = gk.numpy

X = jnp.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
Y = jnp.array([0.3, -0.2, 0.7])
W0 = np.array([0.5, -0.3], np.float32)


def loss(w, b=0.0):
    return jnp.mean((jnp.tanh(X @ w + b) - Y) ** 2)


def test_meta_gradient_through_gk_grad_inner_steps():
    # MAML written with the functional API for the inner step, an outer tape for the meta-gradient.
    w, lr = gk.Variable(W0, name="w"), gk.Variable(0.1, name="lr")
    with gk.GradientTape() as tape:
        for _ in range(3):
            w.assign_sub(lr * gk.grad(lambda: loss(w.value), wrt=w)())
        meta = gnp.sum(w**2)
    d_w, d_lr = tape.gradient(meta, [w, lr])

    def pure(w, lr):
        for _ in range(3):
            w = w - lr * jax.grad(loss)(w)
        return jnp.sum(w**2)

    want_w, want_lr = jax.grad(pure, argnums=(0, 1))(jnp.asarray(W0), 0.1)
    assert_close(np.asarray(d_w), want_w)
    assert_close(np.asarray(d_lr), np.asarray(want_lr))


def test_value_and_grad_with_aux_of_a_recorded_argument_and_a_variable_it_does_not_differentiate():
    # The transform differentiates with respect to w and its argument; the outer tape also sees
    # the paths through b (read, not differentiated) and through the recorded argument.
    w, b = gk.Variable(W0, name="w"), gk.Variable(0.2, name="b")

    def f(scale):
        value = loss(w.value * scale, b.value)
        return value, jnp.sum(w.value)

    with gk.GradientTape() as tape:
        scale = b * 3.0
        ((value, aux), (d_scale, d_w)) = gk.value_and_grad(f, argnums=0, wrt=w, has_aux=True)(scale)
        total = value + gnp.sum(d_w**2) + d_scale**2 + aux
    got = tape.gradient(total, [w, b])

    def pure(w, b):
        scale = b * 3.0
        g = lambda s, w: loss(w * s, b)  # noqa: E731
        value = g(scale, w)
        d_scale, d_w = jax.grad(g, argnums=(0, 1))(scale, w)
        return value + jnp.sum(d_w**2) + d_scale**2 + jnp.sum(w)

    assert_close(np.asarray(value), np.asarray(loss(jnp.asarray(W0) * 0.6, 0.2)))
    want = jax.grad(pure, argnums=(0, 1))(jnp.asarray(W0), jnp.float32(0.2))
    assert_close([np.asarray(g) for g in got], [np.asarray(x) for x in want])


def test_the_tapes_jacobian_of_gk_grad_is_the_hessian():
    w = gk.Variable(W0, name="w")
    with gk.GradientTape() as tape:
        g = gk.grad(lambda: loss(w.value), wrt=w)()
    assert_close(np.asarray(tape.jacobian(g, w)), jax.hessian(loss)(jnp.asarray(W0)), rtol=1e-5)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian"])
def test_jacobians_and_hessians_under_a_tape_and_the_gradient_through_them(name):
    w = gk.Variable(W0, name="w")
    transform = getattr(gk, name)
    jax_transform = getattr(jax, name)
    f = (lambda wv: jnp.tanh(X @ wv)) if name != "hessian" else loss
    with gk.GradientTape() as tape:
        jac = transform(lambda: f(w.value), wrt=w)()
        total = gnp.sum(jac**2)
    assert_close(np.asarray(jac), jax_transform(f)(jnp.asarray(W0)), rtol=1e-5)
    want = jax.grad(lambda wv: jnp.sum(jax_transform(f)(wv) ** 2))(jnp.asarray(W0))
    assert_close(np.asarray(tape.gradient(total, w)), want, rtol=1e-4)


def test_jvp_under_a_tape_with_a_variable_tangent_and_a_recorded_primal():
    w = gk.Variable(W0, name="w")
    t_w = jnp.array([1.0, -2.0])
    with gk.GradientTape() as tape:
        x = w * 2.0
        out, t_out = gk.jvp(lambda x: jnp.sum(jnp.sin(x * w.value)), (x,), (jnp.ones(2),), wrt=w, wrt_tangents=t_w)
        total = t_out**2 + out

    def pure(wv):
        out, t_out = jax.jvp(lambda x, wv: jnp.sum(jnp.sin(x * wv)), (wv * 2.0, wv), (jnp.ones(2), t_w))
        return t_out**2 + out

    assert_close(np.asarray(total), np.asarray(pure(jnp.asarray(W0))))
    assert_close(np.asarray(tape.gradient(total, w)), jax.grad(pure)(jnp.asarray(W0)), rtol=1e-5)


def test_vjp_pull_sees_the_variables_as_the_forward_call_did():
    w = gk.Variable(W0, name="w")
    ct = jnp.array([1.0, 0.5, -1.0])
    f = lambda wv: jnp.tanh(X @ wv)  # noqa: E731
    with gk.GradientTape() as tape:
        out, pull = gk.vjp(lambda: f(w.value), wrt=w)
        w.assign(w * 3.0)  # after the forward call: the pull must not see it
        (_, d_w) = pull(ct)
        total = gnp.sum(d_w**2) + gnp.sum(out)

    def pure(wv):
        out, pull = jax.vjp(f, wv)
        return jnp.sum(pull(ct)[0] ** 2) + jnp.sum(out)

    w0 = jnp.asarray(W0)
    assert_close(np.asarray(d_w), jax.vjp(f, w0)[1](ct)[0])
    assert_close(np.asarray(tape.gradient(total, w)), jax.grad(pure)(w0), rtol=1e-5)


def test_return_state_committed_under_the_tape_is_a_recorded_assignment():
    w, c = gk.Variable(W0, name="w"), gk.Variable(np.zeros(2, np.float32), name="c")

    def f():
        c.assign(jnp.sin(w.value))
        return jnp.sum(c.value * w.value)

    with gk.GradientTape() as tape:
        g, state = gk.grad(f, wrt=w, return_state=True)()
        state.commit()
        total = gnp.sum(c * g)

    def pure(wv):
        cv = jnp.sin(wv)
        return jnp.sum(cv * jax.grad(lambda u: jnp.sum(jnp.sin(u) * u))(wv))

    assert_close(np.asarray(tape.gradient(total, w)), jax.grad(pure)(jnp.asarray(W0)), rtol=1e-5)
    assert_close(c.numpy(), np.sin(W0))


def test_a_loop_building_a_new_gk_grad_each_step_compiles_once():
    w, lr = gk.Variable(W0, name="w"), gk.Variable(0.1, name="lr")
    rng = np.random.default_rng(0)
    w_oracle, lr_oracle = jnp.asarray(W0), jnp.float32(0.1)
    compiles = []
    for _ in range(5):
        y = jnp.asarray(rng.normal(size=3).astype(np.float32))  # closed over, new each step

        def step(y=y):
            with gk.GradientTape() as tape:
                g = gk.grad(lambda: jnp.mean((jnp.tanh(X @ w.value) - y) ** 2), wrt=w)()
                w.assign_sub(lr * g)
                meta = gnp.sum(w**2)
            lr.assign_sub(0.01 * tape.gradient(meta, lr))

        compiles.append(count_compiles(step))

        def pure(lr, w, y=y):
            w = w - lr * jax.grad(lambda u: jnp.mean((jnp.tanh(X @ u) - y) ** 2))(w)
            return jnp.sum(w**2), w

        d_lr, w_oracle = jax.grad(pure, has_aux=True)(lr_oracle, w_oracle)
        lr_oracle = lr_oracle - 0.01 * d_lr
    assert_close(w.numpy(), np.asarray(w_oracle), rtol=1e-5)
    assert_close(lr.numpy(), np.asarray(lr_oracle), rtol=1e-5)
    assert compiles[2:] == [0, 0, 0], compiles


def test_a_non_array_argument_under_a_tape_is_a_clear_error_and_changes_nothing():
    w = gk.Variable(W0, name="w")
    with pytest.raises(GradkitError, match=r"^\[gradkit\] gk.grad was called while a GradientTape records"):
        with gk.GradientTape():
            gk.grad(lambda x, tag: loss(w.value * x), wrt=w)(2.0, "label")
    np.testing.assert_array_equal(w.numpy(), W0)


def test_under_stop_recording_the_result_is_a_constant_for_the_tape():
    w = gk.Variable(W0, name="w")
    with gk.GradientTape() as tape:
        with tape.stop_recording():
            g = gk.grad(lambda: loss(w.value), wrt=w)()
        total = gnp.sum(w * g)
    g0 = jax.grad(loss)(jnp.asarray(W0))
    assert_close(np.asarray(g), g0)
    assert_close(np.asarray(tape.gradient(total, w)), g0)


def test_a_transform_inside_a_functionalized_call_under_a_tape_names_the_missing_variable():
    w, v = gk.Variable(W0, name="w"), gk.Variable(1.0, name="v")
    f = gk.functionalize(lambda: gk.grad(lambda: loss(w.value) * v.value, wrt=w)())
    with gk.GradientTape():
        with pytest.raises(TypeError, match=r"^\[gradkit\] gk.grad was called inside a pure call .* 'w'"):
            f(gk.State.of([v]))


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(random_programs())
def test_random_programs_inner_gk_grad_step_under_an_outer_tape_match_the_pure_rewrite(program):
    # The inner gradient of a random program over Variables (assignments and slices included)
    # by gk.grad, an SGD step with it, then the outer tape's meta-gradient of every Variable.
    n_vars, steps, wrt_mask, seed = program
    entry = list(np.random.default_rng(seed).uniform(-1.5, 1.5, size=(n_vars, 4)).astype(np.float32))
    variables = [gk.Variable(x, name=f"v{k}") for k, x in enumerate(entry)]
    wrt = [v for v, use in zip(variables, wrt_mask) if use]
    with gk.GradientTape() as tape:
        grads = gk.grad(lambda: interpret(steps, VariableStore(variables), n_vars), wrt=wrt)()
        for v, g in zip(wrt, grads):
            v.assign_sub(0.1 * g)
        meta = sum(gnp.sum(gnp.sin(v) * (k + 1.0)) for k, v in enumerate(variables))
    got = tape.gradient(meta, variables)

    def pure(vals):
        inner = jax.grad(lambda vs: interpret(steps, ArrayStore(vs), n_vars))(vals)
        vals = [x - 0.1 * g if use else x for x, g, use in zip(vals, inner, wrt_mask)]
        return sum(jnp.sum(jnp.sin(x) * (k + 1.0)) for k, x in enumerate(vals))

    want = jax.grad(pure)([jnp.asarray(x) for x in entry])
    assert_close([np.asarray(g) for g in got], [np.asarray(w) for w in want], rtol=1e-4, atol=1e-5)


def test_a_result_that_cannot_be_a_program_output_is_a_clear_error():
    w = gk.Variable(W0, name="w")
    with pytest.raises(GradkitError, match=r"^\[gradkit\] gk.grad was called while .* holds a str: 'a label'"):
        with gk.GradientTape():
            gk.grad(lambda: (loss(w.value), "a label"), wrt=w, has_aux=True)()
    np.testing.assert_array_equal(w.numpy(), W0)


class _LazyLayer:
    """Builds its weight on its first call, as a Keras layer does."""

    def __init__(self):
        self.w = None

    def __call__(self, x):
        if self.w is None:
            self.w = gk.Variable(W0, name="lazy_w")
        return jnp.sum(jnp.sin(self.w.value * x))


def _lazy_oracle(w, x=2.0):
    # d/dw of g(w) = d/dx sum(sin(w x))
    return jax.grad(lambda w: jax.grad(lambda x: jnp.sum(jnp.sin(w * x)))(x))(w)


def test_a_layer_built_inside_gk_grad_on_the_first_call_under_a_tape_is_differentiated():
    layer, v = _LazyLayer(), gk.Variable(1.5, name="v")
    with gk.GradientTape() as tape:
        g = gk.grad(lambda x: layer(x) * v.value)(2.0)
    assert_close(np.asarray(tape.gradient(g, layer.w)), 1.5 * _lazy_oracle(jnp.asarray(W0)))


def test_a_layer_built_inside_gk_grad_inside_gk_jit_is_an_input_not_a_constant():
    layer = _LazyLayer()
    step = gk.jit(lambda x: gk.grad(lambda x: layer(x))(x))
    step(2.0)
    layer.w.assign(W0 * 2)  # a constant baked into the program would ignore this
    want = jax.grad(lambda x: jnp.sum(jnp.sin(jnp.asarray(W0 * 2) * x)))(2.0)
    assert_close(np.asarray(step(2.0)), np.asarray(want))


def test_python_int_and_bool_arguments_are_part_of_the_program():
    w = gk.Variable(W0, name="w")

    def f(x, n, training=False):
        total = 0.0
        for i in range(n):
            total = total + jnp.sum(jnp.sin(w.value * x) ** (i + 1))
        return total * (0.5 if training else 1.0)

    def pure(wv, x, n, training):
        return sum(jnp.sum(jnp.sin(wv * x) ** (i + 1)) for i in range(n)) * (0.5 if training else 1.0)

    for n, training in [(3, True), (2, False)]:
        with gk.GradientTape() as tape:
            g = gk.grad(f)(2.0, n, training=training)
        want = jax.grad(pure, argnums=1)(jnp.asarray(W0), 2.0, n, training)
        assert_close(np.asarray(g), np.asarray(want))
        want_w = jax.grad(lambda wv, n=n, t=training: jax.grad(pure, argnums=1)(wv, 2.0, n, t))(jnp.asarray(W0))
        assert_close(np.asarray(tape.gradient(g, w)), want_w)


def test_python_control_flow_on_a_value_under_a_tape_is_a_clear_error():
    w = gk.Variable(W0, name="w")

    def f(x):
        y = jnp.sum(jnp.sin(w.value * x))
        return y if y > 0 else -y

    with pytest.raises(GradkitError, match=r"^\[gradkit\] gk.grad was called while .* Python control flow"):
        with gk.GradientTape():
            gk.grad(f)(2.0)


@pytest.mark.parametrize("return_state", [False, True])
def test_a_variable_created_and_assigned_each_step_compiles_once_and_is_not_kept(return_state):
    import gc
    import weakref

    w = gk.Variable(W0, name="w")
    kept = []

    def step():
        c = gk.Variable(np.zeros(2, np.float32), name="c")  # a fresh buffer each step
        kept.append(weakref.ref(c))

        def f():
            c.assign(jnp.sin(w.value))
            return jnp.sum(c.value * w.value)

        with gk.GradientTape() as tape:
            if return_state:
                g, state = gk.grad(f, wrt=w, return_state=True)()
                state.commit()  # c = sin(w), recorded
                total = gnp.sum(g**2) + gnp.sum(c)
            else:
                g = gk.grad(f, wrt=w)()
                total = gnp.sum(g**2)
        return tape.gradient(total, w)

    compiles = [count_compiles(step) for _ in range(4)]

    def pure(u):
        g = jax.grad(lambda u: jnp.sum(jnp.sin(u) * u))(u)
        return jnp.sum(g**2) + (jnp.sum(jnp.sin(u)) if return_state else 0.0)

    assert_close(np.asarray(step()), jax.grad(pure)(jnp.asarray(W0)), rtol=1e-5)
    assert compiles[1:] == [0, 0, 0], compiles
    gc.collect()
    assert sum(r() is not None for r in kept) <= 1  # at most the last step's, still held by a tape


def _clip_gradient(bound):
    """The identity, whose gradient is clipped to [-bound, bound] (a jax.custom_vjp closing over it)."""

    @jax.custom_vjp
    def clip(x):
        return x

    clip.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -bound, bound),))
    return clip


def _inner_jit(scale):
    """A jax.jit function closing over an array: its constant is nested in the traced program."""
    factor = jnp.asarray([scale, 2.0 * scale], jnp.float32)
    return jax.jit(lambda y: y * factor[0])


@pytest.mark.parametrize("transform", ["vmap", "grad"])
@pytest.mark.parametrize("make", [_clip_gradient, _inner_jit], ids=["custom_vjp_rule", "nested_jit_constant"])
def test_programs_equal_as_text_with_other_rules_or_nested_constants_are_different_ops(make, transform):
    """Programs are interned by their text; a custom_vjp's bwd (printed by name) and the
    constants of a nested jax.jit (printed by name) are not in it, but change the program.
    Oracle: jax.grad of the same functions."""
    w0 = jnp.asarray([1.0, 2.0], jnp.float32)
    w = gk.Variable(w0, name="w")
    for c in (0.5, 3.0, 0.5):
        fn = make(c)
        if transform == "vmap":
            pure = lambda v, fn=fn: jnp.sum(jax.vmap(lambda x: fn(x) * 3.0)(v))  # noqa: E731
        else:
            inner = lambda v, fn=fn: jnp.sum(jax.vmap(fn)(v) ** 2)  # noqa: E731
            pure = lambda v, inner=inner: jnp.sum(jax.grad(inner)(v))  # noqa: E731
        with gk.GradientTape() as tape:
            if transform == "vmap":
                y = gnp.sum(gk.vmap(lambda x, fn=fn: fn(x) * 3.0)(w * 1.0))
            else:
                y = gnp.sum(gk.grad(lambda fn=fn: jnp.sum(jax.vmap(fn)(w.value) ** 2), wrt=w)())
        assert_close(float(y), float(pure(w0)), rtol=1e-5)
        assert_close(tape.gradient(y, w).numpy(), np.asarray(jax.grad(pure)(w0)), rtol=1e-5)


def test_a_loop_through_a_library_custom_jvp_builds_one_program():
    """jax.nn.relu is a custom_jvp: telling rules apart must still let a new lambda each step
    (same program) compile once."""
    w = gk.Variable(jnp.asarray([0.5, -1.0], jnp.float32), name="w")
    compiles = []
    for step in range(4):
        xs = jnp.asarray([[1.0, 2.0], [-1.0, 0.5]], jnp.float32) * (step + 1)

        def run(xs=xs):
            with gk.GradientTape() as tape:
                loss = gnp.sum(gk.vmap(lambda x: jax.nn.relu(jnp.sum(x * w.value)))(xs) ** 2)
            return tape.gradient(loss, w)

        compiles.append(count_compiles(run))
    assert compiles[2:] == [0, 0], compiles
