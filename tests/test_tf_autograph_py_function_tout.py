"""``tf.autograph``'s switches (``do_not_convert``, ``set_verbosity``, ``set_loop_options``,
``Feature``, ``trace``) and ``tf.py_function``'s results in ``Tout``'s dtype: the same programs
on gradkit and, where it is installed, TensorFlow, compared."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _tf():
    try:
        import tensorflow as tf
    except ImportError:
        return None
    return tf


def _autograph_program(tf):
    @tf.autograph.experimental.do_not_convert
    def triple(x):
        return x * 3.0

    @tf.autograph.experimental.do_not_convert()
    def square(x):
        return x * x

    @tf.function(experimental_autograph_options=tf.autograph.experimental.Feature.ALL)
    def f(x):
        tf.autograph.experimental.set_loop_options(maximum_iterations=3)
        return triple(x) + square(x)

    tf.autograph.set_verbosity(0)
    return float(f(tf.constant(2.0))), sorted(m.name for m in tf.autograph.experimental.Feature)


def test_autograph_switches(capsys):
    got = _autograph_program(gtf)
    assert got[0] == 10.0  # 3*2 + 2*2, by hand
    gtf.autograph.trace("loss", 1)
    assert capsys.readouterr().out == "loss 1\n"
    tf = _tf()
    if tf is not None:
        assert got == _autograph_program(tf)


_CASES = {
    "int32 array, Tout float32": (lambda tf: lambda a: np.array([1], np.int32), "float32"),
    "float32 array 1.5, Tout int32": (lambda tf: lambda a: np.array([1.5], np.float32), "int32"),
    "python float, Tout float32": (lambda tf: lambda a: 2.5, "float32"),
    "int32 tensor, Tout float32": (lambda tf: lambda a: tf.constant(3), "float32"),
    "float32 tensor, Tout int32": (lambda tf: lambda a: a * 2.5, "int32"),
}


def _py_function(tf, case):
    make, dtype = _CASES[case]
    try:
        out = tf.py_function(make(tf), [tf.constant(1.0)], getattr(tf, dtype))
    except tf.errors.InvalidArgumentError:
        return "InvalidArgumentError"
    return np.dtype(out.dtype.name if hasattr(out.dtype, "name") else out.dtype).name, out.numpy().tolist()


@pytest.mark.parametrize("case", sorted(_CASES))
def test_py_function_gives_its_results_in_tout(case):
    got = _py_function(gtf, case)
    want = {
        "int32 array, Tout float32": ("float32", [1.0]),
        "float32 array 1.5, Tout int32": ("int32", [1]),
        "python float, Tout float32": ("float32", 2.5),
        "int32 tensor, Tout float32": "InvalidArgumentError",
        "float32 tensor, Tout int32": "InvalidArgumentError",
    }[case]
    assert got == want
    tf = _tf()
    if tf is not None:
        assert got == _py_function(tf, case)


def test_numpy_function_keeps_an_arrays_dtype():
    out = gtf.numpy_function(lambda a: np.array([1], np.int32), [gtf.constant(1.0)], gtf.float32)
    assert out.dtype == np.int32  # as TensorFlow's numpy_function leaves it


@pytest.mark.parametrize("value, dtype", [(3.7, "int32"), (2.5, "bool"), (1e10, "int32")])
def test_py_function_refuses_a_python_result_tout_cannot_hold(value, dtype):
    with pytest.raises(gtf.errors.InvalidArgumentError, match="cannot convert"):
        gtf.py_function(lambda a: value, [gtf.constant(1.0)], getattr(gtf, dtype))
    tf = _tf()
    if tf is not None:
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.py_function(lambda a: value, [tf.constant(1.0)], getattr(tf, dtype))


def _int64_results(tf):
    ds = tf.data.Dataset.range(3).map(lambda x: tf.py_function(lambda v: v * 2, [x], tf.int64))
    one = next(iter(tf.data.Dataset.range(1, 2)))  # int64 in TensorFlow
    eager = tf.py_function(lambda v: v + 1, [one], tf.int64)
    return [int(e) for e in ds], int(eager)


def test_py_function_takes_int64_tout_for_tensors_of_gradkits_int64():
    # gradkit's int64 tensors are int32 without jax's x64 mode; Tout=tf.int64 names them too.
    got = _int64_results(gtf)
    assert got == ([0, 2, 4], 2)
    tf = _tf()
    if tf is not None:
        assert got == _int64_results(tf)
