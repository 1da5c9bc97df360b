"""tf.function's get_concrete_function and experimental_get_tracing_count: the traced signature,
how the concrete function is called (structured, and with its tensors alone), its outputs'
specs, and its errors, against real TensorFlow; values and gradients through it against NumPy."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _tf():
    return pytest.importorskip("tensorflow")


def _scaled(x, n, scale=2.0):
    return {"a": x * scale + n, "n": n}


def _spec_tuple(spec):
    """A TensorSpec as (shape with None, dtype name, name), for either library."""
    if spec.shape is None:
        shape = None
    else:
        shape = tuple(None if d is None or d == -1 else int(d) for d in spec.shape)
    return shape, np.dtype(getattr(spec.dtype, "as_numpy_dtype", spec.dtype)).name, spec.name


def _signature(lib, cf):
    args, kwargs = cf.structured_input_signature
    out = [_spec_tuple(a) if isinstance(a, lib.TensorSpec) else a for a in args]
    return out, kwargs


def _concrete(lib):
    return lib.function(_scaled).get_concrete_function(lib.TensorSpec([None], lib.float32), 3)


# -- without TensorFlow: values against NumPy ------------------------------------------------------


def test_structured_call_matches_numpy():
    cf = _concrete(gtf)
    x = np.array([1.0, -2.0, 0.5], np.float32)
    out = cf(gtf.constant(x), 3, 2.0)
    np.testing.assert_allclose(out["a"].numpy(), x * 2.0 + 3)
    assert int(out["n"].numpy()) == 3
    # By name, and a NumPy array converted to the spec's dtype.
    np.testing.assert_allclose(cf(x=x.astype(np.float64), n=3, scale=2.0)["a"].numpy(), x * 2.0 + 3)


def test_flat_call_with_the_tensors_alone():
    cf = _concrete(gtf)
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(cf(gtf.constant(x))["a"].numpy(), x * 2.0 + 3)
    np.testing.assert_allclose(cf(x=gtf.constant(x))["a"].numpy(), x * 2.0 + 3)


def test_signature_and_outputs_without_tensorflow():
    cf = _concrete(gtf)
    assert _signature(gtf, cf) == ([((None,), "float32", "x"), 3, 2.0], {})
    outputs = cf.structured_outputs
    assert _spec_tuple(outputs["a"]) == ((None,), "float32", None)
    assert _spec_tuple(outputs["n"]) == ((), "int32", None)
    assert tuple(cf.output_shapes["n"]) == ()
    assert np.dtype(cf.output_dtypes["a"]) == np.float32


def test_known_shapes_trace_once_at_get_concrete_function():
    f = gtf.function(lambda x: x * 2.0)
    assert f.experimental_get_tracing_count() == 0
    cf = f.get_concrete_function(gtf.TensorSpec([2, 3], gtf.float32))
    assert f.experimental_get_tracing_count() == 1
    assert _spec_tuple(cf.structured_outputs) == ((2, 3), "float32", None)
    out = cf(gtf.ones([2, 3]))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 2.0))
    assert f.experimental_get_tracing_count() == f.trace_count == 1  # the call reuses that trace


def test_gradient_through_a_concrete_function_with_a_variable():
    v = gtf.Variable(np.array([1.0, -2.0], np.float32))
    cf = gtf.function(lambda x: gtf.reduce_sum(x * v * v)).get_concrete_function(gtf.TensorSpec([2], gtf.float32))
    x = gtf.Variable(np.array([0.5, 3.0], np.float32))
    with gtf.GradientTape() as tape:
        y = cf(x)
    gx, gv = tape.gradient(y, [x, v])
    np.testing.assert_allclose(gx.numpy(), [1.0, 4.0])
    np.testing.assert_allclose(gv.numpy(), 2 * np.array([0.5, 3.0]) * np.array([1.0, -2.0]))


def test_concrete_function_builds_a_layer_as_tensorflow_traces_it():
    layer = gtf.keras.layers.Dense(2)
    cf = gtf.function(layer).get_concrete_function(gtf.TensorSpec([1, 3], gtf.float32))
    assert [tuple(w.shape) for w in layer.weights] == [(3, 2), (2,)]
    x = np.ones((4, 3), np.float32)  # another batch size: traced for it
    expected = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(cf(gtf.constant(x)).numpy(), expected, rtol=1e-6)


def test_nested_arguments_and_spec_names():
    f = gtf.function(lambda d: d["a"] + d["b"][0])
    cf = f.get_concrete_function({"a": gtf.TensorSpec([2]), "b": [gtf.TensorSpec([2])]})
    (spec,), _ = cf.structured_input_signature
    assert spec["a"].name == "d_a" and spec["b"][0].name == "d_b_0"
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(cf({"a": x, "b": [x]}).numpy(), 2 * x)
    np.testing.assert_allclose(cf(gtf.constant(x), gtf.constant(x)).numpy(), 2 * x)


def test_input_signature_is_the_default_signature():
    f = gtf.function(lambda x: x + 1.0, input_signature=[gtf.TensorSpec([None], gtf.float32)])
    cf = f.get_concrete_function()
    assert _spec_tuple(cf.structured_input_signature[0][0]) == ((None,), "float32", "x")
    np.testing.assert_allclose(cf(gtf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    with pytest.raises(TypeError, match=r"\[gradkit\]"):
        f.get_concrete_function(gtf.TensorSpec([None], gtf.float64))


def test_inside_tf_function_matches_eager():
    cf = gtf.function(lambda x: gtf.sin(x) * 3.0).get_concrete_function(gtf.TensorSpec([None], gtf.float32))
    outer = gtf.function(lambda x: cf(x) + 1.0)
    x = gtf.constant([0.1, 0.7, -2.0])
    np.testing.assert_allclose(outer(x).numpy(), np.sin(x.numpy()) * 3.0 + 1.0, rtol=1e-6)


BAD_CALLS = {
    "missing_defaulted": lambda lib, cf: cf(lib.ones([2]), 3),
    "other_literal": lambda lib, cf: cf(lib.ones([2]), 3, 5.0),
    "bool_for_int": lambda lib, cf: cf(lib.ones([2]), True, 2.0),
    "too_many": lambda lib, cf: cf(lib.ones([2]), 3, 2.0, 1),
    "unknown_keyword": lambda lib, cf: cf(lib.ones([2]), 3, 2.0, y=1),
    "rank": lambda lib, cf: cf(lib.constant(1.0), 3, 2.0),
    "dtype": lambda lib, cf: cf(lib.constant([1, 2]), 3, 2.0),
    "nothing": lambda lib, cf: cf(),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_calls_raise_type_errors(name):
    with pytest.raises(TypeError, match=r"\[gradkit\] Binding inputs to tf.function failed"):
        BAD_CALLS[name](gtf, _concrete(gtf))


def test_flat_call_of_another_dtype_is_a_value_error():
    with pytest.raises(ValueError, match=r"\[gradkit\].*expected to be a float32 tensor but is a int32"):
        _concrete(gtf)(gtf.constant([1, 2]))


def test_graph_attributes_say_what_to_use():
    with pytest.raises(AttributeError, match=r"\[gradkit\].*structured_outputs"):
        _concrete(gtf).graph  # noqa: B018


# -- against TensorFlow ----------------------------------------------------------------------------


def test_signature_and_outputs_match_tensorflow():
    tf = _tf()
    ours, theirs = _concrete(gtf), _concrete(tf)
    assert _signature(gtf, ours) == _signature(tf, theirs)
    for key in ("a", "n"):
        assert _spec_tuple(ours.structured_outputs[key])[:2] == _spec_tuple(theirs.structured_outputs[key])[:2]
        assert tuple(None if d == -1 else d for d in ours.output_shapes[key]) == tuple(
            theirs.output_shapes[key].as_list()
        )


CALLS = {
    "structured": lambda lib, cf: cf(lib.constant([1.0, 2.0]), 3, 2.0),
    "keywords": lambda lib, cf: cf(x=lib.constant([1.0, 2.0]), n=3, scale=2.0),
    "flat": lambda lib, cf: cf(lib.constant([1.0, 2.0, 4.0])),
    "flat_keyword": lambda lib, cf: cf(x=lib.constant([1.0])),
    "numpy64": lambda lib, cf: cf(np.array([1.0, 2.0]), 3, 2.0),
    "list_of_ints": lambda lib, cf: cf([1, 2], 3, 2.0),
    "literal_as_float": lambda lib, cf: cf(lib.constant([1.0]), 3.0, 2.0),
    "flat_other_shape": lambda lib, cf: cf(lib.ones([2, 2])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_accepted_calls_match_tensorflow(name):
    tf = _tf()
    ours = CALLS[name](gtf, _concrete(gtf))
    theirs = CALLS[name](tf, _concrete(tf))
    np.testing.assert_allclose(ours["a"].numpy(), theirs["a"].numpy())
    assert ours["a"].dtype == theirs["a"].dtype.as_numpy_dtype


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_refused_calls_match_tensorflow(name):
    tf = _tf()
    with pytest.raises(TypeError):
        BAD_CALLS[name](tf, _concrete(tf))


def test_tracing_count_matches_tensorflow():
    tf = _tf()
    counts = []
    for lib in (gtf, tf):
        f = lib.function(lambda x: x * 2.0)
        f.get_concrete_function(lib.TensorSpec([3], lib.float32))
        f(lib.ones([3]))
        f(lib.ones([4]))
        counts.append(f.experimental_get_tracing_count())
    assert counts[0] == counts[1] == 2


def _sine_dot(lib, v):
    def f(x):
        return lib.reduce_sum(lib.sin(x) * v)

    return f


def test_gradient_through_a_concrete_function_matches_tensorflow():
    tf = _tf()
    grads = []
    for lib in (gtf, tf):
        v = lib.Variable([1.0, -2.0])

        cf = lib.function(_sine_dot(lib, v)).get_concrete_function(lib.TensorSpec([2], lib.float32))
        x = lib.Variable([0.5, 3.0])
        with lib.GradientTape() as tape:
            y = cf(x)
        grads.append([g.numpy() for g in tape.gradient(y, [x, v])])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_a_function_that_draws_random_numbers_draws_afresh_at_each_call():
    f = gtf.function(lambda x: x + gtf.random.normal([3]))
    cf = f.get_concrete_function(gtf.TensorSpec([3], gtf.float32))
    assert _spec_tuple(cf.structured_outputs) == ((3,), "float32", None)
    first, second = cf(gtf.zeros([3])).numpy(), cf(gtf.zeros([3])).numpy()
    assert not np.allclose(first, second)
    assert f.experimental_get_tracing_count() == 1
