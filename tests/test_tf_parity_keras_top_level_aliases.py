"""tf.keras' top-level aliases (Layer, Loss, Metric, Optimizer, Initializer) and tf.keras.models
in gradkit.tf: the same objects as in the submodules, and names real tf.keras has."""

import numpy as np
import pytest

import gradkit.tf as gtf

ALIASES = {
    "Layer": lambda k: k.layers.Layer,
    "Loss": lambda k: k.losses.Loss,
    "Metric": lambda k: k.metrics.Metric,
    "Optimizer": lambda k: k.optimizers.Optimizer,
    "Initializer": lambda k: k.initializers.Initializer,
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_alias_is_the_submodule_class(name):
    assert getattr(gtf.keras, name) is ALIASES[name](gtf.keras)


def test_models_namespace():
    assert gtf.keras.models.Model is gtf.keras.Model
    assert gtf.keras.models.Sequential is gtf.keras.Sequential
    model = gtf.keras.models.Sequential([gtf.keras.layers.Dense(2)])
    assert model(gtf.ones([1, 3])).shape == (1, 2)
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        gtf.keras.models.nn  # noqa: B018


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_aliases_are_tf_keras_names(name):
    tf = pytest.importorskip("tensorflow")
    assert getattr(tf.keras, name) is ALIASES[name](tf.keras)


def test_models_names_are_tf_keras_names():
    tf = pytest.importorskip("tensorflow")
    ours = {n for n in dir(gtf.keras.models) if not n.startswith("_")}
    assert ours and ours <= {n for n in dir(tf.keras.models) if not n.startswith("_")}


def test_a_subclass_of_the_alias_is_a_layer():
    class Twice(gtf.keras.Layer):
        def call(self, x):
            return 2 * x

    assert isinstance(Twice(), gtf.keras.layers.Layer)
    assert Twice()(gtf.ones([2])).numpy().tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name", ["initializers", "losses", "metrics", "optimizers"])
def test_tf_top_level_keras_modules(name):
    # TensorFlow 2.21's tf.losses etc. are tf.keras' modules (the text-generation tutorial
    # writes tf.losses.SparseCategoricalCrossentropy).
    assert getattr(gtf, name) is getattr(gtf.keras, name)


def test_tf_losses_gives_the_keras_loss():
    loss = gtf.losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = [[2.0, 1.0, 0.1]]
    expected = -(2.0 - np.log(np.exp(2.0) + np.exp(1.0) + np.exp(0.1)))  # hand derivation
    np.testing.assert_allclose(float(loss([0], logits)), expected, rtol=1e-6)


@pytest.mark.parametrize("name", ["initializers", "losses", "metrics", "optimizers"])
def test_tf_top_level_keras_modules_have_tensorflows_names(name):
    tf = pytest.importorskip("tensorflow")
    theirs = {n for n in dir(getattr(tf, name)) if not n.startswith("_")}
    ours = {n for n in dir(getattr(gtf, name)) if not n.startswith("_")}
    assert {"Adam", "SparseCategoricalCrossentropy", "Mean", "GlorotUniform"} & theirs <= ours


def test_super_init_given_self_again_says_what_to_write():
    class Model(gtf.keras.Model):
        def __init__(self):
            super().__init__(self)  # as the text-generation tutorial writes; Keras raises TypeError

    with pytest.raises(TypeError, match=r"\[gradkit\].*super\(\)\.__init__\(\)"):
        Model()
