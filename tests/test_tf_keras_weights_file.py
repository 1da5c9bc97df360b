"""``model.save_weights`` / ``model.load_weights``: Keras 3's ``.weights.h5`` files.

The oracle is real Keras 3 (skipped when TensorFlow is not installed): the same architecture
built in both, a file written by either loads in the other and gives the same weights, and the
files hold the same datasets under the same paths. The error paths (suffix, unbuilt model,
missing file, overwrite=False, a mismatch, h5py missing) are gradkit's own.
"""

import os
import sys

import numpy as np
import pytest

import gradkit.tf as gtf

h5py = pytest.importorskip("h5py")


@pytest.fixture(scope="module")
def tf_real():
    return pytest.importorskip("tensorflow")


def _sequential(tf):
    layers = tf.keras.layers
    return tf.keras.Sequential(
        [
            tf.keras.Input((3,)),
            layers.Dense(4, activation="relu"),
            layers.BatchNormalization(),
            layers.Dropout(0.2),
            layers.Dense(2),
        ]
    )


def _subclassed(tf):
    layers = tf.keras.layers

    class Block(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(4)
            self.norm = layers.BatchNormalization()
            self.parts = [layers.Dense(4), layers.Dropout(0.1), [layers.Dense(4)]]
            self.named = {"gate": layers.Dense(4)}

        def build(self, input_shape):
            self.scale = self.add_weight(shape=(1, 4), initializer="ones", name="scale")

        def call(self, x, training=False):
            h = self.norm(self.dense(x), training=training)
            return self.parts[2][0](self.parts[0](h)) * self.named["gate"](h) * self.scale

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.extra = [layers.Dense(3)]
            self.out = layers.Dense(1)

        def call(self, x, training=False):
            return self.out(self.block(x, training=training)) + self.extra[0](x)[:, :1]

    model = Net()
    model(np.zeros((2, 3), np.float32))
    return model


def _functional(tf):
    layers = tf.keras.layers
    inputs = tf.keras.Input((5, 3))
    x = layers.LSTM(4, return_sequences=True)(inputs)
    x = layers.Bidirectional(layers.GRU(2, return_sequences=True))(x)
    x = layers.TimeDistributed(layers.Dense(3))(x)
    x = layers.MultiHeadAttention(num_heads=2, key_dim=2)(x, x)
    x = layers.RNN([layers.SimpleRNNCell(3), layers.SimpleRNNCell(2)])(x)
    inner = tf.keras.Sequential([layers.Dense(2), layers.LayerNormalization()])
    x = layers.Concatenate()([x, inner(x)])
    x = layers.BatchNormalization()(x)
    return tf.keras.Model(inputs, layers.Dense(1)(x))


def _random_weights(model, seed: int) -> list:
    rng = np.random.default_rng(seed)
    # Uniform in [0.5, 1.5]: a valid moving variance for BatchNormalization wherever it lands.
    return [rng.uniform(0.5, 1.5, size=w.shape).astype(np.float32) for w in model.get_weights()]


def _datasets(path) -> set:
    found = set()
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.add((name, obj.shape)) if isinstance(obj, h5py.Dataset) else None)
    return found


def _assert_same_weights(a, b) -> None:
    assert len(a.weights) == len(b.weights)
    for x, y in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize(
    "build", [_sequential, _subclassed, _functional], ids=["sequential", "subclassed", "functional"]
)
def test_weights_files_load_both_ways_with_keras(tf_real, tmp_path, build):
    keras_model, gradkit_model = build(tf_real), build(gtf)
    assert [tuple(w.shape) for w in keras_model.weights] == [tuple(w.shape) for w in gradkit_model.weights]

    keras_model.set_weights(_random_weights(keras_model, 1))
    keras_model.save_weights(tmp_path / "keras.weights.h5")
    gradkit_model.load_weights(tmp_path / "keras.weights.h5")
    _assert_same_weights(keras_model, gradkit_model)

    gradkit_model.set_weights(_random_weights(gradkit_model, 2))
    gradkit_model.save_weights(str(tmp_path / "gradkit.weights.h5"))
    keras_model.load_weights(str(tmp_path / "gradkit.weights.h5"))
    _assert_same_weights(keras_model, gradkit_model)

    # Every dataset where Keras puts it (Keras also writes empty groups for some sublayers
    # gradkit's layers do without, such as MultiHeadAttention's softmax).
    assert _datasets(tmp_path / "gradkit.weights.h5") == _datasets(tmp_path / "keras.weights.h5")
    with h5py.File(tmp_path / "gradkit.weights.h5", "r") as f:
        assert f["vars"].attrs["name"] == gradkit_model.name


def test_a_compiled_keras_model_s_file_loads_into_a_fresh_compiled_model(tf_real, tmp_path):
    keras_model = _sequential(tf_real)
    keras_model.compile(optimizer="adam", loss="mse")
    keras_model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    keras_model.save_weights(tmp_path / "trained.weights.h5")
    with h5py.File(tmp_path / "trained.weights.h5", "r") as f:
        assert "optimizer" in f  # Keras writes a compiled model's optimizer state
    gradkit_model = _sequential(gtf)
    gradkit_model.compile(optimizer="adam", loss="mse")
    # The fresh optimizer has no slots yet: its state is skipped with Keras' own warning.
    with pytest.warns(UserWarning, match="Skipping variable loading for optimizer"):
        gradkit_model.load_weights(tmp_path / "trained.weights.h5")
    _assert_same_weights(keras_model, gradkit_model)
    gradkit_model.save_weights(tmp_path / "mine.weights.h5")
    with h5py.File(tmp_path / "mine.weights.h5", "r") as f:
        assert sorted(f["optimizer"]["vars"]) == ["0", "1"]  # iterations and the rate, as Keras writes them


def test_round_trip_without_tensorflow(tmp_path):
    gtf.keras.utils.set_random_seed(0)
    model = _subclassed(gtf)
    model.set_weights(_random_weights(model, 3))
    model.save_weights(tmp_path / "m.weights.h5")
    other = _subclassed(gtf)
    other.load_weights(tmp_path / "m.weights.h5")
    _assert_same_weights(model, other)
    x = np.random.default_rng(4).normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_array_equal(model(x).numpy(), other(x).numpy())
    assert sorted(os.listdir(tmp_path)) == ["m.weights.h5"]  # written under a temporary name, then renamed


def test_suffixes_and_file_kinds_are_refused_clearly(tmp_path):
    model = _sequential(gtf)
    with pytest.raises(ValueError, match=r"\[gradkit\] The filename must end in `.weights.h5`"):
        model.save_weights(tmp_path / "m.h5")
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*\.keras"):
        model.load_weights(tmp_path / "m.keras")
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*legacy Keras 2"):
        model.load_weights(tmp_path / "m.h5")
    with pytest.raises(ValueError, match=r"\[gradkit\] File format not supported"):
        model.load_weights(tmp_path / "m.ckpt")
    with pytest.raises(NotImplementedError, match="sharded"):
        model.save_weights(tmp_path / "m.weights.h5", max_shard_size=1)
    with pytest.raises(FileNotFoundError, match=r"\[gradkit\].*no such file"):
        model.load_weights(tmp_path / "missing.weights.h5")
    unbuilt = gtf.keras.Sequential([gtf.keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="has not yet been built"):
        unbuilt.save_weights(tmp_path / "u.weights.h5")
    with pytest.raises(ValueError, match="has not yet been built"):
        unbuilt.load_weights(tmp_path / "u.weights.h5")


def test_overwrite_false_refuses_instead_of_asking(tmp_path):
    model = _sequential(gtf)
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    before = path.read_bytes()
    model.set_weights(_random_weights(model, 5))
    with pytest.raises(FileExistsError, match=r"\[gradkit\].*overwrite=True"):
        model.save_weights(path, overwrite=False)
    assert path.read_bytes() == before
    model.save_weights(path)  # overwrite=True by default
    assert path.read_bytes() != before


def test_a_mismatch_changes_nothing_unless_skipped(tmp_path):
    saved = _sequential(gtf)
    saved.set_weights(_random_weights(saved, 6))
    saved.save_weights(tmp_path / "m.weights.h5")
    layers = gtf.keras.layers
    wider = gtf.keras.Sequential(
        [gtf.keras.Input((3,)), layers.Dense(4), layers.BatchNormalization(), layers.Dropout(0.2), layers.Dense(5)]
    )
    before = wider.get_weights()
    with pytest.raises(
        ValueError, match=r"(?s)\[gradkit\] A total of 1 objects could not be loaded.*No weight was changed"
    ):
        wider.load_weights(tmp_path / "m.weights.h5")
    for a, b in zip(before, wider.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.warns(UserWarning, match="could not be loaded"):
        wider.load_weights(tmp_path / "m.weights.h5", skip_mismatch=True)
    for a, b in zip(saved.get_weights()[:6], wider.get_weights()[:6]):
        np.testing.assert_array_equal(a, b)  # the layers that fit were loaded
    np.testing.assert_array_equal(before[6], wider.get_weights()[6])
    with pytest.raises(ValueError, match="Invalid keyword arguments"):
        wider.load_weights(tmp_path / "m.weights.h5", by_name=True)


def test_without_h5py_the_error_says_what_to_install(tmp_path, monkeypatch):
    model = _sequential(gtf)
    model.save_weights(tmp_path / "m.weights.h5")
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"\[gradkit\].*pip install h5py.*tf.train.Checkpoint"):
        model.save_weights(tmp_path / "n.weights.h5")
    with pytest.raises(ImportError, match=r"pip install h5py"):
        model.load_weights(tmp_path / "m.weights.h5")
    assert not os.path.exists(tmp_path / "n.weights.h5")
