"""dir(gradkit.tf.keras) and of its submodules list Keras' public names only (those gradkit
implements), as dir(tf.keras...) does, and no helper or import is reachable there."""

import importlib

import pytest

import gradkit.tf as gtf

SUBMODULES = [
    "",
    "layers",
    "losses",
    "metrics",
    "optimizers",
    "optimizers.schedules",
    "initializers",
    "activations",
    "utils",
    "backend",
    "callbacks",
]
# The modules that implement a namespace: a public Keras name they define must be exported.
MODULES = {
    "layers": ["layers"],
    "losses": ["losses", "losses_overlap", "losses_gce", "losses_circle", "losses_ctc", "loss_registry"],
    "metrics": ["metrics"],
    "optimizers": ["optimizers"],
    "optimizers.schedules": ["schedules"],
}


def _resolve(root, path):
    for part in filter(None, path.split(".")):
        root = getattr(root, part)
    return root


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


@pytest.mark.parametrize("sub", SUBMODULES)
def test_dir_lists_only_keras_names(sub):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    ours = _public(_resolve(gtf.keras, sub))
    # Keras 3's own keras.losses has kl_divergence, mean_squared_error, ...: kept, though tf.keras.losses lacks them.
    allowed = _public(_resolve(tf.keras, sub)) | _public(_resolve(keras, sub))
    assert ours <= allowed, sorted(ours - allowed)
    assert ours


@pytest.mark.parametrize("name", ["jax", "np", "jnp", "same_rank", "LossFunctionWrapper", "EPSILON", "call", "math"])
def test_helpers_are_not_reachable(name):
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        getattr(gtf.keras.losses, name)


@pytest.mark.parametrize(
    "sub,name", [("layers", "nn"), ("optimizers", "rules"), ("metrics", "jnp"), ("", "losses_ctc")]
)
def test_other_helpers_are_not_reachable(sub, name):
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        getattr(_resolve(gtf.keras, sub), name)


@pytest.mark.parametrize("sub", sorted(MODULES))
def test_every_keras_name_implemented_is_exported(sub):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    keras_names = _public(_resolve(tf.keras, sub)) | _public(_resolve(keras, sub))
    defined = set()
    for module in MODULES[sub]:
        defined |= _public(importlib.import_module(f"gradkit.tf._keras.{module}")) & keras_names
    assert defined <= _public(_resolve(gtf.keras, sub)), sorted(defined - _public(_resolve(gtf.keras, sub)))


def test_losses_has_every_name_of_tf_keras_losses():
    tf = pytest.importorskip("tensorflow")
    assert _public(tf.keras.losses) <= _public(gtf.keras.losses)
