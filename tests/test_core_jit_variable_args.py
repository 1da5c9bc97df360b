"""A Variable passed to a gk.jit function as an argument is read and assigned exactly as one
the function closes over. Oracles: jax.jit of a pure rewrite over the explicit values, and the
same function with the Variable closed over."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, assert_unchanged, count_compiles, snapshot

import gradkit as gk
from gradkit._errors import AssignmentError, GradkitError


def test_an_assigned_argument_is_written_back_and_compiled_once():
    v = gk.Variable(jnp.array([1.0, 2.0]), name="v")
    step = gk.jit(lambda v, x: v.assign_add(x * v).value.sum())

    @jax.jit
    def pure(v, x):
        v = v + x * v
        return v.sum(), v

    expected, ref = [], jnp.array([1.0, 2.0])
    for x in (0.5, 1.5, -1.0):
        out, ref = pure(ref, x)
        expected.append(out)
    got = [step(v, x) for x in (0.5, 1.5, -1.0)]
    assert_close(got, expected)
    assert_close(v.value, ref)
    assert step.trace_count == 1
    assert count_compiles(lambda: step(v, 2.0)) == 0


def test_nested_containers_keywords_and_static_arguments():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(jnp.arange(3.0), name="b")

    def step(vs, x, n, *, scale):
        vs["a"].assign_add(x)
        for _ in range(n):  # n must be a Python int: static
            vs["b"][0].assign(vs["b"][0] * scale)
        return vs["a"] * 2.0 + jnp.sum(vs["b"][0])

    @jax.jit
    def pure(a, b, x, scale):
        a = a + x
        b = b * scale**2
        return a * 2.0 + jnp.sum(b), a, b

    f = gk.jit(step, static_argnums=2)
    ra, rb = jnp.float32(1.0), jnp.arange(3.0)
    for x in (1.0, 2.0):
        out, ra, rb = pure(ra, rb, x, 0.5)
        assert_close(f({"a": a, "b": [b]}, x, 2, scale=0.5), out)
    assert_close((a.value, b.value), (ra, rb))
    assert f.trace_count == 1


def test_the_same_variable_twice_is_one_variable():
    a = gk.Variable(1.0, name="a")
    f = gk.jit(lambda x, y: (x.assign_add(1.0), y * 10.0)[1])
    assert_close(f(a, a), jnp.float32(20.0))  # y sees x's assignment: they are one Variable
    assert_close(a.value, jnp.float32(2.0))


def test_an_argument_also_closed_over_reads_as_the_one_variable_it_is():
    # TensorFlow reuses the trace made for w for any Variable of w's shape, so h(a) would read
    # a where the function reads w; gk.jit keeps the program of each Variable apart.
    w, a = gk.Variable(10.0, name="w"), gk.Variable(1.0, name="a")
    h = gk.jit(lambda x: (x.assign_add(1.0), w * 1.0)[1])
    assert_close(h(w), jnp.float32(11.0))
    assert_close(h(a), jnp.float32(11.0))
    assert_close((w.value, a.value), (jnp.float32(11.0), jnp.float32(2.0)))


def test_each_variable_has_its_program_and_calls_do_not_grow_with_them():
    vs = [gk.Variable(float(i), name=f"v{i}") for i in range(4)]
    f = gk.jit(lambda v: v.assign_sub(1.0).value)
    for v in vs * 2:
        f(v)
    assert_close([v.value for v in vs], [jnp.float32(i - 2.0) for i in range(4)])
    assert f.trace_count == 4  # one per Variable, none for a Variable met before
    assert f._reads == []  # a call passes its own arguments' values only


def test_a_variable_in_a_static_argument_is_read_as_a_closed_over_one():
    w = gk.Variable(jnp.ones(3), name="w")
    f = gk.jit(lambda v, x: v.assign_add(x).value * 2.0, static_argnums=0)
    assert_close(f(w, 1.0), jnp.full(3, 4.0))
    assert_close(f(w, 2.0), jnp.full(3, 8.0))
    assert_close(w.value, jnp.full(3, 4.0))


def test_a_method_with_a_variable_argument():
    class Model:
        def __init__(self):
            self.k = gk.Variable(2.0, name="k")

        @gk.jit
        def apply(self, v, x):
            v.assign(v * self.k + x)
            return v.value

    m, v = Model(), gk.Variable(1.0, name="v")
    assert_close([m.apply(v, 1.0), m.apply(v, 1.0)], [jnp.float32(3.0), jnp.float32(7.0)])


def test_a_refused_assignment_changes_no_variable():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(5.0, name="b")

    def step(p, q):
        p.assign_add(1.0)
        q.assign(jnp.zeros(3))  # the wrong shape, after p was assigned

    before = snapshot([a, b])
    with pytest.raises(AssignmentError, match=r"\[gradkit\] cannot assign a value of shape \(3,\) to Variable 'b'"):
        gk.jit(step)(a, b)
    assert_unchanged([a, b], before)


def test_under_jax_vmap_reads_work_and_a_batched_assignment_is_refused():
    a = gk.Variable(2.0, name="a")
    read = gk.jit(lambda v, x: v * x)
    xs = jnp.arange(3.0)
    assert_close(jax.vmap(lambda x: read(a, x))(xs), jax.vmap(lambda v, x: v * x, (None, 0))(2.0, xs))
    write = gk.jit(lambda v, x: v.assign_add(x).value)
    before = snapshot([a])
    with pytest.raises(AssignmentError, match=r"\[gradkit\] Variable 'a' was assigned a traced value"):
        jax.vmap(lambda x: write(a, x))(xs)
    assert_unchanged([a], before)


def _closed_and_passed(v):
    """The same step with v closed over and with v passed: (closed-over version, passed version)."""

    def body(var, x):
        var.assign(var * x)
        return jnp.sum(var * var)

    return gk.jit(lambda x: body(v, x)), gk.jit(body)


def test_gradients_match_the_closed_over_variable():
    v = gk.Variable(jnp.array([1.0, -2.0]), name="v")
    closed, passed = _closed_and_passed(v)

    def pure(w, x):
        return jnp.sum((w * x) ** 2)

    expected = jax.grad(pure)(v.value, 3.0)
    start = v.value
    for call in (lambda: closed(3.0), lambda: passed(v, 3.0)):
        v.assign(start)
        assert_close(gk.grad(call, wrt=[v])(), [expected])
        v.assign(start)
        with gk.GradientTape() as tape:
            loss = call()
        assert_close(np.asarray(tape.gradient(loss, v)), np.asarray(expected))
        assert_close(v.value, start * 3.0)  # the tape's assignment is written back


def test_a_recorded_call_reads_the_argument_where_the_tape_has_it():
    # Assigned under the tape before the call: the call reads the assigned tensor, so the
    # gradient goes back through that assignment to the value the tape first saw.
    v = gk.Variable(2.0, name="v")
    f = gk.jit(lambda w: w * w)
    with gk.GradientTape() as tape:
        v.assign(v * 3.0)
        y = f(v)
    assert_close(np.asarray(tape.gradient(y, v)), np.asarray(jax.grad(lambda w: (w * 3.0) ** 2)(2.0)))


def test_a_closed_over_variable_as_a_slice_bound_names_the_variable_and_the_way_out():
    """Oracle: jax.lax.dynamic_slice, the traced op the error recommends, against NumPy slicing."""
    k = gk.Variable(1, name="k")
    x = jnp.arange(4.0)
    with pytest.raises(
        jax.errors.ConcretizationTypeError,
        match=r"\[gradkit\] <lambda> needed the value of Variable 'k'.*dynamic_slice",
    ):
        gk.jit(lambda x: x[k:])(x)
    assert int(k.value) == 1
    sliced = gk.jit(lambda x: jax.lax.dynamic_slice(x, (k.value,), (2,)))(x)
    np.testing.assert_array_equal(np.asarray(sliced), np.arange(4.0)[1:3])


@pytest.mark.parametrize(
    "fn, arg, jax_class",
    [
        (lambda x: x * 2.0 if x > 0 else x, 1.0, jax.errors.TracerBoolConversionError),
        (lambda n: sum(jnp.ones(2) for _ in range(n)), 3, jax.errors.TracerIntegerConversionError),
        (lambda x: jnp.zeros(2) * int(x), 1.0, jax.errors.ConcretizationTypeError),
        (lambda x: np.asarray(x), 1.0, jax.errors.TracerArrayConversionError),
    ],
    ids=["if", "range", "int", "np.asarray"],
)
def test_python_control_flow_on_a_traced_argument_is_a_gradkit_error_of_jaxs_class(fn, arg, jax_class):
    """Oracle: jax.jit raises its own class for the same function; gk.jit's error is that class too,
    with the prefix and the ways out, and jax's error as its cause."""
    with pytest.raises(jax_class):
        jax.jit(fn)(arg)
    with pytest.raises(jax_class, match=r"^\[gradkit\] <lambda> needed a traced value .*static_argnums") as e:
        gk.jit(fn)(arg)
    assert isinstance(e.value, GradkitError)
    assert isinstance(e.value.__cause__, jax_class) and not isinstance(e.value.__cause__, GradkitError)
    static = gk.jit(fn, static_argnums=(0,))(arg)
    np.testing.assert_allclose(np.asarray(static), np.asarray(fn(arg)))


def test_python_control_flow_on_a_value_computed_from_a_variable_names_the_way_out():
    """Oracle: jnp.where, the traced op the error recommends, against the Python branch run eagerly."""
    a = gk.Variable(-1.0, name="a")
    with pytest.raises(
        jax.errors.ConcretizationTypeError, match=r"\[gradkit\] <lambda> needed a value computed from a Variable"
    ):
        gk.jit(lambda: a * 2 if a > 0 else a)()
    eager = a * 2 if a > 0 else a
    np.testing.assert_allclose(gk.jit(lambda: jnp.where(a > 0, a * 2, a))(), eager)
