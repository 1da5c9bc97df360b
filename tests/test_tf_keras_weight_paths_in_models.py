"""A weight's ``path`` names the models and layers it was built in, as Keras 3's does
(``'sequential/dense/kernel'``; a functional model's layers are built outside it), so a
``MultiOptimizer`` keyed by Keras paths routes each weight as Keras does. Oracle: the paths
Keras' name scopes give (by hand) and Keras 3 itself where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _paths(tf):
    keras = tf.keras
    keras.backend.clear_session()
    layers = keras.layers
    found = {}
    found["sequential"] = keras.Sequential(
        [keras.Input((3,)), layers.Dense(4, name="dense"), layers.Dense(2, name="out")], name="seq"
    )
    lazy = keras.Sequential([layers.Dense(4, name="dense")], name="lazy")
    lazy(tf.ones((2, 3)))
    found["built_on_call"] = lazy
    inner = keras.Sequential([layers.Dense(3, name="dd")], name="inner")
    found["nested"] = keras.Sequential([keras.Input((3,)), inner, layers.Dense(1, name="o")], name="outer")

    class Sub(keras.Model):
        def __init__(self):
            super().__init__(name="sub")
            self.mha = layers.MultiHeadAttention(1, 2, name="mha")
            self.w = self.add_weight(shape=(3,), name="w")

        def call(self, x):
            return self.mha(x, x) * tf.reduce_sum(self.w)

    sub = Sub()
    sub(tf.ones((1, 2, 3)))
    found["subclassed"] = sub

    class Block(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d1 = layers.Dense(2, name="d1")

        def build(self, shape):
            self.d1.build(shape)
            self.v = self.add_weight(shape=(2,), name="v")

        def call(self, x):
            return self.d1(x) + tf.reshape(self.v, (1, 2))

    found["block"] = keras.Sequential([keras.Input((3,)), Block(name="blk")], name="bs")
    x = keras.Input((3,))
    functional = keras.Model(x, layers.Dense(2, name="d")(x), name="fn")
    found["functional_inside"] = keras.Sequential(
        [keras.Input((3,)), functional, layers.Dense(1, name="e")], name="wrap"
    )
    found["wrappers"] = keras.Sequential(
        [
            keras.Input((4, 3)),
            layers.TimeDistributed(layers.Dense(2, name="td_d"), name="td"),
            layers.Bidirectional(layers.GRU(1, name="g"), name="b"),
        ],
        name="wr",
    )
    return {key: [w.path for w in model.weights] for key, model in found.items()}


def test_weight_paths_name_the_enclosing_models():
    got = _paths(gtf)
    assert got["sequential"] == ["seq/dense/kernel", "seq/dense/bias", "seq/out/kernel", "seq/out/bias"]
    assert got["built_on_call"] == ["lazy/dense/kernel", "lazy/dense/bias"]
    assert got["nested"][:2] == ["outer/inner/dd/kernel", "outer/inner/dd/bias"]
    assert got["subclassed"][0] == "sub/w" and got["subclassed"][1] == "sub/mha/query/kernel"
    assert got["block"] == ["bs/blk/v", "bs/blk/d1/kernel", "bs/blk/d1/bias"]
    assert got["functional_inside"] == ["d/kernel", "d/bias", "wrap/e/kernel", "wrap/e/bias"]
    assert got["wrappers"][:3] == ["wr/td/td_d/kernel", "wr/td/td_d/bias", "wr/b/forward_g/gru_cell/kernel"]
    tf = pytest.importorskip("tensorflow")
    assert got == _paths(tf)


def _fit_with_routing(tf):
    keras = tf.keras
    keras.backend.clear_session()
    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(4, name="dense"), keras.layers.Dense(2, name="out")], name="seq"
    )
    model.set_weights(
        [
            np.full(w.shape, 0.1, np.float32) + 0.05 * np.arange(w.size, dtype=np.float32).reshape(w.shape)
            for w in model.get_weights()
        ]
    )
    routing = keras.optimizers.OptimizerMap(keras.optimizers.SGD(0.0))
    routing["seq/dense/.*"] = keras.optimizers.SGD(0.5)
    model.compile(keras.optimizers.MultiOptimizer(routing), "mse")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    before = model.get_weights()
    model.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
    return before, model.get_weights()


def test_multi_optimizer_routes_by_the_keras_path():
    before, after = _fit_with_routing(gtf)
    # The pattern names the first layer inside the Sequential: it trains, the rest (rate 0) stays.
    assert not np.allclose(before[0], after[0])
    for b, a in zip(before[2:], after[2:]):
        np.testing.assert_array_equal(a, b)
    tf = pytest.importorskip("tensorflow")
    for got, want in zip(after, _fit_with_routing(tf)[1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
