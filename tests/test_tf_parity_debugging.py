"""``tf.debugging``'s assertions against real TensorFlow 2.21: the same program text under both
modules, eagerly and inside ``tf.function``, passing and failing. Compared: the results (None
for an assertion that holds), the exception's class in TensorFlow's terms (``tf.errors`` classes
by their name in each module, builtins as they are) and, eagerly, the message itself."""

import numpy as np
import pytest

import gradkit.tf as gtf

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import _compare, _np  # noqa: E402

X = [1.0, 2.0]
Y = [1.0, 3.0]


def _kind(error) -> str:
    """TensorFlow's name for the class of ``error``: the tf.errors class it is, else its builtin."""
    for module in (tf_real, gtf):
        for name in ("InvalidArgumentError", "OperatorNotAllowedInGraphError"):
            if isinstance(error, getattr(module.errors, name)):
                return name
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins").__name__


def _run(program, tf):
    try:
        return "ok", _np(program(tf))
    except Exception as error:  # compared below
        return "raised", error


def _message(error) -> str:
    text = getattr(error, "message", None) or str(error)
    return text.removeprefix("[gradkit] ")


def check(program, *, same_message: bool = True, says: tuple = ()):
    """Run ``program`` under both modules and compare; returns gradkit's outcome."""
    (tf_how, tf_out), (gk_how, gk_out) = _run(program, tf_real), _run(program, gtf)
    assert tf_how == gk_how, (tf_out, gk_out)
    if tf_how == "ok":
        _compare(tf_out, gk_out)
        return gk_out
    assert _kind(gk_out) == _kind(tf_out), (tf_out, gk_out)
    if same_message:
        assert _message(gk_out) == _message(tf_out)
    for text in says:
        assert text in _message(tf_out) and text in _message(gk_out), (text, tf_out, gk_out)
    return gk_out


# -- eager: each assertion holding and failing, with TensorFlow's message ----------------------

COMPARISONS = {
    "assert_equal": (X, X, X, Y),
    "assert_none_equal": ([1.0, 2.0], [3.0, 4.0], X, Y),
    "assert_less": (X, [2.0, 3.0], X, Y),
    "assert_less_equal": (X, Y, Y, X),
    "assert_greater": ([2.0, 3.0], X, Y, X),
    "assert_greater_equal": (Y, X, X, Y),
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_eagerly(name):
    good_x, good_y, bad_x, bad_y = COMPARISONS[name]
    assert check(lambda tf: getattr(tf.debugging, name)(tf.constant(good_x), tf.constant(good_y))) is None
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad_x), tf.constant(bad_y)))
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad_x), tf.constant(bad_y), message="custom", summarize=1))
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad_x), tf.constant(bad_y), summarize=-1, name="nm"))
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad_x), tf.constant(bad_y), summarize=0))


def p_equal_long_and_integer(tf):
    return tf.debugging.assert_equal(tf.range(10), tf.range(10) * 0)


def p_equal_two_dimensional(tf):
    return tf.debugging.assert_equal(tf.constant([[1, 2], [3, 4]]), tf.constant([[1, 0], [0, 4]]), message="m")


def p_equal_broadcast_scalar(tf):
    return tf.debugging.assert_equal(tf.constant([1.0, 2.0, 3.0]), 1.0)


def p_less_broadcast_rows(tf):
    return tf.debugging.assert_less(tf.constant([[1.0, 5.0], [0.0, 1.0]]), tf.constant([2.0, 2.0]))


def p_equal_holds_with_broadcasting(tf):
    return tf.debugging.assert_equal(tf.constant([[2, 2], [2, 2]]), 2)


def p_empty_tensors_hold(tf):
    return tf.debugging.assert_less(tf.zeros([0]), tf.zeros([0]))


def p_equal_variables(tf):
    return tf.debugging.assert_equal(tf.Variable([1.0, 2.0]), tf.Variable([1.0, 2.0]))


def p_top_level_aliases(tf):
    x = tf.constant([1.0, 2.0])
    return [tf.assert_equal(x, x), tf.assert_less(x, x + 1), tf.assert_greater(x + 1, x), tf.assert_rank(x, 1)]


@pytest.mark.parametrize(
    "program",
    [
        p_equal_long_and_integer,
        p_equal_two_dimensional,
        p_equal_broadcast_scalar,
        p_less_broadcast_rows,
        p_equal_holds_with_broadcasting,
        p_empty_tensors_hold,
        p_equal_variables,
        p_top_level_aliases,
    ],
    ids=lambda p: p.__name__,
)
def test_comparison_programs(program):
    check(program)


def p_shapes_that_do_not_broadcast(tf):
    return tf.debugging.assert_equal(tf.constant([1, 2, 3]), tf.constant([1, 2]))


def p_two_dtypes(tf):
    return tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("program", [p_shapes_that_do_not_broadcast, p_two_dtypes], ids=lambda p: p.__name__)
def test_refused_operands(program):
    check(program, same_message=False)


SIGNS = {
    "assert_positive": ([1.0, 2.0], [1.0, 0.0]),
    "assert_negative": ([-1.0, -2.0], [-1.0, 0.0]),
    "assert_non_negative": ([0.0, 2.0], [-1.0, 0.0]),
    "assert_non_positive": ([0.0, -2.0], [1.0, 0.0]),
}


@pytest.mark.parametrize("name", sorted(SIGNS))
def test_signs_eagerly(name):
    good, bad = SIGNS[name]
    assert check(lambda tf: getattr(tf.debugging, name)(tf.constant(good))) is None
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad)))
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad), message="m", summarize=1))
    check(lambda tf: getattr(tf.debugging, name)(tf.constant([bad] * 3), summarize=5))
    check(lambda tf: getattr(tf.debugging, name)(tf.constant(bad[0]) * 1e9 - 1.0))


def p_near_holds(tf):
    return tf.debugging.assert_near(tf.constant(X), tf.constant(X) + 1e-7)


def p_near_fails(tf):
    return tf.debugging.assert_near(tf.constant(X), tf.constant(Y))


def p_near_tolerances(tf):
    return [
        tf.debugging.assert_near(tf.constant(X), tf.constant(Y), rtol=0.5),
        tf.debugging.assert_near(tf.constant(X), tf.constant(Y), atol=1.5),
    ]


def p_near_fails_with_tolerances_and_message(tf):
    return tf.debugging.assert_near(tf.constant(X), tf.constant(Y), rtol=0.1, atol=0.25, message="m", summarize=1)


def p_near_integers(tf):
    return tf.debugging.assert_near(tf.constant([1]), tf.constant([1]))


@pytest.mark.parametrize(
    "program",
    [p_near_holds, p_near_fails, p_near_tolerances, p_near_fails_with_tolerances_and_message],
    ids=lambda p: p.__name__,
)
def test_near(program):
    check(program)


def test_near_refuses_integers():
    check(p_near_integers, same_message=False)


def p_assert_holds(tf):
    return [tf.debugging.Assert(True, [tf.constant(X)]), tf.debugging.Assert(tf.constant(True), ["never", 1])]


def p_assert_fails_with_data(tf):
    return tf.debugging.Assert(tf.constant(False), [tf.constant(X), "hello", tf.constant(Y)], summarize=1)


def p_assert_python_false(tf):
    return tf.debugging.Assert(False, [tf.constant([1, 2, 3, 4]), tf.constant(7)])


def p_assert_one_element_condition(tf):
    return tf.Assert(tf.constant([False]), [tf.constant(X)], summarize=-1)


@pytest.mark.parametrize(
    "program",
    [p_assert_holds, p_assert_fails_with_data, p_assert_python_false, p_assert_one_element_condition],
    ids=lambda p: p.__name__,
)
def test_assert(program):
    check(program)


def p_finite_holds(tf):
    x = tf.constant(X)
    return [tf.debugging.check_numerics(x, "m"), tf.debugging.assert_all_finite(x, "m")]


def p_check_numerics_nan(tf):
    return tf.debugging.check_numerics(tf.constant([1.0, np.nan, np.inf]), "after the log")


def p_assert_all_finite_inf(tf):
    return tf.debugging.assert_all_finite(tf.constant([1.0, -np.inf]), "grads")


def p_check_numerics_integers(tf):
    return tf.debugging.check_numerics(tf.constant([1, 2]), "m")


def p_check_numerics_gradient(tf):
    x = tf.Variable([1.0, -2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.debugging.check_numerics(x * x, "square") * 3.0)
    return tape.gradient(loss, x)


@pytest.mark.parametrize(
    "program",
    [p_finite_holds, p_check_numerics_nan, p_assert_all_finite_inf, p_check_numerics_gradient],
    ids=lambda p: p.__name__,
)
def test_numerics(program):
    check(program, same_message=False, says=(" : Tensor had",))


def test_check_numerics_refuses_integers():
    check(p_check_numerics_integers, same_message=False)


# -- static assertions -------------------------------------------------------------------------


def p_ranks_hold(tf):
    x = tf.ones([2, 3])
    return [
        tf.debugging.assert_rank(x, 2),
        tf.debugging.assert_rank(x, tf.constant(2)),
        tf.debugging.assert_rank_at_least(x, 1),
        tf.debugging.assert_rank_in(x, [0, 2]),
        tf.debugging.assert_rank_in(x, (2,)),
    ]


def p_rank_fails(tf):
    return tf.debugging.assert_rank(tf.ones([2]), 2, message="m")


def p_rank_at_least_fails(tf):
    return tf.debugging.assert_rank_at_least(tf.ones([2]), 2)


def p_rank_in_fails(tf):
    return tf.debugging.assert_rank_in(tf.ones([2]), [0, 2], message="m")


def p_types_hold(tf):
    return [
        tf.debugging.assert_integer(tf.constant([1])),
        tf.debugging.assert_type(tf.constant([1.0]), tf.float32),
        tf.debugging.assert_scalar(tf.constant(2.0)),
        tf.debugging.assert_scalar(3),
    ]


def p_integer_fails(tf):
    return tf.debugging.assert_integer(tf.constant([1.0]), message="m")


def p_type_fails(tf):
    return tf.debugging.assert_type(tf.constant([1.0]), tf.int32)


def p_type_fails_with_message(tf):
    return tf.debugging.assert_type(tf.constant([1]), tf.float32, message="m")


def p_scalar_fails(tf):
    return tf.debugging.assert_scalar(tf.constant([1.0, 2.0]), message="m")


def p_shapes_hold(tf):
    x, y, z = tf.ones([2, 3]), tf.ones([2]), tf.ones([4, 2, 3])
    return [
        tf.debugging.assert_shapes([(x, ("N", "D")), (y, ("N",))]),
        tf.debugging.assert_shapes([(x, (2, None)), (z, ("*", "N", 3)), (y, (".",))]),
        tf.debugging.assert_shapes([(tf.constant(1.0), ()), (tf.constant(1.0), ("N",)), (y, (None,))]),
        tf.debugging.assert_shapes([(z, (..., 3)), (x, None)]),
    ]


def p_shapes_named_size_fails(tf):
    return tf.debugging.assert_shapes([(tf.ones([2]), ("N",)), (tf.ones([3]), ("N",))])


def p_shapes_explicit_size_fails(tf):
    return tf.debugging.assert_shapes([(tf.ones([2, 3]), (2, 4))], message="m")


def p_shapes_rank_fails(tf):
    return tf.debugging.assert_shapes([(tf.ones([2]), ("N", "M"))])


def p_shapes_leading_rank_fails(tf):
    return tf.debugging.assert_shapes([(tf.ones([2]), ("*", "N", "M"))])


def p_shapes_scalar_spec_fails(tf):
    return tf.debugging.assert_shapes([(tf.ones([2, 2]), ("N",))])


def p_shapes_star_not_first(tf):
    return tf.debugging.assert_shapes([(tf.ones([2, 2]), ("N", "*"))])


def p_iterables(tf):
    return [tf.debugging.assert_proper_iterable([1, 2]), tf.debugging.assert_proper_iterable((tf.constant(1.0),))]


def p_iterable_string(tf):
    return tf.debugging.assert_proper_iterable("abc")


def p_iterable_number(tf):
    return tf.debugging.assert_proper_iterable(3)


def p_is_numeric_tensor(tf):
    return [
        tf.debugging.is_numeric_tensor(tf.constant([1.0])),
        tf.debugging.is_numeric_tensor(tf.constant([1], tf.int8)),
        tf.debugging.is_numeric_tensor(tf.constant([True])),
        tf.debugging.is_numeric_tensor(1.0),
        tf.debugging.is_numeric_tensor(np.ones(2)),
    ]


STATIC = [
    p_ranks_hold,
    p_rank_fails,
    p_rank_at_least_fails,
    p_rank_in_fails,
    p_types_hold,
    p_integer_fails,
    p_type_fails,
    p_type_fails_with_message,
    p_scalar_fails,
    p_shapes_hold,
    p_shapes_named_size_fails,
    p_shapes_explicit_size_fails,
    p_shapes_rank_fails,
    p_shapes_leading_rank_fails,
    p_shapes_scalar_spec_fails,
    p_shapes_star_not_first,
    p_iterables,
    p_iterable_string,
    p_iterable_number,
    p_is_numeric_tensor,
]


@pytest.mark.parametrize("program", STATIC, ids=lambda p: p.__name__)
def test_static_assertions(program):
    check(program)


def test_iterable_tensor_is_refused():
    # The message names the tensor's class, which differs; the class of the error does not.
    check(lambda tf: tf.debugging.assert_proper_iterable(tf.constant([1.0])), same_message=False)


# -- inside tf.function: static checks while tracing, value checks when the call runs ----------


def _in_function(tf, body, *args):
    """``body`` run by a tf.function that returns a tensor (an assertion's own result differs there)."""

    @tf.function
    def run(*xs):
        body(tf, *xs)
        return tf.reduce_sum(xs[0])

    return run(*[tf.constant(a) for a in args])


def f_equal(tf, x, y):
    tf.debugging.assert_equal(x, y, message="custom", summarize=2)


def f_less(tf, x, y):
    tf.assert_less(x, y)


def f_greater_equal(tf, x, y):
    tf.debugging.assert_greater_equal(x, y, message="ge")


def f_none_equal(tf, x, y):
    tf.debugging.assert_none_equal(x, y)


def f_positive(tf, x, y):
    tf.debugging.assert_positive(x - y, message="pos")


def f_non_negative(tf, x, y):
    tf.debugging.assert_non_negative(x - y)


def f_near(tf, x, y):
    tf.debugging.assert_near(x, y, rtol=0.01, message="near")


def f_assert(tf, x, y):
    tf.debugging.Assert(tf.reduce_all(x <= y), [x, "and", y])


def f_check_numerics(tf, x, y):
    tf.debugging.check_numerics(tf.math.log(y - x), "log of a gap")


# (body, passing inputs, failing inputs, text both messages hold)
IN_FUNCTION = {
    "equal": (f_equal, (X, X), (X, Y), "custom"),
    "less": (f_less, (X, [2.0, 3.0]), (X, Y), "Condition x < y did not hold"),
    "greater_equal": (f_greater_equal, (Y, X), (X, Y), "Condition x >= y did not hold"),
    "none_equal": (f_none_equal, (X, [3.0, 4.0]), (X, Y), "Condition x != y did not hold"),
    "positive": (f_positive, (Y, [0.0, 0.0]), (X, Y), "Condition x > 0 did not hold"),
    "non_negative": (f_non_negative, (Y, X), (X, Y), "Condition x >= 0 did not hold"),
    "near": (f_near, (X, X), (X, Y), "x and y not equal to tolerance"),
    "Assert": (f_assert, (X, Y), (Y, X), "and"),
    "check_numerics": (f_check_numerics, ([0.0, 1.0], [1.0, 3.0]), (X, Y), "log of a gap : Tensor had Inf values"),
}


@pytest.mark.parametrize("case", sorted(IN_FUNCTION))
def test_value_assertions_in_a_function(case):
    body, good, bad, text = IN_FUNCTION[case]
    check(lambda tf: _in_function(tf, body, *good))
    check(lambda tf: _in_function(tf, body, *bad), same_message=False, says=(text,))


def p_a_failing_check_among_passing_calls(tf):
    f = tf.function(lambda x: (tf.debugging.assert_positive(x), x * 2.0)[1])
    out = [f(tf.constant([1.0, 2.0])), f(tf.constant([3.0, 4.0]))]
    try:
        f(tf.constant([1.0, -2.0]))
    except tf.errors.InvalidArgumentError:
        out.append("raised")
    return [*out, f(tf.constant([5.0, 6.0]))]


def p_constant_condition_raises_while_tracing(tf):
    @tf.function
    def f(x):
        tf.debugging.assert_equal(tf.constant(1), tf.constant(2))
        return x

    return f(tf.constant(1.0))


def p_static_assertion_in_a_function(tf):
    @tf.function
    def f(x):
        tf.debugging.assert_rank(x, 2)
        return x

    return f(tf.constant([1.0]))


def p_shapes_in_a_function(tf):
    @tf.function
    def f(x, y):
        tf.debugging.assert_shapes([(x, ("N",)), (y, ("N",))])
        return x

    return f(tf.constant([1.0]), tf.constant([1.0, 2.0]))


def p_gradient_through_asserted_values(tf):
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            y = v * x
            tf.debugging.assert_positive(y)
            tf.debugging.assert_less(y, 10.0)
            loss = tf.reduce_sum(tf.debugging.check_numerics(y * y, "y squared"))
        return loss, tape.gradient(loss, v)

    return list(step(tf.constant([3.0, 1.0])))


def p_assert_in_the_branch_taken(tf):
    @tf.function
    def f(x):
        return tf.cond(
            tf.reduce_sum(x) > 0.0,
            lambda: (tf.debugging.assert_less(x, 5.0), x * 2.0)[1],
            lambda: (tf.debugging.assert_greater(x, -5.0), x * 3.0)[1],
        )

    out = [f(tf.constant([1.0, 2.0])), f(tf.constant([-1.0, -2.0]))]
    try:
        f(tf.constant([1.0, 7.0]))
    except tf.errors.InvalidArgumentError:
        out.append("raised")
    return out


@pytest.mark.parametrize(
    "program",
    [
        p_a_failing_check_among_passing_calls,
        p_constant_condition_raises_while_tracing,
        p_static_assertion_in_a_function,
        p_shapes_in_a_function,
        p_gradient_through_asserted_values,
        p_assert_in_the_branch_taken,
    ],
    ids=lambda p: p.__name__,
)
def test_function_programs(program):
    check(program, same_message=False)


# -- tf.control_dependencies around assertions ------------------------------------------------


def p_control_dependencies_eagerly(tf):
    x = tf.constant([1.0, 2.0])
    with tf.control_dependencies([tf.debugging.assert_positive(x)]):
        y = tf.identity(x) * 2.0
    with tf.control_dependencies(None):
        z = y + 1.0
    return [y, z]


def p_control_dependencies_in_a_function(tf):
    @tf.function
    def f(x):
        with tf.control_dependencies([tf.debugging.assert_less(x, 3.0, message="bound")]):
            return tf.identity(x) * 2.0

    out = [f(tf.constant([1.0, 2.0]))]
    try:
        f(tf.constant([1.0, 5.0]))
    except tf.errors.InvalidArgumentError as error:
        out.append("bound" in error.message)
    return out


def p_control_dependencies_not_iterable(tf):
    with tf.control_dependencies(5):
        return tf.constant(1.0)


@pytest.mark.parametrize(
    "program",
    [p_control_dependencies_eagerly, p_control_dependencies_in_a_function, p_control_dependencies_not_iterable],
    ids=lambda p: p.__name__,
)
def test_control_dependencies(program):
    check(program, same_message=False)


def p_same_float_dtype(tf):
    dtypes = [
        tf.debugging.assert_same_float_dtype([tf.constant(1.0), tf.constant([2.0]), None]),
        tf.debugging.assert_same_float_dtype(),
        tf.debugging.assert_same_float_dtype(dtype=tf.float16),
        tf.debugging.assert_same_float_dtype([tf.Variable(1.0)], tf.float32),
    ]
    return [tf.as_dtype(d).name for d in dtypes]


def p_same_float_dtype_two_dtypes(tf):
    return tf.debugging.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float16)])


def p_same_float_dtype_not_the_expected(tf):
    return tf.debugging.assert_same_float_dtype([tf.constant(1.0)], tf.float16)


def p_same_float_dtype_integers(tf):
    return tf.debugging.assert_same_float_dtype([tf.constant(1)])


@pytest.mark.parametrize(
    "program",
    [p_same_float_dtype, p_same_float_dtype_two_dtypes, p_same_float_dtype_not_the_expected],
    ids=lambda p: p.__name__,
)
def test_same_float_dtype(program):
    check(program, same_message=False, says=("must be of the same type",) if "dtype_" in program.__name__ else ())


def test_same_float_dtype_refuses_integers():
    check(p_same_float_dtype_integers)


def p_assert_in_a_branch_not_taken(tf):
    @tf.function
    def f(x):
        return tf.cond(
            tf.constant(True),
            lambda: x * 2.0,
            lambda: (tf.debugging.assert_negative(x, message="never runs"), x)[1],
        )

    return f(tf.constant([1.0, 2.0]))


def test_an_assertion_in_a_branch_not_taken_never_runs():
    check(p_assert_in_a_branch_not_taken)
