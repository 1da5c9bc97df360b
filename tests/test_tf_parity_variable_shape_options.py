"""``tf.Variable(..., shape=, validate_shape=, caching_device=, variable_def=, import_scope=)``
against real TensorFlow 2.21: the same program text under both modules (values, shapes,
None-ness and exception classes compared)."""

import pytest

import gradkit.tf as gtf


def _tape(tf):
    from test_tf_parity import _tape

    return _tape(tf)


def p_a_none_size_lets_assign_change_it(tf):
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape([None]), validate_shape=False)
    out = [v.shape.as_list(), v.get_shape().as_list(), v.shape.is_fully_defined()]
    v.assign([1.0, 2.0, 3.0])
    out += [v.shape.as_list(), v.numpy(), tf.shape(v), tf.size(v), tf.rank(v), v + 1, tf.reduce_sum(v)]
    out += [tf.reshape(v, [-1, 1]), tf.zeros_like(v), tf.concat([v, v], 0), repr(v)]
    with _tape(tf) as tape:
        y = tf.reduce_sum(v * v)
    return out + [tape.gradient(y, v)]


def p_a_keras_optimizer_steps_a_resized_variable(tf):
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape([None]))
    v.assign([1.0, 2.0, 3.0])
    with _tape(tf) as tape:
        y = tf.reduce_sum(v * v)
    tf.keras.optimizers.SGD(0.1).apply_gradients([(tape.gradient(y, v), v)])
    return [v.numpy(), v.shape.as_list()]


def p_read_in_a_function(tf):
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape([None]))
    double = tf.function(lambda: v * 2)
    return [double(), tf.function(lambda: tf.shape(v))()]


def p_validate_shape_true_with_a_none_size_still_lets_it_change(tf):
    # Eagerly, TensorFlow 2's declared shape decides; validate_shape= changes nothing.
    v = tf.Variable([[1.0, 2.0]], shape=[None, 2], validate_shape=True)
    v.assign(tf.ones([3, 2]))
    return [v.shape.as_list(), v.numpy(), tf.matmul(v, tf.ones([2, 1]))]


def p_a_known_size_stays(tf):
    v = tf.Variable(tf.zeros([2, 3]), shape=tf.TensorShape([None, 3]))
    return v.assign(tf.ones([4, 2]))


def p_the_rank_stays(tf):
    v = tf.Variable([1.0, 2.0], shape=[None])
    return v.assign([[1.0, 2.0]])


def p_a_failed_assign_leaves_the_variable_as_it_was(tf):
    v = tf.Variable([1.0, 2.0], shape=[None])
    try:
        v.assign([[1.0]])
    except ValueError:
        pass
    return [v.numpy(), v.shape.as_list(), tf.shape(v)]


def p_validate_shape_false_alone_keeps_the_shape(tf):
    v = tf.Variable([1.0, 2.0], validate_shape=False)
    return v.assign([1.0, 2.0, 3.0])


def p_a_shape_equal_to_the_values(tf):
    v = tf.Variable([[1.0, 2.0]], shape=(1, 2))
    s = tf.Variable(3.0, shape=[])
    return [v.shape.as_list(), v.assign([[3.0, 4.0]]), s.shape.as_list(), s.assign(5.0)]


def p_an_incompatible_shape(tf):
    return tf.Variable([1.0, 2.0], shape=[3])


def p_an_incompatible_rank(tf):
    return tf.Variable([1.0, 2.0], shape=[2, 1], validate_shape=False)


def p_a_shape_that_is_not_one(tf):
    return tf.Variable(1.0, shape="x")


def p_caching_device_strings(tf):
    a = tf.Variable([1.0, 2.0], caching_device="/cpu:0")
    b = tf.Variable([3.0], caching_device="/job:localhost/replica:0/task:0/device:CPU:0")
    return [a.numpy(), b.numpy(), a * 2]


def p_caching_device_not_a_device(tf):
    return tf.Variable([1.0], caching_device="nonsense")


def p_caching_device_not_a_string(tf):
    return tf.Variable([1.0], caching_device=3)


def p_variable_def_with_an_initial_value(tf):
    return tf.Variable([1.0], variable_def=object())


def p_import_scope_without_a_variable_def_changes_nothing(tf):
    v = tf.Variable([1.0, 2.0], import_scope="scope", name="v")
    return [v.numpy(), v.name]


def p_assign_add_of_a_scalar_to_a_vector_is_refused(tf):
    v = tf.Variable([1.0, 2.0])
    v.assign_add(1.0)  # TensorFlow does not broadcast the delta
    return v


def p_assign_sub_of_a_row_to_a_matrix_is_refused(tf):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    v.assign_sub(tf.constant([1.0, 1.0]))
    return v


def p_assign_add_of_a_scalar_in_a_function_is_refused(tf):
    v = tf.Variable([1.0, 2.0])
    tf.function(lambda: v.assign_add(1.0))()
    return v


def p_assign_add_of_the_same_shape_adds(tf):
    v = tf.Variable([1.0, 2.0])
    v.assign_add([0.5, 1.0])
    v.assign_sub(tf.constant([1.0, 1.0]))
    return v


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_a_refused_delta_leaves_the_variable_unchanged():
    v = gtf.Variable([1.0, 2.0])
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] Variable.assign_add got a delta of shape"):
        v.assign_add(1.0)
    assert v.numpy().tolist() == [1.0, 2.0]


def test_variable_def_alone_is_refused_as_graph_only():
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\].*variable_def.*graph-only"):
        gtf.Variable(variable_def=object())


def test_a_change_of_shape_under_a_tape_or_in_a_function_is_refused_and_changes_nothing():
    v = gtf.Variable([1.0, 2.0], shape=gtf.TensorShape([None]))
    with gtf.GradientTape():
        with pytest.raises(NotImplementedError, match=r"^\[gradkit\].*None size.*outside"):
            v.assign([1.0, 2.0, 3.0])
        v.assign([5.0, 6.0])  # the same shape: taken

    @gtf.function
    def resize():
        v.assign([1.0, 2.0, 3.0])

    with pytest.raises(NotImplementedError, match=r"^\[gradkit\]"):
        resize()
    assert v.numpy().tolist() == [5.0, 6.0] and v.shape.as_list() == [None]
