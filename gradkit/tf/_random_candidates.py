"""``tf.random.log_uniform_candidate_sampler`` and ``uniform_candidate_sampler``: classes drawn
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
