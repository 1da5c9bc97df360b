"""What a ``tf.data`` pipeline says about its elements before it runs, and the constants it holds,
against TensorFlow 2.21: an element_spec dimension that the input's size or value decides is
unknown (``x[:2]`` of a vector of unknown length, ``tf.fill([v], v)`` in ``flat_map``), so
``padded_batch`` pads to each batch's own longest row; a pipeline built inside ``tf.function``
holds float constants as TensorFlow's graph constants; integers beyond int32 are int64 where
JAX's 64-bit types are on, and a clear error where they are off (never a wrapped number)."""

import numpy as np
import pytest
from _x64_subprocess import run_script

import gradkit.tf as gtf


def _generator_of_lengths(tf, lengths=(1, 1, 3, 4)):
    return tf.data.Dataset.from_generator(
        lambda: iter([np.arange(n, dtype=np.float32) for n in lengths]),
        output_signature=tf.TensorSpec((None,), tf.float32),
    )


def _shapes(spec):
    return None if spec.shape.rank is None else tuple(spec.shape.as_list())


def _batches(ds):
    return [b.numpy().tolist() for b in ds]


_MAPS = {
    "head": lambda tf: lambda x: x[:2],  # 1 row for the short elements
    "tail": lambda tf: lambda x: x[-2:],
    "quarter": lambda tf: lambda x: tf.zeros([tf.shape(x)[0] // 4]),
}


@pytest.mark.parametrize("name", sorted(_MAPS))
def test_map_leaves_a_size_the_input_decides_unknown(name):
    tf_real = pytest.importorskip("tensorflow")
    results = {}
    for label, tf in (("tf", tf_real), ("gk", gtf)):
        ds = _generator_of_lengths(tf).map(_MAPS[name](tf))
        results[label] = (_shapes(ds.element_spec), _batches(ds.padded_batch(2)))
    assert results["gk"] == results["tf"]
    assert results["gk"][0] == (None,)


def test_map_after_a_batch_with_a_short_last_batch():
    # 10 rows in batches of 4: the last batch has 2 rows, so x[:3] has 3 or 2 rows.
    ds = gtf.data.Dataset.from_tensor_slices(np.arange(10.0, dtype=np.float32)).batch(4).map(lambda x: x[:3])
    assert _shapes(ds.element_spec) == (None,)
    assert [len(b) for b in _batches(ds)] == [3, 3, 2]


def test_concrete_function_output_of_a_saturating_slice_is_unknown():
    tf_real = pytest.importorskip("tensorflow")
    shapes = []
    for tf in (tf_real, gtf):
        fn = tf.function(lambda x, tf=tf: (x[:2], x[:, 0], tf.zeros([tf.shape(x)[0] // 4])))
        outputs = fn.get_concrete_function(tf.TensorSpec((None, 3), tf.float32)).structured_outputs
        shapes.append([_shapes(o) for o in outputs])
    assert shapes[1] == shapes[0] == [(None, 3), (None,), (None,)]


_FLAT_MAPS = {
    "fill": lambda tf: lambda v: tf.data.Dataset.from_tensors(tf.fill([v], v)),
    "batch": lambda tf: lambda v: tf.data.Dataset.range(8).batch(v + 1, drop_remainder=True),
    "slices": lambda tf: lambda v: tf.data.Dataset.from_tensor_slices(tf.ones([2, v])),
}


@pytest.mark.parametrize("name", sorted(_FLAT_MAPS))
@pytest.mark.parametrize("how", ["flat_map", "interleave"])
def test_datasets_made_by_flat_map_and_interleave_have_value_decided_sizes_unknown(name, how):
    tf_real = pytest.importorskip("tensorflow")
    results = {}
    for label, tf in (("tf", tf_real), ("gk", gtf)):
        ds = getattr(tf.data.Dataset.range(1, 4), how)(_FLAT_MAPS[name](tf))
        results[label] = (_shapes(ds.element_spec), _batches(ds.padded_batch(2)))
    assert results["gk"] == results["tf"]


def test_window_of_rows_of_different_lengths_pads_per_window():
    tf_real = pytest.importorskip("tensorflow")
    results = [
        _batches(_generator_of_lengths(tf, (1, 3, 2, 4)).window(2).flat_map(lambda w: w.padded_batch(2)))
        for tf in (tf_real, gtf)
    ]
    assert results[1] == results[0] == [[[0, 0, 0], [0, 1, 2]], [[0, 1, 0, 0], [0, 1, 2, 3]]]


_IN_FUNCTION = {
    "from_tensors": lambda tf: tf.data.Dataset.from_tensors(3.0).get_single_element(),
    "from_tensor_slices": lambda tf: tf.data.Dataset.from_tensor_slices([1.0, 2.0]).reduce(0.0, lambda s, x: s + x),
    "reduce_state": lambda tf: tf.data.Dataset.range(3).reduce(tf.constant(0.0), lambda s, x: s + 1.0),
    "padding_values": lambda tf: (
        tf.data.Dataset.range(1, 3)
        .map(lambda v: tf.ones([v]))
        .padded_batch(2, padding_values=-1.0)
        .get_single_element()
    ),
}


@pytest.mark.parametrize("name", sorted(_IN_FUNCTION))
def test_pipeline_built_inside_tf_function_holds_float_constants(name):
    tf_real = pytest.importorskip("tensorflow")
    results = [tf.function(lambda tf=tf: _IN_FUNCTION[name](tf))().numpy().tolist() for tf in (tf_real, gtf)]
    assert results[1] == results[0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: gtf.constant(2**40),
        lambda: gtf.constant([1, 2**40]),
        lambda: gtf.constant(np.array([1, -(2**40)])),
        lambda: gtf.data.Dataset.from_tensor_slices([1, 2**40]),
        lambda: gtf.Variable(2**40),
    ],
)
def test_integers_beyond_int32_are_refused_while_jax_has_no_64_bit_types(make):
    with pytest.raises(ValueError, match=r"\[gradkit\] .*does not fit in int32.*jax_enable_x64"):
        make()


def test_integers_at_int32s_edges_stay_int32():
    out = gtf.constant([2**31 - 1, -(2**31)])
    assert out.dtype == np.int32 and out.numpy().tolist() == [2**31 - 1, -(2**31)]


_X64_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import gradkit.tf as tf

ds = tf.data.Dataset.from_tensor_slices([1, 2**40])
print(json.dumps({
    "constant": [str(tf.constant(2**40).dtype), int(tf.constant(2**40))],
    "small": str(tf.constant(5).dtype),
    "dataset": [str(ds.element_spec.dtype.name), [int(x) for x in ds.as_numpy_iterator()]],
}))
"""


def test_integers_beyond_int32_are_int64_with_64_bit_types():
    out = run_script(_X64_SCRIPT, [])
    assert out == {"constant": ["int64", 2**40], "small": "int32", "dataset": ["int64", [1, 2**40]]}


def test_integers_beyond_int32_convert_to_a_float_dtype_asked_for():
    # TensorFlow reads them as int64 first; the float is the nearest to the integer either way.
    expected = np.float32(2.0**40)
    assert gtf.constant(2**40, dtype=gtf.float32).numpy() == expected
    assert gtf.constant(np.array([2**40]), dtype=gtf.float32).numpy().tolist() == [expected]
    assert gtf.cast(np.array([2**40, 3]), gtf.float32).numpy().tolist() == [expected, 3.0]


def _padded_to_a_minimum(tf):
    # Rows shorter than 16 are padded up to 16, longer ones kept: the length is unknown.
    ds = _generator_of_lengths(tf, (5, 20, 3)).map(lambda x: tf.pad(x, [[0, tf.maximum(0, 16 - tf.shape(x)[0])]]))
    return _shapes(ds.element_spec), [tuple(b.shape) for b in ds.padded_batch(3)]


def test_a_length_that_saturates_above_small_sizes_stays_unknown():
    got = _padded_to_a_minimum(gtf)
    assert got == ((None,), [(3, 20)])
    tf = pytest.importorskip("tensorflow")
    assert got == _padded_to_a_minimum(tf)


class _Config:
    pass


def test_element_spec_raises_the_map_functions_own_attribute_error():
    ds = gtf.data.Dataset.range(3).map(lambda x: gtf.cast(x, gtf.float32) * _Config().scale)
    for get_spec in (lambda: ds.element_spec, lambda: ds.batch(2).element_spec, lambda: iter(ds).element_spec):
        with pytest.raises(AttributeError, match="'_Config' object has no attribute 'scale'"):
            get_spec()


def _rows_of(tf, n_list, width):
    return tf.data.Dataset.from_generator(
        lambda: iter([np.ones((n, width), np.float32) * n for n in n_list]),
        output_signature=tf.TensorSpec((None, None), tf.float32),
    )


# Functions that trace at few sizes of their None dimensions: a dimension seen by one trace alone
# is not fixed (TensorFlow's shapes written out by hand; padded_batch then pads each batch).
_FEW_SIZES = {
    "reshape in two rows": (
        lambda tf: tf.data.Dataset.from_generator(
            lambda: iter([np.arange(2 * n, dtype=np.float32) for n in (1, 2, 3)]),
            output_signature=tf.TensorSpec((None,), tf.float32),
        ).map(lambda v: tf.reshape(v, [2, -1])),
        (2, None),
        [(2, 2, 2), (1, 2, 3)],
    ),
    "matmul by 3 rows": (
        lambda tf: _rows_of(tf, (1, 2, 3, 2), 3).map(lambda v: tf.matmul(v, tf.ones([3, 5]))),
        (None, 5),
        [(2, 2, 5), (2, 3, 5)],
    ),
    "split in three": (
        lambda tf: _rows_of(tf, (1, 2), 6).map(lambda v: tf.split(v, 3, axis=1)[0]),
        (None, None),
        [(2, 2, 2)],
    ),
}


@pytest.mark.parametrize("name", sorted(_FEW_SIZES))
def test_a_dimension_one_trace_saw_is_not_fixed(name):
    make, spec, batch_shapes = _FEW_SIZES[name]
    ds = make(gtf)
    assert _shapes(ds.element_spec) == spec
    assert [tuple(b.shape) for b in ds.padded_batch(2)] == batch_shapes
    tf_real = pytest.importorskip("tensorflow")
    assert _shapes(make(tf_real).element_spec) == spec


def test_get_concrete_function_varies_each_none_dimension():
    out = gtf.function(lambda x: x @ gtf.ones([3, 5])).get_concrete_function(gtf.TensorSpec([None, None]))
    assert tuple(out.structured_outputs.shape) == (None, 5)
    v = gtf.constant([1.0, 2.0, 3.0])
    out = gtf.function(lambda x: v * x).get_concrete_function(gtf.TensorSpec([None]))
    assert tuple(out.structured_outputs.shape) == (3,)
