"""Every functional transform equals the same JAX transform of the pure rewrite.

The program (tests/_oracles.py) assigns a matrix, assign_adds a scalar and slice-assigns a
vector from itself, then reads all three; each transform is checked eagerly and under
jax.jit, and no transform may change a live Variable.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import (
    ENTRY,
    WITH_AND_WITHOUT_JIT,
    Program,
    X,
    assert_close,
    assert_unchanged,
    maybe_jit,
    pure_loss,
    pure_program,
    pure_vector,
    snapshot,
)

import gradkit as gk


@pytest.fixture
def prog():
    p = Program()
    before = snapshot(p.variables)
    yield p
    # Derivatives never mutate Variables.
    assert_unchanged(p.variables, before)


# wrt in every structure a user might pass; the gradients must mirror it.
WRT_STRUCTURES = {
    "single": lambda p: p.m,
    "list": lambda p: [p.u, p.m, p.s],
    "tuple": lambda p: (p.s, p.u),
    "dict": lambda p: {"u": p.u, "m": p.m, "s": p.s},
    "nested": lambda p: {"first": [p.u, (p.m,)], "second": p.s},
    "repeated": lambda p: [p.s, p.s],
}


def _expected_grads(prog):
    return jax.grad(pure_loss)(ENTRY, X)


@WITH_AND_WITHOUT_JIT
@pytest.mark.parametrize("structure", WRT_STRUCTURES)
def test_grad_wrt_structures(prog, structure, jit):
    wrt = WRT_STRUCTURES[structure](prog)
    grads = maybe_jit(gk.grad(prog.imperative, wrt=wrt), jit)(X)
    assert_close(grads, prog.arrange(wrt, _expected_grads(prog)))


@WITH_AND_WITHOUT_JIT
def test_grad_argnums_only(prog, jit):
    grads = maybe_jit(gk.grad(prog.imperative), jit)(X)
    assert_close(grads, jax.grad(pure_loss, argnums=1)(ENTRY, X))


@WITH_AND_WITHOUT_JIT
@pytest.mark.parametrize("argnums", [0, (0,)], ids=["int", "tuple"])
def test_grad_argnums_and_wrt(prog, argnums, jit):
    grads = maybe_jit(gk.grad(prog.imperative, argnums=argnums, wrt=[prog.u, prog.s]), jit)(X)
    d_vals, d_x = jax.grad(pure_loss, argnums=(0, 1))(ENTRY, X)
    arg_part = d_x if isinstance(argnums, int) else (d_x,)
    assert_close(grads, (arg_part, [d_vals["u"], d_vals["s"]]))


@WITH_AND_WITHOUT_JIT
def test_value_and_grad_has_aux(prog, jit):
    def loss_and_aux(x):
        return prog.imperative(x), {"m": prog.m, "s": prog.s * 1.0}

    (value, aux), grads = maybe_jit(gk.value_and_grad(loss_and_aux, wrt=[prog.m], has_aux=True), jit)(X)
    (want_value, final), want_grads = jax.value_and_grad(pure_program, has_aux=True)(ENTRY, X)
    assert_close(value, want_value)
    # Aux values are the final (assigned) values; a Variable in aux comes back as a plain value.
    assert_close(aux, {"m": final["m"], "s": final["s"]})
    assert_close(grads, [want_grads["m"]])


def test_grad_has_aux_and_return_state(prog):
    (grads, aux), state = gk.grad(lambda x: (prog.imperative(x), 7.0), wrt=prog.s, has_aux=True, return_state=True)(X)
    _, final = pure_program(ENTRY, X)
    assert aux == 7.0
    assert_close(grads, jax.grad(pure_loss)(ENTRY, X)["s"])
    # The returned State holds exactly what was assigned, with its final value.
    assert set(map(id, state.variables)) == {id(v) for v in prog.variables}
    assert_close([state[v] for v in prog.variables], [final["u"], final["m"], final["s"]])


# Second-order and Jacobian transforms of the reference program (and every oracle here) run
# under jax.jit only: op by op they cost seconds of per-primitive compilation. A small program
# covers gradkit's side of them eagerly.
JACOBIANS = pytest.mark.parametrize("name, jax_transform", [("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)])


@JACOBIANS
def test_jacobians(prog, name, jax_transform):
    gk_transform = getattr(gk, name)
    jac = gk.jit(gk_transform(prog.imperative_vector, argnums=0, wrt=[prog.u, prog.m, prog.s]))(X)
    d_vals, d_x = jax.jit(jax_transform(pure_vector, argnums=(0, 1)))(ENTRY, X)
    assert_close(jac, (d_x, [d_vals["u"], d_vals["m"], d_vals["s"]]))


def test_hessian_blocks(prog):
    hess = gk.jit(gk.hessian(prog.imperative, wrt=[prog.u, prog.s]))(X)
    want = jax.jit(jax.hessian(pure_loss))(ENTRY, X)
    names = ["u", "s"]
    assert_close(hess, [[want[i][j] for j in names] for i in names], rtol=1e-4, atol=1e-5)


def _small_program(v, c):
    def fn(x):
        c.assign(c * x[0])
        v.assign_add(c * x)
        return v * c

    def pure(vv, cv, x):
        cv = cv * x[0]
        vv = vv + cv * x
        return vv * cv

    return fn, pure


@JACOBIANS
def test_jacobians_eager_small(name, jax_transform):
    v, c = gk.Variable(np.array([0.5, -1.0], np.float32), name="v"), gk.Variable(2.0, name="c")
    fn, pure = _small_program(v, c)
    x = np.array([1.5, 0.5], np.float32)
    jac = getattr(gk, name)(fn, argnums=0, wrt=(v, c))(x)
    d_x, d_v, d_c = jax.jit(jax_transform(pure, argnums=(2, 0, 1)))(v.numpy(), c.numpy(), x)
    assert_close(jac, (d_x, (d_v, d_c)))


def test_hessian_eager_small():
    v, c = gk.Variable(np.array([0.5, -1.0], np.float32), name="v"), gk.Variable(2.0, name="c")
    fn, pure = _small_program(v, c)
    x = np.array([1.5, 0.5], np.float32)
    hess = gk.hessian(lambda x: jnp.sum(fn(x)), argnums=0, wrt=[c])(x)
    want = jax.jit(jax.hessian(lambda vv, cv, x: jnp.sum(pure(vv, cv, x)), argnums=(2, 1)))(v.numpy(), c.numpy(), x)
    # Blocks: ((d2/dx dx, d2/dx dc), ([d2/dc dx], [d2/dc dc])), as for jax.hessian with nested inputs.
    assert_close(hess, ((want[0][0], [want[0][1]]), [(want[1][0], [want[1][1]])]))


@WITH_AND_WITHOUT_JIT
def test_jvp(prog, jit):
    rng = np.random.default_rng(0)
    t_vals = {k: rng.normal(size=np.shape(v)).astype(np.float32) for k, v in ENTRY.items()}
    t_x = rng.normal(size=X.shape).astype(np.float32)

    def run(x, tx):
        return gk.jvp(
            prog.imperative_vector,
            (x,),
            (tx,),
            wrt={"u": prog.u, "m": prog.m, "s": prog.s},
            wrt_tangents=t_vals,
        )

    out, out_t = maybe_jit(run, jit)(X, t_x)
    want_out, want_t = jax.jvp(pure_vector, (ENTRY, X), (t_vals, t_x))
    assert_close((out, out_t), (want_out, want_t), rtol=1e-4, atol=1e-5)


@WITH_AND_WITHOUT_JIT
def test_vjp(prog, jit):
    cotangent = jnp.arange(6.0) - 2.0

    def run(x):
        out, pull = gk.vjp(prog.imperative_vector, x, wrt=[prog.s, prog.m])
        return out, pull(cotangent)

    out, (d_args, d_wrt) = maybe_jit(run, jit)(X)
    want_out, pull = jax.vjp(pure_vector, ENTRY, X)
    d_vals, d_x = pull(cotangent)
    assert_close((out, d_args, d_wrt), (want_out, (d_x,), [d_vals["s"], d_vals["m"]]))


@WITH_AND_WITHOUT_JIT
def test_vmap_reads_variables_unbatched(prog, jit):
    xs = jnp.stack([X, 2 * X, -X])

    def per_example(x):
        return jnp.sum(prog.m * x) * prog.s + jnp.sum(prog.u)

    got = maybe_jit(gk.vmap(per_example), jit)(xs)
    want = jax.vmap(lambda x: jnp.sum(ENTRY["m"] * x) * ENTRY["s"] + jnp.sum(ENTRY["u"]))(xs)
    assert_close(got, want)


@WITH_AND_WITHOUT_JIT
def test_vmap_maps_keyword_arguments_as_jax_vmap_does(prog, jit):
    xs = jnp.stack([X, 2 * X, -X])

    def per_example(x, scale, offset=0.0):
        return jnp.sum(prog.m * x) * scale + offset

    scales = jnp.array([1.0, 2.0, 3.0])
    got = maybe_jit(lambda xs, scales: gk.vmap(per_example)(xs, scale=scales, offset=jnp.ones(3)), jit)(xs, scales)
    want = jax.vmap(lambda x, scale, offset: jnp.sum(ENTRY["m"] * x) * scale + offset)(xs, scales, jnp.ones(3))
    assert_close(got, want)


def test_jvp_wrt_tangent_takes_a_python_float_and_a_float64_array():
    # jax.jvp takes both for a float32 primal (a float64 array is float32 without jax_enable_x64).
    a = gk.Variable(np.float32(3.0), name="a")
    w = gk.Variable(np.array([1.0, 2.0], np.float32), name="w")
    got = gk.jvp(lambda: a * w, (), (), wrt=[a, w], wrt_tangents=[1.0, np.array([0.5, -1.0])])
    want = jax.jvp(lambda av, wv: av * wv, (jnp.float32(3.0), w.value), (1.0, np.array([0.5, -1.0])))
    assert_close(got, want)


@WITH_AND_WITHOUT_JIT
def test_functionalize_under_jax_value_and_grad(prog, jit):
    pure = gk.functionalize(prog.imperative)

    def loss(state, x):
        out, new_state = pure(state, x)
        return out, new_state

    state = gk.State.of(prog.variables)
    (value, new_state), grads = maybe_jit(jax.value_and_grad(loss, has_aux=True), jit)(state, X)
    (want_value, final), want_grads = jax.value_and_grad(pure_program, has_aux=True)(ENTRY, X)
    assert_close(value, want_value)
    assert isinstance(grads, gk.State) and isinstance(new_state, gk.State)
    for v in prog.variables:
        name = prog.name_of[id(v)]
        assert_close(grads[v], want_grads[name])
        assert_close(new_state[v], final[name])


def test_functionalize_state_commit(prog):
    out, new_state = gk.functionalize(prog.imperative)(gk.State.of(prog.variables), X)
    want_out, final = pure_program(ENTRY, X)
    assert_close(out, want_out)
    new_state.commit()
    assert_close([v.value for v in prog.variables], [final["u"], final["m"], final["s"]])
    # commit is the user's own assignment, so the fixture's "unchanged" check does not apply.
    for v in prog.variables:
        v.assign(ENTRY[prog.name_of[id(v)]])


@WITH_AND_WITHOUT_JIT
def test_nested_transforms_second_order(prog, jit):
    """gk.grad of gk.grad: d/ds of (d loss/d u summed), against jax.grad of jax.grad."""

    def inner_sum(x):
        return jnp.sum(gk.grad(prog.imperative, wrt=prog.u)(x))

    got = maybe_jit(gk.grad(inner_sum, wrt=prog.s), jit)(X)
    want = jax.grad(lambda s: jnp.sum(jax.grad(pure_loss)({**ENTRY, "s": s}, X)["u"]))(ENTRY["s"])
    assert_close(got, want, rtol=1e-4)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian", "grad"])
def test_a_variable_given_as_the_argument_is_differentiated_as_its_value(transform):
    w = gk.Variable(jnp.array([2.0, -1.0]), name="w")
    fn = (lambda v: jnp.sum(v**3)) if transform in ("hessian", "grad") else (lambda v: v**3)
    got = getattr(gk, transform)(fn)(w)
    np.testing.assert_allclose(got, getattr(jax, transform)(fn)(w.value))


def test_assigning_a_variable_given_as_the_argument_says_to_use_wrt():
    w = gk.Variable(jnp.array([2.0, -1.0]), name="w")

    def step(v):
        v.assign(v * 3.0)
        return jnp.sum(v**2)

    with pytest.raises(TypeError, match=r"\[gradkit\] gk.grad differentiates its argument 'w'.*wrt="):
        gk.grad(step)(w)
    with pytest.raises(TypeError, match=r"\[gradkit\] gk.vmap passes its argument 'w'"):
        gk.vmap(lambda v, x: step(v) * x, in_axes=(None, 0))(w, jnp.ones(3))
    np.testing.assert_array_equal(w.value, [2.0, -1.0])
    # By wrt=, the gradient goes through the assignment: d/dw sum((3w)^2) = 18 w.
    np.testing.assert_allclose(gk.grad(lambda: step(w), wrt=w)(), 18 * np.array([2.0, -1.0]))
