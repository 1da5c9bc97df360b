"""TensorFlow's graph-building helpers (``tf.device``, ``tf.control_dependencies``, ``tf.group``,
``tf.tuple``, ``tf.no_op``, ``tf.init_scope``, ``tf.inside_function``,
``tf.get_current_name_scope``) against real TensorFlow 2.21: the same program text under both
modules (values, None-ness and exception classes compared)."""

import pytest

import gradkit.tf as gtf
from gradkit import _errors

DEVICES = [
    "/cpu:0",
    "CPU:0",
    "/CPU:0",
    "cpu",
    "/device:CPU:0",
    "/job:localhost/replica:0/task:0/device:CPU:0",
    "/gpu:0",
    "GPU:1",
    "/TPU:0",
    "/device:GPU:*",
    "",
    None,
]


def p_device_strings_place_nothing(tf):
    out = []
    for name in DEVICES:
        with tf.device(name) as entered:
            out.append([entered, tf.constant([1.0, 2.0]) * 2])
    return out


@pytest.mark.parametrize("name", ["foo", "/cpu:0/gpu:0", "/device:CPU:0/GPU:1", "GPU:x", 3, 1.5])
def test_device_refuses_what_tensorflow_refuses(name):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    def program(tf):
        with tf.device(name):
            return tf.constant(1.0)

    out = run_both(program)
    assert isinstance(out, _errors.GradkitValueError) and str(out).startswith("[gradkit]")


def p_device_takes_no_function(tf):
    with tf.device(lambda op: "/cpu:0"):
        return tf.constant(1.0)


def p_device_inside_a_function(tf):
    @tf.function
    def f(x):
        with tf.device("/CPU:0"):
            return x * 3

    return f(tf.constant([1.0, 2.0]))


def p_control_dependencies_eagerly(tf):
    called = []
    with tf.control_dependencies([tf.constant(1.0), lambda: called.append("ran")]) as entered:
        y = tf.constant([2.0]) + 1
    with tf.control_dependencies(None):
        z = y * 2
    return [entered, y, z, called]


def p_control_dependencies_takes_a_list(tf):
    with tf.control_dependencies(tf.constant(1.0)):
        return tf.constant(2.0)


def p_control_dependencies_order_assignments_in_a_function(tf):
    v = tf.Variable(1.0)

    @tf.function
    def f():
        step = v.assign_add(1.0)
        with tf.control_dependencies([step]):
            return v * 10

    return [f(), f(), v]


def p_control_dependencies_under_a_tape(tf):
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        with tf.control_dependencies([x]):
            y = x * x
    return tape.gradient(y, x)


def p_group_and_no_op_are_none_eagerly(tf):
    v = tf.Variable([1.0, 2.0])
    a = v.assign_add([1.0, 1.0])
    return [tf.group(a, [v * 2, tf.constant(1)], name="g"), tf.group(), tf.no_op(), tf.no_op(name="n"), v]


def p_group_of_updates_in_a_function(tf):
    v, w = tf.Variable(1.0), tf.Variable(2.0)

    @tf.function
    def step():
        tf.group(v.assign_add(1.0), w.assign(w * 3))
        tf.no_op()
        return v + w

    return [step(), step(), v, w]


def p_tuple_gives_the_tensors_back(tf):
    called = []
    a, b = tf.constant(1.0), tf.constant([2.0, 3.0])
    return [
        tf.tuple([a, None, b]),
        tf.tuple([a], control_inputs=[b, lambda: called.append(1)]),
        tf.tuple([1.0, [2, 3]]),
        tf.tuple({"k": a}),
        called,
    ]


def p_tuple_in_a_function(tf):
    @tf.function
    def f(x):
        out = tf.tuple([x, x * 2])
        return out[0] + out[1]

    return f(tf.constant([1.0, 2.0]))


def p_inside_function_and_executing_eagerly(tf):
    seen = []

    @tf.function
    def f(x):
        seen.append(["traced", tf.inside_function(), tf.executing_eagerly()])
        with tf.init_scope():
            seen.append(["init_scope", tf.inside_function(), tf.executing_eagerly()])
        seen.append(["after", tf.inside_function(), tf.executing_eagerly()])
        return x + 1

    eager = [tf.inside_function(), tf.executing_eagerly()]
    with tf.init_scope():
        eager.append([tf.inside_function(), tf.executing_eagerly()])
    return [f(tf.constant(1.0)), seen, eager]


def p_current_name_scope(tf):
    seen = [tf.get_current_name_scope()]

    @tf.function
    def f(x):
        with tf.name_scope("inner"):
            seen.append(tf.get_current_name_scope())
            with tf.init_scope():
                seen.append(tf.get_current_name_scope())
        return x

    with tf.name_scope("a"):
        with tf.name_scope("b"):
            seen.append(tf.get_current_name_scope())
            with tf.init_scope():
                seen.append(tf.get_current_name_scope())
            f(tf.constant(1.0))
    seen.append(tf.get_current_name_scope())
    return seen


def p_init_scope_pauses_the_tape(tf):
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        with tf.init_scope():
            y = x * x
        z = x * 3 + y
    return [z, tape.gradient(z, x)]


def p_init_scope_makes_variables_once_in_a_function(tf):
    made = []

    @tf.function
    def f(x):
        with tf.init_scope():
            if not made:
                made.append(tf.Variable(3.0, name="scale"))
        return x * made[0]

    out = [f(tf.constant(2.0)), f(tf.constant(5.0))]
    with tf.GradientTape() as tape:
        y = f(tf.constant(2.0))
    return out + [len(made), made[0].name, tape.gradient(y, made[0])]


def p_init_scope_draws_an_initial_value_in_a_function(tf):
    made = []

    @tf.function
    def f(x):
        with tf.init_scope():
            if not made:
                made.append(tf.Variable(tf.random.normal([2], seed=1), name="w"))
                made.append(tf.Variable(tf.zeros([2]) + 1.0))
        return x * made[0] + made[1]

    shapes = [list(f(tf.constant([1.0, 2.0])).shape), list(f(tf.constant([3.0, 4.0])).shape)]
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(f(tf.constant([1.0, 2.0])))
    return [shapes, len(made), made[0].name, tape.gradient(y, made)[1]]


def p_get_logger(tf):
    import logging

    logger = tf.get_logger()
    return [logger.name, logger is logging.getLogger("tensorflow"), isinstance(logger, logging.Logger)]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_group_refuses_keywords_other_than_name():
    # TensorFlow ignores them eagerly and refuses them in a graph; gradkit refuses them always.
    with pytest.raises(_errors.GradkitTypeError, match=r"^\[gradkit\] tf.group got the keyword arguments \['foo'\]"):
        gtf.group(gtf.constant(1.0), foo=1)


def test_star_import_keeps_pythons_tuple():
    assert "tuple" not in gtf.__all__ and "print" not in gtf.__all__
    assert "group" in gtf.__all__ and "device" in gtf.__all__
