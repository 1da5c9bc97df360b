"""``tf.data.Dataset.shuffle`` by its properties (TensorFlow draws with its own generator, so its
orders are not compared): each pass is a permutation; the buffer algorithm's locality (the
element given out at position p is one of the first p + buffer_size); reproducible from
``tf.random.set_seed`` and the op seed as TensorFlow's; a new order each pass unless
``reshuffle_each_iteration=False``; ``buffer_size=1`` keeps the order."""

import numpy as np
import pytest

import gradkit.tf as tf

N = 40


def _order(ds) -> list:
    return [int(v) for v in ds.as_numpy_iterator()]


def _sources():
    """The same 40 elements as one chunk (slices), as elements made one by one (map, generator)."""
    return {
        "slices": tf.data.Dataset.from_tensor_slices(np.arange(N)),
        "range": tf.data.Dataset.range(N),
        "map": tf.data.Dataset.range(N).map(lambda v: v + 0),
        "generator": tf.data.Dataset.from_generator(
            lambda: iter(range(N)), output_signature=tf.TensorSpec((), tf.int32)
        ),
    }


@pytest.mark.parametrize("source", sorted(_sources()))
@pytest.mark.parametrize("buffer_size", [1, 5, N, 1000])
def test_each_pass_is_a_permutation_with_the_buffer_algorithms_locality(source, buffer_size):
    ds = _sources()[source].shuffle(buffer_size, seed=3)
    for _ in range(2):
        order = _order(ds)
        assert sorted(order) == list(range(N))
        assert all(v < p + buffer_size for p, v in enumerate(order)), order
    if buffer_size == 1:
        assert order == list(range(N))


def test_reshuffles_each_pass_unless_told_not_to():
    ds = tf.data.Dataset.range(N).shuffle(N, seed=1)
    assert _order(ds) != _order(ds)
    fixed = tf.data.Dataset.range(N).shuffle(N, seed=1, reshuffle_each_iteration=False)
    assert _order(fixed) == _order(fixed) != list(range(N))
    repeated = _order(tf.data.Dataset.range(N).shuffle(N, seed=1).repeat(2))
    assert repeated[:N] != repeated[N:] and sorted(repeated[N:]) == list(range(N))


def test_seeds_follow_tensorflows_rules():
    def orders(seed):
        ds = tf.data.Dataset.range(N).shuffle(10, seed=seed)
        return _order(ds), _order(ds)

    tf.random.set_seed(7)
    first = orders(None), orders(None)
    tf.random.set_seed(7)
    assert (orders(None), orders(None)) == first  # the global seed fixes them
    assert first[0] != first[1]  # two datasets made in turn draw their own
    assert orders(5) == orders(5) != orders(6)  # the op seed fixes a dataset's orders
    tf.random.set_seed(8)
    other_global = orders(5)
    tf.random.set_seed(7)
    assert orders(5) != other_global
    tf.keras.utils.set_random_seed(7)  # Keras' seeding sets tf.random's global seed
    assert (orders(None), orders(None)) == first


def test_a_full_buffer_draws_each_element_first_about_equally_often():
    ds = tf.data.Dataset.range(5).shuffle(5, seed=0)
    firsts = np.bincount([_order(ds)[0] for _ in range(500)], minlength=5)
    assert firsts.min() > 60, firsts  # 100 expected each; 60 is about 4.5 standard deviations off


def test_shuffles_structures_batches_and_elements_of_several_shapes():
    x = np.arange(2 * N, dtype=np.float32).reshape(N, 2)
    ds = tf.data.Dataset.from_tensor_slices({"x": x, "i": np.arange(N)}).shuffle(8, seed=2).batch(16)
    batches = list(ds)
    assert [b["x"].shape[0] for b in batches] == [16, 16, 8]
    index = np.concatenate([b["i"].numpy() for b in batches])
    np.testing.assert_array_equal(np.concatenate([b["x"].numpy() for b in batches]), x[index])
    ragged = tf.data.Dataset.from_generator(
        lambda: (np.full((i % 3 + 1,), i, np.int32) for i in range(12)),
        output_signature=tf.TensorSpec((None,), tf.int32),
    )
    shuffled = [e.numpy() for e in ragged.shuffle(4, seed=0)]
    assert sorted(int(e[0]) for e in shuffled) == list(range(12))
    assert all(len(e) == int(e[0]) % 3 + 1 for e in shuffled)


def test_shuffle_before_repeat_of_an_endless_dataset_keeps_going():
    ds = tf.data.Dataset.range(6).repeat().shuffle(4, seed=1).take(30)
    order = _order(ds)
    assert len(order) == 30 and set(order) == set(range(6))


def test_a_reshuffling_dataset_iterated_inside_tf_function_is_refused():
    # TensorFlow draws a new order at each call; a trace would fix one order for every call.
    ds = tf.data.Dataset.range(8).shuffle(8, seed=0).batch(4)

    @tf.function
    def first_batch():
        for batch in ds:
            return batch

    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*reshuffle_each_iteration=True.*tf.function"):
        first_batch()
    fixed = tf.data.Dataset.range(8).shuffle(8, seed=0, reshuffle_each_iteration=False).batch(4)

    @tf.function
    def fixed_first_batch():
        for batch in fixed:
            return batch

    # One fixed order: the same batch at each call, the one iterating outside gives.
    want = next(iter(fixed)).numpy()
    np.testing.assert_array_equal(fixed_first_batch().numpy(), want)
    np.testing.assert_array_equal(fixed_first_batch().numpy(), want)
