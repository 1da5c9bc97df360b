"""``tf.keras.Variable`` against Keras 3's on TensorFlow: names and paths, dtypes, shapes, options,
initializers by name and instance, the refusals, its repr, assignments and gradients."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

CASES = {
    "array": lambda K: K(np.arange(6, dtype=np.float32).reshape(2, 3)),
    "python_float": lambda K: K(3.0, name="s"),
    "python_int": lambda K: K(3),
    "int_list": lambda K: K([1, 2]),
    "float_list": lambda K: K([1.0, 2.0], trainable=False),
    "float16": lambda K: K(np.ones(2), dtype="float16"),
    "constant_initializer": lambda K: K(gtf_or_tf(K).keras.initializers.Constant(2.5), shape=(2, 2), name="c"),
    "zeros_by_name": lambda K: K("zeros", shape=(3,), name="z"),
    "options": lambda K: K(1.0, aggregation="mean", synchronization="on_write", name="o"),
}


def gtf_or_tf(K):
    return gtf if K is gtf.keras.Variable else pytest.importorskip("tensorflow")


def _describe(v):
    return {
        "name": re.sub(r"_\d+$", "", v.name),
        "path": re.sub(r"_\d+$", "", v.path),
        "dtype": str(np.dtype(v.dtype)),
        "shape": tuple(v.shape),
        "trainable": v.trainable,
        "aggregation": v.aggregation,
        "synchronization": v.synchronization,
        "value": np.asarray(v.numpy()).tolist(),
    }


@pytest.mark.parametrize("name", list(CASES))
def test_variables_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    assert _describe(CASES[name](gtf.keras.Variable)) == _describe(CASES[name](tf.keras.Variable))


def test_default_names_count_up_and_repr_reads_as_keras():
    tf = pytest.importorskip("tensorflow")
    first, second = gtf.keras.Variable(1.0), gtf.keras.Variable(1.0)
    assert first.name.startswith("variable") and second.name != first.name and first.path == first.name
    got = repr(gtf.keras.Variable(np.ones((2,), np.float32), name="r"))
    want = repr(tf.keras.Variable(np.ones((2,), np.float32), name="r"))
    assert got == want


def test_a_random_initializer_draws_the_shape_asked():
    v = gtf.keras.Variable("glorot_uniform", shape=(4, 3), name="kernel")
    limit = np.sqrt(6 / (4 + 3))
    assert v.shape == (4, 3) and np.all(np.abs(v.numpy()) <= limit) and np.std(v.numpy()) > 0


def test_assignments_and_gradients():
    v = gtf.keras.Variable(np.array([1.0, -2.0], np.float32))
    v.assign([0.5, 0.5])
    v.assign_add([1.0, 0.0])
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.sin(v) * v)
    want = jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(jnp.array([1.5, 0.5]))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), want, rtol=1e-6)
    assert isinstance(v, gtf.Variable)  # also a tf.Variable here (not in Keras on TensorFlow)


def test_refusals():
    K = gtf.keras.Variable
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape"):
        K("zeros")
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape"):
        K(np.ones(3), shape=(2,))
    with pytest.raises(ValueError, match=r"\[gradkit\].*aggregation"):
        K(1.0, aggregation="average")
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*layout"):
        K(1.0, layout="mesh")


def test_keras_variables_step_with_muon_as_in_keras():
    tf = pytest.importorskip("tensorflow")
    results = []
    for lib in (tf, gtf):
        ws = [
            lib.keras.Variable(np.eye(3, dtype=np.float32) + 0.1, name="k"),
            lib.keras.Variable(np.ones(3, np.float32)),
        ]
        opt = lib.keras.optimizers.Muon(0.1)
        for _ in range(2):
            with lib.GradientTape() as tape:
                loss = lib.reduce_sum(ws[0] ** 2) + lib.reduce_sum(lib.sin(ws[1]))
            opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
        results.append([np.asarray(w.numpy()) for w in ws])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
