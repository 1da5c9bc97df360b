"""``tf.keras.regularizers`` and ``tf.keras.constraints`` on float64 weights against Keras 3 on
TensorFlow, to float64 rounding: Keras casts a regularizer's factor to the weight's dtype through
float32 (``ops.cast`` of a Python float), while a constraint's bounds and epsilon enter as exact
Python floats. float64 needs ``jax_enable_x64``, so the values run in a subprocess."""

import numpy as np
import pytest
from _x64_subprocess import run_script

pytest.importorskip("tensorflow")


CASES = {
    "l1": "regularizers.L1(0.1)",
    "l2": "regularizers.L2(0.3)",
    "l1l2": "regularizers.L1L2(0.01, 0.2)",
    "max_norm": "constraints.MaxNorm(1.3)",
    "min_max_norm": "constraints.MinMaxNorm(0.4, 1.1, rate=0.7, axis=1)",
    "unit_norm": "constraints.UnitNorm()",
    "non_neg": "constraints.NonNeg()",
}

_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
import numpy as np
import tensorflow as tf_real
import gradkit.tf as gtf

CASES = json.loads(sys.argv[1])
W = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0], [1.5, 0.25, -0.75]])
COTANGENT = np.array([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [1.0, 1.0, 1.0]])


def run(tf, expression):
    fn = eval("tf.keras." + expression)
    w = tf.Variable(W)
    with tf.GradientTape() as tape:
        out = tf.convert_to_tensor(fn(w))
        loss = tf.reduce_sum(out * (COTANGENT if len(out.shape) else 1.0))
    grad = tape.gradient(loss, w)
    return {"value": np.asarray(out).tolist(), "grad": np.asarray(grad).tolist(), "dtype": np.dtype(out.dtype.name).name}


print(json.dumps({name: {"gradkit": run(gtf, e), "keras": run(tf_real, e)} for name, e in CASES.items()}))
"""


@pytest.fixture(scope="module")
def float64_results():
    return run_script(_SCRIPT, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_values_and_gradients_are_keras(float64_results, name):
    got, want = float64_results[name]["gradkit"], float64_results[name]["keras"]
    assert got["dtype"] == want["dtype"] == "float64"
    np.testing.assert_allclose(got["value"], want["value"], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got["grad"], want["grad"], rtol=1e-14, atol=1e-15)
