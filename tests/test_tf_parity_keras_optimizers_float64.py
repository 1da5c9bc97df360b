"""Keras optimizers on float64 Variables, against Keras 3 on TensorFlow and a NumPy oracle.

Keras casts a Python float hyperparameter with ``ops.cast(value, variable.dtype)``, which on
TensorFlow makes it a float32 tensor first: a float64 step uses ``beta_2 = 0.999`` rounded to
float32 in Adam's bias correction, SGD's ``momentum``, Nadam's ``beta_1``, ``beta_2`` and 0.96,
Adamax's ``beta_1``, the ``weight_decay`` factor and Adagrad's ``initial_accumulator_value``
(its Constant initializer casts the same way), while other hyperparameters (``epsilon``, RMSprop's
``rho``) enter as exact float64 numbers. Nadam's ``u_product`` has the first Variable's dtype.
gradkit.tf used the exact float64 constants and a float32 ``u_product``: its float64 steps
differed from Keras' by up to 1e-5 relative. float64 needs ``jax_enable_x64``, so the steps run
in a subprocess.
"""

import numpy as np
import pytest
from _x64_subprocess import run_script

CASES = {
    "sgd_nesterov": ("SGD", {"learning_rate": 0.3, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.3}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.1, "beta_1": 0.8, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.1, "weight_decay": 0.1}),
    "adamax": ("Adamax", {"learning_rate": 0.3, "beta_1": 0.8}),
    "nadam": ("Nadam", {"learning_rate": 0.1}),
    "adagrad": ("Adagrad", {"learning_rate": 0.3}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.1, "momentum": 0.5, "centered": True}),
    "sgd_weight_decay": ("SGD", {"learning_rate": 0.1, "weight_decay": 0.3}),
}

_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
import numpy as np
import gradkit.tf as gtf

CASES = json.loads(sys.argv[1])
GRADS = [[0.7, -1.3], [0.2, 0.5], [-0.4, 0.05]]


def name_of(dtype):
    return getattr(dtype, "name", None) or np.dtype(dtype).name


def steps(tf, cls, kwargs):
    w = tf.Variable(np.array([0.5, 1.5]))
    opt = getattr(tf.keras.optimizers, cls)(**kwargs)
    out = []
    for g in GRADS:
        opt.apply_gradients([(tf.constant(np.array(g)), w)])
        out.append(np.asarray(w.numpy()).tolist())
    dtypes = sorted(name_of(v.dtype) for v in opt.variables if np.ndim(v.numpy()) == 0)
    return {"values": out, "dtype": name_of(w.dtype), "scalar_variable_dtypes": dtypes}


try:
    import tensorflow as tf_real
except ImportError:
    tf_real = None
result = {}
for name, (cls, kwargs) in CASES.items():
    result[name] = {"gradkit": steps(gtf, cls, kwargs)}
    if tf_real is not None:
        result[name]["keras"] = steps(tf_real, cls, kwargs)
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def float64_steps():
    return run_script(_SCRIPT, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_steps_are_keras(float64_steps, name):
    got = float64_steps[name]["gradkit"]
    if "keras" not in float64_steps[name]:
        pytest.skip("TensorFlow is not installed")
    want = float64_steps[name]["keras"]
    assert got["dtype"] == want["dtype"] == "float64"
    # iterations (int64 in Keras, int32 in gradkit) is left out: only the float scalars.
    assert [d for d in got["scalar_variable_dtypes"] if d.startswith("float")] == [
        d for d in want["scalar_variable_dtypes"] if d.startswith("float")
    ]
    np.testing.assert_allclose(got["values"], want["values"], rtol=1e-13, atol=1e-15)


def _f32(x):
    return float(np.float32(x))


def _adam_oracle(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None, grads=()):
    """Keras' Adam in float64, the bias correction's betas rounded to float32 as ops.cast does."""
    w, m, v, out = np.array([0.5, 1.5]), np.zeros(2), np.zeros(2), []
    lr = _f32(lr)  # the rate's Variable is float32
    for t, g in enumerate(grads, start=1):
        g = np.array(g)
        if weight_decay is not None:
            w = w - w * _f32(weight_decay) * lr
        alpha = lr * np.sqrt(1 - _f32(beta_2) ** t) / (1 - _f32(beta_1) ** t)
        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        w = w - (m * alpha) / (np.sqrt(v) + epsilon)
        out.append(w.tolist())
    return out


def _sgd_nesterov_oracle(lr, momentum, grads):
    w, m, out = np.array([0.5, 1.5]), np.zeros(2), []
    lr, momentum = _f32(lr), _f32(momentum)
    for g in grads:
        g = np.array(g)
        m = m * momentum - g * lr
        w = w + (m * momentum - g * lr)
        out.append(w.tolist())
    return out


GRADS = [[0.7, -1.3], [0.2, 0.5], [-0.4, 0.05]]


@pytest.mark.parametrize(
    "name, oracle",
    [
        ("adam", lambda: _adam_oracle(0.3, grads=GRADS)),
        ("adamw", lambda: _adam_oracle(0.1, weight_decay=0.1, grads=GRADS)),
        ("sgd_nesterov", lambda: _sgd_nesterov_oracle(0.3, 0.9, GRADS)),
    ],
)
def test_float64_steps_match_a_numpy_oracle(float64_steps, name, oracle):
    np.testing.assert_allclose(float64_steps[name]["gradkit"]["values"], oracle(), rtol=1e-13, atol=1e-15)
