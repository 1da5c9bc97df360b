"""Op-seeded draws inside ``tf.function``, ``numpy_function``/``py_function`` inputs, appending
to a ``TensorArray`` inside ``tf.function`` and its empty/unknown shapes, and ``while_loop``'s
``back_prop``/``swap_memory``, folds of a Python initializer, ``cond``'s message for branches of
different shapes. Oracles: TensorFlow 2.21 where installed (equality patterns, types, dtypes and
shapes, never random bits), and the rules themselves (TensorFlow's ``tf.random.set_seed``
docstring, NumPy, hand derivations)."""

import collections
import collections.abc

import numpy as np
import pytest

import gradkit.tf as gtf

# -- op-seeded draws inside tf.function -------------------------------------------------------


def _op_seed_facts(tf, global_seed):
    """The equality pattern of op-seeded draws in a function: TensorFlow's docstring rule is
    (A1, A1) at the first call, (A2, A2) at the second, A_n being the op seed's n-th eager draw
    (with a global seed: each op is a kernel of its own, started as the eager one)."""
    tf.random.set_seed(global_seed)
    eager = []
    if global_seed is not None:
        eager = [tf.random.uniform([3], seed=3).numpy() for _ in range(2)]
        tf.random.set_seed(global_seed)

    @tf.function
    def f():
        return (
            tf.random.uniform([3], seed=3),
            tf.random.uniform([3], seed=3),
            tf.random.uniform([3]),
            tf.random.uniform([3]),
        )

    first, second = ([t.numpy() for t in f()] for _ in range(2))
    facts = {
        "same op seed, one call": np.array_equal(first[0], first[1]),
        "same op seed, next call": np.array_equal(second[0], second[1]),
        "op seed, calls differ": not np.array_equal(first[0], second[0]),
        "unseeded draws differ": not np.array_equal(first[2], first[3]),
    }
    if eager:
        facts["call n is eager draw n"] = np.array_equal(first[0], eager[0]) and np.array_equal(second[0], eager[1])
    return facts


@pytest.mark.parametrize("global_seed", [5, None])
def test_same_op_seed_draws_alike_within_a_call(global_seed):
    assert all(_op_seed_facts(gtf, global_seed).values())


@pytest.mark.parametrize("global_seed", [5, None])
def test_op_seed_draws_in_a_function_match_tensorflow(global_seed):
    tf = pytest.importorskip("tensorflow")
    assert _op_seed_facts(gtf, global_seed) == _op_seed_facts(tf, global_seed)


def _op_seed_in_loop_and_custom_gradient(tf):
    """A loop body's op-seeded draw differs at each iteration (its kernel runs again); one in a
    custom_gradient function is an op of the enclosing graph, drawing what the same op outside does."""
    tf.random.set_seed(5)

    @tf.function
    def loop(n):
        def body(i, acc):
            return i + 1, acc + tf.one_hot(i, 2) * tf.random.uniform([], seed=3)

        return tf.while_loop(lambda i, acc: i < n, body, (0, tf.zeros([2])))[1]

    @tf.custom_gradient
    def scaled(x):
        r = tf.random.uniform([3], seed=3)
        return x * r, lambda dy: dy * r

    @tf.function
    def both(x):
        return scaled(x), tf.random.uniform([3], seed=3)

    drawn = loop(tf.constant(2)).numpy()
    inside, outside = (t.numpy() for t in both(tf.ones([3])))
    return bool(drawn[0] != drawn[1]), np.array_equal(inside, outside)


def test_op_seeded_draws_in_a_loop_differ_and_in_a_custom_gradient_match_outside():
    assert _op_seed_in_loop_and_custom_gradient(gtf) == (True, True)


def test_op_seeded_draws_in_a_loop_and_custom_gradient_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _op_seed_in_loop_and_custom_gradient(gtf) == _op_seed_in_loop_and_custom_gradient(tf)


# -- numpy_function / py_function inputs ------------------------------------------------------


def test_numpy_function_doubles_a_python_list_input():
    out = gtf.numpy_function(lambda a: a * 2, [[1.0, 2.0]], gtf.float32)
    np.testing.assert_array_equal(np.asarray(out), np.array([1.0, 2.0]) * 2)  # not the list repeated
    total = gtf.numpy_function(lambda a: np.float32(a.sum()), [3.0], gtf.float32)
    assert float(total) == 3.0


_INPUTS = (
    lambda tf: 3.0,
    lambda tf: [1.0, 2.0],
    lambda tf: 3,
    lambda tf: True,
    lambda tf: np.float64(2.0),
    lambda tf: (1, 2),
    lambda tf: tf.constant(1.5),
    lambda tf: tf.Variable([1.0]),
)


def _numpy_function_arguments(tf):
    seen = []

    def record(a):
        seen.append((type(a) is np.ndarray, np.dtype(a.dtype).name, a.shape))
        return np.float32(0)

    for make in _INPUTS:
        tf.numpy_function(record, [make(tf)], tf.float32)
    return seen


def test_numpy_function_hands_ndarrays_as_numpy_makes_them():
    # TensorFlow hands func np.array(x) of each input: NumPy's own dtypes for Python values.
    expected = [(True, np.array(make(None)).dtype.name, np.array(make(None)).shape) for make in _INPUTS[:6]]
    expected += [(True, "float32", ()), (True, "float32", (1,))]
    assert _numpy_function_arguments(gtf) == expected


def test_numpy_function_arguments_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _numpy_function_arguments(gtf) == _numpy_function_arguments(tf)


def _py_function_arguments(tf):
    seen = []

    def record(*args):
        seen.extend((tf.is_tensor(a), np.dtype(a.numpy().dtype).name) for a in args)
        return 0.0

    tf.py_function(record, [3.0, [1, 2], tf.Variable(2.0)], tf.float32)
    return seen


def test_py_function_hands_tensors_for_python_inputs():
    assert _py_function_arguments(gtf) == [(True, "float32"), (True, "int32"), (True, "float32")]


def test_py_function_arguments_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _py_function_arguments(gtf) == _py_function_arguments(tf)


# -- TensorArray ------------------------------------------------------------------------------


def _appended_in_function(tf):
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for _ in range(3):
            ta = ta.write(ta.size(), x)
        return ta.stack(), ta.size()

    stacked, size = f(tf.constant(2.0))
    return stacked.numpy().tolist(), int(size)


def test_write_at_size_appends_inside_a_function():
    assert _appended_in_function(gtf) == ([2.0, 2.0, 2.0], 3)


def test_write_at_size_inside_a_function_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _appended_in_function(gtf) == _appended_in_function(tf)


def _empty_and_unknown_shapes(tf):
    def stacked(**kw):
        t = tf.TensorArray(kw.pop("dtype", tf.float32), size=0, **kw).stack()
        return tuple(t.shape), np.dtype(t.numpy().dtype).name

    shapes = {
        "stack": stacked(),
        "int stack": stacked(dtype=tf.int32, dynamic_size=True),
        "stack, partly known": stacked(element_shape=[None, 3]),
        "stack, known": stacked(element_shape=[2]),
        "gather []": tuple(tf.TensorArray(tf.float32, size=0).gather([]).shape),
    }
    unknown = tf.TensorArray(tf.float32, size=2).element_shape
    partial = tf.TensorArray(tf.float32, size=0, element_shape=[None, 3]).element_shape
    written = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0]).element_shape
    shapes["element_shape"] = [
        (isinstance(s, tf.TensorShape), s.rank, None if s.rank is None else s.as_list())
        for s in (unknown, partial, written)
    ]
    return shapes


def test_empty_stack_and_element_shape_follow_tensorflow_rules():
    assert _empty_and_unknown_shapes(gtf) == {
        "stack": ((0,), "float32"),  # no element shape known: TensorFlow's (0,)
        "int stack": ((0,), "int32"),
        "stack, partly known": ((0,), "float32"),
        "stack, known": ((0, 2), "float32"),
        "gather []": (0,),
        "element_shape": [(True, None, None), (True, 2, [None, 3]), (True, 1, [2])],
    }


def test_empty_stack_and_element_shape_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _empty_and_unknown_shapes(gtf) == _empty_and_unknown_shapes(tf)


# -- while_loop, folds, cond ------------------------------------------------------------------


def _loop_keywords(tf):
    x = tf.Variable(3.0)

    def cube(back_prop):  # y = x * x * x after two iterations
        return tf.while_loop(
            lambda i, y: i < 2, lambda i, y: (i + 1, y * x), (0, x), back_prop=back_prop, swap_memory=True
        )[1]

    @tf.function
    def in_function(back_prop):
        with tf.GradientTape() as tape:
            y = cube(back_prop)
        return y, tape.gradient(y, x)

    out = {}
    for back_prop in (True, False):
        with tf.GradientTape() as tape:
            y = cube(back_prop)
        grad = tape.gradient(y, x)
        y_fn, grad_fn = in_function(back_prop)
        out[back_prop] = (float(y), float(grad), float(y_fn), None if grad_fn is None else float(grad_fn))
    bounded = tf.while_loop(lambda i: i < 10, lambda i: (i + 1,), (0,), None, 10, True, False, 4)
    out["positional maximum_iterations"] = int(bounded[0])
    return out


def test_while_loop_takes_back_prop_and_swap_memory():
    # d(x^3)/dx = 3x^2 = 27 at x = 3; back_prop=False stops it inside tf.function only
    # (TensorFlow's eager loop ignores it).
    assert _loop_keywords(gtf) == {
        True: (27.0, 27.0, 27.0, 27.0),
        False: (27.0, 27.0, 27.0, None),
        "positional maximum_iterations": 4,
    }


def test_while_loop_keywords_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _loop_keywords(gtf) == _loop_keywords(tf)


def _folds_of_python_initializers(tf):
    def described(out):
        return [(tf.is_tensor(t), np.asarray(t).dtype.name, np.asarray(t).tolist()) for t in tf.nest.flatten(out)]

    empty, ones = tf.zeros([0]), tf.ones([2])
    return {
        "foldl empty": described(tf.foldl(lambda a, r: a + r, empty, initializer=5.0)),
        "foldr empty": described(tf.foldr(lambda a, r: a + r, empty, initializer=5.0)),
        "scan empty": described(tf.scan(lambda a, r: a + r, empty, initializer=5.0)),
        "foldl pair": described(tf.foldl(lambda a, r: (a[0] + r, a[1]), ones, initializer=(5.0, 1))),
        "foldr pair empty": described(tf.foldr(lambda a, r: (a[0] + r, a[1]), empty, initializer=(5.0, 1))),
    }


def test_folds_of_a_python_initializer_return_tensors():
    assert _folds_of_python_initializers(gtf) == {
        "foldl empty": [(True, "float32", 5.0)],
        "foldr empty": [(True, "float32", 5.0)],
        "scan empty": [(True, "float32", [])],
        "foldl pair": [(True, "float32", 7.0), (True, "int32", 1)],
        "foldr pair empty": [(True, "float32", 5.0), (True, "int32", 1)],
    }


def test_folds_of_a_python_initializer_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _folds_of_python_initializers(gtf) == _folds_of_python_initializers(tf)


def _branches_of_two_shapes(tf):
    @tf.function
    def f(p, x):
        return tf.cond(p, lambda: tf.ones([2]) * x, lambda: tf.ones([3]) * x)

    return f(tf.constant(True), tf.constant(2.0)), f(tf.constant(False), tf.constant(2.0))


def test_cond_branches_of_two_shapes_raise_a_gradkit_limit_not_a_tensorflow_rule():
    with pytest.raises(TypeError) as caught:
        _branches_of_two_shapes(gtf)
    message = str(caught.value)
    assert message.startswith("[gradkit]")
    assert "refuses too" not in message and "gradkit limit" in message
    assert "float32[2]" in message and "float32[3]" in message  # what came in
    assert "tf.pad" in message and "Python bool" in message  # what to do instead


def test_tensorflow_takes_cond_branches_of_two_shapes():
    tf = pytest.importorskip("tensorflow")
    a, b = _branches_of_two_shapes(tf)
    assert (a.shape, b.shape) == ((2,), (3,))


def _branches_of_two_dtypes(tf):
    @tf.function
    def f(p, x):
        return tf.cond(p, lambda: x, lambda: tf.cast(x, tf.int32))

    return f(tf.constant(True), tf.constant(2.0))


def test_cond_branches_of_two_dtypes_are_refused_as_in_tensorflow():
    with pytest.raises(TypeError, match="refuses too") as caught:
        _branches_of_two_dtypes(gtf)
    assert "float32[]" in str(caught.value) and "int32[]" in str(caught.value)


def test_tensorflow_refuses_cond_branches_of_two_dtypes():
    tf = pytest.importorskip("tensorflow")
    with pytest.raises((TypeError, ValueError)):
        _branches_of_two_dtypes(tf)


class _ReadOnlyMapping(collections.abc.Mapping):
    def __init__(self, data):
        self._data = dict(data)

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def _namedtuple_class():
    return collections.namedtuple("Pair", ["a", "b"])  # a class made again at each call


def _nest_program(tf):
    flat = [
        tf.nest.flatten(_ReadOnlyMapping({"b": 1, "a": 2})),
        tf.nest.flatten({"x": 1, "y": 2}.values()),
        tf.nest.flatten([{"k": 3}.keys()]),
    ]
    tf.nest.assert_same_structure(_namedtuple_class()(1, 2), _namedtuple_class()(3, 4))
    return flat


def test_nest_takes_mappings_views_and_namedtuples_made_twice():
    assert _nest_program(gtf) == [[2, 1], [1, 2], ["k"]]  # a mapping's values by sorted key


def test_nest_matches_tensorflow_on_mappings_and_namedtuples():
    rtf = pytest.importorskip("tensorflow")
    assert _nest_program(gtf) == _nest_program(rtf)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"minval": 0.5, "maxval": 3}, TypeError),  # 0.5 is no int32
        ({"minval": 0, "maxval": [3, 4]}, ValueError),  # RandomUniformInt takes scalar bounds
        ({"minval": 0, "maxval": 3, "dtype": "uint8"}, ValueError),  # no uint8 draws
    ],
)
def test_integer_uniform_refuses_what_tensorflow_refuses(kwargs, error):
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", "int32")
    with pytest.raises(error, match=r"^\[gradkit\] "):
        gtf.random.uniform([2], dtype=dtype, **kwargs)
    draws = gtf.random.uniform([100], minval=1, maxval=4, dtype="int32").numpy()
    assert draws.min() >= 1 and draws.max() <= 3


def test_stateless_shuffle_permutes_the_first_axis_by_the_seed_alone():
    x = gtf.reshape(gtf.range(12), [6, 2])
    a = gtf.random.experimental.stateless_shuffle(x, seed=[1, 2]).numpy()
    b = gtf.random.experimental.stateless_shuffle(x, seed=[1, 2]).numpy()
    np.testing.assert_array_equal(a, b)  # the seed alone decides
    assert sorted(a[:, 0].tolist()) == [0, 2, 4, 6, 8, 10] and np.all(a[:, 1] == a[:, 0] + 1)  # whole rows move
    assert float(gtf.random.experimental.stateless_shuffle(gtf.constant(3.0), seed=[1, 2])) == 3.0
    v = gtf.Variable(np.arange(6, dtype=np.float32))
    weights = gtf.constant(np.arange(6, dtype=np.float32))
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.random.experimental.stateless_shuffle(v, seed=[1, 2]) * weights)
    order = gtf.random.experimental.stateless_shuffle(gtf.range(6), seed=[1, 2]).numpy()
    want = np.zeros(6, np.float32)
    want[order] = np.arange(6)  # d/dv[order[i]] of sum_i v[order[i]] * i
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), want)


def test_generator_binomial_draws_and_checks_its_shape():
    g = gtf.random.Generator.from_seed(1)
    draws = g.binomial([4000], counts=10.0, probs=0.3).numpy()
    assert draws.dtype == np.int32 and draws.min() >= 0 and draws.max() <= 10
    assert abs(draws.mean() - 3.0) < 0.15 and abs(draws.var() - 2.1) < 0.3  # n p and n p (1 - p)
    assert g.binomial([2, 3], counts=[10.0, 20.0, 5.0], probs=0.5, dtype="int64").shape == (2, 3)
    state = g.state.numpy().copy()
    with pytest.raises(ValueError, match=r"\[gradkit\] Generator.binomial got shape \[3\]"):
        g.binomial([3], counts=[1.0, 2.0], probs=0.5)
    np.testing.assert_array_equal(g.state.numpy(), state)  # a refused call draws nothing


def test_stateless_shuffle_matches_tensorflow_where_it_is_defined():
    rtf = pytest.importorskip("tensorflow")
    for tf in (rtf, gtf):
        x = tf.reshape(tf.range(6), [3, 2])
        out = tf.random.experimental.stateless_shuffle(x, seed=[1, 2]).numpy()
        assert sorted(out[:, 0].tolist()) == [0, 2, 4]
    assert rtf.random.Generator.from_seed(1).binomial([2, 3], [1.0, 2.0, 3.0], 0.5).shape == (2, 3)


def test_integer_uniform_draws_the_shape_asked_for():
    dtype = "int32"
    eager = gtf.random.uniform([3, 4], minval=0, maxval=10, dtype=dtype)
    bounds = gtf.random.uniform([5], gtf.constant(2, dtype), gtf.constant(6, dtype), dtype=dtype)
    traced = gtf.function(lambda: gtf.random.uniform([2, 3], 1, 4, dtype=dtype))()
    assert (eager.shape, bounds.shape, traced.shape) == ((3, 4), (5,), (2, 3))
    assert eager.dtype == np.dtype(dtype)
    draws = np.asarray(bounds)
    assert draws.min() >= 2 and draws.max() <= 5


def test_integer_uniform_empty_range_is_an_invalid_argument():
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] "):
        gtf.random.uniform([3], 5, 3, dtype=gtf.int32)
