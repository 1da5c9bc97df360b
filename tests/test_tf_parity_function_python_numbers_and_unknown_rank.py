"""``tf.function`` against real TensorFlow: Python float and complex arguments arrive as
TensorFlow converts them (float32, also with jax's 64-bit types on; a complex one works, and a
call that returns leaves the Variables it assigned as TensorFlow does), and a concrete function
of an input of unknown rank reports outputs whose rank follows it as unknown."""

import pytest

tf_real = pytest.importorskip("tensorflow")

from _x64_subprocess import run_script  # noqa: E402
from test_tf_parity import run_both_ok  # noqa: E402


def p_python_complex_argument(tf):
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        v.assign_add(1.0)
        return tf.math.real(x) * 2, tf.math.imag(x)

    first = f(1 + 2j)
    second = f(3 - 1j)
    return [first, second, v]


def p_python_float_argument(tf):
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        v.assign(x)
        v.assign_sub(tf.fill([], x) * 0.5)
        return v.read_value(), tf.math.exp(x), x + 1, tf.stack([x, x])

    return [f(0.5), f(1.5), v]


def p_unknown_rank_output_shapes(tf):
    @tf.function
    def f(x):
        return x, tf.expand_dims(x, 0), tf.reduce_sum(x), tf.shape(x), x * 2.0

    concrete = f.get_concrete_function(tf.TensorSpec(None, tf.float32))
    g = tf.function(lambda x: (x[0], tf.reduce_mean(x, axis=-1)), input_signature=[tf.TensorSpec(None)])
    return [[str(s) for s in concrete.output_shapes], [str(s) for s in g.get_concrete_function().output_shapes]]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    run_both_ok(program)


def test_python_float_arguments_are_float32_with_64_bit_types_on():
    out = run_script(
        """
        import json
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import tensorflow as rtf
        import gradkit.tf as gtf

        def program(tf):
            v = tf.Variable(1.0)

            @tf.function
            def f(x):
                v.assign(x)
                v.assign_sub(tf.fill([2], x)[0] * 0.5)
                return v.read_value(), tf.math.exp(x), x + 1, tf.stack([x, x]), tf.convert_to_tensor(x)

            @tf.function
            def g(x):
                return x

            return [o.dtype.name for o in f(0.5)] + [g(np.float64(0.5)).dtype.name, g(1 + 2j).dtype.name], float(v)

        print(json.dumps([program(rtf), program(gtf)]))
        """,
        [],
    )
    want, got = out
    assert got == want
