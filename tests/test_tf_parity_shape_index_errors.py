"""Shapes and indices TensorFlow's eager kernels refuse with ``tf.errors.InvalidArgumentError``,
refused by gradkit.tf with that class too (still a ValueError, as TensorFlow's graph builder
raises): ``ensure_shape`` of an incompatible shape, ``gather_nd`` indices deeper than params,
``scatter_nd``/``tensor_scatter_nd_update`` updates of the wrong shape, a negative random shape,
1-D ``random.categorical`` logits, scalar scatter updates, ``split`` into one part of another size
or with ``num`` other than the sizes; and ``tf.nest.map_structure`` with an unknown keyword (ValueError)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import check_refused_unless_valid, invalid_argument, programs, run_both  # noqa: E402


def p_ensure_shape_of_another_shape(tf):
    return invalid_argument(tf, lambda: tf.ensure_shape(tf.zeros([2, 3]), [2, 4]))


def p_ensure_shape_of_another_rank(tf):
    return invalid_argument(tf, lambda: tf.ensure_shape(tf.zeros([2, 3]), [None]))


def p_gather_nd_indices_deeper_than_params(tf):
    return invalid_argument(tf, lambda: tf.gather_nd(tf.zeros([2, 3]), [[0, 1, 2]]))


def p_scatter_nd_updates_of_the_wrong_shape(tf):
    return invalid_argument(tf, lambda: tf.scatter_nd([[0]], [1.0, 2.0], [3]))


def p_tensor_scatter_nd_update_updates_of_the_wrong_shape(tf):
    return invalid_argument(tf, lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [[0]], [1.0, 2.0]))


def p_random_uniform_of_a_negative_shape(tf):
    return invalid_argument(tf, lambda: tf.random.uniform([-1]))


def p_random_categorical_of_1d_logits(tf):
    return invalid_argument(tf, lambda: tf.random.categorical([1.0, 2.0], 3))


def p_tensor_scatter_nd_update_of_scalar_updates(tf):
    return invalid_argument(tf, lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [1], 5.0))


def p_scatter_nd_of_scalar_updates(tf):
    return invalid_argument(tf, lambda: tf.scatter_nd([1], 5.0, [3]))


def p_variable_scatter_nd_update_of_scalar_updates(tf):
    return invalid_argument(tf, lambda: tf.Variable([0.0, 0.0, 0.0]).scatter_nd_update([1, 2], 5.0))


def p_split_into_one_part_of_another_size(tf):
    return invalid_argument(tf, lambda: tf.split(tf.zeros([2, 5]), [-1], axis=1))


def p_split_with_num_other_than_the_sizes(tf):
    return invalid_argument(tf, lambda: tf.split(tf.zeros([2, 5]), [2, 3], num=3, axis=1))


def p_the_same_ops_on_valid_inputs(tf):
    x = tf.constant(np.arange(6.0, dtype="float32").reshape(2, 3))
    return [
        tf.ensure_shape(x, [None, 3]),
        tf.gather_nd(x, [[0, 1], [1, 2]]),
        tf.scatter_nd([[0], [2]], [1.0, 2.0], [3]),
        tf.tensor_scatter_nd_update(tf.zeros([3]), [[1]], [5.0]),
        tf.shape(tf.random.uniform([0, 2])),
        tf.shape(tf.random.categorical([[1.0, 2.0]], 3)),
        tf.split(x, [3], axis=1)[0],
        tf.split(x, [1, -1], num=2, axis=1)[1],
        tf.tensor_scatter_nd_update(tf.zeros([3]), [[1]], [5.0]),
    ]


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    check_refused_unless_valid(program, p_the_same_ops_on_valid_inputs)


def test_the_refusals_stay_value_errors_and_name_what_came_in():
    import gradkit.tf as gtf

    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.ensure_shape: the tensor's shape \[2, 3\]"):
        gtf.ensure_shape(gtf.zeros([2, 3]), [2, 4])


def test_map_structure_names_its_keywords_with_a_value_error():
    outcome = run_both(lambda tf: tf.nest.map_structure(lambda a: a, [1], foo=1))
    assert isinstance(outcome, ValueError) and "check_types and expand_composites" in str(outcome)
    assert run_both(lambda tf: tf.nest.map_structure(lambda a: a + 1, [1], check_types=False)) == [2]
