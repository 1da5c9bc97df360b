"""Inputs TensorFlow refuses are refused with a ``[gradkit]`` error whose class TensorFlow's users
catch (shape and axis errors are ValueErrors, as TensorFlow raises them when it traces, and stay
TypeErrors/IndexErrors where JAX or NumPy raise those); ops that have no gradient in TensorFlow
(``zeros_like``, ``ones_like``, an empty ``polyval``) give None; Keras' output shapes for the
recurrent and attention layers. Checked against real TensorFlow where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

P = np.arange(6, dtype=np.float32).reshape(2, 3)

REFUSED = {
    "add_shapes": lambda tf: tf.add(tf.constant(P), tf.ones((2, 4))),
    "operator_shapes": lambda tf: tf.constant(P) * tf.ones((3, 2)),
    "matmul_inner": lambda tf: tf.matmul(tf.constant(P), tf.constant(P)),
    "matmul_vector": lambda tf: tf.matmul(tf.constant(P[0]), tf.constant(P.T)),
    "matmul_vectors": lambda tf: tf.linalg.matmul(tf.constant(P[0]), tf.constant(P[0])),
    "concat_shapes": lambda tf: tf.concat([tf.constant(P), tf.ones((2, 4))], 0),
    "reshape_size": lambda tf: tf.reshape(tf.constant(P), [4, 2]),
    "reduce_mean_axis": lambda tf: tf.reduce_mean(tf.constant(P), axis=2),
    "reduce_std_axis": lambda tf: tf.math.reduce_std(tf.constant(P), axis=-3),
    "argmax_axis": lambda tf: tf.argmax(tf.constant(P), axis=2),
    "moments_axis": lambda tf: tf.nn.moments(tf.constant(P), axes=[2]),
    "unstack_axis": lambda tf: tf.unstack(tf.constant(P), axis=2),
    "split_axis": lambda tf: tf.split(tf.constant(P), 2, axis=3),
    "gather_index": lambda tf: tf.gather(tf.constant(P), [0, 5]),
    "gather_nd_depth": lambda tf: tf.gather_nd(tf.constant([1.0, 2.0]), [[0, 0]]),
    "add_n_shapes": lambda tf: tf.add_n([tf.constant(P), tf.ones((3, 2))]),
    "add_n_broadcast": lambda tf: tf.add_n([tf.constant(P), tf.ones((3,))]),
    "softsign_int": lambda tf: tf.math.softsign(tf.constant([1, 0, -2])),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_a_gradkit_value_error(name):
    with pytest.raises(ValueError if name != "softsign_int" else TypeError) as info:
        REFUSED[name](gtf)
    assert str(info.value).startswith("[gradkit] "), info.value
    assert isinstance(info.value, gk.GradkitError)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tensorflow_refuses_them_too(name):
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises((ValueError, TypeError, IndexError, tf_real.errors.InvalidArgumentError)):
        REFUSED[name](tf_real)


def test_error_classes_keep_the_builtin_kinds_jax_and_numpy_raise():
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.matmul cannot take"):  # JAX's kind for it
        gtf.matmul(gtf.constant(P), gtf.constant(P))
    with pytest.raises(
        IndexError, match=r"^\[gradkit\] tf\.argmax cannot take float32\[2,3\]: an axis is out of range"
    ):
        gtf.argmax(gtf.constant(P), axis=2)
    with pytest.raises(IndexError, match=r"^\[gradkit\] tf.gather: index 5 is not in \[0, 2\)"):
        gtf.gather(gtf.constant(P), [5])


def test_add_n_sums_equal_shapes_and_a_tensor_s_rows():
    np.testing.assert_allclose(gtf.add_n([P, P, gtf.constant(P)]).numpy(), 3 * P)
    np.testing.assert_allclose(gtf.add_n(gtf.constant(P)).numpy(), P.sum(axis=0))
    with pytest.raises(ValueError, match="non-empty"):
        gtf.add_n([])
    with pytest.raises(ValueError, match="non-empty"):
        gtf.shape_n([])


def _no_gradient_program(tf):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        a = tf.math.polyval([], x)
        b = tf.zeros_like(x) * 3.0
        c = tf.ones_like(x, dtype=tf.int32)
        d = tf.reduce_sum(tf.ones_like(x) * x)
    return [tape.gradient(a, x), tape.gradient(b, x), tape.gradient(d, x), c]


def test_zeros_like_ones_like_and_empty_polyval_have_no_gradient():
    a, b, d, c = _no_gradient_program(gtf)
    assert a is None and b is None
    np.testing.assert_array_equal(d.numpy(), [1.0, 1.0])
    assert c.dtype == np.int32 and c.numpy().tolist() == [1, 1]


def test_no_gradient_matches_tensorflow():
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(_no_gradient_program)
    assert not isinstance(out, Exception), out


def _output_shapes(tf):
    layers = tf.keras.layers
    return [
        layers.LSTM(2, return_state=True).compute_output_shape((None, 5, 3)),
        layers.GRU(2, return_sequences=True, return_state=True).compute_output_shape((4, 5, 3)),
        layers.SimpleRNN(2).compute_output_shape((4, 5, 3)),
        layers.MultiHeadAttention(num_heads=2, key_dim=2).compute_output_shape((None, 3, 4), (None, 3, 4)),
        layers.MultiHeadAttention(num_heads=2, key_dim=2, output_shape=7).compute_output_shape((None, 3, 4), (1, 5, 6)),
    ]


def test_recurrent_and_attention_output_shapes():
    want = [((None, 2), (None, 2), (None, 2)), ((4, 5, 2), (4, 2)), (4, 2), (None, 3, 4), (None, 3, 7)]
    assert _output_shapes(gtf) == want
    tf_real = pytest.importorskip("tensorflow")
    assert [_tuples(s) for s in _output_shapes(tf_real)] == want


def _tuples(shape):
    return (
        tuple(_tuples(s) for s in shape)
        if isinstance(shape, (tuple, list)) and shape and isinstance(shape[0], (tuple, list))
        else tuple(shape)
    )
