"""Array and math ops' argument rules where gradkit.tf once parted from TensorFlow 2.21 on code it accepts
(found by a differential fuzzer): ``tf.concat`` of one tensor, ``tf.fill`` of a recorded value,
``tf.gather``'s default axis with a negative ``batch_dims``, ``tf.matmul``'s ``output_type``,
``tf.math.unsorted_segment_mean`` of integers, ``tf.clip_by_value`` with crossed bounds, the
dtypes ``tf.range`` and ``tf.linspace`` infer, and index checks on constants inside
``tf.function``.

Oracles: real TensorFlow (values, dtypes, gradients, which calls raise), and hand derivations
for the gradients, which run without TensorFlow too."""

import jax
import numpy as np
import pytest
from _x64_subprocess import run_script

import gradkit.tf as gtf

try:
    import tensorflow as tf_real
except ImportError:  # the hand-derived checks below still run
    tf_real = None

needs_tf = pytest.mark.skipif(tf_real is None, reason="TensorFlow is not installed")

P = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5 - 3.0


def _both(program):
    """``program(tf)`` for real TensorFlow and gradkit.tf, as NumPy values."""
    out = []
    for tf in (tf_real, gtf):
        values = program(tf)
        out.append([None if v is None else np.asarray(v) for v in values])
    return out


def _same(program, rtol=1e-6):
    expected, actual = _both(program)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert a.shape == e.shape and a.dtype == jax.dtypes.canonicalize_dtype(e.dtype), (a, e)
        np.testing.assert_allclose(a, e, rtol=rtol)


def _raises_in_both(program):
    for tf in (tf_real, gtf):
        with pytest.raises(Exception) as info:
            program(tf)
        if tf is gtf:
            assert str(info.value).startswith("[gradkit]"), info.value


@needs_tf
def test_concat_of_one_tensor_returns_it():
    def program(tf):
        x = tf.Variable(P)
        with tf.GradientTape() as tape:
            y = tf.concat(x * 1.0, 0)
            loss = tf.reduce_sum(y * y)
        return [y, tape.gradient(loss, x)]

    _same(program)


def test_fill_of_a_recorded_value_differentiates_it():
    x = gtf.Variable([1.5, 2.0])
    with gtf.GradientTape() as tape:
        y = gtf.fill([2, 3], x[0] * 2.0)
        loss = gtf.reduce_sum(y * y)
    # loss = 6 (2 x0)^2: d/dx0 = 48 x0 = 72
    np.testing.assert_allclose(y.numpy(), np.full((2, 3), 3.0))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [72.0, 0.0])


@needs_tf
def test_fill_matches_tensorflow_for_variables_and_integers():
    def program(tf):
        v = tf.Variable(3.0)
        with tf.GradientTape() as tape:
            z = tf.reduce_sum(tf.fill([2, 3], v) * tf.constant([[1.0, 2.0, 3.0]]))
        return [z, tape.gradient(z, v), tf.fill([2], 5), tf.fill([0, 2], 1.0)]

    _same(program)
    _raises_in_both(lambda tf: tf.fill([2], tf.constant([1.0, 2.0])))


@needs_tf
@pytest.mark.parametrize("batch_dims,axis", [(-1, None), (1, None), (-1, -1), (1, 2), (0, None), (-2, None)])
def test_gather_takes_its_default_axis_from_batch_dims_as_given(batch_dims, axis):
    indices = np.array([[0, 2], [1, 1]])

    def program(tf):
        p = tf.Variable(P)
        with tf.GradientTape() as tape:
            y = tf.gather(p, indices % 2, batch_dims=batch_dims, axis=axis)
            loss = tf.reduce_sum(y * tf.cos(y))
        return [y, tf.convert_to_tensor(tape.gradient(loss, p))]  # TensorFlow's may be IndexedSlices

    _same(program)


@needs_tf
def test_matmul_output_type_accumulates_int8_products_in_int32():
    a = np.full((2, 3), 100, np.int8)
    b = np.array([[2, -3], [1, 4], [5, 1]], np.int8)
    u = np.array([[200, 1, 7]], np.uint8)
    _same(lambda tf: [tf.matmul(a, b, output_type=tf.int32), tf.matmul(u, u.T, output_type=tf.int32)])
    _same(lambda tf: [tf.matmul(a.astype(np.float32), b.astype(np.float32), output_type=tf.float32)])
    _raises_in_both(lambda tf: tf.matmul(a.astype(np.float32), b.astype(np.float32), output_type=tf.float64))
    _raises_in_both(lambda tf: tf.matmul(a, b, output_type=tf.int64))


@needs_tf
def test_unsorted_segment_mean_of_integers_divides_exactly():
    data = np.array([[1, 2], [4, 7], [3, 3], [-5, 2]], np.int32)
    ids = np.array([0, 0, 2, 0])

    def program(tf):
        return [
            tf.math.unsorted_segment_mean(data, ids, 4),  # float64 in TensorFlow, segment 1 empty
            tf.math.segment_mean(data, np.array([0, 0, 1, 1])),  # the sorted kernel truncates
        ]

    _same(program)


@needs_tf
@pytest.mark.parametrize("lo,hi", [(-1.0, 2.0), (1.0, -1.0), (0.5, 0.5)])
def test_clip_by_value_takes_the_minimum_first(lo, hi):
    values = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0], np.float32)

    def program(tf):
        t, a, b = tf.Variable(values), tf.Variable(lo), tf.Variable(hi)
        with tf.GradientTape() as tape:
            y = tf.clip_by_value(t, a, b)
            loss = tf.reduce_sum(y * tf.constant(np.arange(1.0, 8.0, dtype=np.float32)))
        return [y, *tape.gradient(loss, [t, a, b], unconnected_gradients=tf.UnconnectedGradients.ZERO)]

    _same(program)


@needs_tf
def test_clip_by_value_refuses_bounds_that_would_grow_the_result():
    t = np.array([1.0, 2.0], np.float32)
    _raises_in_both(lambda tf: tf.clip_by_value(t, tf.zeros((3, 1)), 1.0))
    _raises_in_both(lambda tf: tf.clip_by_value(t, tf.zeros((3,)), 1.0))
    _same(
        lambda tf: [
            tf.clip_by_value(t, tf.zeros((1,)), 1.5),
            tf.clip_by_value(np.ones((2, 2), np.float32), t[None], 1.5),
        ]
    )


@needs_tf
def test_range_and_linspace_infer_tensorflows_dtypes():
    def program(tf):
        return [
            tf.range(5),
            tf.range(5.0),
            tf.range(np.int64(4)),
            tf.range(np.int64(1), 7, np.int64(2)),
            tf.range(np.float64(3.0)),
            tf.range(1, 4.5),
            tf.range(3, dtype=tf.float32),
            tf.linspace(0, 10, 5),
            tf.linspace(0.0, 1.0, 3),
        ]

    _same(program)


_X64_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
import tensorflow as tf_real
import gradkit.tf as gtf

def dtypes(tf):
    return [
        tf.range(tf.constant(4, tf.int64)).dtype.name,
        tf.range(1, tf.constant(7, tf.int64), 2).dtype.name,
        tf.range(tf.constant(3.0, tf.float64)).dtype.name,
        tf.range(np.int64(4)).dtype.name,
        tf.linspace(0, 10, 5).dtype.name,
        tf.math.unsorted_segment_mean(np.array([1, 2, 4], np.int32), np.array([0, 0, 1]), 2).dtype.name,
        tf.math.divide(tf.constant([1, 2]), tf.constant([3, 3])).dtype.name,
        *[t.dtype.name for t in tf.function(lambda n: (3, 2.5, n, True))(2)],
        tf.linalg.matrix_rank(tf.constant([[1.0, 2.0], [2.0, 4.0]])).dtype.name,
        *[t.dtype.name for t in tf.image.non_max_suppression_padded(
            tf.constant([[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, 2.0, 1.0, 3.0]], tf.float32),
            tf.constant([0.9, 0.8, 0.7], tf.float32), 2, pad_to_max_output_size=True)],
    ]

print(json.dumps({"tf": dtypes(tf_real), "gk": dtypes(gtf)}))
"""


@needs_tf
def test_with_64_bit_types_the_inferred_dtypes_are_tensorflows():
    out = run_script(_X64_SCRIPT, [])
    assert (
        out["gk"]
        == out["tf"]
        == [
            *["int64", "int64", "float64", "int64", "float64", "float64", "float64"],
            *["int32", "float32", "int32", "bool"],  # a tf.function's Python numbers
            *["int32", "int32", "int32"],  # matrix_rank; non_max_suppression_padded's indices and count
        ]
    )


@needs_tf
@pytest.mark.parametrize(
    "op",
    ["gather", "gather_nd", "tensor_scatter_nd_update", "scatter_nd", "unsorted_segment_sum", "variable_scatter"],
)
def test_constant_indices_out_of_range_raise_inside_tf_function(op):
    x0 = np.arange(12, dtype=np.float32).reshape(4, 3)

    def program(tf):
        v = tf.Variable(x0)
        programs = {
            "gather": lambda x: tf.gather(x, [0, 5]),
            "gather_nd": lambda x: tf.gather_nd(x, [[5]]),
            "tensor_scatter_nd_update": lambda x: tf.tensor_scatter_nd_update(x, [[0], [5]], tf.ones((2, 3))),
            "scatter_nd": lambda x: tf.scatter_nd([[4]], x[:1], [4, 3]),
            "unsorted_segment_sum": lambda x: tf.math.unsorted_segment_sum(x, [0, 1, 4, 2], 4),
            "variable_scatter": lambda x: v.scatter_nd_update([[5]], tf.ones((1, 3))).read_value() + x,
        }
        try:
            tf.function(programs[op])(tf.constant(x0))
        finally:
            if tf is gtf:  # a failed call leaves every Variable unchanged
                np.testing.assert_array_equal(v.numpy(), x0)

    _raises_in_both(program)


def test_iterating_a_variable_gives_tensors_and_their_gradients():
    v = gtf.Variable([[1.0, 2.0], [3.0, 4.0]])
    rows = list(v)
    assert [type(r) for r in rows] == [gtf.Tensor, gtf.Tensor]
    np.testing.assert_array_equal(np.stack([r.numpy() for r in rows]), [[1.0, 2.0], [3.0, 4.0]])
    with gtf.GradientTape() as tape:
        loss = sum(gtf.reduce_sum(r * r) * (i + 1) for i, r in enumerate(v))
    # d/dv of sum_i (i+1) |v_i|^2 = 2 (i+1) v_i
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), [[2.0, 4.0], [12.0, 16.0]])
    for scalar in (gtf.Variable(1.0), gtf.constant(1.0)):
        with pytest.raises(TypeError, match=r"^\[gradkit\] cannot iterate over a 0-d tensor"):
            iter(scalar)


@pytest.mark.parametrize(
    "index,kind",
    [((Ellipsis, Ellipsis), IndexError), ((0, 0, 0), IndexError), (1.0, TypeError), ((0, 1.5), TypeError)],
)
def test_an_index_jax_refuses_gets_gradkits_error(index, kind):
    t = gtf.constant([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(kind, match=r"^\[gradkit\] a tensor of shape \(2, 2\) cannot be indexed by"):
        t[index]
    with pytest.raises(kind, match=r"^\[gradkit\]"):
        gtf.constant(1.0)[0] if kind is IndexError else gtf.constant(1.0)[1.0]


ERROR_PROGRAMS = {
    "reshape_zero_and_minus_one": lambda tf: tf.reshape(tf.ones((2, 2)), [0, -1]),
    "reshape_too_many_values": lambda tf: tf.reshape(tf.ones((2, 2)), [3, -1]),
    "reshape_two_minus_ones": lambda tf: tf.reshape(tf.ones((2, 2)), [-1, -1]),
    "split_zero_parts": lambda tf: tf.split(tf.ones((2, 2)), 0),
    "split_parts_not_dividing": lambda tf: tf.split(tf.ones((2, 2)), 3),
    "where_with_only_x": lambda tf: tf.where(tf.ones((2,)) > 0, None, tf.ones((2,))),
    "where_float_condition": lambda tf: tf.where(tf.ones((2,)), tf.ones((2,)), tf.zeros((2,))),
    "where_of_a_scalar": lambda tf: tf.where(tf.constant(True)),
    "range_zero_step": lambda tf: tf.range(1, 4, 0),
    "range_wrong_direction": lambda tf: tf.range(5, 1),
    "range_wrong_direction_negative_step": lambda tf: tf.range(1, 5, -1),
    "logical_not_of_floats": lambda tf: tf.math.logical_not(tf.constant([1.0, 0.0])),
    "logical_and_of_floats": lambda tf: tf.math.logical_and(tf.constant([1.0]), tf.constant([0.0])),
    "ceil_of_integers": lambda tf: tf.math.ceil(tf.constant([1, 2])),
    "floor_of_integers": lambda tf: tf.math.floor(tf.constant([1, 2])),
    "rint_of_integers": lambda tf: tf.math.rint(tf.constant([1, 2])),
    "atan2_of_integers": lambda tf: tf.math.atan2(tf.constant([1, 2]), tf.constant([3, 3])),
    "xlogy_of_integers": lambda tf: tf.math.xlogy(tf.constant([1, 2]), tf.constant([3, 3])),
    "assign_an_int_tensor_to_a_float_variable": lambda tf: tf.Variable([1.0, 2.0]).assign(tf.constant([1, 2])),
    "assign_add_an_int_variable": lambda tf: tf.Variable([1.0, 2.0]).assign_add(tf.Variable([1, 2])),
    "assign_an_int_tensor_to_a_slice": lambda tf: tf.Variable([1.0, 2.0])[0].assign(tf.constant(1)),
}


@needs_tf
@pytest.mark.parametrize("name", sorted(ERROR_PROGRAMS))
def test_inputs_tensorflow_refuses_get_a_clear_error(name):
    _raises_in_both(ERROR_PROGRAMS[name])


@needs_tf
def test_the_valid_neighbours_of_those_inputs_agree():
    def program(tf):
        x = tf.reshape(tf.range(6.0), [2, 3])
        return [
            tf.reshape(x, [-1]),
            tf.reshape(x, [3, -1]),
            tf.reshape(tf.zeros((0, 3)), [-1, 3]),
            *tf.split(x, 3, axis=1),
            tf.where(x > 2.0, x, -x),
            tf.where(x > 2.0),
            tf.range(5, 1, -1),
            tf.range(3, 3),
            tf.Variable([1.0, 2.0]).assign(np.array([3, 4])),  # NumPy values are converted
            tf.Variable([1.0, 2.0]).assign_add([1, 1]),
        ]

    _same(program)
