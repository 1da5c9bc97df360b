"""tf.einsum's shape rule against real TensorFlow: a letter names one size in every operand (a
lettered axis of size 1 does not broadcast, as it would in NumPy); only the axes an ellipsis stands
for broadcast. Values, gradients and the refusals, eagerly and inside tf.function."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import programs, run_program  # noqa: E402

ONE_ROW = np.array([[1.0, 2.0, 3.0]], np.float32)
TWO_ROWS = np.arange(6, dtype=np.float32).reshape(2, 3)


def p_same_letter_other_size_refuses(tf):
    return tf.einsum("ij,ij->ij", ONE_ROW, TWO_ROWS)


def p_batch_letter_of_size_one_refuses(tf):
    return tf.einsum("bij,bjk->bik", np.ones((1, 2, 3), np.float32), np.ones((4, 3, 5), np.float32))


def p_diagonal_of_a_non_square_refuses(tf):
    return tf.einsum("ii->i", TWO_ROWS)


def p_mismatch_inside_function_refuses(tf):
    return tf.function(lambda a, b: tf.einsum("ij,jk->ik", a, b))(TWO_ROWS, TWO_ROWS)


def p_ellipsis_broadcasts_size_one(tf):
    a, b = tf.constant(ONE_ROW), tf.constant(TWO_ROWS)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        out = tf.einsum("...j,...j->...", a, b)
    return out, tape.gradient(out, [a, b])


def p_batched_matmul_with_broadcast_batch(tf):
    a = tf.constant(np.arange(6, dtype=np.float32).reshape(1, 2, 3))
    b = tf.constant(np.ones((4, 3, 5), np.float32))
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        out = tf.einsum("...ij,...jk->...ik", a, b)
    return out, tape.gradient(tf.reduce_sum(out * out), [a, b])


def p_matching_letters_inside_function(tf):
    return tf.function(lambda a, b: tf.einsum("ij,kj->ik", a, b))(TWO_ROWS, TWO_ROWS)


@pytest.mark.parametrize("program", programs(globals()), ids=lambda p: p.__name__)
def test_einsum_labels_match_tensorflow(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
