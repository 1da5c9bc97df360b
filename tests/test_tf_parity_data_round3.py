"""tf.data against TensorFlow 2.21, third round: dicts of one set of keys in another order (or an
OrderedDict) are one structure, ``unique`` of int32/int64 elements of any shape, a ``tf.function``
that returns a dataset, ``sample_from_datasets`` of one dataset left, ``prefetch``'s buffer size,
``Options.experimental_deterministic`` and the merge of the inputs' options, ``set_shape`` in a ``py_function`` map, ``rebatch`` of a
list of sizes, and ``group_by_window``, ``ignore_errors`` and the ``tf.data.experimental``
functions (``from_list``, ``get_structure``, ``enumerate_dataset``, ``map_and_batch``,
``shuffle_and_repeat``). Values, element_specs, cardinalities and errors are compared; where
TensorFlow is not installed the comparisons are skipped and gradkit's own results still checked."""

import collections

import numpy as np
import pytest

import gradkit.tf as gtf


def _tf():
    return pytest.importorskip("tensorflow")


def _plain(value):
    """An element as comparable Python values, dict keys in their order."""
    if isinstance(value, dict):
        return [(k, _plain(v)) for k, v in value.items()]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    value = value.numpy() if hasattr(value, "numpy") else value
    return np.asarray(value).tolist()


def _elements(ds):
    return [_plain(e) for e in ds]


def _spec(spec):
    """An element_spec as (shape, dtype kind) per component, in its structure (int64 and int32 are
    one kind: gradkit's int64 is int32 unless jax_enable_x64 is on)."""
    if isinstance(spec, dict):
        return [(k, _spec(v)) for k, v in spec.items()]
    if isinstance(spec, tuple):
        return tuple(_spec(v) for v in spec)
    shape = spec.shape
    shape = None if getattr(shape, "rank", 0) is None else tuple(shape)
    dtype = np.dtype(getattr(spec.dtype, "as_numpy_dtype", spec.dtype))
    return shape, dtype.kind


def _i64(tf):
    """tf.int64 as each library has it (gradkit's is int32 unless jax_enable_x64 is on, and asking
    for int64 there warns)."""
    return gtf.as_dtype(gtf.data.Dataset.range(1).element_spec.dtype) if tf is gtf else tf.int64


def _same(program):
    """``program(tf)`` for TensorFlow and gradkit: the elements (in key order), the element_spec and
    the cardinality must agree; gradkit's result is returned."""
    tf_real = _tf()
    results = []
    for tf in (tf_real, gtf):
        ds = program(tf)
        results.append((_elements(ds), _spec(ds.element_spec), int(ds.cardinality())))
    assert results[1] == results[0]
    return results[1]


# -- dicts: one structure whatever their key order -------------------------------------------------


def test_reduce_accepts_a_state_rebuilt_in_another_key_order():
    def program(tf):
        ds = tf.data.Dataset.from_tensor_slices({"x": [1.0, 2.0], "y": [3.0, 4.0]})
        out = ds.reduce(
            {"y": tf.constant(0.0), "x": tf.constant(0.0)}, lambda s, e: {"x": s["x"] + e["x"], "y": s["y"] + e["y"]}
        )
        return [(k, float(v)) for k, v in out.items()]

    got = program(gtf)
    assert got == [("y", 7.0), ("x", 3.0)]  # the initial state's key order
    assert got == program(_tf())


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.data.Dataset.from_tensors({"a": 1, "b": 2.0}).concatenate(
            tf.data.Dataset.from_tensors({"b": 3.0, "a": 4})
        ),
        lambda tf: tf.data.Dataset.from_tensors({"b": 1, "a": 2.0}).concatenate(
            tf.data.Dataset.from_tensors({"a": 3.0, "b": 4})
        ),
        lambda tf: tf.data.Dataset.from_tensors({"a": 1, "b": 2.0}).concatenate(
            tf.data.Dataset.from_tensors(collections.OrderedDict([("a", 4), ("b", 3.0)]))
        ),
        lambda tf: tf.data.Dataset.zip({"a": tf.data.Dataset.range(2), "b": tf.data.Dataset.range(2)}).concatenate(
            tf.data.Dataset.zip({"b": tf.data.Dataset.range(2), "a": tf.data.Dataset.range(2)})
        ),
        lambda tf: tf.data.Dataset.choose_from_datasets(
            [tf.data.Dataset.from_tensors({"b": 1, "a": 2.0}), tf.data.Dataset.from_tensors({"a": 3.0, "b": 4})],
            tf.data.Dataset.range(2),
        ),
        lambda tf: tf.data.Dataset.range(2).map(lambda x: {"b": x, "a": x * 2}),
    ],
    ids=["concatenate", "concatenate-ba-first", "dict-and-OrderedDict", "zips", "choose", "map"],
)
def test_dicts_of_one_key_set_are_one_structure_in_the_first_datasets_key_order(program):
    _same(program)


def test_sample_from_datasets_of_differently_ordered_dicts():
    def program(tf):
        D = tf.data.Dataset
        ds = D.sample_from_datasets([D.from_tensors({"b": 1, "a": 2.0}), D.from_tensors({"a": 3.0, "b": 4})], seed=1)
        return _spec(ds.element_spec), sorted(_plain(e)[1][1] for e in ds)  # each element's "a"

    assert program(gtf) == program(_tf())


def test_concatenate_of_another_structure_names_both_specs_on_one_line():
    D = gtf.data.Dataset
    with pytest.raises(TypeError, match=r"\[gradkit\] Incompatible dataset elements: \{'a'.*\} vs\. \{'b'") as info:
        D.from_tensors({"a": 1}).concatenate(D.from_tensors({"b": 1}))
    assert "\n" not in str(info.value)
    with pytest.raises(TypeError, match=r"\[gradkit\] Incompatible dataset elements: P\(x=.*\) vs\. \(Tensor"):
        P = collections.namedtuple("P", "x y")
        D.from_tensors(P(1, 2.0)).concatenate(D.from_tensors((3, 4.0)))


# -- unique ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.data.Dataset.from_tensor_slices(np.array([[1, 2], [1, 2], [3, 4]], np.int32)).unique(),
        lambda tf: tf.data.Dataset.from_tensor_slices(np.array([[[1, 2]], [[1, 2]], [[3, 4]]], np.int64)).unique(),
        lambda tf: tf.data.Dataset.from_tensor_slices((np.array([1, 1, 2]),)).unique(),
        lambda tf: tf.data.Dataset.from_generator(
            lambda: iter([[1], [1, 2], [1]]), output_signature=tf.TensorSpec((None,), tf.int32)
        ).unique(),
    ],
    ids=["int32-vectors", "int64-matrices", "one-tuple", "unknown-length"],
)
def test_unique_takes_one_int32_or_int64_component_of_any_shape(program):
    _same(program)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.uint32, np.float32])
def test_unique_refuses_other_dtypes(dtype):
    tf_real = _tf()
    with pytest.raises(TypeError):
        tf_real.data.Dataset.from_tensor_slices(np.array([1, 1, 2], dtype)).unique()
    with pytest.raises(TypeError, match=r"\[gradkit\] `tf.data.Dataset.unique` does not support type .*tf.cast"):
        gtf.data.Dataset.from_tensor_slices(np.array([1, 1, 2], dtype)).unique()


def test_unique_refuses_two_components():
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] .*single component"):
        gtf.data.Dataset.from_tensor_slices((np.array([1, 1]), np.array([1, 1]))).unique()


# -- a tf.function that returns a dataset -----------------------------------------------------------


def test_a_tf_function_returns_a_dataset():
    f = gtf.function(lambda: gtf.data.Dataset.range(3))
    assert [int(x) for x in f()] == [0, 1, 2]
    assert [int(x) for x in f()] == [0, 1, 2]  # a later call (no retrace)
    g = gtf.function(lambda x: ({"ds": gtf.data.Dataset.range(2).map(lambda v: v * 3)}, x * 2.0))
    out, doubled = g(gtf.constant(2.0))
    assert [int(v) for v in out["ds"]] == [0, 3] and float(doubled) == 4.0
    out, doubled = g(gtf.constant(5.0))
    assert [int(v) for v in out["ds"]] == [0, 3] and float(doubled) == 10.0
    tf_real = _tf()
    assert [int(x) for x in tf_real.function(lambda: tf_real.data.Dataset.range(3))()] == [0, 1, 2]


def test_a_tf_function_returning_a_dataset_keeps_its_dicts_key_order():
    tf_real = _tf()
    for tf in (tf_real, gtf):
        f = tf.function(lambda tf=tf: {"z": tf.data.Dataset.range(2), "a": tf.constant(1.0)})
        assert list(f()) == ["z", "a"]
        g = tf.function(lambda tf=tf: {"z": tf.constant(2.0), "a": tf.constant(1.0)})
        assert list(g()) == ["z", "a"]


def test_a_tf_function_building_a_dataset_from_its_tensor_argument_is_refused_clearly():
    f = gtf.function(lambda x: gtf.data.Dataset.from_tensor_slices(x))
    with pytest.raises(TypeError, match=r"\[gradkit\] .*traced by a tf.function"):
        f(gtf.constant([1, 2]))


# -- smaller ones ----------------------------------------------------------------------------------


def test_choose_from_datasets_takes_tf_int64_choices():
    D = gtf.data.Dataset
    choices = D.from_tensor_slices(np.array([0, 1], np.int64))  # gradkit's int64 (int32 without x64)
    assert [int(x) for x in D.choose_from_datasets([D.range(3), D.range(10, 13)], choices)] == [0, 10]
    with pytest.raises(TypeError, match=r"\[gradkit\] Invalid `choice_dataset`.*scalar tf.int64"):
        D.choose_from_datasets([D.range(3)], D.from_tensor_slices(np.array([0], np.int8)))


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(4)], seed=1),
        lambda tf: tf.data.Dataset.sample_from_datasets(
            [tf.data.Dataset.range(4), tf.data.Dataset.range(10, 13)], weights=[0.0, 1.0], seed=1
        ),
        lambda tf: tf.data.Dataset.sample_from_datasets(
            [tf.data.Dataset.range(4), tf.data.Dataset.range(10, 13), tf.data.Dataset.range(5)],
            weights=np.array([0.0, 0.0, 2.0]),
        ),
        lambda tf: tf.data.Dataset.sample_from_datasets(
            [tf.data.Dataset.range(4), tf.data.Dataset.range(10, 13)], weights=[0.0, 0.0]
        ),
        lambda tf: tf.data.Dataset.sample_from_datasets(
            [tf.data.Dataset.from_tensors({"b": 1, "a": 2.0}), tf.data.Dataset.from_tensors({"a": 3.0, "b": 4})],
            weights=[0.0, 1.0],
        ),
    ],
    ids=["one-dataset", "weights-0-1", "weights-0-0-2", "all-zero", "dict-left"],
)
def test_sample_from_datasets_with_one_dataset_left_is_that_dataset(program):
    _same(program)


def test_sample_from_datasets_of_infinite_single_dataset():
    assert int(gtf.data.Dataset.sample_from_datasets([gtf.data.Dataset.range(4).repeat()]).cardinality()) == -1


def test_options_experimental_deterministic_is_deterministic():
    tf_real = _tf()
    for tf in (tf_real, gtf):
        o = tf.data.Options()
        o.experimental_deterministic = False
        assert o.deterministic is False and o.experimental_deterministic is False
        assert tf.data.Dataset.range(3).with_options(o).options().deterministic is False
        o.deterministic = True
        assert o.experimental_deterministic is True


def _merged_options(tf):
    off, on = tf.data.Options(), tf.data.Options()
    off.deterministic = False
    on.deterministic, on.experimental_slack = True, True
    a, b, c = (tf.data.Dataset.range(3).with_options(o) for o in (off, tf.data.Options(), on))
    return [
        tf.data.Dataset.zip((b, a)).options().deterministic,
        b.concatenate(a).options().deterministic,
        tf.data.Dataset.zip((a, c)).options().deterministic,
        tf.data.Dataset.zip((c, a)).options().deterministic,
        tf.data.Dataset.zip((c, a)).options().experimental_slack,
        tf.data.Dataset.choose_from_datasets([b, a], tf.data.Dataset.range(2).repeat()).options().deterministic,
    ]


def test_options_of_every_input_are_merged_in_order():
    # A later input's set options win; an unset one leaves the earlier input's.
    assert _merged_options(gtf) == [False, False, True, False, True, False]
    assert _merged_options(gtf) == _merged_options(_tf())


@pytest.mark.parametrize("size", [-5, -2])
def test_prefetch_refuses_a_buffer_size_below_minus_one(size):
    tf_real = _tf()
    with pytest.raises(tf_real.errors.InvalidArgumentError):
        tf_real.data.Dataset.range(3).prefetch(size)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] .*buffer_size=.*-1 \(tf.data.AUTOTUNE\)"):
        gtf.data.Dataset.range(3).prefetch(size)


@pytest.mark.parametrize("size", [-1, 0, 2])
def test_prefetch_takes_autotune_and_nonnegative_sizes(size):
    _same(lambda tf: tf.data.Dataset.range(3).prefetch(size))


def test_set_shape_of_a_py_function_result_gives_the_element_spec():
    def program(tf):
        def g(x):
            y = tf.py_function(lambda v: np.ones((2,), np.float32) * v.numpy(), [x], tf.float32)
            y.set_shape([2])
            return y

        return tf.data.Dataset.range(3).map(g)

    _elements_, spec, _ = _same(program)
    assert spec == ((2,), "f")


def test_ensure_shape_of_a_py_function_result_gives_the_element_spec():
    def program(tf):
        def g(x):
            return tf.ensure_shape(
                tf.py_function(lambda v: np.ones((2,), np.float32) * v.numpy(), [x], tf.float32), [2]
            )

        return tf.data.Dataset.range(3).map(g)

    _elements_, spec, _ = _same(program)
    assert spec == ((2,), "f")


def test_ensure_shape_that_does_not_fit_a_py_function_result_is_refused():
    def g(x):
        return gtf.ensure_shape(gtf.py_function(lambda v: np.ones((3,), np.float32), [x], gtf.float32), [2])

    with pytest.raises(ValueError, match=r"\[gradkit\] tf.ensure_shape"):
        list(gtf.data.Dataset.range(3).map(g))


def test_set_shape_that_does_not_fit_a_py_function_result_is_refused():
    def g(x):
        y = gtf.py_function(lambda v: np.ones((3,), np.float32), [x], gtf.float32)
        y.set_shape([2])
        return y

    with pytest.raises(ValueError, match=r"\[gradkit\] set_shape\(\[2\]\)"):
        gtf.data.Dataset.range(3).map(g).element_spec  # noqa: B018


@pytest.mark.parametrize(
    ("sizes", "drop"),
    [([2, 2], True), ([2, 3], True), ([2, 2], False), (np.array([2, 2]), True), (2, True)],
)
def test_rebatch_element_spec(sizes, drop):
    _same(lambda tf: tf.data.Dataset.range(10).batch(5).rebatch(sizes, drop_remainder=drop))


def test_rebatch_takes_a_tensor_of_sizes():
    _same(lambda tf: tf.data.Dataset.range(10).batch(5).rebatch(tf.constant([2, 2], _i64(tf)), drop_remainder=True))


# -- group_by_window, ignore_errors, tf.data.experimental -----------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.data.Dataset.range(10).group_by_window(lambda x: x % 3, lambda k, w: w.batch(10), window_size=3),
        # the groups left at the end come out in the order of their keys
        lambda tf: tf.data.Dataset.from_tensor_slices(np.array([5, 1, 3, 7, 2, 9])).group_by_window(
            lambda x: tf.cast(tf.where(x < 5, 9 - x, x % 2), _i64(tf)), lambda k, w: w.batch(10), window_size=5
        ),
        lambda tf: tf.data.Dataset.range(10).group_by_window(
            lambda x: x % 3, lambda k, w: tf.data.Dataset.from_tensors(k), window_size=3
        ),
        lambda tf: tf.data.Dataset.range(10).group_by_window(
            lambda x: x % 2, lambda k, w: w.batch(10), window_size_func=lambda k: k + 2
        ),
        lambda tf: tf.data.Dataset.zip(tf.data.Dataset.range(6), tf.data.Dataset.range(6)).group_by_window(
            lambda a, b: a % 2, lambda k, w: w.map(lambda a, b: a + b).batch(3), window_size=2
        ),
        lambda tf: tf.data.Dataset.from_tensor_slices(
            {"v": np.arange(6.0).astype(np.float32), "k": np.arange(6)}
        ).group_by_window(
            lambda d: tf.cast(d["k"] % 2, _i64(tf)), lambda k, w: w.batch(2, drop_remainder=True), window_size=2
        ),
        lambda tf: tf.data.Dataset.range(6).apply(
            tf.data.experimental.group_by_window(lambda x: x % 2, lambda k, w: w.batch(3), 3)
        ),
    ],
    ids=["window-size", "flush-order", "key", "window-size-func", "tuple", "dict", "experimental"],
)
def test_group_by_window_matches_tensorflow(program):
    _same(program)


def test_group_by_window_errors():
    tf_real = _tf()
    for tf in (tf_real, gtf):
        D = tf.data.Dataset
        with pytest.raises(ValueError, match="Either the `window_size` argument or the `window_size_func`"):
            D.range(4).group_by_window(lambda x: x % 2, lambda k, w: w.batch(3))
        with pytest.raises(ValueError, match="Either the `window_size` argument or the `window_size_func`"):
            D.range(4).group_by_window(lambda x: x % 2, lambda k, w: w, window_size=2, window_size_func=lambda k: k)
    D = gtf.data.Dataset
    with pytest.raises(ValueError, match=r"\[gradkit\] Invalid `key_func`.*tf.cast"):
        list(D.range(4).group_by_window(lambda x: gtf.stack([x, x]), lambda k, w: w.batch(3), window_size=3))
    with pytest.raises(TypeError, match=r"\[gradkit\] Invalid `reduce_func`.*window.batch"):
        list(D.range(4).group_by_window(lambda x: x % 2, lambda k, w: k, window_size=3))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] Window size must be greater than zero"):
        list(D.range(4).group_by_window(lambda x: x % 2, lambda k, w: w.batch(3), window_size=0))


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: (
            tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0])
            .map(lambda x: tf.debugging.check_numerics(1.0 / x, "m"))
            .ignore_errors()
        ),
        lambda tf: (
            tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0, 4.0])
            .map(lambda x: tf.debugging.check_numerics(1.0 / x, "m"))
            .apply(tf.data.experimental.ignore_errors())
            .batch(2)
        ),
        lambda tf: (
            tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0])
            .filter(lambda x: tf.reduce_all(tf.debugging.check_numerics(1.0 / x, "m") > 0))
            .ignore_errors()
        ),
        lambda tf: tf.data.Dataset.range(3).ignore_errors(),
    ],
    ids=["map", "experimental-then-batch", "filter", "no-errors"],
)
def test_ignore_errors_leaves_out_the_failed_elements(program):
    _same(program)


def test_without_ignore_errors_the_error_is_raised():
    ds = gtf.data.Dataset.from_tensor_slices([1.0, 0.0]).map(lambda x: gtf.debugging.check_numerics(1.0 / x, "m"))
    with pytest.raises(gtf.errors.InvalidArgumentError):
        list(ds)


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.data.experimental.from_list([(1, 2.0), (2, 3.0)]),
        lambda tf: tf.data.experimental.from_list([[1], [1, 2]]),
        lambda tf: tf.data.experimental.from_list([{"b": 1, "a": 2.0}, {"a": 3.0, "b": 4}]),
        lambda tf: tf.data.Dataset.range(10, 12).apply(tf.data.experimental.enumerate_dataset(5)),
        lambda tf: tf.data.Dataset.range(5).apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 2)),
        lambda tf: tf.data.Dataset.range(5).apply(
            tf.data.experimental.map_and_batch(lambda x: x * 2, 2, drop_remainder=True)
        ),
    ],
    ids=["from_list", "from_list-ragged", "from_list-dicts", "enumerate_dataset", "map_and_batch", "drop"],
)
def test_experimental_functions_match_tensorflow(program):
    _same(program)


def test_from_list_errors():
    tf_real = _tf()
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError, match="`elements` should not be empty"):
            tf.data.experimental.from_list([])
        with pytest.raises(ValueError, match="don't have the same nested structure"):
            tf.data.experimental.from_list([(1, 2), (1,)])


def test_shuffle_and_repeat():
    tf_real = _tf()
    for tf in (tf_real, gtf):
        ds = tf.data.Dataset.range(4).apply(tf.data.experimental.shuffle_and_repeat(4, 2, seed=1))
        assert sorted(int(v) for v in ds) == [0, 0, 1, 1, 2, 2, 3, 3]
        assert int(tf.data.Dataset.range(4).apply(tf.data.experimental.shuffle_and_repeat(4)).cardinality()) == -1


def test_get_structure():
    tf_real = _tf()
    for tf in (tf_real, gtf):
        ds = tf.data.Dataset.from_tensor_slices(({"a": [1.0, 2.0]}, [[1], [2]]))
        structure = tf.data.experimental.get_structure(ds)
        assert _spec(structure) == _spec(ds.element_spec) == ([("a", ((), "f"))], ((1,), "i"))
        assert _spec(tf.data.experimental.get_structure(iter(ds))) == _spec(structure)
        with pytest.raises(TypeError, match="Invalid `dataset_or_iterator`"):
            tf.data.experimental.get_structure([1])


# -- Dataset.range of a tensor traced by tf.function --------------------------------------------


@pytest.mark.parametrize(
    "make,argument",
    [
        (lambda tf, n: tf.data.Dataset.range(n), "stop"),
        (lambda tf, n: tf.data.Dataset.range(1, n), "stop"),
        (lambda tf, n: tf.data.Dataset.range(0, 8, n), "step"),
    ],
)
def test_range_of_a_traced_tensor_says_to_build_the_dataset_outside_the_function(make, argument):
    @gtf.function
    def mk(n):
        return make(gtf, n).map(lambda x: x * x)

    with pytest.raises(
        TypeError,
        match=rf"\[gradkit\] tf\.data\.Dataset\.range got {argument} as a tensor traced by a tf\.function.*"
        rf"Build the dataset outside the tf\.function.*Python int",
    ):
        mk(gtf.constant(4))
    with pytest.raises(gtf.errors.OperatorNotAllowedInGraphError):
        mk(gtf.constant(3))


def test_range_inside_tf_function_of_python_ints_and_of_outside_values():
    tf_real = _tf()
    for tf in (tf_real, gtf):

        @tf.function
        def mk(n, tf=tf):
            return tf.data.Dataset.range(n).map(lambda x: x * x)

        assert [int(v) for v in mk(4)] == [0, 1, 4, 9]
        squares = mk(3)
        assert [int(v) for v in squares] == [0, 1, 4]
