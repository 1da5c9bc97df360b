"""A checkpoint of a Keras optimizer alone saves the Variables it trains and their state (Keras 3
lists them under ``_trainable_variables``), so a restored optimizer continues as the saved one."""

import os

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.random.RandomState(0).randn(8, 3).astype("float32")


def _model(tf):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.set_weights([np.full((3, 2), 0.1, "float32"), np.zeros(2, "float32")])
    return model


def _step(tf, model, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(X) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


def _resumed_against_continued(tf, directory, build_first):
    model, optimizer = _model(tf), tf.keras.optimizers.Adam(0.1)
    _step(tf, model, optimizer)
    _step(tf, model, optimizer)
    path = tf.train.Checkpoint(opt=optimizer).save(os.path.join(directory, "opt"))
    keys = sorted(k for k, _ in tf.train.list_variables(path))
    copy, fresh = _model(tf), tf.keras.optimizers.Adam(0.1)
    copy.set_weights(model.get_weights())
    if build_first:
        fresh.build(copy.trainable_variables)
    tf.train.Checkpoint(opt=fresh).restore(path)
    _step(tf, model, optimizer)
    _step(tf, copy, fresh)
    gap = max(np.abs(a - b).max() for a, b in zip(model.get_weights(), copy.get_weights()))
    return gap, int(fresh.iterations.numpy()), keys


@pytest.mark.parametrize("build_first", [True, False])
def test_optimizer_alone_restores_its_moments(tmp_path, build_first):
    # The oracle: training that was never interrupted.
    gap, iterations, keys = _resumed_against_continued(gtf, str(tmp_path), build_first)
    assert gap == 0.0 and iterations == 3
    assert "opt/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE" in keys


def test_model_weights_keep_the_models_path_beside_the_optimizer(tmp_path):
    model, optimizer = _model(gtf), gtf.keras.optimizers.Adam(0.1)
    _step(gtf, model, optimizer)
    path = gtf.train.Checkpoint(model=model, opt=optimizer).save(str(tmp_path / "both"))
    keys = [k for k, _ in gtf.train.list_variables(path)]
    assert "model/layers/0/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert not any(k.startswith("opt/_trainable_variables") for k in keys)


def test_optimizer_alone_matches_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    ours = _resumed_against_continued(gtf, str(tmp_path / "gk"), False)
    theirs = _resumed_against_continued(tf, str(tmp_path / "tf"), False)
    assert ours[:2] == theirs[:2]
