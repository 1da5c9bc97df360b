"""``assign_add`` / ``assign_sub`` of Python lists and NumPy float64 arrays on a float32 Variable
under JAX's 64-bit mode, while a tape records: TensorFlow converts such a delta to the Variable's
dtype, so the Variable stays float32 and the gradient is exact. Oracle: a hand derivation (the
final value v0 + 1 - 0.5 + (1, 2), and d sum(v^2) / d v0 = 2 v)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _x64_subprocess import run_script  # noqa: E402

_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
import gradkit.tf as tf

v = tf.Variable([1.0, 2.0])
with tf.GradientTape() as tape:
    v.assign_add([1.0, 1.0])
    v.assign_sub(np.array([0.5, 0.5]))
    v.assign_add((1, 2))
    loss = tf.reduce_sum(v * v)
grad = tape.gradient(loss, v)
print(json.dumps({"value": v.numpy().tolist(), "dtype": np.dtype(v.dtype).name,
                  "grad": grad.numpy().tolist(), "grad_dtype": np.dtype(grad.dtype).name}))
"""


def test_list_and_numpy_deltas_take_the_variables_dtype_under_a_tape():
    out = run_script(_SCRIPT, [])
    assert out == {"value": [2.5, 4.5], "dtype": "float32", "grad": [5.0, 9.0], "grad_dtype": "float32"}
