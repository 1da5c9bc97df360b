"""Adadelta, Ftrl, Lion, Lamb and Adafactor on float64 Variables (rank 1 and rank 2, which
Adafactor factors) against Keras 3 on TensorFlow, to float64 rounding: the hyperparameters
Keras casts through float32 (``ops.cast``) and those it uses as exact Python floats must be
the same ones. float64 needs ``jax_enable_x64``, so the steps run in a subprocess."""

import numpy as np
import pytest
from _x64_subprocess import run_script

pytest.importorskip("tensorflow")


CASES = {
    "adadelta": ("Adadelta", {"learning_rate": 1.0, "rho": 0.9}),
    "ftrl": (
        "Ftrl",
        {
            "learning_rate": 0.3,
            "learning_rate_power": -0.6,
            "l1_regularization_strength": 0.1,
            "l2_regularization_strength": 0.2,
            "l2_shrinkage_regularization_strength": 0.1,
            "beta": 0.1,
        },
    ),
    "lion": ("Lion", {"learning_rate": 0.1, "beta_1": 0.8, "weight_decay": 0.1}),
    "lamb": ("Lamb", {"learning_rate": 0.1, "beta_1": 0.8}),
    "adafactor": ("Adafactor", {"learning_rate": 0.3, "beta_2_decay": -0.7}),
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
GRADS = [[0.7, -1.3, 0.2, 0.5, -0.4, 0.05], [0.2, 0.5, -0.1, 0.3, 0.9, -0.6], [-0.4, 0.05, 0.6, -0.2, 0.1, 0.3]]


def steps(tf, cls, kwargs):
    ws = [tf.Variable(np.array([0.5, 1.5])), tf.Variable(np.array([[0.5, -1.0], [0.25, 2.0], [1.0, 0.1]]))]
    opt = getattr(tf.keras.optimizers, cls)(**kwargs)
    out = []
    for g in GRADS:
        g = np.array(g)
        opt.apply_gradients([(tf.constant(g[:2]), ws[0]), (tf.constant(g.reshape(3, 2)), ws[1])])
        out.append([np.asarray(w.numpy()).tolist() for w in ws])
    return {"values": out, "dtypes": [np.dtype(w.dtype.name).name for w in ws]}


result = {name: {"gradkit": steps(gtf, *case), "keras": steps(tf_real, *case)} for name, case in CASES.items()}
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def float64_steps():
    return run_script(_SCRIPT, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_steps_are_keras(float64_steps, name):
    got, want = float64_steps[name]["gradkit"], float64_steps[name]["keras"]
    assert got["dtypes"] == want["dtypes"] == ["float64", "float64"]
    for got_step, want_step in zip(got["values"], want["values"]):
        for g, w in zip(got_step, want_step):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
