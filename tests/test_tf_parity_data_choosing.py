"""``tf.data.Dataset.choose_from_datasets``, ``sample_from_datasets`` and ``counter`` against
TensorFlow 2.21 (element for element where the result is deterministic; for the sampler, its
proportions, its determinism under a seed, and that it ends when its datasets do), and the
errors for what TensorFlow refuses."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _values(ds):
    return [int(x) for x in ds.as_numpy_iterator()]


def _choose(tf, choices, **kwargs):
    D = tf.data.Dataset
    return D.choose_from_datasets(
        [D.range(0, 5), D.range(10, 13)], D.from_tensor_slices(np.array(choices, np.int64)), **kwargs
    )


@pytest.mark.parametrize(
    ("choices", "kwargs"),
    [
        ([0, 1, 1, 0, 1, 1, 0], {}),  # stops when the second dataset runs out
        ([0, 1, 1, 1, 1, 0], {"stop_on_empty_dataset": False}),  # skips it instead
        ([1, 0, 0], {}),
        ([], {}),
    ],
)
def test_choose_from_datasets_matches_tensorflow(choices, kwargs):
    tf_real = pytest.importorskip("tensorflow")
    assert _values(_choose(gtf, choices, **kwargs)) == _values(_choose(tf_real, choices, **kwargs))


def test_choose_from_datasets_refuses_an_index_out_of_range():
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] .*selector index out of range: 2"):
        _values(_choose(gtf, [0, 2]))


def test_choose_from_datasets_refuses_a_float_choice_dataset():
    D = gtf.data.Dataset
    with pytest.raises(TypeError, match=r"\[gradkit\] .*choice_dataset.*scalar tf.int64"):
        D.choose_from_datasets([D.range(3)], D.from_tensor_slices([0.0]))


def test_counter_matches_tensorflow():
    tf_real = pytest.importorskip("tensorflow")
    results = [
        (_values(tf.data.Dataset.counter(3, 2).take(4)), int(tf.data.Dataset.counter().cardinality()))
        for tf in (tf_real, gtf)
    ]
    assert results[1] == results[0] == ([3, 5, 7, 9], -1)


def test_sample_from_datasets_draws_in_proportion_to_its_weights():
    D = gtf.data.Dataset
    sampled = D.sample_from_datasets(
        [D.from_tensors(0).repeat(), D.from_tensors(1).repeat()], weights=[0.8, 0.2], seed=3
    )
    draws = np.array(_values(sampled.take(4000)))
    # 4000 Bernoulli(0.2) draws: the mean is within 4 standard deviations (0.0063) of 0.2.
    assert abs(draws.mean() - 0.2) < 4 * np.sqrt(0.2 * 0.8 / 4000)
    assert _values(sampled.take(50)) == _values(sampled.take(50))  # the same draws each pass


def test_sample_from_datasets_takes_every_element_once_and_ends_with_its_datasets():
    tf_real = pytest.importorskip("tensorflow")
    for tf in (tf_real, gtf):
        D = tf.data.Dataset
        sampled = D.sample_from_datasets([D.range(3), D.range(10, 14)], seed=1)
        got = _values(sampled)
        assert sorted(got) == [0, 1, 2, 10, 11, 12, 13]
        assert [x for x in got if x < 10] == [0, 1, 2]  # each dataset's own order kept


def test_sample_from_datasets_refuses_bad_weights():
    D = gtf.data.Dataset
    with pytest.raises(ValueError, match=r"\[gradkit\] .*weights"):
        D.sample_from_datasets([D.range(3), D.range(3)], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"\[gradkit\] .*weights"):
        D.sample_from_datasets([D.range(3)], weights=[1.0, 1.0])


def test_a_static_method_gradkit_lacks_is_named_in_gradkits_error():
    with pytest.raises(AttributeError, match=r"\[gradkit\] tf.data.Dataset has no 'random'"):
        gtf.data.Dataset.random  # noqa: B018


def test_unbatch_of_a_scalar_of_unknown_rank_is_refused_when_it_arrives():
    ds = gtf.data.Dataset.from_generator(lambda: iter([1.0]), output_types=gtf.float32).unbatch()
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] Input element must have a non-scalar"):
        list(ds)


def test_a_generator_value_its_dtype_cannot_hold_is_refused():
    ds = gtf.data.Dataset.from_generator(lambda: iter([300]), output_signature=gtf.TensorSpec((), gtf.int8))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] .*expected type was int8"):
        list(ds)
