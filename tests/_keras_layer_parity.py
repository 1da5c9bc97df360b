"""One check for a Keras layer against real tf.keras: built on the same inputs in both, the same
weights assigned, then outputs (values, shapes, dtypes), gradients of a weighted sum of the
output w.r.t. every input and trainable weight, the weights' names and shapes, and the
``get_config()`` dicts (each library's config read back by the other)."""

import re

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402


def _as_inputs(tf, inputs):
    if isinstance(inputs, list):
        return [tf.constant(x) for x in inputs]
    return tf.constant(inputs)


def _flat(x):
    return list(x) if isinstance(x, list) else [x]


def run_layer(tf, make, inputs, weights=None, call_kwargs=None):
    """``make(tf)`` called on ``inputs`` (an array or a list of arrays); ``weights`` are assigned
    (a list, or a function from the weights' shapes to one) before the recorded call."""
    call_kwargs = call_kwargs or {}
    layer = make(tf)
    layer(_as_inputs(tf, inputs), **call_kwargs)
    if callable(weights):
        weights = weights([tuple(v.shape) for v in layer.weights])
    for v, w in zip(layer.weights, weights or []):
        v.assign(w)
    xs = _as_inputs(tf, inputs)
    with tf.GradientTape(persistent=True) as tape:
        for x in _flat(xs):
            tape.watch(x)
        y = layer(xs, **call_kwargs)
        cotangent = np.random.RandomState(1).randn(*y.shape).astype(np.float32)
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * cotangent)
    grads = tape.gradient(loss, [*_flat(xs), *layer.trainable_variables])
    return {
        "y": np.asarray(y),
        "dtype": np.dtype(y.dtype.name if hasattr(y.dtype, "name") else y.dtype),
        "grads": [None if g is None else np.asarray(tf.convert_to_tensor(g)) for g in grads],
        "shapes": [tuple(v.shape) for v in layer.weights],
        "names": [v.name if tf is gtf else v.path + ":0" for v in layer.weights],
        "layer": layer,
    }


def check_layer(make, inputs, call_kwargs=None, rtol=1e-5, atol=1e-5, compare_config=True):
    """gradkit.tf's layer against tf.keras' on ``inputs``; returns both results. TensorFlow's layer
    is built first: its weights' shapes pick the random values assigned in both."""
    weights = []
    for tf in (tf_real, gtf):  # auto names ('conv2d_3/kernel') count from zero in both, whatever ran before
        tf.keras.backend.clear_session(free_memory=False)

    def random_weights(shapes):
        weights.extend(np.random.RandomState(2 + i).randn(*s).astype(np.float32) for i, s in enumerate(shapes))
        return weights

    want = run_layer(tf_real, make, inputs, random_weights, call_kwargs)
    got = run_layer(gtf, make, inputs, weights, call_kwargs)
    assert got["shapes"] == want["shapes"]
    assert got["names"] == want["names"]
    assert got["y"].shape == want["y"].shape
    assert got["dtype"] == want["dtype"]
    np.testing.assert_allclose(got["y"], want["y"], rtol=rtol, atol=atol)
    assert len(got["grads"]) == len(want["grads"])
    for g, w in zip(got["grads"], want["grads"]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    if compare_config:
        check_config(got["layer"], want["layer"])
    return got, want


def _base_name(config):
    # Default names are numbered per process and library ('flatten_3' here, 'flatten_5' there).
    return {**config, "name": re.sub(r"_\d+$", "", config["name"])} if "name" in config else config


def check_config(ours, theirs):
    """The same config dict (default names up to their numbers); each library's config makes a
    layer with the same config in the other."""
    mine, keras = ours.get_config(), theirs.get_config()
    assert _base_name(mine) == _base_name(keras)
    assert type(ours).from_config(keras).get_config() == keras
    assert type(theirs).from_config(mine).get_config() == mine


def check_output_shape(make, input_shape):
    """``compute_output_shape`` as Keras 3's (None for unknown sizes)."""
    ours = make(gtf).compute_output_shape(input_shape)
    theirs = make(tf_real).compute_output_shape(input_shape)
    assert tuple(ours) == tuple(theirs)
