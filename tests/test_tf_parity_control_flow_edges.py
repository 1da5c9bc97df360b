"""Control flow where gradkit.tf once parted from TensorFlow 2.21: a traced ``tf.while_loop``
with ``maximum_iterations`` runs its body only for the iterations it takes (no NaN gradient from
the state it stopped in, no extra prints or failed assertions); a loop variable may not change
dtype; ``map_fn`` refuses elems of different lengths; folds return tensors, not the initializer
Variable; one-element predicates work traced; ``tf.case(exclusive=True)`` checks eagerly too.
Oracles: hand derivations, and TensorFlow where it is installed."""

import sys

import numpy as np
import pytest

import gradkit.tf as gtf


def _harmonic_loop(tf):
    @tf.function
    def f(x, n):
        _, acc = tf.while_loop(
            lambda n, acc: n > 0.0, lambda n, acc: (n - 1.0, acc + x / n), (n, tf.zeros_like(x)), maximum_iterations=5
        )
        return acc

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x, tf.constant(3.0))
    return float(y), float(tape.gradient(y, x))


def test_a_bounded_traced_loop_differentiates_only_the_iterations_it_takes():
    value, grad = _harmonic_loop(gtf)
    # y = x (1 + 1/2 + 1/3): dy/dx = 11/6 (a hand derivation); the stopped state n = 0 is never a divisor.
    np.testing.assert_allclose([value, grad], [2.0 * 11 / 6, 11 / 6], rtol=1e-6)


def test_a_bounded_traced_loop_runs_its_side_effects_only_when_it_iterates(capfd):
    @gtf.function
    def f(n):
        def body(n):
            gtf.print("n =", n, output_stream=sys.stdout)
            gtf.debugging.assert_positive(n)
            return (n - 1,)

        return gtf.while_loop(lambda n: n > 0, body, (n,), maximum_iterations=5)

    (out,) = f(gtf.constant(2))
    assert int(out) == 0
    assert capfd.readouterr().out.splitlines() == ["n = 2", "n = 1"]


def test_a_loop_variable_may_not_change_dtype():
    f = gtf.function(
        lambda y0: gtf.while_loop(
            lambda y: y < 3, lambda y: (gtf.cast(y, gtf.float32) + 0.7,), (y0,), maximum_iterations=10
        )
    )
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.while_loop: a loop variable enters the loop with type int32"):
        f(gtf.constant(0))


@pytest.mark.parametrize("compiled", [False, True])
def test_map_fn_refuses_elems_of_different_lengths(compiled):
    f = lambda a, b: gtf.map_fn(lambda e: e[0] + e[1], (a, b))  # noqa: E731
    with pytest.raises(ValueError, match=r"\[gradkit\] The elements' leading dimensions differ \(2, 3\)"):
        (gtf.function(f) if compiled else f)(gtf.constant([1.0, 2.0]), gtf.constant([10.0, 20.0, 30.0]))


def test_folds_return_a_tensor_not_the_initializer_variable():
    v = gtf.Variable(1.0)
    a = gtf.foldl(lambda acc, e: acc + e, gtf.zeros([0]), initializer=v)
    b = gtf.foldr(lambda acc, e: acc, gtf.constant([7.0, 8.0]), initializer=v)
    v.assign(5.0)
    assert float(a) == 1.0 and float(b) == 1.0 and not isinstance(a, gtf.Variable)


def test_one_element_predicates_inside_tf_function():
    c = gtf.function(lambda x, p: gtf.cond(p, lambda: x * 2.0, lambda: x))
    w = gtf.function(lambda x: gtf.while_loop(lambda a: a < 10.0, lambda a: (a * 2.0,), (x,), maximum_iterations=10))
    assert float(c(gtf.constant(1.5), gtf.constant([True]))) == 3.0
    assert w(gtf.constant([1.5]))[0].numpy().tolist() == [12.0]  # 1.5 * 2**3


def test_case_exclusive_checks_eagerly():
    x = gtf.constant(1.5)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] tf.case with exclusive=True"):
        gtf.case([(x > 1.0, lambda: x * 2.0), (x > 0.0, lambda: x * 3.0)], default=lambda: x, exclusive=True)


def test_against_tensorflow():
    tf_real = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(_harmonic_loop(gtf), _harmonic_loop(tf_real), rtol=1e-6)


@pytest.mark.parametrize("op", ["foldl", "foldr", "scan"])
def test_no_rows_and_no_initializer_is_tensorflows_out_of_range(op):
    with pytest.raises(gtf.errors.OutOfRangeError, match=rf"\[gradkit\] tf.{op} got elems with no rows"):
        getattr(gtf, op)(lambda a, e: a + e, gtf.zeros([0]))


def test_branches_that_differ_and_a_missing_branch_get_gradkits_errors():
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.cond\(\): 'true_fn' must be a callable"):
        gtf.cond(gtf.constant(True), None, lambda: 1.0)
    cond = gtf.function(lambda p: gtf.cond(p, lambda: gtf.constant(1.0), lambda: gtf.constant(1)))
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.cond inside tf.function.*different dtypes"):
        cond(gtf.constant(True))
    switch = gtf.function(lambda i: gtf.switch_case(i, [lambda: gtf.constant([1.0]), lambda: gtf.constant(1.0)]))
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.switch_case inside tf.function.*different shapes"):
        switch(gtf.constant(0))


def _no_back_prop(tf):
    """back_prop=False stops the gradient at a scan's, map_fn's and fold's results inside tf.function
    (TensorFlow's graph loops honour it); the loops' values are unchanged."""
    v = tf.Variable(1.3)
    elems = tf.constant([0.5, 1.0, 2.0])

    @tf.function
    def f(x):
        scanned = tf.scan(lambda a, r: a * v + r, elems, initializer=x, back_prop=False)[-1]
        mapped = tf.reduce_sum(tf.map_fn(lambda r: r * v * x, elems, back_prop=False))
        folded = tf.foldl(lambda a, r: a * v + r, elems, initializer=x, back_prop=False)
        return (scanned + mapped + folded) * x

    x = tf.constant(0.7)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    dx, dv = tape.gradient(y, [x, v])
    return float(y), float(dx), dv


def test_back_prop_false_stops_the_gradient_in_a_function():
    y, dx, dv = _no_back_prop(gtf)
    scanned = ((0.7 * 1.3 + 0.5) * 1.3 + 1.0) * 1.3 + 2.0
    mapped = 3.5 * 1.3 * 0.7
    assert dv is None
    np.testing.assert_allclose(y, (2 * scanned + mapped) * 0.7, rtol=1e-6)
    np.testing.assert_allclose(dx, 2 * scanned + mapped, rtol=1e-6)  # only the final factor x (by hand)
    y_tf, dx_tf, dv_tf = _no_back_prop(pytest.importorskip("tensorflow"))
    assert dv_tf is None
    np.testing.assert_allclose([y, dx], [y_tf, dx_tf], rtol=1e-6)


def _custom_gradient_variables(tf):
    b, a = tf.Variable([1.0, 2.0], name="b"), tf.Variable([3.0, 4.0], name="a")

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            # By position: TensorFlow's tf.function gives the Variables sorted by name (a, b).
            return dy * 1.0, [dy * 10.0, dy * 100.0]

        return x * b + a, grad

    @tf.function
    def run(x):
        return tf.reduce_sum(f(x))

    with tf.GradientTape() as tape:
        y = run(tf.constant([1.0, 1.0]))
    return [g.numpy() for g in tape.gradient(y, [a, b])]


def test_a_custom_gradients_variables_are_in_name_order():
    da, db = _custom_gradient_variables(gtf)
    np.testing.assert_allclose(da, [10.0, 10.0])
    np.testing.assert_allclose(db, [100.0, 100.0])
    tf_real = pytest.importorskip("tensorflow")
    for ours, theirs in zip((da, db), _custom_gradient_variables(tf_real)):
        np.testing.assert_allclose(ours, theirs)


def test_tensor_array_errors_are_tensorflows_classes():
    array = gtf.TensorArray(gtf.float32, size=2)
    with pytest.raises(gtf.errors.OutOfRangeError, match=r"^\[gradkit\] tf.TensorArray.write got index 5"):
        array.write(5, 1.0)
    array = gtf.TensorArray(gtf.float32, size=1).write(0, 1.0)
    array.read(0)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] tf.TensorArray.read: could not read"):
        array.read(0)
    for bad in (lambda: gtf.TensorArray(gtf.float32, size=2).read(3), lambda: array.write(-1, 1.0)):
        with pytest.raises(gtf.errors.OutOfRangeError, match=r"^\[gradkit\] tf.TensorArray"):
            bad()


def test_tf_print_inside_tf_function_keeps_program_order(capsys):
    import sys

    v = gtf.Variable(1.0)

    @gtf.function
    def step(x):
        gtf.print("1 start", output_stream=sys.stdout)
        gtf.print("2 x =", x, output_stream=sys.stdout)
        gtf.print("3 v before =", v, output_stream=sys.stdout)
        v.assign_add(x)
        gtf.print("4 v after =", v, output_stream=sys.stdout)
        gtf.print("5 end", output_stream=sys.stdout)

    capsys.readouterr()
    step(gtf.constant(2.0))
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["1 start", "2 x = 2", "3 v before = 1", "4 v after = 3", "5 end"]


@pytest.mark.parametrize(
    "make",
    [
        lambda: gtf.linspace(0.0, 1.0, 3),
        lambda: gtf.stack([0.0, 0.5, 1.0]),
        lambda: gtf.cast([0, 1, 2], gtf.float32) * 0.5,
        lambda: gtf.fill([3], 0.5),
    ],
)
def test_watched_tensor_made_from_python_values_inside_tf_function(make):
    @gtf.function
    def gradient():
        x = make()
        with gtf.GradientTape() as tape:
            tape.watch(x)
            z = gtf.reduce_sum(2.0 * x + x**2)
        return x, tape.gradient(z, x), gtf.constant(x.shape.as_list())

    x, grad, shape = gradient()
    np.testing.assert_allclose(grad.numpy(), 2.0 + 2.0 * x.numpy())  # d/dx (2x + x^2)
    assert shape.numpy().tolist() == [3]
