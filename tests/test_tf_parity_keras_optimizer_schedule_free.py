"""``tf.keras.optimizers.ScheduleFreeAdamW`` against real Keras 3 on its JAX backend (run in a
child process), and against the algorithm written out in NumPy: several steps over weights of
rank 0, 1 and 2, warm-up, weight decay, clipping, eagerly and in ``tf.function``.

Keras on the TensorFlow backend steps differently from the second step on: it recovers the
average ``x`` from the sequence ``z`` through a reference its own update has already changed
(``momentum.value`` is a live view there, an immutable array on JAX). gradkit steps as the
algorithm and Keras on JAX do; the README says so."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gradkit.tf as gtf

SHAPES = [(), (3,), (2, 2)]
VALUES = [np.linspace(-1.0, 1.5, int(np.prod(s))).astype(np.float32).reshape(s) for s in SHAPES]
CONFIGS = {
    "default": {"learning_rate": 0.05},
    "warmup": {"learning_rate": 0.1, "warmup_steps": 3, "beta_1": 0.8, "epsilon": 1e-6},
    "weight_decay_clipvalue": {"learning_rate": 0.05, "weight_decay": 0.1, "beta_2": 0.9, "clipvalue": 0.8},
}
STEPS = 4

# The same steps for either library: gradients 2 * c * (1 + 0.3 k) * w + cos(w), computed in NumPy.
_PROGRAM = """
import json, sys
import numpy as np

def run(make_variable, read, apply, make_optimizer, values, configs, steps):
    out = {}
    for name, config in configs.items():
        opt = make_optimizer(config)
        ws = [make_variable(np.asarray(v, np.float32)) for v in values]
        trace = []
        for k in range(steps):
            grads = [
                (2 * (0.5 + 0.4 * i) * (1 + 0.3 * k) * read(w) + np.cos(read(w))).astype(np.float32)
                for i, w in enumerate(ws)
            ]
            apply(opt, grads, ws)
            trace.append([read(w).tolist() for w in ws])
        out[name] = trace
    return out
"""
_KERAS_JAX = (
    _PROGRAM
    + """
import keras
values = [np.asarray(v, np.float32) for v in json.loads(sys.argv[1])]
configs = json.loads(sys.argv[2])
result = run(
    keras.Variable,
    lambda w: np.asarray(w.value),
    lambda opt, grads, ws: opt.apply_gradients(zip(grads, ws)),
    lambda config: keras.optimizers.ScheduleFreeAdamW(**config),
    values,
    configs,
    int(sys.argv[3]),
)
print(json.dumps(result))
"""
)


@pytest.fixture(scope="module")
def keras_on_jax():
    pytest.importorskip("keras")
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu"}
    args = [json.dumps([v.tolist() for v in VALUES]), json.dumps(CONFIGS), str(STEPS)]
    done = subprocess.run([sys.executable, "-c", _KERAS_JAX, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"Keras on its JAX backend did not run here: {done.stderr[-400:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _gradkit(config, compiled):
    namespace: dict = {}
    exec(_PROGRAM, namespace)  # noqa: S102  the same program text the child process runs
    step = None

    def apply(opt, grads, ws):
        nonlocal step
        if step is None:

            def one(gs):
                opt.apply_gradients(zip(gs, ws))

            step = gtf.function(one) if compiled else one
        step([gtf.constant(g) for g in grads])

    return namespace["run"](
        gtf.Variable,
        lambda w: np.asarray(w.numpy()),
        apply,
        lambda c: gtf.keras.optimizers.ScheduleFreeAdamW(**c),
        VALUES,
        {"one": config},
        STEPS,
    )["one"]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_steps_match_keras_on_jax(keras_on_jax, name, compiled):
    got = _gradkit(CONFIGS[name], compiled)
    for got_step, want_step in zip(got, keras_on_jax[name]):
        for g, w in zip(got_step, want_step):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_against_the_algorithm_in_numpy():
    # Schedule-free AdamW (Defazio et al. 2024, with Adam's second moment), by hand in float64.
    def grad_of(y):
        return 2.0 * y + np.cos(y)  # the gradient of y**2 + sin(y)

    y = np.array([0.7, -1.2], np.float64)
    z, x, v = y.copy(), y.copy(), np.zeros(2)
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    w = gtf.Variable(y.astype(np.float32))
    opt = gtf.keras.optimizers.ScheduleFreeAdamW(lr)
    for t in range(1, 6):
        g = grad_of(y)
        v = b2 * v + (1 - b2) * g**2
        z = z - lr * g / (np.sqrt(v / (1 - b2**t)) + eps)
        x = (1 - 1 / t) * x + (1 / t) * z
        y = (1 - b1) * z + b1 * x
        opt.apply_gradients([(gtf.constant(grad_of(w.numpy().astype(np.float64)).astype(np.float32)), w)])
        np.testing.assert_allclose(w.numpy(), y, rtol=2e-5, atol=1e-6)


def test_optimizer_variables_and_config_as_keras():
    tf = pytest.importorskip("tensorflow")
    got, want = [], []
    for lib, out in ((gtf, got), (tf, want)):
        opt = lib.keras.optimizers.ScheduleFreeAdamW(0.1, warmup_steps=2, name="sf")
        ws = [lib.Variable(v) for v in VALUES]
        opt.apply_gradients(zip([lib.ones_like(w) for w in ws], ws))  # the first step agrees on TensorFlow too
        out.extend([np.asarray(v.numpy()) for v in opt.variables])
        out.append(opt.get_config())
    for g, w in zip(got[:-1], want[:-1]):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert len(got) == len(want) and got[-1] == want[-1]
    assert type(gtf.keras.optimizers.get("schedulefreeadamw")).__name__ == "ScheduleFreeAdamW"
