"""gradkit.tf's Keras merging layers (Add, Subtract, Multiply, Average, Maximum, Minimum,
Concatenate, Dot and their functional forms) against real tf.keras 3: outputs, gradients w.r.t.
every input, configs, compute_output_shape and the errors for inputs Keras refuses."""

import re

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, check_output_shape, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
A, B, C = (_rs.randn(2, 3, 4).astype(np.float32) for _ in range(3))
ROW = _rs.randn(2, 4).astype(np.float32)
# Ties between inputs: TensorFlow's maximum/minimum send the gradient to the earlier one.
TIED = np.round(A), np.round(B)

ELEMENTWISE = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"]


@pytest.mark.parametrize("name", ELEMENTWISE)
@pytest.mark.parametrize(
    "inputs",
    [[A, B], [A, B, C], list(TIED), [A, ROW], [A, np.ones((2, 1, 4), np.float32)]],
    ids=["two", "three", "tied", "lower_rank", "broadcast"],
)
def test_elementwise_merges_match_keras(name, inputs):
    if name == "Subtract" and len(inputs) != 2:
        pytest.skip("Subtract takes two inputs")
    check_layer(lambda tf: getattr(tf.keras.layers, name)(name="merge"), inputs)


@pytest.mark.parametrize("name", ELEMENTWISE + ["Concatenate"])
def test_functional_forms_match_keras(name):
    def run(tf):
        return getattr(tf.keras.layers, name.lower())([tf.constant(A), tf.constant(B)]).numpy()

    np.testing.assert_allclose(run(gtf), run(tf_real), rtol=1e-6)


@pytest.mark.parametrize(
    "axis, inputs",
    [(-1, [A, B[..., :2]]), (1, [A, B[:, :1], C]), (0, [A, B]), (2, [A, C])],
    ids=["last", "middle_three", "batch", "positive"],
)
def test_concatenate_matches_keras(axis, inputs):
    check_layer(lambda tf: tf.keras.layers.Concatenate(axis=axis, name="concatenate"), inputs)


@pytest.mark.parametrize(
    "axes, normalize, inputs",
    [
        (1, False, [ROW, ROW[::-1]]),
        (-1, True, [ROW, ROW[::-1]]),
        ((1, 2), False, [_rs.randn(2, 3, 5).astype(np.float32), _rs.randn(2, 4, 3).astype(np.float32)]),
        (2, True, [A, B]),
        ((2, 1), False, [A, _rs.randn(2, 4).astype(np.float32)]),
        ((1, 1), False, [_rs.randn(2, 3, 2, 2).astype(np.float32), _rs.randn(2, 3, 5).astype(np.float32)]),
        (1, True, [np.zeros((2, 3), np.float32), ROW[:, :3]]),  # a zero sample: epsilon's bound
    ],
    ids=["rows", "rows_cosine", "pair", "rank3_cosine", "rank3_rank2", "rank4", "zero_sample"],
)
def test_dot_matches_keras(axes, normalize, inputs):
    check_layer(lambda tf: tf.keras.layers.Dot(axes, normalize=normalize, name="dot"), inputs)


def test_dot_functional_form_matches_keras():
    def run(tf):
        return tf.keras.layers.dot([tf.constant(ROW), tf.constant(ROW)], axes=1, normalize=True).numpy()

    np.testing.assert_allclose(run(gtf), run(tf_real), rtol=1e-6)


@pytest.mark.parametrize(
    "make, shapes",
    [
        (lambda L: L.Add(), [(None, 3, 4), (None, 3, 4)]),
        (lambda L: L.Maximum(), [(2, 3, 1), (None, 3, 4)]),
        (lambda L: L.Multiply(), [(None, 4), (None, 3, 4)]),
        (lambda L: L.Concatenate(axis=1), [(None, 3, 4), (None, 2, 4)]),
        (lambda L: L.Concatenate(), [(None, 3, None), (None, 3, 2)]),
        (lambda L: L.Dot((1, 2)), [(None, 3, 5), (None, 4, 3)]),
        (lambda L: L.Dot(1), [(None, 3), (None, 3)]),
    ],
    ids=["add", "maximum_broadcast", "multiply_ranks", "concatenate", "concatenate_unknown", "dot", "dot_rows"],
)
def test_compute_output_shape_matches_keras(make, shapes):
    check_output_shape(lambda tf: make(tf.keras.layers), shapes)


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.keras.layers.Add()(tf.constant(A)),
        lambda tf: tf.keras.layers.Subtract()([tf.constant(A)] * 3),
        lambda tf: tf.keras.layers.Add()([tf.constant(A), tf.constant(B[:, :2, :3])]),
        lambda tf: tf.keras.layers.Add()([tf.constant(A), tf.constant(A[:1])]),
        lambda tf: tf.keras.layers.Concatenate(axis=1)([tf.constant(A), tf.constant(B[..., :2])]),
        lambda tf: tf.keras.layers.Dot(axes=0)([tf.constant(ROW), tf.constant(ROW)]),
        lambda tf: tf.keras.layers.Dot(axes=1)([tf.constant(A), tf.constant(ROW)]),
        lambda tf: tf.keras.layers.Dot(axes=(1, 2, 3)),
        lambda tf: tf.keras.layers.Dot(axes="1"),
    ],
    ids=[
        "not_a_list",
        "subtract_three",
        "incompatible",
        "batch_sizes",
        "concat_shapes",
        "dot_batch_axis",
        "dot_sizes",
        "dot_three_axes",
        "dot_string_axes",
    ],
)
def test_refusals_match_keras(program):
    with pytest.raises((ValueError, TypeError)) as theirs:
        program(tf_real)
    builtin = ValueError if isinstance(theirs.value, ValueError) else TypeError
    with pytest.raises(builtin, match=r"\[gradkit\]"):
        program(gtf)


def test_default_names_are_keras():
    def names(tf):
        L = tf.keras.layers
        return [re.sub(r"_\d+$", "", layer.name) for layer in (L.Add(), L.Dot(1), L.Concatenate(), L.Average())]

    assert names(gtf) == names(tf_real) == ["add", "dot", "concatenate", "average"]


def test_every_merging_name_is_in_the_namespace():
    from gradkit.tf._keras import merging_layers

    keras_names = {n for n in dir(tf_real.keras.layers) if not n.startswith("_")}
    defined = {n for n in dir(merging_layers) if not n.startswith("_")} & keras_names
    assert defined <= set(dir(gtf.keras.layers))
    assert {"Add", "Dot", "concatenate", "dot"} <= defined


def test_a_model_merging_two_branches_trains_as_keras_in_a_tf_function():
    x1, x2 = _rs.randn(3, 4).astype(np.float32), _rs.randn(3, 4).astype(np.float32)

    def run(tf, weights):
        L = tf.keras.layers

        class TwoBranches(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.left, self.right = L.Dense(5), L.Dense(5)
                self.add, self.join, self.dot = L.Add(), L.Concatenate(), L.Dot(axes=1, normalize=True)
                self.head = L.Dense(1)

            def call(self, inputs):
                a, b = self.left(inputs[0]), self.right(inputs[1])
                return self.head(self.join([self.add([a, b]), L.maximum([a, b]), self.dot([a, b])]))

        model = TwoBranches()
        model([tf.constant(x1), tf.constant(x2)])
        if weights is None:
            rs = np.random.RandomState(3)
            weights = [rs.randn(*w.shape).astype(np.float32) for w in model.get_weights()]
        model.set_weights(weights)

        @tf.function
        def step(a, b):
            with tf.GradientTape() as tape:
                y = model([a, b])
                loss = tf.reduce_sum(y * y)
            return y, tape.gradient(loss, model.trainable_variables)

        y, grads = step(tf.constant(x1), tf.constant(x2))
        return weights, np.asarray(y), [np.asarray(g) for g in grads]

    weights, y_tf, grads_tf = run(tf_real, None)
    _, y_gk, grads_gk = run(gtf, weights)
    np.testing.assert_allclose(y_gk, y_tf, rtol=1e-4, atol=1e-5)
    assert len(grads_gk) == len(grads_tf) == 6
    for g, w in zip(grads_gk, grads_tf):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
