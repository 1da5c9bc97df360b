"""``tf.keras.mixed_precision`` and ``tf.keras.config``'s dtype policies: a ``DTypePolicy``'s
compute and variable dtypes as Keras gives them; the global policy is float32, the one policy
gradkit's Keras layers compute in, and setting another is refused. Oracles: Keras 3 where
installed, and Keras' documented meaning of the policy names."""

import pytest

import gradkit.tf as gtf

NAMES = [
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "mixed_float16",
    "mixed_bfloat16",
    "int32",
    "int8",
    "bool",
    "uint8",
]


def _facts(K, name):
    policy = K.mixed_precision.Policy(name)
    return policy.name, policy.compute_dtype, policy.variable_dtype


@pytest.mark.parametrize("name", NAMES)
def test_policy_dtypes(name):
    # Keras: a mixed policy computes in its half type with float32 variables; a dtype's name
    # means that dtype for both.
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
    gtf.keras.config.set_dtype_policy(mp.Policy("float32"))
    with pytest.raises(ValueError, match=r"\[gradkit\] Invalid `policy` argument.*policy=None"):
        gtf.keras.config.set_dtype_policy(None)  # as Keras refuses it
    with pytest.raises(ValueError, match=r"\[gradkit\].*set_global_policy\('mixed_float16'\).*float32 only"):
        mp.set_global_policy("mixed_float16")
    assert mp.global_policy().name == "float32"
    with pytest.raises(ValueError, match=r"\[gradkit\] Cannot convert 'int8_from_float32'"):
        mp.Policy("int8_from_float32")  # a quantized policy, which gradkit does not have
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


def test_dtype_policies_module_matches_keras():
    keras = pytest.importorskip("keras")
    ours, theirs = gtf.keras.dtype_policies, keras.dtype_policies
    for identifier in (
        None,
        "float32",
        "mixed_bfloat16",
        "int32",
        {"class_name": "DTypePolicy", "config": {"name": "float16"}},
    ):
        mine, real = ours.get(identifier), theirs.get(identifier)
        assert (mine.name, mine.compute_dtype, mine.variable_dtype) == (
            real.name,
            real.compute_dtype,
            real.variable_dtype,
        )
    for policy in ("float16", "mixed_float16"):
        assert ours.serialize(ours.DTypePolicy(policy)) == theirs.serialize(theirs.DTypePolicy(policy))
        assert ours.serialize(ours.FloatDTypePolicy(policy)) == theirs.serialize(theirs.FloatDTypePolicy(policy))
        assert ours.deserialize(theirs.serialize(theirs.DTypePolicy(policy))) == ours.DTypePolicy(policy)
    assert isinstance(ours.FloatDTypePolicy("float32"), ours.DTypePolicy)
    for bad in (3, "foo"):
        with pytest.raises(ValueError):
            theirs.get(bad)
        with pytest.raises(ValueError, match=r"^\[gradkit\] Cannot"):
            ours.get(bad)
    with pytest.raises(TypeError, match=r"^\[gradkit\] 'name' must be a string"):
        ours.DTypePolicy(3)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.keras.dtype_policies.deserialize got"):
        ours.deserialize({"class_name": "Int8DTypePolicy", "config": {"name": "int8_from_float32"}})


def test_a_layer_has_keras_policy_attributes():
    keras = pytest.importorskip("keras")
    for K in (gtf.keras, keras):
        layer = K.layers.Dense(2)
        assert (layer.dtype_policy.name, layer.input_dtype, layer.compute_dtype) == ("float32",) * 3


def test_tf_keras_dtype_policies_has_the_float_policies_of_tensorflow():
    tf = pytest.importorskip("tensorflow")
    theirs = {n for n in dir(tf.keras.dtype_policies) if not n.startswith("_")}
    ours = {n for n in dir(gtf.keras.dtype_policies) if not n.startswith("_")}
    # Keras' quantized policies (int8/int4/float8/GPTQ/AWQ weights, and the map of them) are not in gradkit.
    assert theirs - ours == {
        "AWQDTypePolicy",
        "DTypePolicyMap",
        "GPTQDTypePolicy",
        "Int4DTypePolicy",
        "QuantizedDTypePolicy",
        "QuantizedFloat8DTypePolicy",
    }
    assert ours <= theirs
