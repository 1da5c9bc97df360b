"""``tf.keras.preprocessing.sequence.skipgrams`` and ``make_sampling_table`` (the Word2Vec
tutorial's data preparation). Oracles: pairs enumerated by hand, word2vec's formula, and TensorFlow's
``tf.keras`` where installed (under the same ``random.seed`` the same pairs)."""

import math
import random

import numpy as np
import pytest

import gradkit.tf as gtf

sequence_utils = gtf.keras.preprocessing.sequence
_SENTENCE = [3, 1, 0, 4, 2, 5]


def test_positive_pairs_are_the_window_neighbours():
    couples, labels = sequence_utils.skipgrams(_SENTENCE, 6, window_size=2, negative_samples=0, shuffle=False)
    expected = [
        [w, _SENTENCE[j]]
        for i, w in enumerate(_SENTENCE)
        if w
        for j in range(max(0, i - 2), min(len(_SENTENCE), i + 3))
        if j != i and _SENTENCE[j]
    ]
    assert couples == expected and labels == [1] * len(expected)


def test_negative_pairs_pair_a_context_word_with_a_random_word():
    random.seed(0)
    couples, labels = sequence_utils.skipgrams(_SENTENCE, 6, window_size=1, negative_samples=2.0, categorical=True)
    positives = [c for c, lab in zip(couples, labels) if lab == [0, 1]]
    negatives = [c for c, lab in zip(couples, labels) if lab == [1, 0]]
    assert len(negatives) == 2 * len(positives)
    assert all(1 <= c[1] < 6 and c[0] in _SENTENCE for c in negatives)


def test_sampling_table_is_word2vecs_subsampling():
    table = sequence_utils.make_sampling_table(5, sampling_factor=0.01)
    ranks = np.array([1, 1, 2, 3, 4], np.float64)
    f = 0.01 * (ranks * (np.log(ranks) + 0.577) + 0.5 - 1 / (12 * ranks))
    np.testing.assert_allclose(table, np.minimum(1.0, f / np.sqrt(f)), rtol=1e-12)
    assert math.isclose(table[4], min(1.0, math.sqrt(f[4])))


def test_skipgrams_match_keras():
    tf = pytest.importorskip("tensorflow")
    theirs_module = tf.keras.preprocessing.sequence
    # A seed each time: without one, Keras' own code draws it with a float bound Python deprecates.
    for options in (
        {"seed": 1},
        {"categorical": True, "negative_samples": 0.5, "seed": 2},
        {"window_size": 1, "seed": 7},
    ):
        table = sequence_utils.make_sampling_table(6, 0.3)
        random.seed(42)
        ours = sequence_utils.skipgrams(_SENTENCE * 3, 6, sampling_table=table, **options)
        random.seed(42)
        theirs = theirs_module.skipgrams(_SENTENCE * 3, 6, sampling_table=table, **options)
        assert ours == theirs, options
    np.testing.assert_array_equal(sequence_utils.make_sampling_table(50), theirs_module.make_sampling_table(50))
