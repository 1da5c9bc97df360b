"""``tf.keras.optimizers.Muon`` against real Keras 3: several steps over 2-D weights (wide and
tall; Muon's Newton-Schulz step), an embedding and a weight of a layer ``exclude_layers`` names
and a vector (Adam's step), with each kind's weight decay, Nesterov or not, ``rms_rate`` None,
clipping, a learning rate changed between steps, eagerly and in ``tf.function``; the config
both ways."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from tests._optimizer_steps import train_keras_variables  # noqa: E402

RNG = np.random.default_rng(2)
VALUES = {
    "wide": RNG.standard_normal((3, 5)).astype(np.float32),
    "tall": RNG.standard_normal((6, 2)).astype(np.float32),
    "embeddings": RNG.standard_normal((4, 3)).astype(np.float32),
    "dense_kernel": RNG.standard_normal((2, 2)).astype(np.float32),
    "bias": RNG.standard_normal(4).astype(np.float32),
}
SCALES = {name: 0.5 + i * 0.3 for i, name in enumerate(VALUES)}

OPTIMIZERS = {
    "default": lambda o: o.Muon(0.05),
    "no_nesterov_no_rms": lambda o: o.Muon(0.1, nesterov=False, rms_rate=None, momentum=0.9),
    "exclude_layers": lambda o: o.Muon(0.05, exclude_layers=["dense"], adam_lr_ratio=0.5, ns_steps=3),
    "decays": lambda o: o.Muon(0.05, weight_decay=0.1, adam_weight_decay=0.02, exclude_embeddings=False),
    "no_decay_clipnorm": lambda o: o.Muon(0.05, weight_decay=None, adam_weight_decay=None, clipnorm=0.5),
    "coefficients": lambda o: o.Muon(0.02, muon_a=2.0, muon_b=-1.5, muon_c=0.5, adam_beta_1=0.8, epsilon=1e-5),
}


def _train(tf, opt, compiled=False):
    # Keras' Muon reads each weight's path, which a Keras Variable has and a tf.Variable has not
    # (Keras raises AttributeError); gradkit's reads a tf.Variable's name instead.
    def term(tf, name, w, i):
        return tf.reduce_sum(SCALES[name] * (1.0 + 0.2 * i) * w**2 + tf.sin(3.0 * w))

    def halve_rate():
        opt.learning_rate = 0.5 * float(np.asarray(opt.learning_rate))

    return train_keras_variables(tf, opt, VALUES, term, compiled, at_step_2=halve_rate)


@pytest.mark.parametrize(
    "name, compiled",
    [(n, False) for n in OPTIMIZERS] + [("default", True), ("exclude_layers", True)],
    ids=[f"{n}-eager" for n in OPTIMIZERS] + ["default-tf.function", "exclude_layers-tf.function"],
)
def test_steps_match_keras(name, compiled):
    run_both_ok(lambda tf: _train(tf, OPTIMIZERS[name](tf.keras.optimizers), compiled=compiled))


def test_config_as_keras_and_back():
    def program(tf):
        opt = tf.keras.optimizers.Muon(0.01, exclude_layers=["head"], ns_steps=4, rms_rate=None, name="m")
        config = opt.get_config()
        again = tf.keras.optimizers.Muon.from_config(config)
        return [sorted(config.items()), again.get_config() == config]

    run_both_ok(program)


def test_get_by_name():
    assert type(gtf.keras.optimizers.get("muon")).__name__ == "Muon"


def test_tf_variables_step_as_keras_variables_of_the_same_names():
    opt_keras, opt_tf = gtf.keras.optimizers.Muon(0.05), gtf.keras.optimizers.Muon(0.05)
    a = [gtf.keras.Variable(v, name=n) for n, v in VALUES.items()]
    b = [gtf.Variable(v, name=n) for n, v in VALUES.items()]
    for opt, ws in ((opt_keras, a), (opt_tf, b)):
        opt.apply_gradients(zip([gtf.ones_like(w) * 0.3 for w in ws], ws))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
