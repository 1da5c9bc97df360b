"""``tf.random``'s candidate samplers (log-uniform, uniform, fixed unigram, all): classes drawn
for sampled losses (Word2Vec's negative samples), with TensorFlow's distributions and expected
counts, eagerly (their draws are gradkit's, not TensorFlow's).

The log-uniform (Zipfian) sampler draws class ``k`` of ``[0, range_max)`` with probability
``(log(k + 2) - log(k + 1)) / log(range_max + 1)``; with ``unique=True`` it draws until it has
``num_sampled`` distinct classes, and a class's expected count is
``-expm1(tries * log1p(-p))`` for the number of draws it took when some were rejected, else
``num_sampled * p`` (TensorFlow's kernel).

>>> import gradkit.tf as tf
>>> sampled, true_count, sampled_count = tf.random.log_uniform_candidate_sampler(
...     [[1]], num_true=1, num_sampled=4, unique=True, range_max=10, seed=1)
>>> sampled.shape, true_count.shape, len(set(sampled.numpy().tolist()))
((4,), (1, 1), 4)
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors
from gradkit.nn import initializers

from . import _control, _random
from ._convert import convert, known_value, wrap


def _check(what, true_classes, num_true, num_sampled, unique, range_max):
    if not _control.executing_eagerly():
        raise _errors.GradkitNotImplementedError(
            f"tf.random.{what} was called inside tf.function: gradkit draws its candidates eagerly (a loop over "
            "draws until they are distinct). Draw them outside the compiled function (in the data pipeline's "
            "Python, as the Word2Vec tutorial does) and pass them in."
        )
    classes = known_value(true_classes)
    if classes is None:
        raise _errors.GradkitValueError(f"tf.random.{what} needs true_classes with known values.")
    classes = np.asarray(classes)
    if classes.ndim != 2 or classes.shape[1] != num_true:
        raise _errors.GradkitValueError(
            f"tf.random.{what}: true_classes must be a matrix of shape [batch_size, num_true={num_true}], as in "
            f"TensorFlow, but got shape {list(classes.shape)}."
        )
    if unique and num_sampled > range_max:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what}: num_sampled={num_sampled} distinct classes cannot be drawn from "
            f"range_max={range_max}; TensorFlow refuses it too (InvalidArgumentError)."
        )
    outside = classes[(classes < 0) | (classes >= range_max)]
    if outside.size:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what}: `true_candidate` out of range [0, {range_max}), received {outside[0]} "
            "(TensorFlow's InvalidArgumentError). True classes must be below range_max."
        )
    return classes


def _sample(probability, draw, classes, num_sampled, unique, range_max, seed, what):
    rng = initializers.host_rng(_random._key(seed, what, np.float32))
    if unique:
        picked: list = []
        seen: set = set()
        tries = 0
        while len(picked) < num_sampled:
            k = int(draw(rng))
            tries += 1
            if k not in seen:
                seen.add(k)
                picked.append(k)
        sampled = np.asarray(picked, np.int64)

        def expected(p):
            # TensorFlow's count: p * num_sampled when no draw was rejected (its kernel's shortcut),
            # the probability of being drawn at least once in ``tries`` draws otherwise.
            return num_sampled * p if tries == num_sampled else -np.expm1(tries * np.log1p(-p))
    else:
        sampled = np.asarray([draw(rng) for _ in range(num_sampled)], np.int64)

        def expected(p):
            return num_sampled * p

    true_expected = expected(probability(classes.astype(np.float64))).astype(np.float32)
    sampled_expected = expected(probability(sampled.astype(np.float64))).astype(np.float32)
    return wrap(convert(sampled)), wrap(convert(true_expected)), wrap(convert(sampled_expected))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """``tf.random.log_uniform_candidate_sampler``: ``(sampled_candidates, true_expected_count,
    sampled_expected_count)``; see the module docstring."""
    what = "log_uniform_candidate_sampler"
    classes = _check(what, true_classes, num_true, num_sampled, unique, range_max)
    log_range = np.log(range_max + 1.0)

    def probability(k):
        return (np.log(k + 2.0) - np.log(k + 1.0)) / log_range

    def draw(rng):
        return min(int(np.exp(rng.random() * log_range)) - 1, range_max - 1)

    return _sample(probability, draw, classes, num_sampled, unique, range_max, seed, what)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """``tf.random.uniform_candidate_sampler``: classes drawn uniformly from ``[0, range_max)``."""
    what = "uniform_candidate_sampler"
    classes = _check(what, true_classes, num_true, num_sampled, unique, range_max)

    def probability(k):
        return np.full(np.shape(k), 1.0 / range_max)

    def draw(rng):
        return rng.integers(range_max)

    return _sample(probability, draw, classes, num_sampled, unique, range_max, seed, what)


def _unigram_weights(what, range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams):
    """TensorFlow's FixedUnigramSampler weights: 0 for the reserved ids, then each count raised to
    ``distortion``, keeping the ids of this shard (``id % num_shards == shard``)."""
    unigrams = np.asarray(known_value(unigrams), np.float64).reshape(-1)
    if bool(vocab_file) == bool(unigrams.size):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what} takes exactly one of vocab_file and unigrams, as TensorFlow does, but got "
            f"{'both' if vocab_file else 'neither'}. Pass the counts (or probabilities) as unigrams=[...] or a "
            "file of lines ending in ',count' as vocab_file."
        )
    if not (isinstance(num_shards, int) and num_shards >= 1 and isinstance(shard, int) and 0 <= shard < num_shards):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what} got num_shards={num_shards!r} and shard={shard!r}: it takes num_shards >= 1 "
            "and 0 <= shard < num_shards, as TensorFlow does."
        )
    if vocab_file:
        with open(vocab_file, encoding="utf-8") as lines:
            counts = np.asarray([float(line.rstrip("\n").split(",")[-1]) for line in lines if line.strip()])
    else:
        counts = unigrams
    ids = np.arange(num_reserved_ids + len(counts))
    weights = np.concatenate([np.zeros(num_reserved_ids), np.power(counts, distortion)])
    weights = weights[ids % num_shards == shard]
    if len(weights) != range_max:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what}: range_max={range_max} must equal the number of weights of this shard "
            f"({len(weights)}: {num_reserved_ids} reserved ids and {len(counts)} counts, split into {num_shards} "
            "shards), as TensorFlow requires."
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what} needs finite, non-negative counts with a positive sum (after raising them to "
            f"distortion={distortion}), but got {counts.tolist()}."
        )
    return weights


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true,
    num_sampled,
    unique,
    range_max,
    vocab_file="",
    distortion=1.0,
    num_reserved_ids=0,
    num_shards=1,
    shard=0,
    unigrams=(),
    seed=None,
    name=None,
):
    """``tf.random.fixed_unigram_candidate_sampler``: classes drawn with probability proportional
    to their count (``unigrams``, or the last comma-separated field of each line of
    ``vocab_file``) raised to ``distortion`` (1: the counts, 0: uniform). The ids in
    ``[0, num_reserved_ids)`` come first with probability 0; with ``num_shards`` only the ids
    ``id % num_shards == shard`` are kept, numbered from 0, and ``range_max`` must be their number,
    as in TensorFlow. Expected counts as ``log_uniform_candidate_sampler``'s."""
    what = "fixed_unigram_candidate_sampler"
    classes = _check(what, true_classes, num_true, num_sampled, unique, range_max)
    weights = _unigram_weights(what, range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams)
    if unique and np.count_nonzero(weights) < num_sampled:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.random.{what}: num_sampled={num_sampled} distinct classes cannot be drawn from "
            f"{np.count_nonzero(weights)} classes of nonzero weight (TensorFlow's sampler never returns here)."
        )
    probabilities = weights / weights.sum()

    def probability(k):
        return probabilities[np.asarray(k, np.int64)]

    def draw(rng):
        return rng.choice(range_max, p=probabilities)

    return _sample(probability, draw, classes, num_sampled, unique, range_max, seed, what)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """``tf.random.all_candidate_sampler``: every class of ``[0, num_sampled)``, in order
    (int64), each with expected count 1, as TensorFlow's (a baseline for sampled losses;
    ``unique`` and ``seed`` change nothing)."""
    what = "all_candidate_sampler"
    classes = _check(what, true_classes, num_true, num_sampled, False, num_sampled)
    sampled = np.arange(num_sampled, dtype=np.int64)
    return (
        wrap(convert(sampled)),
        wrap(convert(np.ones(classes.shape, np.float32))),
        wrap(convert(np.ones(num_sampled, np.float32))),
    )
