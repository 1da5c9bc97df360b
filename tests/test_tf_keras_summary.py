"""``model.summary()`` against Keras 3's: the same rows (name and type, output shape,
parameter count, trainable mark) and the same totals, read back from both printed tables."""

import sys
from pathlib import Path

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _summary_table import summary as _summary  # noqa: E402


def _sequential(tf):
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(5,)),
            tf.keras.layers.Dense(8, activation="tanh", name="hidden"),
            tf.keras.layers.BatchNormalization(name="batch_normalization_of_hidden"),
            tf.keras.layers.Dense(2, name="out"),
        ],
        name="regressor",
    )


def p_sequential_with_input(tf):
    return [_summary(_sequential(tf))]


def p_compiled_and_trained(tf):
    model = _sequential(tf)
    model.compile(optimizer="adam", loss="mse")
    before = _summary(model)  # the optimizer has no state yet: no optimizer line
    model.fit(np.ones((4, 5), np.float32), np.ones((4, 2), np.float32), verbose=0)
    after = _summary(model)
    # Keras' step counter is an int64 Variable; without jax_enable_x64 gradkit's is int32, so
    # the optimizer's memory (and the total's) is 4 bytes less: compared apart, below.
    after["totals"] = [
        line.split(" (")[0] if "Total" in line or "Optimizer" in line else line for line in after["totals"]
    ]
    return [before, after]


def p_subclassed(tf):
    class TwoDense(tf.keras.Model):
        def __init__(self):
            super().__init__(name="two_dense")
            self.first = tf.keras.layers.Dense(3, name="first")
            self.second = tf.keras.layers.Dense(1, name="second")

        def call(self, x):
            return self.second(self.first(x))

    model = TwoDense()
    unbuilt = _summary(model)
    model(np.ones((2, 4), np.float32))
    return [unbuilt, _summary(model)]


def p_unbuilt_sequential_and_conv(tf):
    unbuilt = tf.keras.Sequential([tf.keras.layers.Dense(3, name="d")], name="s")
    conv = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8, 8, 3)),
            tf.keras.layers.Conv2D(4, 3, name="conv"),
            tf.keras.layers.MaxPooling2D(name="pool"),
            tf.keras.layers.Flatten(name="flat"),
            tf.keras.layers.Dense(10, name="logits"),
        ],
        name="cnn",
    )
    return [_summary(unbuilt), _summary(conv), _summary(conv, layer_range=["pool", "flat"])]


def p_nested_frozen(tf):
    inner = tf.keras.Sequential([tf.keras.layers.Dense(4, name="inner_dense")], name="block")
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(3,)),
            inner,
            tf.keras.layers.Dropout(0.5, name="drop"),
            tf.keras.layers.Dense(2, name="head"),
        ],
        name="outer",
    )
    model.get_layer("head").trainable = False
    trainable = _summary(model, show_trainable=True)
    # The narrow "Trainable" column's header is cut to fit (rich's column widths are not
    # gradkit's): the rows are compared, not the header.
    del trainable["header"]
    return [trainable, _summary(model, expand_nested=True)]


def p_custom_layer_without_compute_output_shape(tf):
    # Keras reads the row's shape off the symbolic graph where the layer cannot compute it.
    class Block(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.inner = tf.keras.layers.Dense(2, name="inner")
            self.inner.build(input_shape)

        def call(self, x):
            return self.inner(x)

    model = tf.keras.Sequential([tf.keras.Input((4,)), Block(name="block"), tf.keras.layers.Dense(1, name="d")])
    return [_summary(model)]


def p_functional_graph(tf):
    """Two inputs, a layer called twice, operators: the "Connected to" column and operator rows
    (named as Keras numbers them: both sessions cleared first)."""
    tf.keras.backend.clear_session()
    a, b = tf.keras.Input((4,), name="a"), tf.keras.Input((2,), name="b")
    shared = tf.keras.layers.Dense(3, name="shared")
    h = shared(a) + tf.keras.layers.Dense(3, name="from_b")(b)
    g = shared(tf.keras.layers.Dense(4, name="back")(-h))
    concat = tf.keras.layers.Concatenate(name="cat")([g, h])
    model = tf.keras.Model([a, b], [h[:, :1], tf.keras.layers.Dense(1, name="head")(concat)], name="graph")
    trainable = _summary(model, show_trainable=True)
    del trainable["header"]  # the narrow "Trainable" header is cut to fit rich's widths, not gradkit's
    return [_summary(model), trainable]


def p_functional_chain(tf):
    """A chain (one input, each layer once): no "Connected to" column, as in Keras."""
    tf.keras.backend.clear_session()
    x = tf.keras.Input((4,), name="x")
    y = tf.keras.layers.Dense(2, name="first")(x)
    y = tf.keras.layers.Dense(1, name="second")(y * 2.0)
    return [_summary(tf.keras.Model(x, y, name="chain"))]


@pytest.mark.parametrize(
    "program",
    [
        p_sequential_with_input,
        p_compiled_and_trained,
        p_subclassed,
        p_unbuilt_sequential_and_conv,
        p_nested_frozen,
        p_functional_graph,
        p_functional_chain,
        p_custom_layer_without_compute_output_shape,
    ],
    ids=lambda p: p.__name__,
)
def test_summary_matches_keras(program):
    expected, got = program(tf_real), program(gtf)
    assert got == expected


def test_optimizer_memory_is_its_variables_bytes():
    model = _sequential(gtf)
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 5), np.float32), np.ones((4, 2), np.float32), verbose=0)
    totals = _summary(model)["totals"]
    nbytes = sum(np.asarray(v.numpy()).nbytes for v in model.optimizer.variables)
    assert totals[3] == f" Optimizer params: 166 ({nbytes:.2f} B)"  # 2 * 82 slots, the counter and the rate


def test_summary_prints_to_stdout_and_checks_its_arguments(capsys):
    model = _sequential(gtf)
    model.summary()
    out = capsys.readouterr().out
    assert out.startswith('Model: "regressor"') and "Total params: 98 (392.00 B)" in out
    assert all(len(line) <= 88 for line in out.splitlines())
    with pytest.raises(ValueError, match=r"\[gradkit\].*layer_range"):
        model.summary(layer_range=["dense"])
    with pytest.raises(ValueError, match=r"\[gradkit\].*Insufficient console width"):
        model.summary(line_length=5)
