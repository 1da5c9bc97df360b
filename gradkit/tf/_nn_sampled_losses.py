"""``tf.nn.nce_loss``, ``tf.nn.sampled_softmax_loss`` and ``tf.nn.compute_accidental_hits``:
losses over a few sampled classes instead of all ``num_classes``, written as TensorFlow 2.21
writes them.

Each loss looks up the rows of ``weights`` and ``biases`` for the true ``labels`` and for the
sampled classes, takes ``inputs``' dot products with them as logits, subtracts the log of each
class's expected count, and applies a sigmoid (NCE) or softmax cross-entropy per example
(shape ``[batch_size]``). With ``remove_accidental_hits=True`` a sampled class that is one of an
example's true labels gets TensorFlow's logit ``-FLT_MAX`` there.

``sampled_values=(sampled_candidates, true_expected_count, sampled_expected_count)``, from a
``tf.random.*_candidate_sampler``, makes the loss deterministic, and the values and gradients
are then TensorFlow's. Without it, the classes are drawn as TensorFlow draws them
(``tf.random.log_uniform_candidate_sampler`` with ``unique=True``, ``range_max=num_classes``),
eagerly and by gradkit's random numbers: the same distribution and expected counts, not the
same classes. Inside ``tf.function``, draw them outside and pass ``sampled_values``.

``weights`` may be a list of shards, concatenated as TensorFlow 2's ``"div"`` partition lays
them out (the first ``num_classes % len(weights)`` shards one row longer than the others).

>>> import gradkit.tf as tf
>>> sampled = (tf.constant([0, 2]), tf.constant([[0.5]]), tf.constant([0.5, 0.5]))
>>> loss = tf.nn.sampled_softmax_loss(tf.ones([3, 2]), tf.zeros([3]), [[1]], tf.ones([1, 2]),
...                                   num_sampled=2, num_classes=3, sampled_values=sampled)
>>> loss.shape, round(float(loss[0]), 4)
((1,), 1.0986)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _array, _control, _losses, _math, _random_candidates
from ._convert import call, convert, known_value, wrap
from ._custom import stop_gradient
from ._indexing import check_indices

_FLT_MAX = float(np.finfo(np.float32).max)


def _sampled_logits(weights, biases, inputs, labels, sampled, true_count, sampled_count, *, num_true, remove_hits):
    dtype = inputs.dtype
    labels_flat = labels.reshape(-1).astype(jnp.int32)
    sampled = sampled.astype(jnp.int32)
    true_w = weights[labels_flat].astype(dtype).reshape(-1, num_true, weights.shape[1])
    true_b = biases[labels_flat].astype(dtype).reshape(-1, num_true)
    sampled_w, sampled_b = weights[sampled].astype(dtype), biases[sampled].astype(dtype)
    true_logits = jnp.sum(inputs[:, None, :] * true_w, axis=-1) + true_b
    sampled_logits = inputs @ sampled_w.T + sampled_b[None, :]
    if remove_hits:
        # TensorFlow's ComputeAccidentalHits: an example's true class among the sampled ones, at
        # the last position it was sampled at, gets -FLT_MAX added (in the logits' dtype).
        true = labels_flat.reshape(-1, num_true)
        hit = jnp.any(true[:, :, None] == sampled[None, None, :], axis=1)
        later = jnp.triu(sampled[:, None] == sampled[None, :], k=1)
        hit = hit & ~jnp.any(later, axis=1)[None, :]
        sampled_logits = sampled_logits + jnp.where(hit, jnp.asarray(-_FLT_MAX).astype(dtype), jnp.zeros((), dtype))
    # TensorFlow's broadcasting, spelled out (leading axes added).
    true_logits, true_count, sampled_logits, sampled_count = (
        a.reshape((1,) * (2 - a.ndim) + a.shape) for a in (true_logits, true_count, sampled_logits, sampled_count)
    )
    true_logits = true_logits - jnp.log(true_count)
    sampled_logits = sampled_logits - jnp.log(sampled_count)
    return jnp.concatenate([true_logits, sampled_logits], axis=1)


def _weight_rows(weights, what):
    """``weights`` as one tensor: a list of shards concatenated, as the "div" strategy lays them out."""
    if not isinstance(weights, (list, tuple)):
        return convert(weights)
    shards = [convert(w) for w in weights]
    total = sum(int(w.shape[0]) for w in shards)
    per, extra = divmod(total, len(shards))
    expected = [per + 1 if i < extra else per for i in range(len(shards))]
    if [int(w.shape[0]) for w in shards] != expected:
        raise _errors.InvalidArgumentValueError(
            f"{what}: weights shards with {[int(w.shape[0]) for w in shards]} rows; TensorFlow 2 looks rows up with "
            f"the 'div' partition strategy, which needs {expected} for {total} rows in {len(shards)} shards. "
            "Split the class embeddings that way, or pass one tensor."
        )
    return shards[0] if len(shards) == 1 else _array.concat(shards, 0)


def _default_sampled_values(labels, num_true, num_sampled, num_classes, seed, what):
    if not _control.executing_eagerly():
        raise _errors.GradkitNotImplementedError(
            f"{what} was called inside tf.function without sampled_values: gradkit draws the sampled classes "
            "eagerly. Draw them outside the compiled function with tf.random.log_uniform_candidate_sampler("
            f"labels, num_true, num_sampled, unique=True, range_max=num_classes) and pass sampled_values=."
        )
    classes = known_value(labels).astype(np.int64)
    return _random_candidates.log_uniform_candidate_sampler(
        classes, num_true, num_sampled, True, num_classes, seed=seed
    )


def _logits_and_labels(
    weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, remove_hits, seed, what
):
    inputs = convert(inputs)
    num_true, num_sampled = int(num_true), int(num_sampled)
    weights, biases, labels = _weight_rows(weights, what), convert(biases), convert(labels)
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        labels = _array.cast(labels, np.int32)  # TensorFlow casts labels to int64
    if inputs.ndim != 2 or weights.ndim != 2 or biases.ndim != 1 or weights.shape[1] != inputs.shape[1]:
        raise _errors.InvalidArgumentValueError(
            f"{what}: inputs of shape {tuple(inputs.shape)}, weights of shape {tuple(weights.shape)} and biases of "
            f"shape {tuple(biases.shape)}; TensorFlow needs inputs [batch_size, dim], weights [num_classes, dim] "
            "and biases [num_classes]."
        )
    if int(np.prod(labels.shape)) != inputs.shape[0] * num_true or (remove_hits and labels.ndim != 2):
        raise _errors.InvalidArgumentValueError(
            f"{what}: labels of shape {tuple(labels.shape)} for inputs of shape {tuple(inputs.shape)} and "
            f"num_true={num_true}; TensorFlow needs labels [batch_size, num_true] = [{inputs.shape[0]}, {num_true}]."
        )
    if sampled_values is None:
        sampled_values = _default_sampled_values(labels, num_true, num_sampled, num_classes, seed, what)
    sampled, true_count, sampled_count = (stop_gradient(v) for v in sampled_values)
    # TensorFlow subtracts the log expected counts with broadcasting, then joins the two parts.
    try:
        true_shape = np.broadcast_shapes((inputs.shape[0], num_true), tuple(true_count.shape))
        sampled_shape = np.broadcast_shapes((inputs.shape[0], sampled.shape[0]), tuple(sampled_count.shape))
    except ValueError:
        true_shape = sampled_shape = ()
    if sampled.ndim != 1 or len(true_shape) != 2 or len(sampled_shape) != 2 or true_shape[0] != sampled_shape[0]:
        raise _errors.InvalidArgumentValueError(
            f"{what}: sampled_values with sampled_candidates of shape {tuple(sampled.shape)}, true_expected_count "
            f"of shape {tuple(true_count.shape)} and sampled_expected_count of shape {tuple(sampled_count.shape)}; "
            f"a candidate sampler gives [num_sampled], [batch_size, num_true] = [{inputs.shape[0]}, {num_true}] "
            "and [num_sampled]."
        )
    if remove_hits and sampled.shape[0] != num_sampled:
        raise _errors.InvalidArgumentValueError(
            f"{what}: num_sampled={num_sampled} but sampled_values holds {sampled.shape[0]} candidates; TensorFlow "
            "refuses that when removing accidental hits. Pass num_sampled=len(sampled_candidates)."
        )
    for count, label in ((true_count, "true_expected_count"), (sampled_count, "sampled_expected_count")):
        if np.dtype(count.dtype) != np.dtype(inputs.dtype):
            raise _errors.InvalidArgumentTypeError(
                f"{what}: {label} is {np.dtype(count.dtype).name} but inputs are {np.dtype(inputs.dtype).name}; "
                "TensorFlow subtracts the log expected counts from the logits and takes one dtype for both (the "
                "candidate samplers give float32). Cast one: tf.cast(inputs, tf.float32)."
            )
    rows = min(int(weights.shape[0]), int(biases.shape[0]))
    check_indices(labels, rows, what)
    check_indices(sampled, rows, what)
    logits = call(
        _sampled_logits,
        weights,
        biases,
        inputs,
        labels,
        sampled,
        true_count,
        sampled_count,
        num_true=num_true,
        remove_hits=bool(remove_hits),
    )
    dtype = np.dtype(inputs.dtype)
    targets = np.concatenate(
        [
            np.full(true_shape, np.ones((), dtype) / dtype.type(num_true), dtype),
            np.zeros(sampled_shape, dtype),
        ],
        axis=1,
    )
    return logits, convert(targets)


def nce_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=False,
    name="nce_loss",
):
    """``tf.nn.nce_loss``: the noise-contrastive estimation loss per example, ``[batch_size]``:
    sigmoid cross-entropies of the true classes (target ``1 / num_true``) and of the sampled
    ones (target 0), summed. See the module docstring for ``sampled_values``."""
    logits, targets = _logits_and_labels(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        remove_accidental_hits,
        None,
        "tf.nn.nce_loss",
    )
    return _math.reduce_sum(_losses.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits), axis=1)


def sampled_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=True,
    seed=None,
    name="sampled_softmax_loss",
):
    """``tf.nn.sampled_softmax_loss``: the softmax cross-entropy per example, ``[batch_size]``,
    over the true classes (target ``1 / num_true`` each) and the sampled ones. See the module
    docstring for ``sampled_values``; ``seed`` seeds the default draw."""
    logits, targets = _logits_and_labels(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        remove_accidental_hits,
        seed,
        "tf.nn.sampled_softmax_loss",
    )
    return _losses.softmax_cross_entropy_with_logits(labels=targets, logits=logits)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """``tf.nn.compute_accidental_hits``: ``(indices, ids, weights)``, one entry per true class of
    an example that is among ``sampled_candidates``: the example's row (int32), the candidate's
    position (int64; the last one where a class was sampled twice) and ``-FLT_MAX`` (float32).
    Its outputs' lengths depend on the values, so it needs values known now (eagerly, or data
    given in Python inside ``tf.function``)."""
    what = "tf.nn.compute_accidental_hits"
    true, sampled = known_value(convert(true_classes)), known_value(convert(sampled_candidates))
    if true is None or sampled is None:
        raise _errors.GradkitNotImplementedError(
            f"{what} got values computed inside tf.function: the number of hits it returns depends on them, "
            "which a compiled gradkit program cannot have. Call it eagerly, or pass remove_accidental_hits=True "
            "to tf.nn.nce_loss / sampled_softmax_loss, which remove the hits inside the compiled program."
        )
    true, sampled = true.astype(np.int64), sampled.astype(np.int64)
    if true.ndim != 2 or true.shape[1] != int(num_true):
        raise _errors.InvalidArgumentValueError(
            f"{what}: true_classes of shape {list(true.shape)} with num_true={num_true}; TensorFlow requires a "
            f"batch_size * num_true matrix, [batch_size, {num_true}]."
        )
    if sampled.ndim != 1:
        raise _errors.InvalidArgumentValueError(
            f"{what}: sampled_candidates of shape {list(sampled.shape)}; TensorFlow requires a vector (a candidate "
            "sampler's first output)."
        )
    position = {int(c): j for j, c in enumerate(sampled)}  # the last position wins, as in TensorFlow
    hits = [(i, position[int(c)]) for i, row in enumerate(true) for c in row if int(c) in position]
    indices = np.asarray([i for i, _ in hits], np.int32)
    ids = np.asarray([j for _, j in hits], np.int64)
    weights = np.full(len(hits), -_FLT_MAX, np.float32)
    return wrap(convert(indices)), wrap(convert(ids)), wrap(convert(weights))
