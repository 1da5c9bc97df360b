"""``tf.keras.mixed_precision`` and ``tf.keras.config``'s dtype policies: a ``DTypePolicy``'s
compute and variable dtypes as Keras gives them; the global policy is float32, the one policy
gradkit's Keras layers compute in, and setting another is refused. Oracles: Keras 3 where
installed, and Keras' documented meaning of the policy names."""

import pytest

import gradkit.tf as gtf

NAMES = ["float32", "float16", "bfloat16", "float64", "mixed_float16", "mixed_bfloat16"]


def _facts(K, name):
    policy = K.mixed_precision.Policy(name)
    return policy.name, policy.compute_dtype, policy.variable_dtype


@pytest.mark.parametrize("name", NAMES)
def test_policy_dtypes(name):
    expected = {"mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}
    compute, variable = expected.get(name, (name, name))
    assert _facts(gtf.keras, name) == (name, compute, variable)


@pytest.mark.parametrize("name", NAMES)
def test_policy_dtypes_match_keras(name):
    keras = pytest.importorskip("keras")
    assert _facts(gtf.keras, name) == _facts(keras, name)


def test_the_global_policy_is_float32_and_others_are_refused():
    mp = gtf.keras.mixed_precision
    assert mp.global_policy().name == gtf.keras.config.dtype_policy().name == "float32"
    mp.set_global_policy("float32")
    gtf.keras.config.set_dtype_policy(None)
    with pytest.raises(ValueError, match=r"\[gradkit\].*set_global_policy\('mixed_float16'\).*float32 only"):
        mp.set_global_policy("mixed_float16")
    assert mp.global_policy().name == "float32"
    with pytest.raises(ValueError, match=r"\[gradkit\] Cannot convert 'int8'"):
        mp.Policy("int8")
    layer = gtf.keras.layers.Dense(2, dtype=mp.Policy("float32"))
    assert layer(gtf.ones([1, 3])).dtype == "float32"


LAYERS = {
    "GRU": lambda K, dtype: K.layers.GRU(2, dtype=dtype),
    "LSTM": lambda K, dtype: K.layers.LSTM(2, dtype=dtype),
    "Conv1D": lambda K, dtype: K.layers.Conv1D(2, 3, dtype=dtype),
    "LayerNormalization": lambda K, dtype: K.layers.LayerNormalization(dtype=dtype),
    "Embedding": lambda K, dtype: K.layers.Embedding(4, 2, dtype=dtype),
    "Attention": lambda K, dtype: K.layers.Attention(dtype=dtype),
    "Dense": lambda K, dtype: K.layers.Dense(2, dtype=dtype),
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_layer_takes_the_float32_policy_and_refuses_mixed_precision_clearly(layer):
    # Keras takes a policy object, a config dict or a name for dtype=; float32 is what gradkit's
    # layers compute in, and any other policy is refused with gradkit's error, not NumPy's.
    K, make = gtf.keras, LAYERS[layer]
    for dtype in (
        K.DTypePolicy("float32"),
        "float32",
        gtf.float32,
        {"class_name": "DTypePolicy", "config": {"name": "float32"}},
    ):
        make(K, dtype)
    for dtype in ("mixed_float16", K.DTypePolicy("mixed_bfloat16")):
        with pytest.raises(TypeError, match=r"^\[gradkit\] "):
            make(K, dtype)


def test_mixed_precision_has_keras_names():
    tf = pytest.importorskip("tensorflow")
    theirs = {n for n in dir(tf.keras.mixed_precision) if not n.startswith("_")}
    ours = {n for n in dir(gtf.keras.mixed_precision) if not n.startswith("_")}
    assert ours == theirs
    assert gtf.keras.mixed_precision.dtype_policy().name == tf.keras.mixed_precision.dtype_policy().name
