"""TensorFlow's dtype names, ``tf.DType`` and ``tf.as_dtype`` against real TensorFlow 2.21: the
same program text under both modules (values, None-ness and exception classes compared)."""

import pickle

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _errors

NAMES = [
    "float16",
    "half",
    "bfloat16",
    "float32",
    "float64",
    "double",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
]
REAL = [n for n in NAMES if not n.startswith(("complex", "bool"))]


def _properties(d):
    return [
        d.name,
        d.is_floating,
        d.is_integer,
        d.is_complex,
        d.is_bool,
        d.is_unsigned,
        d.is_numeric,
        d.is_quantized,
        d.is_numpy_compatible,
        d.size,
        d.as_datatype_enum,
        d.real_dtype.name,
        d.base_dtype.name,
        d.as_numpy_dtype.__name__,
        np.dtype(d.as_numpy_dtype).name,
    ]


def p_properties(tf):
    return [_properties(getattr(tf, n)) for n in NAMES]


def p_dtypes_namespace(tf):
    return [_properties(getattr(tf.dtypes, n)) for n in NAMES] + [tf.dtypes.DType is tf.DType]


def p_limits(tf):
    return [[repr(getattr(tf, n).min), repr(getattr(tf, n).max), type(getattr(tf, n).max).__name__] for n in REAL]


@pytest.mark.parametrize("name", ["bool", "complex64", "complex128"])
@pytest.mark.parametrize("limit", ["min", "max"])
def test_no_limits_for_bool_and_complex(name, limit):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(lambda tf: getattr(getattr(tf, name), limit))
    assert isinstance(out, _errors.GradkitTypeError) and str(out).startswith("[gradkit]")


def p_aliases_are_the_same_objects(tf):
    return [tf.double is tf.float64, tf.half is tf.float16, tf.as_dtype("float32") is tf.float32]


def p_as_dtype_inputs(tf):
    inputs = [
        "float32",
        "float",
        "double",
        "half",
        "bool",
        "bfloat16",
        "uint16",
        "uint64",
        float,
        bool,
        np.float32,
        np.int64,
        np.uint32,
        np.bool_,
        np.dtype("int16"),
        np.dtype("complex128"),
        np.array(1.0),
        tf.float16,
        1,
        3,
        23,
    ]
    return [tf.as_dtype(x).name for x in inputs] + [tf.dtypes.as_dtype("half").name]


@pytest.mark.parametrize(
    "value",
    ["int", "complex", "f4", "<f4", "nope", int, complex, str, bytes, None, 99, np.longdouble, "tensor"],
    ids=repr,
)
def test_as_dtype_refuses_what_tensorflow_refuses(value):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(lambda tf: tf.as_dtype(tf.constant(1.0) if value == "tensor" else value))
    assert isinstance(out, _errors.GradkitTypeError) and str(out).startswith("[gradkit]")


def p_comparisons(tf):
    return [
        tf.float32 == "float32",
        "float32" == tf.float32,
        tf.float32 == np.float32,
        np.dtype("float32") == tf.float32,
        tf.float32 == tf.float64,
        tf.float32 != "float32",
        tf.float32 != tf.int32,
        tf.float32 == "nope",
        tf.float32 == None,  # noqa: E711  (the comparison under test)
        tf.float32 == 1,
        tf.int32 == 3,
        tf.float32.is_compatible_with(tf.float32),
        tf.float32.is_compatible_with(np.float32),
        tf.float32.is_compatible_with("float64"),
    ]


def p_repr_and_str(tf):
    return [[repr(getattr(tf, n)), str(getattr(tf, n))] for n in NAMES]


def p_type_enum_constructor(tf):
    return [tf.DType(1).name, tf.DType(19).name, tf.DType(3) == tf.int32, repr(tf.DType(14))]


def p_type_enum_unknown(tf):
    return tf.DType(99)


def p_a_tensors_dtype(tf):
    x, n = tf.constant([1.0, 2.0]), tf.constant([1, 2])
    return [
        x.dtype == tf.float32,
        tf.float32 == x.dtype,
        isinstance(x.dtype, tf.DType),
        isinstance(n.dtype, tf.dtypes.DType),
        isinstance(tf.float32, tf.DType),
        tf.as_dtype(x.dtype).is_floating,
        tf.as_dtype(n.dtype).is_integer,
        tf.as_dtype(n.dtype).max,
        tf.as_dtype(x.dtype) == x.dtype,
    ]


def p_ops_take_the_new_names(tf):
    return [
        tf.cast([1.5, -2.0, 70000.0], tf.half),
        tf.cast([1, 2], tf.uint16),
        tf.constant([3, 4], tf.uint32),
        tf.zeros([2], tf.half),
        tf.ones([2], dtype=tf.as_dtype("half")),
        tf.cast(tf.constant([1.5, 2.5]), tf.as_dtype(np.int8)),
        [tf.cast([1, 2], d).dtype == d for d in (tf.half, tf.uint16, tf.uint32, tf.as_dtype("bfloat16"))],
    ]


def p_gradient_in_half_precision(tf):
    v = tf.Variable([1.0, 2.0], dtype=tf.half)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v * v * tf.cast(3.0, tf.half))
    g = tape.gradient(y, v)
    return [g, g.dtype == tf.half, v.dtype == tf.half]


def p_pickled(tf):
    return [pickle.loads(pickle.dumps(getattr(tf, n))) == getattr(tf, n) for n in NAMES]


def p_dict_keyed_by_dtype(tf):
    table = {tf.float32: "f", tf.int32: "i"}
    return [table[tf.float32], table[tf.as_dtype("int32")], tf.float32 in {tf.float32, tf.float64}]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_top_level_names_are_tensorflows():
    tf = pytest.importorskip("tensorflow")
    for name in NAMES + ["DType", "as_dtype"]:
        assert hasattr(tf, name) and hasattr(gtf, name), name
        assert hasattr(tf.dtypes, name) and hasattr(gtf.dtypes, name), name


def test_numpy_and_jax_take_a_dtype():
    import jax.numpy as jnp

    assert np.dtype(gtf.half) == np.float16 and np.zeros(2, gtf.uint16).dtype == np.uint16
    assert jnp.zeros(2, gtf.bfloat16).dtype == jnp.bfloat16
    assert gtf.constant([1.0]).dtype == gtf.float32
    assert {np.dtype("float32"): 1}[gtf.float32] == 1  # hashes as its NumPy dtype


@pytest.mark.parametrize("value", ["string", "resource", "qint8", "float32_ref", object, np.dtype("U3"), 7])
def test_dtypes_gradkit_does_not_hold_are_refused(value):
    with pytest.raises(_errors.GradkitNotImplementedError, match=r"^\[gradkit\] .*bool, integer, floating"):
        gtf.as_dtype(value)


def test_dtypes_namespace_lists_tensorflows_names_only():
    tf = pytest.importorskip("tensorflow")
    ours = {n for n in dir(gtf.dtypes) if not n.startswith("_")}
    assert ours <= set(dir(tf.dtypes)), sorted(ours - set(dir(tf.dtypes)))
    assert {"cast", "complex", "saturate_cast", "DType", "double"} <= ours
    assert gtf.dtypes.saturate_cast is gtf.saturate_cast and gtf.dtypes.cast is gtf.cast
