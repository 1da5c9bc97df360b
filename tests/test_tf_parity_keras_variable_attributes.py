"""A ``tf.keras.Variable`` set as a layer's or model's attribute (in a list too) is one of its
weights, as Keras 3 tracks it: listed in order, trained by ``fit``, saved and loaded with it.
Checked against real Keras 3, including weights files written by one and read by the other."""

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


@pytest.fixture(autouse=True)
def _tensorflow_broadcasting():
    # `x * scale` broadcasts by rank as TensorFlow does; the suite's strict rank-promotion mode is
    # for gradkit's own internals.
    with jax.numpy_rank_promotion("allow"):
        yield


def _short(variables):
    return [v.name.split(":")[0].split("/")[-1] for v in variables]


def _layer_class(tf):
    K = tf.keras

    class Scaled(K.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.scale = K.Variable(np.ones(3, "float32"), name="scale")
            self.offsets = [K.Variable(np.ones(2, "float32"), name="offset")]
            self.offsets.append(K.Variable(np.zeros(2, "float32"), name="appended"))
            self.count = K.Variable(np.zeros(1, "float32"), name="count", trainable=False)
            self.untracked = tf.Variable(np.ones(1, "float32"), name="untracked")  # Keras tracks no tf.Variable

        def build(self, shape):
            self.w = self.add_weight(shape=(3, 2), initializer="ones", name="w")
            self.late = K.Variable(np.full(2, 2.0, "float32"), name="late")

        def call(self, x):
            return (x[:, :3] * self.scale) @ self.w + self.offsets[0] * self.late

    return Scaled


def p_weights_in_keras_order(tf):
    layer = _layer_class(tf)()
    layer(np.ones((1, 5), "float32"))
    frozen = _layer_class(tf)()
    frozen.trainable = False
    frozen(np.ones((1, 5), "float32"))
    return [
        _short(layer.weights),
        _short(layer.trainable_weights),
        _short(layer.non_trainable_weights),
        _short(frozen.non_trainable_weights),
    ]


def _model(tf):
    K = tf.keras

    class Model(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(1, kernel_initializer="ones")
            self.extra = K.Variable(np.ones(3, "float32"), name="extra")

        def call(self, x):
            return self.dense(x * self.extra)

    return Model()


X = np.arange(12, dtype="float32").reshape(4, 3) / 10
Y = np.ones((4, 1), "float32")


def p_fit_trains_the_attribute(tf):
    model = _model(tf)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(X, Y, epochs=2, batch_size=2, verbose=0, shuffle=False)
    return [history.history["loss"], model.extra, model.dense.kernel, _short(model.trainable_variables)]


@pytest.mark.parametrize("writer", ["tf", "gk"])
def test_weights_files_cross_load(writer, tmp_path):
    libraries = {"tf": tf_real, "gk": gtf}
    written = _model(libraries[writer])
    written(X)
    written.extra.assign([0.5, -2.0, 3.0])
    written.dense.kernel.assign([[1.0], [2.0], [3.0]])
    path = str(tmp_path / "model.weights.h5")
    written.save_weights(path)
    for reader in ("tf", "gk"):
        model = _model(libraries[reader])
        model(X)
        model.load_weights(path)
        np.testing.assert_array_equal(np.asarray(model.extra.numpy()), [0.5, -2.0, 3.0])
        np.testing.assert_allclose(np.asarray(model(X)), np.asarray(written(X)), rtol=1e-6)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    run_both_ok(program)
