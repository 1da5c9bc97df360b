"""With JAX's 64-bit types on (``jax_enable_x64``), ``keras.ops`` and the TensorFlow ops below give
Keras' and TensorFlow's dtypes: int32 with uint32 promotes to int64, a Python number widens
nothing, complex results are complex64, integers reach ``leaky_relu`` as float32, int64 reaches ``deg2rad``/``rad2deg``/``cbrt``/
``heaviside``/``i0`` as float64 (and float64 ``i0`` stays float64), and ``trace`` keeps its
accumulator's width. Run in a child process (64-bit mode is process-wide), against
Keras on TensorFlow there."""

import pytest
from _x64_subprocess import run_script

pytest.importorskip("tensorflow")
pytest.importorskip("keras")

_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import itertools
import numpy as np, keras, tensorflow as tf
import gradkit.tf as gtf

names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128", int, float, complex]
promotions = [
    (repr(a), repr(b), str(keras.backend.result_type(a, b)), str(gtf.keras.backend.result_type(a, b)))
    for a, b in itertools.product(names, names)
]
u32, i32 = np.array([4000000000, 70000], np.uint32), np.array([1, 70000], np.int32)
calls = {
    "add": lambda t, o: o.add(t.constant(u32), t.constant(i32)),
    "multiply": lambda t, o: o.multiply(t.constant(u32), t.constant(i32)),
    "add_python_float": lambda t, o: o.add(t.constant(np.array([1], np.int64)), 2.5),
    "leaky_relu": lambda t, o: o.leaky_relu(t.constant(np.array([-3, 2], np.int32))),
    "nn_leaky_relu": lambda t, o: t.nn.leaky_relu(t.constant(np.array([-3, 2], np.int32))),
    "trace_int32": lambda t, o: o.trace(t.constant(np.eye(3, dtype=np.int32))),
    "trace_uint8": lambda t, o: o.trace(t.constant(np.eye(3, dtype=np.uint8))),
    "linalg_trace": lambda t, o: t.linalg.trace(t.constant(np.eye(3, dtype=np.int32))),
    "correlate_int64": lambda t, o: o.correlate(t.constant(np.arange(5)), t.constant(np.arange(3))),
    "correlate_float64": lambda t, o: o.correlate(t.constant(np.arange(5) / 3), t.constant(np.arange(3.0))),
    "deg2rad_int64": lambda t, o: o.deg2rad(t.constant(np.array([90, -180], np.int64))),
    "rad2deg_int64": lambda t, o: o.rad2deg(t.constant(np.array([1, -2], np.int64))),
    "cbrt_int64": lambda t, o: o.cbrt(t.constant(np.array([27, -8], np.int64))),
    "cbrt_int32": lambda t, o: o.cbrt(t.constant(np.array([27, -8], np.int32))),
    "heaviside_int64": lambda t, o: o.heaviside(t.constant(np.array([-2, 0, 3], np.int64)), t.constant(np.int64(1))),
    "heaviside_int32": lambda t, o: o.heaviside(t.constant(np.array([-2, 0, 3], np.int32)), t.constant(np.int32(1))),
    "i0_int64": lambda t, o: o.i0(t.constant(np.array([0, 1, 2], np.int64))),
    "i0_float64": lambda t, o: o.i0(t.constant(np.array([0.5, 1.5]))),
    "i0_int32": lambda t, o: o.i0(t.constant(np.array([0, 1], np.int32))),
    "correlate_int32": lambda t, o: o.correlate(
        t.constant(np.arange(5, dtype=np.int32)), t.constant(np.arange(3, dtype=np.int32))
    ),
}
results = {}
for name, call in calls.items():
    k, g = np.asarray(call(tf, keras.ops)), np.asarray(call(gtf, gtf.keras.ops))
    results[name] = [str(k.dtype), str(g.dtype), k.tolist(), g.tolist()]
print(json.dumps({"promotions": promotions, "calls": results}))
"""


def test_keras_promotions_and_op_dtypes_with_64_bit_types():
    out = run_script(_SCRIPT, [])
    differ = [p for p in out["promotions"] if p[2] != p[3]]
    assert not differ, differ[:10]
    for name, (k_dtype, g_dtype, k_value, g_value) in out["calls"].items():
        assert g_dtype == k_dtype, name
        assert g_value == pytest.approx(k_value), name
