"""``tf.keras.utils.split_dataset`` against real Keras 3 on TensorFlow: arrays, tuples of arrays,
datasets of dicts, batched datasets (unbatched, split, batched again), fractions and counts, a
seeded shuffle (Python's ``random``, as Keras), and Keras' refusals."""

import random

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

ROWS = np.arange(20.0, dtype="float32").reshape(10, 2)
LABELS = np.arange(10, dtype="int32")  # int64 needs JAX's 64-bit mode in gradkit


def _described(tf, splits):
    """Each split's elements and its element spec's shapes and dtypes."""
    out = []
    for split in splits:
        specs = tf.nest.flatten(split.element_spec)
        out.append(
            [
                [tf.nest.map_structure(np.asarray, element) for element in split],
                [str([d for d in spec.shape]) + spec.dtype.name for spec in specs],
            ]
        )
    return out


def _flat(value):
    if isinstance(value, dict):
        return [_flat(value[k]) for k in sorted(value)]
    if isinstance(value, (list, tuple)):
        return [_flat(v) for v in value]
    return value


def _split(tf, dataset, **kwargs):
    return _flat(_described(tf, tf.keras.utils.split_dataset(dataset, **kwargs)))


def p_array_by_fraction(tf):
    return _split(tf, ROWS, left_size=0.8)


def p_array_by_right_count(tf):
    return _split(tf, ROWS, right_size=3)


def p_sizes_that_leave_a_middle_out(tf):
    return _split(tf, ROWS, left_size=0.3, right_size=0.2)


def p_tuple_of_arrays(tf):
    return _split(tf, (ROWS, LABELS), left_size=4)


def p_list_of_arrays(tf):
    return _split(tf, [ROWS, LABELS], left_size=0.5)


def p_dataset_of_dicts(tf):
    dataset = tf.data.Dataset.from_tensor_slices({"x": ROWS, "y": LABELS})
    return _split(tf, dataset, left_size=2, right_size=2)


def p_batched_dataset_is_rebatched(tf):
    return _split(tf, tf.data.Dataset.from_tensor_slices(ROWS).batch(3), left_size=0.5)


def p_batched_with_drop_remainder(tf):
    return _split(tf, tf.data.Dataset.from_tensor_slices(LABELS).batch(3, drop_remainder=True), left_size=4)


def p_a_map_after_batch_splits_batches(tf):
    # Keras looks at the outermost step only: a batched dataset mapped afterwards is split by batch.
    return _split(tf, tf.data.Dataset.from_tensor_slices(ROWS[:9]).batch(3).map(lambda x: x * 2), left_size=2)


def p_refuses_batches_of_unequal_shape_after_a_map(tf):
    return tf.keras.utils.split_dataset(tf.data.Dataset.from_tensor_slices(ROWS).batch(3).map(tf.identity), left_size=2)


def p_seeded_shuffle(tf):
    state = random.getstate()
    try:
        return _split(tf, (ROWS, LABELS), left_size=0.4, shuffle=True, seed=3)
    finally:
        random.setstate(state)


def p_refuses_no_sizes(tf):
    return tf.keras.utils.split_dataset(ROWS)


def p_refuses_sizes_over_one(tf):
    return tf.keras.utils.split_dataset(ROWS, left_size=0.7, right_size=0.5)


def p_refuses_a_count_as_large_as_the_data(tf):
    return tf.keras.utils.split_dataset(ROWS, left_size=10)


def p_refuses_counts_over_the_length(tf):
    return tf.keras.utils.split_dataset(ROWS, left_size=6, right_size=5)


def p_refuses_an_empty_side(tf):
    return tf.keras.utils.split_dataset(ROWS[:3], left_size=0.1)


def p_refuses_a_numpy_integer_size(tf):
    return tf.keras.utils.split_dataset(ROWS, left_size=np.int64(3))


def p_refuses_arrays_of_different_lengths(tf):
    return tf.keras.utils.split_dataset((ROWS, LABELS[:5]), left_size=0.5)


def p_refuses_a_list_of_python_lists(tf):
    return tf.keras.utils.split_dataset([[1.0, 2.0], [3.0, 4.0]], left_size=0.5)


def p_refuses_a_string(tf):
    return tf.keras.utils.split_dataset("data", left_size=0.5)


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome


def test_an_unseeded_shuffle_keeps_every_sample_once():
    import gradkit.tf as tf

    left, right = tf.keras.utils.split_dataset(ROWS, left_size=0.6, shuffle=True)
    rows = [tuple(np.asarray(r)) for r in list(left) + list(right)]
    assert len(rows) == 10 and sorted(rows) == sorted(tuple(r) for r in ROWS)
