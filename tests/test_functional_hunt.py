"""Defects found by comparing the functional API with pure-JAX rewrites of the same programs.

Each test states the program, the oracle (a hand-threaded pure-JAX rewrite, a duality
identity, or a hand derivation) and, for bad input, the "[gradkit]" error and that no
Variable changed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _oracles import assert_close, assert_unchanged, snapshot

import gradkit as gk
from gradkit import _errors

# --- argnums naming one argument twice --------------------------------------------------------


def _scaled(x, y):
    return x * x * y


def test_grad_duplicate_argnums_gives_the_gradient_at_every_position():
    # Program: f(x, y) = x^2 y, argnums=(0, 0). Oracle: jax.grad(f, argnums=0) = 2 x y,
    # repeated at both positions (as wrt=[a, a] repeats a's gradient). gradkit gave (0, 12):
    # the first copy of x was overwritten by the second, so its gradient was silently zero.
    want = jax.grad(_scaled, argnums=0)(3.0, 2.0)
    got = gk.grad(_scaled, argnums=(0, 0))(3.0, 2.0)
    assert_close(got, (want, want))


def test_grad_duplicate_argnums_with_wrt():
    a = gk.Variable(1.5, name="a")

    def f(x, y):
        a.assign(a * x)
        return a * x * y

    def pure(a, x, y):
        a = a * x
        return a * x * y

    dx, da = jax.grad(pure, argnums=(1, 0))(a.value, 3.0, 2.0)
    got = gk.grad(f, argnums=(0, 1, 0), wrt=a)(3.0, 2.0)
    dy = jax.grad(pure, argnums=2)(a.value, 3.0, 2.0)
    assert_close(got, ((dx, dy, dx), da))


def test_jacrev_duplicate_argnums():
    def f(x, y):
        return jnp.stack([x * y, x**2])

    want = jax.jacrev(f, argnums=0)(2.0, 5.0)
    assert_close(gk.jacrev(f, argnums=(0, 0))(2.0, 5.0), (want, want))


# --- jvp: one Variable listed twice in wrt= ----------------------------------------------------


def test_jvp_wrt_variable_listed_twice_sums_its_tangents():
    # Program: f = sum(sin(a) * 3) with wrt=[a, a], tangents [t1, t2]. One Variable is one entry
    # of the state, so gk.vjp hands its cotangent to both listings; the JVP dual to that is
    # J (t1 + t2). Oracle: jax.jvp of the pure rewrite along t1 + t2. gradkit used t2 alone.
    a = gk.Variable(jnp.array([0.3, -1.2]), name="a")
    t1, t2 = jnp.array([1.0, 2.0]), jnp.array([-0.5, 4.0])

    def pure(a):
        return jnp.sum(jnp.sin(a) * 3.0)

    want = jax.jvp(pure, (a.value,), (t1 + t2,))
    got = gk.jvp(lambda: jnp.sum(jnp.sin(a) * 3.0), (), (), wrt=[a, a], wrt_tangents=[t1, t2])
    assert_close(got, want)
    # Duality with gk.vjp over the same wrt: <vjp(1), (t1, t2)> == jvp tangent.
    _, pull = gk.vjp(lambda: jnp.sum(jnp.sin(a) * 3.0), wrt=[a, a])
    _, (c1, c2) = pull(jnp.float32(1.0))
    assert_close(got[1], jnp.vdot(c1, t1) + jnp.vdot(c2, t2))


# --- jvp argument checks -----------------------------------------------------------------------


def test_jvp_wrt_tangents_without_wrt_is_an_error():
    a = gk.Variable(2.0, name="a")
    before = snapshot([a])
    with pytest.raises(_errors.GradkitTypeError, match=r"^\[gradkit\] gk.jvp: wrt_tangents= was given without wrt="):
        gk.jvp(lambda x: a * x, (1.0,), (1.0,), wrt_tangents=1.0)
    assert_unchanged([a], before)


def test_jvp_primals_and_tangents_of_different_structure_is_a_gradkit_error():
    # jax's own error named gradkit's internal ((), *) tuple of Variable values.
    a = gk.Variable(2.0, name="a")
    with pytest.raises(_errors.GradkitValueError, match=r"^\[gradkit\] gk.jvp: tangents= must have the structure of"):
        gk.jvp(lambda x: a * x, (1.0,), (1.0, 2.0))


# --- wrt= a State, and the messages of flatten_variables' other callers ------------------------


def test_wrt_state_is_a_clear_error():
    a = gk.Variable(1.0, name="a")
    state = gk.State.of([a])
    with pytest.raises(_errors.GradkitTypeError, match=r"^\[gradkit\] wrt= takes Variables .* but got a gk.State"):
        gk.grad(lambda: a * 2.0, wrt=state)()
    with pytest.raises(_errors.GradkitTypeError, match=r"wrt=list\(state.variables\)"):
        gk.jacrev(lambda: a * 2.0, wrt=[state])()


def test_wrt_state_variables_is_the_documented_alternative():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b")
    state = gk.State.of([a, b])
    got = gk.grad(lambda: a * b**2, wrt=list(state.variables))()
    assert_close(got, [jnp.float32(4.0), jnp.float32(4.0)])


def test_state_of_non_variable_names_state_of_not_wrt():
    with pytest.raises(_errors.GradkitTypeError, match=r"^\[gradkit\] gk.State.of takes Variables") as info:
        gk.State.of([jnp.ones(2)])
    assert "wrt=" not in str(info.value)


def test_apply_updates_non_variable_params_names_apply_updates():
    with pytest.raises(_errors.GradkitTypeError, match=r"^\[gradkit\] apply_updates takes") as info:
        gk.apply_updates([jnp.ones(2)], [jnp.ones(2)])
    assert "wrt=" not in str(info.value)


# --- apply_updates: States holding the same Variables in another order --------------------------


def test_apply_updates_state_with_updates_in_another_order():
    a, w = gk.Variable(1.0, name="a"), gk.Variable(jnp.array([1.0, 2.0]), name="w")
    params = gk.State.of([a, w])
    updates = gk.State({w: jnp.array([0.5, -1.0]), a: jnp.float32(0.25)})  # built in another order
    new = gk.apply_updates(params, updates)
    # Oracle: optax.apply_updates on plain dicts keyed by name.
    want = optax.apply_updates({"a": a.value, "w": w.value}, {"a": jnp.float32(0.25), "w": jnp.array([0.5, -1.0])})
    assert_close((new[a], new[w]), (want["a"], want["w"]))
    assert all(x is y for x, y in zip(new.variables, params.variables))


def test_apply_updates_state_with_other_variables_is_a_clear_error():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b")
    with pytest.raises(_errors.GradkitValueError, match=r"^\[gradkit\] apply_updates: .*'b'"):
        gk.apply_updates(gk.State.of([a, b]), gk.State({a: 1.0}))
    with pytest.raises(_errors.GradkitValueError, match=r"^\[gradkit\] apply_updates: params is a gk.State"):
        gk.apply_updates(gk.State.of([a, b]), [1.0, 2.0])


def test_sgd_loop_with_update_states_built_by_hand_matches_optax():
    # A loop that writes its own SGD updates as a State, in its own order, against optax.sgd.
    w, b = gk.Variable(jnp.array([1.0, -2.0]), name="w"), gk.Variable(0.5, name="b")
    xs = jnp.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.1]])
    ys = jnp.array([1.0, 0.0, -1.0])
    opt = optax.sgd(0.1)

    def loss():
        return jnp.mean((xs @ w + b - ys) ** 2)

    def pure_loss(p):
        return jnp.mean((xs @ p["w"] + p["b"] - ys) ** 2)

    params = gk.State.of([w, b])
    ref = {"w": w.value, "b": b.value}
    ref_state = opt.init(ref)
    for _ in range(3):
        gb, gw = gk.grad(loss, wrt=[b, w])()
        params = gk.apply_updates(params, gk.State({b: -0.1 * gb, w: -0.1 * gw}))
        params.commit()
        ref_updates, ref_state = opt.update(jax.grad(pure_loss)(ref), ref_state, ref)
        ref = optax.apply_updates(ref, ref_updates)
        assert_close((w.value, b.value), (ref["w"], ref["b"]))


# --- a failed commit / apply_updates changes no Variable ---------------------------------------


def test_failed_commit_of_a_traced_value_changes_nothing():
    # Program: under jax.grad (no gradkit transform), commit a State whose first value is
    # concrete and second traced. The second assignment must fail; gradkit had already
    # written the first into the live Variable.
    a, b = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b")
    before = snapshot([a, b])

    def f(x):
        gk.State({a: np.float32(5.0), b: x}).commit()
        return x

    with pytest.raises(gk.AssignmentError, match=r"^\[gradkit\] Variable 'b' was assigned a traced value"):
        jax.grad(f)(3.0)
    assert_unchanged([a, b], before)


def test_failed_apply_updates_of_a_traced_update_changes_nothing():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b")
    before = snapshot([a, b])

    def f(x):
        gk.apply_updates([a, b], [jnp.ones(()), x])
        return x

    with pytest.raises(gk.AssignmentError, match=r"^\[gradkit\] Variable 'b' was assigned a traced value"):
        jax.grad(f)(3.0)
    assert_unchanged([a, b], before)


def test_commit_of_traced_values_inside_a_gradkit_transform_still_works():
    # The same commit under gk.grad lands in the transform's State: allowed, and exact.
    a, b = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b")

    def f(x):
        gk.State({a: np.float32(5.0), b: x * 3.0}).commit()
        return a * b * x

    def pure(x):
        a, b = 5.0, x * 3.0
        return a * b * x

    assert_close(gk.grad(f)(2.0), jax.grad(pure)(2.0))
    assert (float(a.value), float(b.value)) == (1.0, 2.0)


# --- programs that passed (kept as regression tests against the pure rewrite) -------------------


def test_assign_read_assign_slices_hessian_matches_pure_jax():
    w = gk.Variable(jnp.array([1.0, -2.0]), name="w")
    x = gk.Variable(jnp.array([0.5, 0.3]), name="x")
    n = gk.Variable(0, name="n")  # an integer Variable in the state: no gradient, must not break

    def f(s):
        w.assign(w * s)
        x.assign(x + w)
        n.assign_add(1)
        w[0].assign(jnp.sin(x[1]) * w[0])
        return jnp.sum(w * x) * s * n

    def pure(wv, xv, s):
        wv = wv * s
        xv = xv + wv
        wv = wv.at[0].set(jnp.sin(xv[1]) * wv[0])
        return jnp.sum(wv * xv) * s * 1

    got = gk.hessian(f, argnums=0, wrt=[w, x])(1.5)
    h = jax.hessian(pure, argnums=(2, 0, 1))(w.value, x.value, 1.5)
    want = ((h[0][0], [h[0][1], h[0][2]]), [(h[1][0], [h[1][1], h[1][2]]), (h[2][0], [h[2][1], h[2][2]])])
    assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert int(n.value) == 0


def test_float64_program_in_a_subprocess():
    # jax_enable_x64 is process-wide: checked in a child process so no other test sees it.
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp, numpy as np, gradkit as gk
        a = gk.Variable(jnp.array([1.0, 2.0], jnp.float64), name="a")
        c = gk.Variable(jnp.zeros(2, jnp.float64), name="c")
        n = gk.Variable(jnp.int64(3), name="n")
        def f(x):
            c.assign(a * x)
            n.assign_add(1)
            c[0].assign(c[1] * c[0] / 3.0)
            return jnp.sum(jnp.exp(c) * n)
        def pure(a, x):
            cc = a * x
            cc = cc.at[0].set(cc[1] * cc[0] / 3.0)
            return jnp.sum(jnp.exp(cc) * 4)
        g = gk.grad(f, argnums=0, wrt=a)(0.7)
        want = jax.grad(pure, argnums=(1, 0))(a.value, 0.7)
        assert g[1].dtype == jnp.float64, g[1].dtype
        np.testing.assert_allclose(g[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(g[1], want[1], rtol=1e-12)
        np.testing.assert_allclose(gk.hessian(f, wrt=a)(0.7), jax.hessian(pure)(a.value, 0.7), rtol=1e-12)
        out, t = gk.jvp(f, (0.7,), (1.0,), wrt=a, wrt_tangents=jnp.ones(2))
        w_out, w_t = jax.jvp(pure, (a.value, 0.7), (jnp.ones(2), 1.0))
        np.testing.assert_allclose([out, t], [w_out, w_t], rtol=1e-12)
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_vmap_with_in_axes_inside_grad_and_hessian_through_an_assignment():
    w = gk.Variable(jnp.array([1.0, -2.0]), name="w")
    xs = jnp.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.1]])

    def f(s):
        w.assign(w * s)
        ys = gk.vmap(lambda x, c: jnp.sin(x @ w) * c, in_axes=(0, None))(xs, s)
        return jnp.sum(ys**2)

    def pure(wv, s):
        wv = wv * s
        return jnp.sum((jnp.sin(xs @ wv) * s) ** 2)

    assert_close(gk.grad(f, argnums=0, wrt=w)(1.3), jax.grad(pure, argnums=(1, 0))(w.value, 1.3))
    assert_close(gk.hessian(f)(1.3), jax.hessian(pure, argnums=1)(w.value, 1.3), rtol=1e-4)
    batch = jnp.array([1.0, 1.3])
    assert_close(jax.vmap(gk.grad(f, wrt=w))(batch), jax.vmap(jax.grad(pure), in_axes=(None, 0))(w.value, batch))
