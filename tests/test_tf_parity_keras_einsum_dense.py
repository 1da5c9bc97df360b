"""gradkit.tf's EinsumDense against real TensorFlow 2.21 / Keras 3: the same weights in both;
outputs, gradients w.r.t. the input and the weights, the weights' names and shapes,
get_config / from_config both ways, compute_output_shape and the kernel initializer's fans."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity_keras_layers import check_layer  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)

CASES = {
    "dense": ("ab,bc->ac", 4, "c", (3, 5)),
    "no_bias": ("ab,bc->ac", (4,), None, (3, 5)),
    "sequence": ("abc,cd->abd", (None, 4), "d", (2, 3, 5)),
    "heads": ("abc,cde->abde", (None, 2, 3), "de", (2, 4, 5)),
    "bias_first_axis": ("abc,cde->abde", (None, 2, 3), "d", (2, 4, 5)),
    "left_elided": ("...b,bc->...c", 3, "c", (2, 3, 4, 5)),
    "right_elided": ("ab...,bc->ac...", (4,), "c", (2, 5, 3)),
    "contract_two": ("abcd,cde->abe", (None, 3), "e", (2, 3, 4, 2)),
}


@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("key", sorted(CASES))
def test_einsum_dense_matches_keras(key, activation):
    equation, output_shape, bias_axes, shape = CASES[key]
    x = _rs.randn(*shape).astype(np.float32)
    check_layer(
        lambda tf: tf.keras.layers.EinsumDense(
            equation, output_shape, activation=activation, bias_axes=bias_axes, name="einsum_dense"
        ),
        x,
    )


@pytest.mark.parametrize("key", sorted(CASES))
def test_config_and_output_shape_match_keras(key):
    equation, output_shape, bias_axes, shape = CASES[key]

    def make(tf):
        return tf.keras.layers.EinsumDense(
            equation, output_shape, bias_axes=bias_axes, activation="tanh", bias_initializer="ones", name="e"
        )

    ours, theirs = make(gtf), make(tf_real)
    assert ours.get_config() == theirs.get_config()
    assert type(theirs).from_config(ours.get_config()).get_config() == theirs.get_config()
    assert type(ours).from_config(theirs.get_config()).get_config() == theirs.get_config()
    for batch_shape in (shape, (None, *shape[1:])):
        assert tuple(ours.compute_output_shape(batch_shape)) == tuple(theirs.compute_output_shape(batch_shape))


def test_default_kernel_initializer_counts_the_kernel_axes_as_fans():
    # Kernel (8, 40, 50) from "abc,cde->abde": Keras' glorot fans are 8 and 2000, not 40 * 8 and 40 * 50.
    def std(tf):
        tf.keras.utils.set_random_seed(0)
        layer = tf.keras.layers.EinsumDense("abc,cde->abde", (None, 40, 50))
        layer(tf.ones((1, 2, 8)))
        return float(np.std(layer.kernel.numpy()))

    np.testing.assert_allclose(std(gtf), std(tf_real), rtol=0.02)


@pytest.mark.parametrize(
    "equation, output_shape, bias_axes",
    [
        ("ab,bc", 4, None),  # no output spec
        ("ab,bc->ad", 4, None),  # 'd' in neither input nor kernel
        ("ab,bcd->ac", 4, None),  # 'd' of the kernel in neither input nor output
        ("ab,bc->ac", 4, "x"),  # a bias axis not in the output
        ("abc,cd->abd", (7, 4), None),  # the shared axis 'b' disagrees
    ],
)
def test_bad_equations_raise_value_error_as_keras(equation, output_shape, bias_axes):
    x = np.ones((2, 3, 5) if equation.startswith("abc") else (2, 3), np.float32)
    with pytest.raises(ValueError):
        tf_real.keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)(x)
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        gtf.keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)(x)


def test_refused_options_say_so():
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*lora_rank"):
        gtf.keras.layers.EinsumDense("ab,bc->ac", 2, lora_rank=2)
