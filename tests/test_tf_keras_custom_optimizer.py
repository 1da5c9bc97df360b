"""An optimizer of your own (a ``tf.keras.optimizers.Optimizer`` subclass writing ``build`` and
``update_step``, Keras 3's API): eager steps, clipping, weight decay with a schedule inside a
``tf.function``, ``model.fit``, and its config, compared with Keras on TensorFlow (skipped
without it) and with the same steps written out in NumPy."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _momentum_class(tf):
    keras = tf.keras

    class Momentum(keras.optimizers.Optimizer):
        def __init__(self, learning_rate=0.1, beta=0.9, name="momentum", **kw):
            super().__init__(learning_rate=learning_rate, name=name, **kw)
            self.beta = beta

        def build(self, var_list):
            if self.built:
                return
            super().build(var_list)
            self.m = [self.add_variable_from_reference(v, "m") for v in var_list]

        def update_step(self, gradient, variable, learning_rate):
            lr = keras.ops.cast(learning_rate, variable.dtype)
            m = self.m[self._get_variable_index(variable)]
            self.assign(m, self.beta * m + gradient)
            self.assign_sub(variable, lr * m)

        def get_config(self):
            return {**super().get_config(), "beta": self.beta}

    return Momentum


def _eager(tf, **options):
    opt = _momentum_class(tf)(0.1, **options)
    w = tf.Variable([1.0, 2.0, 3.0])
    for i in range(3):
        opt.apply_gradients([(tf.constant([0.3, -1.0 * i, 2.0]), w)])
    return w.numpy(), int(opt.iterations)


def _numpy_momentum(clipnorm=None):
    w, m = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    for i in range(3):
        g = np.array([0.3, -1.0 * i, 2.0])
        if clipnorm is not None:
            g = g * clipnorm / max(np.linalg.norm(g), clipnorm)
        m = 0.9 * m + g
        w = w - 0.1 * m
    return w


@pytest.mark.parametrize("clipnorm", [None, 1.0])
def test_a_custom_update_step_runs_as_keras(clipnorm):
    options = {} if clipnorm is None else {"clipnorm": clipnorm}
    got, iterations = _eager(gtf, **options)
    np.testing.assert_allclose(got, _numpy_momentum(clipnorm), rtol=1e-5)
    assert iterations == 3
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _eager(tf, **options)[0], rtol=1e-6)


def _traced_and_fit(tf):
    Momentum = _momentum_class(tf)
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)
    opt = Momentum(schedule, weight_decay=0.1)
    w = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def step(g):
        opt.apply_gradients([(g, w)])

    for i in range(3):
        step(tf.constant([0.3, -1.0 * i, 2.0]))
    config = opt.get_config()
    again = Momentum.from_config(config)
    x = np.random.RandomState(0).rand(16, 3).astype("float32")
    y = np.random.RandomState(1).rand(16, 1).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(Momentum(0.05), "mse")
    history = model.fit(x, y, epochs=3, batch_size=8, verbose=0, shuffle=False)
    return w.numpy(), int(opt.iterations), sorted(config), again.beta, history.history["loss"], model.get_weights()


def test_a_custom_optimizer_in_a_tf_function_in_fit_and_from_its_config():
    got = _traced_and_fit(gtf)
    assert got[1] == 3 and got[3] == 0.9 and "beta" in got[2]
    tf = pytest.importorskip("tensorflow")
    want = _traced_and_fit(tf)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    assert got[1:4] == want[1:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5)
    for a, b in zip(got[5], want[5]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_what_a_custom_optimizer_refuses():
    Momentum = _momentum_class(gtf)
    with pytest.raises(NotImplementedError, match="use_ema"):
        Momentum(0.1, use_ema=True)

    class NoStep(gtf.keras.optimizers.Optimizer):
        pass

    w = gtf.Variable([1.0])
    with pytest.raises(NotImplementedError, match="update_step"):
        NoStep(0.1).apply_gradients([(gtf.constant([1.0]), w)])
    opt = Momentum(0.1)
    opt.build([w])
    other = gtf.Variable([2.0])
    with pytest.raises(KeyError, match="not among the Variables given to build"):
        opt.apply_gradients([(gtf.constant([1.0]), other)])
    assert other.numpy().tolist() == [2.0]


def _trained_and_saved(tf, path, package):
    Momentum = tf.keras.utils.register_keras_serializable(package=package)(_momentum_class(tf))
    x = np.linspace(0, 1, 24, dtype="float32").reshape(8, 3)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(Momentum(0.01), "mse")
    model.fit(x, np.ones((8, 1), "float32"), batch_size=4, epochs=1, verbose=0, shuffle=False)
    model.save(str(path))
    return int(model.optimizer.iterations.numpy()), model.optimizer.m[0].numpy().ravel()


def _loaded_state(tf, path):
    loaded = tf.keras.models.load_model(str(path))
    return int(loaded.optimizer.iterations.numpy()), loaded.optimizer.m[0].numpy().ravel()


def test_a_custom_optimizers_state_saves_and_loads(tmp_path):
    gk_file, tf_file = tmp_path / "gk.keras", tmp_path / "tf.keras"
    steps, slot = _trained_and_saved(gtf, gk_file, "custom_opt")
    assert steps == 2
    loaded_steps, loaded_slot = _loaded_state(gtf, gk_file)
    assert loaded_steps == 2
    np.testing.assert_allclose(loaded_slot, slot, rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    want_steps, want_slot = _trained_and_saved(tf, tf_file, "custom_opt")
    np.testing.assert_allclose(slot, want_slot, rtol=1e-5)
    for reader, path, expected in ((gtf, tf_file, want_slot), (tf, gk_file, slot)):  # each reads the other's
        steps, got = _loaded_state(reader, path)
        assert steps == 2
        np.testing.assert_allclose(got, expected, rtol=1e-6)
