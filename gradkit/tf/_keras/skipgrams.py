"""``tf.keras.preprocessing.sequence``'s word2vec helpers (Keras' legacy ones, still used by
TensorFlow's Word2Vec tutorial): ``make_sampling_table`` (word2vec's subsampling probabilities
for Zipf-distributed ranks) and ``skipgrams`` (positive pairs within a window, negative pairs
with random words). They draw with Python's ``random`` module as Keras does, so under the same
``random.seed`` they give Keras' pairs.

>>> import gradkit.tf as tf
>>> pairs, labels = tf.keras.preprocessing.sequence.skipgrams([1, 2, 3], 4, window_size=1, negative_samples=0, shuffle=False)
>>> pairs, labels
([[1, 2], [2, 1], [2, 3], [3, 2]], [1, 1, 1, 1])
"""

from __future__ import annotations

import random

import numpy as np

_EULER_GAMMA = 0.577  # Keras' rounding of the Euler-Mascheroni constant


def make_sampling_table(size, sampling_factor=1e-5):
    """The probability of keeping a word of each rank: ``min(1, sqrt(f) / f)`` for ``f`` the
    sampling factor over Zipf's frequency of the rank (``1 / (r (log r + gamma) + 1/2 - 1/(12 r))``)."""
    rank = np.arange(size)
    rank[0] = 1
    inverse_frequency = rank * (np.log(rank) + _EULER_GAMMA) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inverse_frequency
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(
    sequence,
    vocabulary_size,
    window_size=4,
    negative_samples=1.0,
    shuffle=True,
    categorical=False,
    sampling_table=None,
    seed=None,
):
    """``(couples, labels)``: each word (index 0 is a non-word, skipped; with a
    ``sampling_table``, kept with its rank's probability) paired with every word within
    ``window_size`` of it, label 1; then ``negative_samples`` times as many pairs of a shuffled
    such word with a random word of ``[1, vocabulary_size)``, label 0 (``[1, 0]``/``[0, 1]`` when
    ``categorical``); shuffled together with ``seed``."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j == i or not sequence[j]:
                continue
            couples.append([wi, sequence[j]])
            labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(count)]
        labels += [[1, 0] if categorical else 0 for _ in range(count)]
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))  # Keras writes 10e6 (a float, which Python 3.12 refuses)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
