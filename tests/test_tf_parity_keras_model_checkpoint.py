"""``tf.keras.callbacks.ModelCheckpoint``: which files ``fit`` writes (names formatted with the
epoch, batch and logs; ``save_best_only`` by ``monitor``; ``save_freq`` in batches) and what they
hold. Oracles: the training history itself (an epoch is saved exactly when its ``val_loss``
improved), and Keras 3 where installed (the same files, the same weights in them)."""

import os
import warnings

import numpy as np
import pytest

import gradkit.tf as gtf

_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(32, 3)).astype(np.float32)
_Y = (_X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
_XV = _RNG.normal(size=(8, 3)).astype(np.float32)
_YV = (_XV @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def _train(K, directory, lr=0.3):
    m = K.Sequential([K.Input((3,)), K.layers.Dense(1, kernel_initializer="zeros")])
    m.compile(optimizer=K.optimizers.SGD(lr), loss="mse", metrics=["mae"])
    callbacks = [
        K.callbacks.ModelCheckpoint(
            os.path.join(directory, "w-{epoch:02d}-{val_loss:.3f}.weights.h5"),
            save_best_only=True,
            save_weights_only=True,
        ),
        K.callbacks.ModelCheckpoint(os.path.join(directory, "sub", "m.keras"), monitor="val_mae", save_best_only=True),
        K.callbacks.ModelCheckpoint(
            os.path.join(directory, "b-{epoch}-{batch}.weights.h5"), save_weights_only=True, save_freq=3
        ),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = m.fit(
            _X, _Y, validation_data=(_XV, _YV), epochs=6, batch_size=8, verbose=0, shuffle=False, callbacks=callbacks
        )
    return m, history.history


def _weights_in(K, path):
    m = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    m.load_weights(path)
    return m.get_weights()


def test_save_best_only_saves_the_epochs_that_improved(tmp_path):
    _, history = _train(gtf.keras, str(tmp_path), lr=1.2)  # a rate that overshoots: val_loss rises too
    val = history["val_loss"]
    improved = [e for e in range(len(val)) if val[e] < min(val[:e], default=np.inf)]
    assert len(improved) < len(val)  # some epoch did not improve, so this checks the rule
    saved = sorted(f for f in os.listdir(tmp_path) if f.startswith("w-"))
    assert saved == sorted(f"w-{e + 1:02d}-{val[e]:.3f}.weights.h5" for e in improved)
    # save_freq=3 over 4 batches per epoch: after batches 3, 6 (epoch 2, batch 2), 9, 12, ...
    batches = sorted(f for f in os.listdir(tmp_path) if f.startswith("b-"))
    assert batches == sorted(f"b-{(3 * k - 1) // 4 + 1}-{(3 * k - 1) % 4 + 1}.weights.h5" for k in range(1, 9))
    assert os.listdir(tmp_path / "sub") == ["m.keras"]
    last = min(improved, key=lambda e: val[e])
    loaded = _weights_in(gtf.keras, str(tmp_path / f"w-{last + 1:02d}-{val[last]:.3f}.weights.h5"))
    assert [w.shape for w in loaded] == [(3, 1), (1,)]


def test_checkpoints_match_keras(tmp_path):
    keras = pytest.importorskip("keras")
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    ours_model, ours = _train(gtf.keras, str(ours_dir))
    theirs_model, theirs = _train(keras, str(theirs_dir))
    np.testing.assert_allclose(ours["val_loss"], theirs["val_loss"], rtol=1e-4)
    assert sorted(os.listdir(ours_dir)) == sorted(os.listdir(theirs_dir))
    for name in sorted(os.listdir(ours_dir)):
        if name.endswith(".weights.h5"):
            for a, b in zip(_weights_in(gtf.keras, str(ours_dir / name)), _weights_in(keras, str(theirs_dir / name))):
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    # The best model by val_mae, loaded back by each library.
    best = gtf.keras.models.load_model(str(ours_dir / "sub" / "m.keras"))
    best_keras = keras.models.load_model(str(theirs_dir / "sub" / "m.keras"))
    for a, b in zip(best.get_weights(), best_keras.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_bad_checkpoint_paths_are_refused():
    callbacks = gtf.keras.callbacks
    with pytest.raises(ValueError, match=r"\[gradkit\].*must end in `.weights.h5`"):
        callbacks.ModelCheckpoint("w.h5x", save_weights_only=True)
    with pytest.raises(ValueError, match=r"\[gradkit\].*must end in `.keras`"):
        callbacks.ModelCheckpoint("model.ckpt")
    with pytest.raises(ValueError, match=r"\[gradkit\] Unrecognized save_freq"):
        callbacks.ModelCheckpoint("m.keras", save_freq="batch")


def _resume(K, directory):
    x = np.random.RandomState(0).randn(16, 3).astype("float32")
    y = x[:, :1] * 2
    m = K.Sequential([K.Input((3,)), K.layers.Dense(1, kernel_initializer="ones")])
    m.compile(K.optimizers.Adam(0.1), "mse")
    m.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)  # 4 steps
    path = os.path.join(directory, "a.weights.h5")
    m.save_weights(path)
    m.optimizer.learning_rate.assign(0.001)
    m.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)  # a detour: 4 more steps
    m.load_weights(path)
    state = int(np.asarray(m.optimizer.iterations)), float(np.asarray(m.optimizer.learning_rate))
    m.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    return state, m.get_weights()


def _straight(K):
    x = np.random.RandomState(0).randn(16, 3).astype("float32")
    y = x[:, :1] * 2
    m = K.Sequential([K.Input((3,)), K.layers.Dense(1, kernel_initializer="ones")])
    m.compile(K.optimizers.Adam(0.1), "mse")
    m.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    return m.get_weights()


def test_load_weights_restores_the_optimizer_state(tmp_path):
    state, resumed = _resume(gtf.keras, str(tmp_path))
    assert state == (4, pytest.approx(0.1))
    # Resumed from the checkpoint, the detour is undone: as if trained 8 steps straight (the
    # optimizer's moments and step count included).
    for a, b in zip(resumed, _straight(gtf.keras)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_resuming_matches_keras(tmp_path):
    keras = pytest.importorskip("keras")
    ours = _resume(gtf.keras, str(tmp_path / "ours") if os.makedirs(tmp_path / "ours") is None else "")
    theirs = _resume(keras, str(tmp_path / "theirs") if os.makedirs(tmp_path / "theirs") is None else "")
    assert ours[0][0] == theirs[0][0] and ours[0][1] == pytest.approx(theirs[0][1])
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5)
