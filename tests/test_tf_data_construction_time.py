"""What a ``tf.data`` step fixes when it is built, as TensorFlow's trace at ``map()`` fixes it:
the Python values its function reads (closures, module globals), not the Variables it reads;
``tf.data.experimental.assert_cardinality``'s stated count and its check when read; and ``map``'s
check that a function gradkit could not trace gives every element one structure and dtype.

Each behaviour is checked against a hand-derived expectation, and against TensorFlow 2.21 where
it is installed."""

# The loop variables these functions read after their loop moves on are what the tests are about.
# ruff: noqa: B023

import functools
import sys

import numpy as np
import pytest

import gradkit.tf as gtf

_SCALE = 2  # a module global rebound after a map() is built (see _scale_by_module_global)


def _scale_by_module_global(v):
    return v * _SCALE


def _ints(ds):
    return [np.asarray(x).tolist() for x in ds.as_numpy_iterator()]


# -- 1. the Python values a function reads are those of the call that builds the step -----------


def _per_class(tf):
    x = np.arange(7, dtype=np.float32)
    y = np.array([0, 1, 2, 0, 1, 2, 2], np.int32)
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    per_class = [ds.filter(lambda a, b: tf.equal(b, c)) for c in range(3)]
    return [[int(b) for _, b in d] for d in per_class]


def _map_per_factor(tf):
    return [_ints(tf.data.Dataset.range(3).map(lambda v: v * k)) for k in (1, 10, 100)]


def _rebound_after_map(tf):
    scale = 2
    d = tf.data.Dataset.range(3).map(lambda v: v * scale)
    scale = 5  # noqa: F841  (rebound after map(): the dataset keeps 2)
    return _ints(d)


def _take_while_per_limit(tf):
    return [_ints(tf.data.Dataset.range(6).take_while(lambda v: v < limit)) for limit in (1, 3, 5)]


def _flat_map_per_count(tf):
    made = [tf.data.Dataset.range(2).flat_map(lambda v: tf.data.Dataset.from_tensors(v).repeat(n)) for n in (1, 2, 3)]
    return [_ints(d) for d in made]


def _interleave_per_offset(tf):
    made = [
        tf.data.Dataset.range(2).interleave(
            lambda v: tf.data.Dataset.range(2).map(lambda w: w + v * 10 + off), cycle_length=2
        )
        for off in (0, 100)
    ]
    return [_ints(d) for d in made]


def _batches_per_factor(tf):
    # the last batch is smaller: the frozen function must still take elements of any size
    return [_ints(tf.data.Dataset.range(5).batch(2).map(lambda b: b * k)) for k in (1, 3)]


def _partial_per_factor(tf):
    made = []
    for k in (2, 7):
        made.append(tf.data.Dataset.range(3).map(functools.partial(lambda v, offset: v * k + offset, offset=1)))
    return [_ints(d) for d in made]


_CLOSURE_CASES = {
    "filter per class": (_per_class, [[0, 0], [1, 1], [2, 2, 2]]),
    "map per factor": (_map_per_factor, [[0, 1, 2], [0, 10, 20], [0, 100, 200]]),
    "rebound after map": (_rebound_after_map, [0, 2, 4]),
    "take_while per limit": (_take_while_per_limit, [[0], [0, 1, 2], [0, 1, 2, 3, 4]]),
    "flat_map per count": (_flat_map_per_count, [[0, 1], [0, 0, 1, 1], [0, 0, 0, 1, 1, 1]]),
    "interleave per offset": (_interleave_per_offset, [[0, 10, 1, 11], [100, 110, 101, 111]]),
    "batches per factor": (_batches_per_factor, [[[0, 1], [2, 3], [4]], [[0, 3], [6, 9], [12]]]),
    "partial per factor": (_partial_per_factor, [[1, 3, 5], [1, 8, 15]]),
}


@pytest.mark.parametrize("case", list(_CLOSURE_CASES))
def test_closure_values_are_fixed_when_the_step_is_built(case):
    make, expected = _CLOSURE_CASES[case]
    assert make(gtf) == expected


@pytest.mark.parametrize("case", list(_CLOSURE_CASES))
def test_closure_values_match_tensorflow(case):
    rtf = pytest.importorskip("tensorflow")
    make, _ = _CLOSURE_CASES[case]
    assert make(gtf) == make(rtf)


def _module_global_rebound(tf, monkeypatch):
    d = tf.data.Dataset.range(3).map(_scale_by_module_global)
    monkeypatch.setattr(sys.modules[__name__], "_SCALE", 5)  # after map(): the dataset keeps 2
    try:
        return _ints(d)
    finally:
        monkeypatch.undo()


def test_a_module_global_is_read_as_it_was_when_map_was_called(monkeypatch):
    assert _module_global_rebound(gtf, monkeypatch) == [0, 2, 4]
    assert _SCALE == 2


def test_a_module_global_matches_tensorflow(monkeypatch):
    rtf = pytest.importorskip("tensorflow")
    assert _module_global_rebound(gtf, monkeypatch) == _module_global_rebound(rtf, monkeypatch)


def _variable_assigned_after_map(tf):
    v = tf.Variable(2.0)
    d = tf.data.Dataset.from_tensor_slices(np.array([1.0, 2.0], np.float32)).map(lambda x: x * v)
    v.assign(3.0)  # a captured Variable is read when the pipeline runs, in TensorFlow too
    return [float(x) for x in d]


def test_a_variable_is_read_when_the_function_runs():
    assert _variable_assigned_after_map(gtf) == [3.0, 6.0]


def test_a_variable_read_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    assert _variable_assigned_after_map(gtf) == _variable_assigned_after_map(rtf)


def test_a_closure_name_the_function_assigns_stays_live():
    count = 0

    def counted(v):
        nonlocal count
        count += 1
        return v

    assert _ints(gtf.data.Dataset.range(3).map(counted)) == [0, 1, 2]
    assert count == 3  # gradkit runs the function per element, and its nonlocal writes are kept


def test_a_name_assigned_only_after_map_is_unbound_when_the_function_runs():
    def build():
        d = gtf.data.Dataset.range(2).map(lambda v: v + later)
        later = 1  # noqa: F841  (after map(): TensorFlow's trace would not see it either)
        return d

    with pytest.raises(NameError, match="later"):
        _ints(build())


def test_defaults_and_names_of_the_function_are_kept():
    def shift(v, *, by=10):
        return v + by

    d = gtf.data.Dataset.range(2).map(shift)
    assert _ints(d) == [10, 11]
    assert d._func.__name__ == "shift" and d._func.__qualname__ == shift.__qualname__
    assert d._func.__kwdefaults__ == {"by": 10}


# -- 2. tf.data.experimental.assert_cardinality -------------------------------------------------


def _asserted(tf, source, expected):
    d = tf.data.Dataset.range(source).filter(lambda x: True)  # cardinality unknown before the assertion
    return d.apply(tf.data.experimental.assert_cardinality(expected))


def _read(d):
    """``(elements read, (error class name, TensorFlow's sentence) or None)``."""
    got = []
    try:
        for x in d:
            got.append(np.asarray(x).tolist())
    except Exception as error:  # noqa: BLE001  (the parity tests compare what each raises)
        text = str(error)
        sentence = text[text.index("Input dataset") :].split(".")[0] + "."
        return got, (isinstance(error, _failed_precondition(d)), sentence)
    return got, None


def _failed_precondition(d):
    rtf = sys.modules.get("tensorflow")
    if rtf is not None and type(d).__module__.startswith("tensorflow"):
        return rtf.errors.FailedPreconditionError
    return gtf.errors.FailedPreconditionError


_CARDINALITY_CASES = {
    # (source size, expected) -> (elements given, TensorFlow's sentence or None)
    (5, 5): ([0, 1, 2, 3, 4], None),
    (5, 3): ([0, 1, 2], "Input dataset was expected to contain 3 elements but contained at least 4 elements."),
    (5, 7): (
        [0, 1, 2, 3, 4],
        "Input dataset was expected to contain 7 elements but contained only 5 elements.",
    ),
    (2, 1): ([0], "Input dataset was expected to contain 1 element but contained at least 2 elements."),
    (1, 2): ([0], "Input dataset was expected to contain 2 elements but contained only 1 element."),
    (3, 0): ([], "Input dataset was expected to contain 0 elements but contained at least 1 element."),
    (3, -1): (
        [0, 1, 2],
        "Input dataset was expected to contain an infinite number of elements but contained only 3 elements.",
    ),
    (2, -2): ([], "Input dataset was expected to contain -2 elements but contained at least 1 element."),
    (0, -2): ([], "Input dataset was expected to contain -2 elements but contained only 0 elements."),
}


@pytest.mark.parametrize("case", list(_CARDINALITY_CASES))
def test_assert_cardinality_states_the_count_and_checks_it(case):
    source, expected = case
    elements, sentence = _CARDINALITY_CASES[case]
    d = _asserted(gtf, source, expected)
    assert int(d.cardinality()) == expected
    assert _read(d) == (elements, None if sentence is None else (True, sentence))
    if expected >= 0:
        assert len(d) == expected


@pytest.mark.parametrize("case", list(_CARDINALITY_CASES))
def test_assert_cardinality_matches_tensorflow(case):
    rtf = pytest.importorskip("tensorflow")
    source, expected = case
    ours, theirs = _asserted(gtf, source, expected), _asserted(rtf, source, expected)
    assert int(ours.cardinality()) == int(theirs.cardinality())
    assert _read(ours) == _read(theirs)


def _after_assertion(tf):
    ac = tf.data.experimental.assert_cardinality
    base = tf.data.Dataset.range(5)
    taken = base.apply(ac(3)).take(2)  # never reads past the stated count: no error
    batched = base.apply(ac(3)).batch(2)  # the second batch reads the 4th element
    repeated = tf.data.Dataset.range(3).repeat().apply(ac(4))
    return [(int(d.cardinality()), _read(d)[0], _read(d)[1] is not None) for d in (taken, batched, repeated)]


def test_steps_after_assert_cardinality():
    assert _after_assertion(gtf) == [(2, [0, 1], False), (2, [[0, 1]], True), (4, [0, 1, 2, 0], True)]


def test_steps_after_assert_cardinality_match_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    assert _after_assertion(gtf) == _after_assertion(rtf)


def test_assert_cardinality_refuses_a_count_that_is_not_an_integer():
    with pytest.raises(TypeError, match=r"\[gradkit\] .*assert_cardinality.*2\.5.*integer"):
        gtf.data.Dataset.range(3).apply(gtf.data.experimental.assert_cardinality(2.5))


def test_assert_cardinality_error_is_a_gradkit_error_with_a_way_out():
    with pytest.raises(gtf.errors.FailedPreconditionError, match=r"^\[gradkit\] Input dataset .*take\(n\)"):
        _ints(_asserted(gtf, 5, 3))


# -- 3. map's results must fit one element_spec ---------------------------------------------------


def _dtype_by_value(x):
    if x > 2:  # a Python if on a tensor's value: gradkit cannot trace this
        return x
    return 1.0


def _structure_by_value(x):
    if x > 2:
        return (x, x)
    return x


def _same_dtype_by_value(x):
    if x > 1:
        return x * 10
    return x


@pytest.mark.parametrize("ask_spec_first", [False, True])
@pytest.mark.parametrize("func", [_dtype_by_value, _structure_by_value])
def test_map_refuses_a_result_that_does_not_fit_the_element_spec(func, ask_spec_first):
    d = gtf.data.Dataset.range(4).map(func)
    if ask_spec_first:
        assert isinstance(d.element_spec, gtf.TensorSpec)  # from the first element: one tensor
    got = []
    with pytest.raises(TypeError, match=r"\[gradkit\] tf\.data\.Dataset\.map's function returned .* element 3, .*"):
        for x in d:
            got.append(x)
    assert len(got) == 3  # elements 0, 1 and 2 fit (the first one's structure and dtype)


@pytest.mark.parametrize("func", [_dtype_by_value, _structure_by_value])
def test_tensorflow_refuses_those_functions_too(func):
    rtf = pytest.importorskip("tensorflow")
    with pytest.raises(TypeError):
        list(rtf.data.Dataset.range(4).map(func))


def test_an_untraceable_function_with_one_structure_and_dtype_runs():
    assert _ints(gtf.data.Dataset.range(4).map(_same_dtype_by_value)) == [0, 1, 20, 30]


def test_an_untraceable_function_with_one_structure_and_dtype_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    assert _ints(gtf.data.Dataset.range(4).map(_same_dtype_by_value)) == _ints(
        rtf.data.Dataset.range(4).map(_same_dtype_by_value)
    )


def test_results_of_other_sizes_fit_a_spec_whose_dimension_is_unknown():
    d = gtf.data.Dataset.range(5).batch(2).map(lambda b: b + 1)
    assert d.element_spec.shape == (None,)
    assert _ints(d) == [[1, 2], [3, 4], [5]]
