"""Gradients through assignment: the seed programs, chains, slices and unrolled loops.

Oracles: pure-JAX rewrites (tests/_oracles.py), hand derivations written out in each test,
and ``jax.test_util.check_grads`` (forward and reverse, second order) on the pure function
of the entry values that gradkit builds.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import (
    REGRESSION_X,
    REGRESSION_Y,
    SEED000_LIST_DX,
    SEED000_LIST_ENTRY,
    SEED000_NESTED_DX,
    SEED000_NESTED_ENTRY,
    SEED002_PATCH,
    SEED002_X,
    WITH_AND_WITHOUT_JIT,
    assert_close,
    maybe_jit,
    pure_maml,
    pure_unrolled_sgd,
    regression_loss,
    seed000_list,
    seed000_nested,
    seed000_scalar,
    seed002,
)
from jax.test_util import check_grads

import gradkit as gk


def check_grads_2nd(fn, args):
    """Numerical check of forward and reverse derivatives up to second order, in random directions.

    ``fn`` is jitted so that each derivative check compiles once instead of dispatching op by op.
    """
    check_grads(jax.jit(fn), args, order=2, modes=["fwd", "rev"], atol=1e-2, rtol=1e-2, eps=1e-2)


def variables(values, prefix):
    return jax.tree.map(lambda x: gk.Variable(x, name=prefix), values)


def assign_all(targets, values):
    jax.tree.map(lambda v, x: v.assign(x), targets, values, is_leaf=lambda v: isinstance(v, gk.Variable))


# --- seed 000 --------------------------------------------------------------------------------


@WITH_AND_WITHOUT_JIT
def test_seed000_scalar(jit):
    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")

    def loss():
        c.assign(a + b)
        return jnp.mean(c**2)

    grads = maybe_jit(gk.grad(loss, wrt=[a, b, c]), jit)()
    # Hand derivation (SEMANTICS.md): d/da = d/db = 2(a + b) = 6; c's entry value is never used.
    assert_close(grads, [6.0, 6.0, 0.0])
    assert_close(grads, list(jax.grad(seed000_scalar, argnums=(0, 1, 2))(1.0, 2.0, 3.0)))
    assert float(c.value) == 3.0  # the transform assigned nothing


def _list_program(a, b, c, x, loss_of_c):
    def program():
        c_ = [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]
        for target, value in zip(c, c_):
            target.assign(value)
        return loss_of_c(c)

    return program


def _norm_of_list(c):
    return jnp.linalg.norm(jnp.stack([ci.value for ci in c]))


def _norm_of_norms(c):
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(ci.value) for ci in c]))


SEED000_STRUCTURED = {
    "list": (SEED000_LIST_ENTRY, _norm_of_list, seed000_list, SEED000_LIST_DX),
    "nested": (SEED000_NESTED_ENTRY, _norm_of_norms, seed000_nested, SEED000_NESTED_DX),
}


@WITH_AND_WITHOUT_JIT
@pytest.mark.parametrize("scenario", SEED000_STRUCTURED)
def test_seed000_structured(scenario, jit):
    entry, loss_of_c, pure, exact_dx = SEED000_STRUCTURED[scenario]
    a, b, c = (variables(entry[k], k) for k in "abc")
    x = gk.Variable(entry["x"], name="x")
    program = _list_program(a, b, c, x, loss_of_c)

    grads = maybe_jit(gk.grad(program, wrt={"a": a, "b": b, "c": c, "x": x}), jit)()
    want = jax.grad(pure, argnums=(0, 1, 2, 3))(entry["a"], entry["b"], entry["c"], entry["x"])
    assert_close(grads, dict(zip("abcx", want)), rtol=1e-5)
    # The value TensorFlow prints for the assignment-free rewrite (seed 000).
    np.testing.assert_allclose(grads["x"], exact_dx, rtol=1e-5)


@pytest.mark.parametrize("scenario", SEED000_STRUCTURED)
def test_seed000_structured_check_grads(scenario):
    """The pure function of the entry values gradkit builds has correct 1st and 2nd derivatives."""
    entry, loss_of_c, _, _ = SEED000_STRUCTURED[scenario]
    a, b, c = (variables(entry[k], k) for k in "abc")
    x = gk.Variable(entry["x"], name="x")
    program = gk.functionalize(_list_program(a, b, c, x, loss_of_c))
    base = gk.State.of([a, b, c, x])

    def of_entry(a_vals, b_vals, x_val):
        state = base.replace({**dict(zip(a, a_vals)), **dict(zip(b, b_vals)), x: x_val})
        return program(state)[0]

    check_grads_2nd(of_entry, (entry["a"], entry["b"], entry["x"]))


def test_seed000_scalar_check_grads():
    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")

    def loss():
        c.assign(a * b + jnp.sin(a))
        return jnp.mean(c**2)

    pure = gk.functionalize(loss)

    def value_at(av, bv):
        return pure(gk.State({a: av, b: bv, c: 3.0}))[0]

    check_grads_2nd(value_at, (1.0, 2.0))


# --- seed 002 and slice assignment -----------------------------------------------------------


@WITH_AND_WITHOUT_JIT
def test_seed002_slice_patch(jit):
    x = gk.Variable(SEED002_X, name="x")
    patch = gk.Variable(SEED002_PATCH, name="patch")

    def objective():
        x[:2, :2].assign(patch)
        return jnp.mean(jnp.tensordot(x, x.T, axes=1))

    d_x, d_patch = maybe_jit(gk.grad(objective, wrt=(x, patch)), jit)()
    # Hand derivation: o = (1/4) sum_k (column sum k)^2, so d o/d x_ik = colsum_k / 2; after the
    # patch the column sums are (2, 4, 104). TF gives None for the patch.
    assert_close(d_patch, np.array([[1.0, 2.0], [1.0, 2.0]], np.float32))
    assert_close(d_x, np.array([[0.0, 0.0, 52.0], [0.0, 0.0, 52.0]], np.float32))
    assert_close((d_x, d_patch), jax.grad(seed002, argnums=(0, 1))(SEED002_X, SEED002_PATCH))


def test_seed002_check_grads():
    x = gk.Variable(SEED002_X, name="x")
    patch = gk.Variable(SEED002_PATCH, name="patch")

    def objective():
        x[:2, :2].assign(patch)
        return jnp.mean(jnp.tensordot(x, x.T, axes=1))

    pure = gk.functionalize(objective)
    check_grads_2nd(lambda xv, pv: pure(gk.State({x: xv, patch: pv}))[0], (SEED002_X / 10, SEED002_PATCH))


def _advanced_rows():
    return jnp.array([1, 0]), jnp.array([2, 0])


# (index, the patch's shape): basic, strided, negative, integer-array and boolean-mask indexing.
SLICES = {
    "basic": (np.s_[0, 1:], (2,)),
    "strided": (np.s_[:, ::2], (2, 2)),
    "negative": (np.s_[-1], (3,)),
    "advanced": (_advanced_rows(), (2,)),
    "mask": (np.array([[True, False, True], [False, True, False]]), (3,)),
}


SLICE_CASES = [(kind, "assign") for kind in SLICES] + [
    ("basic", "assign_add"),
    ("advanced", "assign_sub"),
    ("mask", "assign_add"),
    ("strided", "assign_sub"),
]


@WITH_AND_WITHOUT_JIT
@pytest.mark.parametrize("kind, how", SLICE_CASES, ids=[f"{k}-{h}" for k, h in SLICE_CASES])
def test_slice_assignment(kind, how, jit):
    index, patch_shape = SLICES[kind]
    x0 = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    p0 = np.linspace(-1.0, 1.0, int(np.prod(patch_shape)), dtype=np.float32).reshape(patch_shape)
    x, p = gk.Variable(x0, name="x"), gk.Variable(p0, name="p")

    def loss():
        getattr(x[index], how)(jnp.sin(p) * 2.0)
        return jnp.sum(jnp.cos(x) * x)

    def pure(xv, pv):
        update = jnp.sin(pv) * 2.0
        ref = jnp.asarray(xv).at[index]
        xv = {"assign": ref.set(update), "assign_add": ref.add(update), "assign_sub": ref.add(-update)}[how]
        return jnp.sum(jnp.cos(xv) * xv)

    grads = maybe_jit(gk.grad(loss, wrt=[x, p]), jit)()
    assert_close(grads, list(jax.grad(pure, argnums=(0, 1))(x0, p0)))


def test_slice_read_then_write_same_variable():
    """``v[1:].assign(v[:-1] * 2)``: a shift that reads the variable it writes."""
    v = gk.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="v")

    def loss():
        v[1:].assign(v[:-1] * 2.0)
        return jnp.sum(v**2)

    # v_new = (v0, 2 v0, 2 v1): loss = v0^2 + 4 v0^2 + 4 v1^2 -> grads (10 v0, 8 v1, 0).
    assert_close(gk.grad(loss, wrt=v)(), np.array([10.0, 16.0, 0.0], np.float32))


# --- chains of assignments -------------------------------------------------------------------


@WITH_AND_WITHOUT_JIT
def test_self_referencing_assign(jit):
    c = gk.Variable(3.0, name="c")

    def loss():
        c.assign(c * 2)
        return c**2

    # loss = (2c)^2 = 4c^2, so d loss/dc = 8c = 24 at c = 3.
    assert float(maybe_jit(gk.grad(loss, wrt=c), jit)()) == pytest.approx(24.0)


@WITH_AND_WITHOUT_JIT
def test_assign_add_sub_chain(jit):
    a, b = gk.Variable(0.5, name="a"), gk.Variable(-1.5, name="b")

    def loss(x):
        a.assign_add(b * x)  # a1 = a + b x
        b.assign_sub(a**2)  # b1 = b - a1^2
        a.assign_add(b)  # a2 = a1 + b1
        a.assign(jnp.sin(a))  # a3 = sin a2
        b.assign_sub(-a * x)  # b2 = b1 + a3 x
        return a * b + x

    def pure(av, bv, x):
        av = av + bv * x
        bv = bv - av**2
        av = av + bv
        av = jnp.sin(av)
        bv = bv + av * x
        return av * bv + x

    grads = maybe_jit(gk.grad(loss, argnums=0, wrt=[a, b]), jit)(0.7)
    want = jax.grad(pure, argnums=(2, 0, 1))(0.5, -1.5, 0.7)
    assert_close(grads, (want[0], [want[1], want[2]]))


# --- unrolled loops: hypergradient and MAML --------------------------------------------------

K_STEPS = 5


def _sgd_program(w, lr, steps):
    def program():
        for _ in range(steps):
            g = gk.grad(lambda: regression_loss(w.value), wrt=w)()
            w.assign_sub(lr * g)
        return regression_loss(w.value)

    return program


@WITH_AND_WITHOUT_JIT
def test_learning_rate_hypergradient(jit):
    w = gk.Variable(np.zeros(2, np.float32), name="w")
    lr = gk.Variable(0.1, name="lr")
    d_w, d_lr = maybe_jit(gk.grad(_sgd_program(w, lr, K_STEPS), wrt=[w, lr]), jit)()
    want_w, want_lr = jax.grad(pure_unrolled_sgd, argnums=(0, 1))(jnp.zeros(2), 0.1, K_STEPS)
    assert_close([d_w, d_lr], [want_w, want_lr], rtol=1e-4)
    assert_close(w.value, np.zeros(2, np.float32))


def test_learning_rate_hypergradient_check_grads():
    w = gk.Variable(np.zeros(2, np.float32), name="w")
    lr = gk.Variable(0.1, name="lr")
    pure = gk.functionalize(_sgd_program(w, lr, 1))
    check_grads_2nd(lambda wv, lv: pure(gk.State({w: wv, lr: lv}))[0], (np.array([0.2, -0.1], np.float32), 0.1))


@WITH_AND_WITHOUT_JIT
def test_maml_meta_gradient(jit):
    w = gk.Variable(np.array([0.3, -0.2], np.float32), name="w")
    lr = gk.Variable(0.05, name="lr")
    train, val = (REGRESSION_X[:2], REGRESSION_Y[:2]), (REGRESSION_X[2:], REGRESSION_Y[2:])

    def meta_loss():
        g = gk.grad(lambda: regression_loss(w.value, *train), wrt=w)()
        w.assign_sub(lr * g)
        return regression_loss(w.value, *val)

    d_w, d_lr = maybe_jit(gk.grad(meta_loss, wrt=[w, lr]), jit)()
    want_w, want_lr = jax.grad(pure_maml, argnums=(0, 1))(jnp.array([0.3, -0.2]), 0.05)
    assert_close([d_w, d_lr], [want_w, want_lr], rtol=1e-4)
    # The first-order approximation (inner gradient held constant) is measurably different:
    # the test would catch a cut through the inner gradient.
    first_order = jax.grad(
        lambda wv: regression_loss(wv - 0.05 * jax.lax.stop_gradient(jax.grad(regression_loss)(wv, *train)), *val)
    )(jnp.array([0.3, -0.2]))
    assert not np.allclose(d_w, first_order, rtol=1e-3)


_MASK = np.array([True, False, True])
_MASK_INDICES = [_MASK, (_MASK, 1), (_MASK, slice(None)), (Ellipsis, np.array([False, True])), jnp.asarray(_MASK)]


@pytest.mark.parametrize("index", _MASK_INDICES, ids=lambda i: repr(i)[:40])
@pytest.mark.parametrize("mode", ["tape", "grad", "jit"])
def test_slice_assignment_through_a_concrete_boolean_mask_in_every_face(index, mode):
    """``v[mask].assign(p * v[mask])``, a mask alone or with other index items, is the
    scatter NumPy's ``v[mask] = ...`` makes, under a tape as under gk.grad and gk.jit.
    Oracle: jax.grad of ``.at[index].set`` with the mask concrete."""
    gnp = gk.numpy
    m0 = jnp.arange(6.0, dtype=jnp.float32).reshape(3, 2) / 5.0 - 0.4
    shape = np.asarray(m0)[index].shape
    p0 = jnp.linspace(-1.0, 1.0, int(np.prod(shape)), dtype=jnp.float32).reshape(shape)
    m, p = gk.Variable(m0, name="m"), gk.Variable(p0, name="p")

    def pure(m, p):
        m = m.at[index].set(jnp.sin(p) * m[index])
        return jnp.sum(m**3), m

    def body(xp):
        m[index].assign(xp.sin(p) * m[index])
        return xp.sum(m**3)

    expected = jax.grad(lambda m, p: pure(m, p)[0], argnums=(0, 1))(m0, p0)
    if mode == "tape":
        with gk.GradientTape() as tape:
            loss = body(gnp)
        got = [g.numpy() for g in tape.gradient(loss, [m, p])]
        assert_close(float(loss), float(pure(m0, p0)[0]))
        assert_close(m.numpy(), np.asarray(pure(m0, p0)[1]))
    else:
        grad = gk.grad(lambda: body(jnp), wrt=[m, p])
        got = (gk.jit(grad) if mode == "jit" else grad)()
        np.testing.assert_array_equal(m.numpy(), np.asarray(m0))
    assert_close([np.asarray(g) for g in got], [np.asarray(e) for e in expected], rtol=1e-5)
