"""``tf.random.log_uniform_candidate_sampler`` / ``uniform_candidate_sampler`` (the Word2Vec
tutorial's negative samples): the distribution the classes are drawn from, distinct classes with
``unique=True``, and TensorFlow's expected counts. Oracles: TensorFlow's documented formulas
(checked against TensorFlow itself where installed: its expected counts without ``unique`` are
deterministic), and the empirical frequencies of many draws."""

import numpy as np
import pytest

import gradkit.tf as gtf

_TRUE = np.array([[1], [3], [7]], np.int64)


def _log_uniform_p(k, range_max):
    return (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(range_max + 1.0)


def test_expected_counts_without_unique_are_num_sampled_times_p():
    sampled, true_count, sampled_count = gtf.random.log_uniform_candidate_sampler(_TRUE, 1, 6, False, 50, seed=3)
    sampled = np.asarray(sampled)
    np.testing.assert_allclose(np.asarray(true_count), 6 * _log_uniform_p(_TRUE, 50), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sampled_count), 6 * _log_uniform_p(sampled, 50), rtol=1e-6)
    assert sampled.shape == (6,) and ((0 <= sampled) & (sampled < 50)).all()


def _tries(count, p, num_sampled):
    """The draws a unique sampler took, from its expected count (TensorFlow's kernel: ``num_sampled
    * p`` when no draw was rejected, ``-expm1(tries * log1p(-p))`` otherwise)."""
    if np.allclose(count, num_sampled * p, rtol=1e-5):
        return num_sampled
    tries = np.log1p(-np.asarray(count, np.float64)) / np.log1p(-p)
    assert np.allclose(tries, np.round(tries.ravel()[0]), rtol=1e-4), tries
    assert tries.ravel()[0] > num_sampled + 0.5
    return int(np.round(tries.ravel()[0]))


def test_unique_candidates_are_distinct_with_counts_for_a_whole_number_of_tries():
    sampled, true_count, sampled_count = gtf.random.log_uniform_candidate_sampler(_TRUE, 1, 8, True, 30, seed=4)
    sampled = np.asarray(sampled)
    assert len(set(sampled.tolist())) == 8
    tries = _tries(np.asarray(sampled_count), _log_uniform_p(sampled.astype(np.float64), 30), 8)
    assert _tries(np.asarray(true_count), _log_uniform_p(_TRUE.astype(np.float64), 30), 8) == tries


def test_unique_counts_without_a_rejected_draw_are_num_sampled_times_p():
    # Two distinct classes of four: no rejection for most seeds, and then the count is 2 * 0.25.
    tries = []
    for seed in range(12):
        _, true_count, sampled_count = gtf.random.uniform_candidate_sampler(_TRUE % 4, 1, 2, True, 4, seed=seed)
        tries.append(_tries(np.asarray(sampled_count), 0.25, 2))
        assert _tries(np.asarray(true_count), 0.25, 2) == tries[-1]
    assert 2 in tries and any(t > 2 for t in tries)


def test_draws_follow_the_log_uniform_distribution():
    draws = np.concatenate(
        [np.asarray(gtf.random.log_uniform_candidate_sampler(_TRUE, 1, 200, False, 10, seed=s)[0]) for s in range(20)]
    )
    frequencies = np.bincount(draws, minlength=10) / draws.size
    np.testing.assert_allclose(frequencies, _log_uniform_p(np.arange(10), 10), atol=0.02)


def test_uniform_sampler_and_errors():
    sampled, true_count, _ = gtf.random.uniform_candidate_sampler(_TRUE % 5, 1, 5, True, 5, seed=0)
    assert sorted(np.asarray(sampled).tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"\[gradkit\].*num_sampled=6 distinct classes"):
        gtf.random.uniform_candidate_sampler(_TRUE, 1, 6, True, 5)
    with pytest.raises(ValueError, match=r"\[gradkit\].*\[batch_size, num_true=1\]"):
        gtf.random.log_uniform_candidate_sampler([1, 2], 1, 2, True, 5)
    with pytest.raises(ValueError, match=r"\[gradkit\].*out of range \[0, 5\), received 7"):
        gtf.random.uniform_candidate_sampler(_TRUE, 1, 2, True, 5)


def test_expected_counts_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    ours = gtf.random.log_uniform_candidate_sampler(_TRUE, 1, 6, False, 50, seed=3)
    theirs = tf.random.log_uniform_candidate_sampler(_TRUE, 1, 6, False, 50, seed=3)
    np.testing.assert_allclose(np.asarray(ours[1]), theirs[1].numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ours[2]), 6 * _log_uniform_p(np.asarray(ours[0]), 50), rtol=1e-5)
    np.testing.assert_allclose(theirs[2].numpy(), 6 * _log_uniform_p(theirs[0].numpy(), 50), rtol=1e-5)
    # TensorFlow's unique counts follow the rule the tests above hold gradkit's to.
    for seed in range(6):
        _, true_count, sampled_count = tf.random.uniform_candidate_sampler(_TRUE % 4, 1, 2, True, 4, seed=seed)
        assert _tries(true_count.numpy(), 0.25, 2) == _tries(sampled_count.numpy(), 0.25, 2)


def test_inside_tf_function_the_sampler_is_refused():
    @gtf.function
    def f(x):
        return gtf.random.log_uniform_candidate_sampler(_TRUE, 1, 2, True, 5)[0]

    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*inside tf.function.*outside"):
        f(gtf.constant(1.0))


# fixed_unigram_candidate_sampler: TensorFlow's weights (reserved ids 0, counts ** distortion,
# ids of one shard) and each option's probabilities, written out by hand.
_UNIGRAM_CASES = {
    "counts": (dict(range_max=4, unigrams=[1.0, 2.0, 3.0, 4.0]), [0.1, 0.2, 0.3, 0.4]),
    "reserved_ids": (dict(range_max=6, unigrams=[1.0, 2.0, 3.0, 4.0], num_reserved_ids=2), [0, 0, 0.1, 0.2, 0.3, 0.4]),
    "shard_0_of_2": (
        dict(range_max=3, unigrams=[1.0, 2.0, 3.0, 4.0, 5.0], num_shards=2, shard=0),
        [1 / 9, 3 / 9, 5 / 9],
    ),
    "shard_1_of_2": (dict(range_max=2, unigrams=[1.0, 2.0, 3.0, 4.0, 5.0], num_shards=2, shard=1), [2 / 6, 4 / 6]),
    "distortion": (
        dict(range_max=4, unigrams=[1.0, 4.0, 9.0, 16.0], distortion=0.5),
        [0.1, 0.2, 0.3, 0.4],
    ),
}


@pytest.mark.parametrize("case", sorted(_UNIGRAM_CASES))
def test_fixed_unigram_expected_counts_are_num_sampled_times_p(case):
    options, p = _UNIGRAM_CASES[case]
    p = np.asarray(p)
    classes = np.array([[0], [1]], np.int64)
    sampled, true_count, sampled_count = gtf.random.fixed_unigram_candidate_sampler(
        classes, 1, 5, False, seed=2, **options
    )
    sampled = np.asarray(sampled)
    np.testing.assert_allclose(np.asarray(true_count), 5 * p[classes], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sampled_count), 5 * p[sampled], rtol=1e-6)
    assert (p[sampled] > 0).all()  # never a reserved id
    sampled, true_count, sampled_count = gtf.random.fixed_unigram_candidate_sampler(
        classes, 1, 2, True, seed=2, **options
    )
    assert len(set(np.asarray(sampled).tolist())) == len(np.asarray(sampled))
    tries = _tries(np.asarray(sampled_count), p[np.asarray(sampled)], len(np.asarray(sampled)))
    classes = np.array([[len(p) - 1]], np.int64)  # a class of nonzero p: its count tells the tries
    sampled, true_count, sampled_count = gtf.random.fixed_unigram_candidate_sampler(
        classes, 1, 2, True, seed=5, **options
    )
    tries = _tries(np.asarray(sampled_count), p[np.asarray(sampled)], 2)
    assert _tries(np.asarray(true_count), p[-1], 2) == tries


def test_fixed_unigram_draws_follow_the_counts_and_read_a_vocab_file(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the,1\nof,x,2\nand,3\nto,4\n")  # the count is each line's last field
    draws = gtf.random.fixed_unigram_candidate_sampler(
        [[1]], 1, 20000, False, 6, vocab_file=str(vocab), num_reserved_ids=2, seed=1
    )[0]
    frequencies = np.bincount(np.asarray(draws), minlength=6) / 20000
    np.testing.assert_allclose(frequencies, [0, 0, 0.1, 0.2, 0.3, 0.4], atol=0.015)


def test_fixed_unigram_expected_counts_match_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a,1\nb,2\nc,3\nd,4\n")
    classes = np.array([[1], [2]], np.int64)
    for options in [
        *(case for case, _ in _UNIGRAM_CASES.values()),
        dict(range_max=4, vocab_file=str(vocab)),
    ]:
        ours = gtf.random.fixed_unigram_candidate_sampler(
            classes % options["range_max"], 1, 3, False, seed=3, **options
        )
        theirs = tf.random.fixed_unigram_candidate_sampler(
            classes % options["range_max"], 1, 3, False, seed=3, **options
        )
        np.testing.assert_allclose(np.asarray(ours[1]), theirs[1].numpy(), rtol=1e-6)


def test_fixed_unigram_errors():
    classes = [[1]]
    with pytest.raises(ValueError, match=r"\[gradkit\].*range_max=5 must equal the number of weights"):
        gtf.random.fixed_unigram_candidate_sampler(classes, 1, 2, False, 5, unigrams=[1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"\[gradkit\].*exactly one of vocab_file and unigrams"):
        gtf.random.fixed_unigram_candidate_sampler(classes, 1, 2, False, 4)
    with pytest.raises(ValueError, match=r"\[gradkit\].*non-negative counts"):
        gtf.random.fixed_unigram_candidate_sampler(classes, 1, 2, False, 4, unigrams=[1.0, -2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"\[gradkit\].*3 distinct classes cannot be drawn from 2 classes"):
        gtf.random.fixed_unigram_candidate_sampler(classes, 1, 3, True, 4, unigrams=[0.0, 2.0, 0.0, 4.0])


def test_all_candidate_sampler():
    sampled, true_count, sampled_count = gtf.random.all_candidate_sampler([[1, 3]], 2, 5, True)
    np.testing.assert_array_equal(np.asarray(sampled), np.arange(5))
    np.testing.assert_array_equal(np.asarray(true_count), np.ones((1, 2)))
    np.testing.assert_array_equal(np.asarray(sampled_count), np.ones(5))
    with pytest.raises(ValueError, match=r"\[gradkit\].*out of range \[0, 5\), received 7"):
        gtf.random.all_candidate_sampler([[1, 7]], 2, 5, True)
