"""TensorFlow 2.21's top-level initializers (``tf.zeros_initializer``, ``tf.ones_initializer``,
``tf.constant_initializer``, ``tf.random_normal_initializer``, ``tf.random_uniform_initializer``)
against real TensorFlow: the same program text under both modules (values, None-ness and
exception classes compared; for random draws, what does not depend on the generator)."""

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _errors


def p_zeros_and_ones(tf):
    z, o = tf.zeros_initializer(), tf.ones_initializer()
    return [
        z([2, 3]),
        z((2,), tf.int32),
        z([2], tf.bool),
        z([2], "float16"),
        z(tf.constant([2, 1])),
        z(shape=[1, 2], dtype=tf.uint8),
        o([2], dtype=tf.int8),
        o([2, 2]),
        o([3], tf.bool),
        [z([1]).dtype == tf.float32, o([1]).dtype == tf.float32],
        z([4], partition_shape=[2], partition_offset=[2]),
        o([4], tf.int32, partition_shape=[3]),
    ]


def p_constant(tf):
    return [
        tf.constant_initializer(3.0)([2, 2]),
        tf.constant_initializer([1.0, 2.0, 3.0, 4.0])([2, 2]),
        tf.constant_initializer([1, 2, 3, 4])([2, 2], tf.int32),
        tf.constant_initializer((1, 2))([2]),
        tf.constant_initializer(np.arange(4, dtype=np.float32))([2, 2]),
        tf.constant_initializer()([2]),
        tf.constant_initializer(2, support_partition=True)([2], tf.float32, partition_shape=[1]),
        tf.constant_initializer(7)([3], tf.int8),
    ]


def p_configs(tf):
    configs = [
        tf.zeros_initializer().get_config(),
        tf.ones_initializer().get_config(),
        tf.constant_initializer(2.0).get_config(),
        tf.random_normal_initializer(1.0, 2.0, seed=3).get_config(),
        tf.random_uniform_initializer(-1, 1, seed=4).get_config(),
        tf.random_normal_initializer().get_config(),
        tf.random_uniform_initializer().get_config(),
    ]
    rebuilt = [
        tf.random_normal_initializer.from_config({"mean": 1.0, "stddev": 2.0, "seed": 3, "dtype": "float32"}),
        tf.constant_initializer.from_config({"value": [1, 2]}),
        tf.zeros_initializer.from_config({}),
    ]
    return [configs, [r.get_config() for r in rebuilt], rebuilt[1]([2])]


def _draws(tf, init, dtype):
    a, b = init([200], dtype), init([200], dtype)
    return a.numpy(), b.numpy(), a.dtype == dtype


def p_seeded_draws_repeat_and_unseeded_do_not(tf):
    out = []
    for init in [tf.random_normal_initializer(0.0, 1.0, seed=5), tf.random_uniform_initializer(seed=0)]:
        a, b, same_dtype = _draws(tf, init, tf.float32)
        out.append([bool(np.array_equal(a, b)), same_dtype, list(a.shape)])
    for init in [tf.random_normal_initializer(), tf.random_uniform_initializer(-1.0, 1.0)]:
        a, b, same_dtype = _draws(tf, init, tf.float32)
        out.append([bool(np.array_equal(a, b)), same_dtype, list(a.shape)])
    return out


def p_draws_follow_their_distribution(tf):
    normal = tf.random_normal_initializer(mean=3.0, stddev=0.5, seed=1)([4000]).numpy()
    uniform = tf.random_uniform_initializer(-2.0, 1.0, seed=2)([4000], tf.float16).numpy()
    integers = tf.random_uniform_initializer(0, 10, seed=3)([4000], tf.int32).numpy()
    return [
        bool(abs(normal.mean() - 3.0) < 0.05),
        bool(abs(normal.std() - 0.5) < 0.05),
        bool(uniform.min() >= -2.0 and uniform.max() < 1.0),
        str(uniform.dtype),
        sorted(set(integers.tolist())),
        str(integers.dtype),
        [int(d) for d in tf.random_normal_initializer(seed=1)([2, 3], tf.float16).shape],
        [int(d) for d in tf.random_uniform_initializer()(tf.constant([3])).shape],
    ]


@pytest.mark.parametrize(
    "name,call",
    [
        ("zeros_bad_keyword", lambda tf: tf.zeros_initializer()([2], foo=1)),
        ("zeros_partition_info", lambda tf: tf.ones_initializer()([2], partition_info=None)),
        ("constant_partition", lambda tf: tf.constant_initializer(1.0)([2], partition_shape=[1])),
        ("constant_count", lambda tf: tf.constant_initializer([1.0, 2.0, 3.0])([2, 2])),
        ("constant_tensor", lambda tf: tf.constant_initializer(tf.constant([1.0, 2.0]))),
        ("constant_dict", lambda tf: tf.constant_initializer({})),
        ("normal_integers", lambda tf: tf.random_normal_initializer()([2], tf.int32)),
        ("uniform_bool", lambda tf: tf.random_uniform_initializer()([2], tf.bool)),
        ("zeros_string_dtype", lambda tf: tf.zeros_initializer()([2], "nope")),
    ],
)
def test_refused_as_tensorflow_refuses(name, call):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(call)
    assert isinstance(out, _errors.GradkitError) and str(out).startswith("[gradkit]"), out


def p_variables_from_initializers(tf):
    w = tf.Variable(tf.constant_initializer([[1.0, 2.0], [3.0, 4.0]])([2, 2]))
    b = tf.Variable(lambda: tf.zeros_initializer()([1, 2]))
    k = tf.Variable(tf.random_normal_initializer(seed=7)([2, 2]))
    x = tf.constant([[1.0, -1.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.matmul(x, w) + b)
    return [w, b, [int(d) for d in k.shape], tape.gradient(y, [w, b])]


def p_initializers_in_a_function(tf):
    made = []

    @tf.function
    def f(x):
        if not made:
            made.append(tf.Variable(tf.ones_initializer()([2])))
        return x * made[0] + tf.zeros_initializer()([2])

    return [f(tf.constant([2.0, 3.0])), f(tf.constant([1.0, 1.0]))]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_the_names_are_tensorflows():
    tf = pytest.importorskip("tensorflow")
    for name in [
        "zeros_initializer",
        "ones_initializer",
        "constant_initializer",
        "random_normal_initializer",
        "random_uniform_initializer",
        "initializers",
    ]:
        assert hasattr(tf, name) and hasattr(gtf, name), name
    assert not hasattr(tf, "glorot_uniform_initializer") and not hasattr(gtf, "glorot_uniform_initializer")
    assert gtf.initializers is gtf.keras.initializers
