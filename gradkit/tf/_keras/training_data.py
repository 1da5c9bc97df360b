"""The data side of Keras' training loop: arrays cut into batches, the validation split,
class weights, and ``(x, y, sample_weight)`` tuples.

gradkit.tf's ``fit``/``evaluate``/``predict`` take arrays (NumPy arrays, tensors, Python
lists of numbers) or nested lists/tuples/dicts of them, as Keras' array adapter does; the
batches come out in Keras' order: in sequence, or, with ``shuffle=True``, by one permutation
per epoch drawn from NumPy's global generator (``tf.keras.utils.set_random_seed`` seeds it),
with ``shuffle="batch"`` by a permutation inside each batch.
"""

from __future__ import annotations

import math

import jax
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable as _CoreVariable
from gradkit._tape.tensor import Tensor

_ARRAY_TYPES = (np.ndarray, jax.Array, Tensor, _CoreVariable)


def unpack_x_y_sample_weight(data):
    """Keras' ``unpack_x_y_sample_weight``: ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``
    (or one ``x``) as a triple with Nones for what is missing."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise _errors.GradkitValueError(
        f"Data is expected to be (x,), (x, y) or (x, y, sample_weight); got a tuple of {len(data)} elements. "
        "Pass the inputs as x (a nested structure if the model takes several), the targets as y."
    )


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Keras' ``pack_x_y_sample_weight``: the inverse of ``unpack_x_y_sample_weight``."""
    if y is None:
        # One input stays as it is; a tuple of inputs is wrapped, so it is not read as (x, y).
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _is_leaf(x) -> bool:
    return x is None or isinstance(x, _ARRAY_TYPES) or not isinstance(x, (list, tuple, dict))


def as_arrays(data, what: str):
    """``data`` with every array a NumPy array (a list of numbers becomes one array, as Keras
    reads it); nested lists/tuples/dicts of arrays keep their structure."""

    def convert(x):
        if x is None:
            return None
        if isinstance(x, Tensor):
            x = x.numpy()
        elif isinstance(x, _CoreVariable):
            x = x.numpy()
        if isinstance(x, (str, bytes)) or callable(getattr(x, "__next__", None)) or hasattr(x, "element_spec"):
            raise _errors.GradkitTypeError(
                f"tf.keras.Model: {what} is a {type(x).__name__}, which is not an array. fit, evaluate and predict "
                "take arrays (NumPy arrays, tensors, nested in lists/tuples/dicts) with y separate, or x alone as a "
                "gradkit.tf.data.Dataset, a tf.keras.utils.PyDataset or a Python generator of (x, y[, "
                "sample_weight]) batches (a TensorFlow tf.data.Dataset is not read: build the pipeline with "
                "gradkit.tf.data)."
            )
        array = np.asarray(x)
        if array.dtype == object:
            raise _errors.GradkitTypeError(
                f"tf.keras.Model: {what} holds Python objects ({type(x).__name__} of mixed or ragged entries); "
                "pass arrays of numbers of one shape."
            )
        return array

    if isinstance(data, list) and data and all(isinstance(v, (int, float, bool, np.number)) for v in data):
        return convert(data)  # a list of numbers: one array
    return jax.tree_util.tree_map(convert, data, is_leaf=_is_leaf)


def leaves(data) -> list:
    return [x for x in jax.tree_util.tree_leaves(data, is_leaf=lambda x: x is None) if x is not None]


def num_samples(arrays, what: str) -> int:
    """The number of examples, the first dimension every array shares."""
    sizes = {int(a.shape[0]) if a.ndim else None for a in leaves(arrays)}
    if None in sizes:
        raise _errors.GradkitValueError(
            f"tf.keras.Model: {what} holds a scalar; every array needs a first (batch) dimension, one entry per example."
        )
    if len(sizes) > 1:
        raise _errors.GradkitValueError(
            f"tf.keras.Model: the arrays of {what} have different numbers of examples {sorted(sizes)} (their "
            "first dimensions); x, y and sample_weight must hold one entry per example each."
        )
    if not sizes:
        raise _errors.GradkitValueError(f"tf.keras.Model: {what} holds no array; pass x (and y) as arrays.")
    return sizes.pop()


def train_validation_split(arrays, validation_split: float):
    """Keras' split: the last ``validation_split`` of the examples (before any shuffling)
    are the validation data."""
    if not 0.0 < validation_split < 1.0:
        raise _errors.GradkitValueError(
            f"tf.keras.Model.fit: validation_split is {validation_split!r}, but it must be a float between 0 and 1 "
            "(the fraction of the examples, taken from the end, kept for validation)."
        )
    batch_dim = num_samples(arrays, "the training data")
    split_at = int(math.floor(batch_dim * (1.0 - validation_split)))
    if split_at in (0, batch_dim):
        raise _errors.GradkitValueError(
            f"Training data contains {batch_dim} samples, which is not sufficient to split it into a validation "
            f"and training set as specified by `validation_split={validation_split}`. Either provide more data, "
            "or a different value for the `validation_split` argument."
        )

    def part(start, stop):
        return jax.tree_util.tree_map(lambda a: None if a is None else a[start:stop], arrays, is_leaf=_is_leaf)

    return part(0, split_at), part(split_at, batch_dim)


def class_weight_to_sample_weights(y, class_weight: dict) -> np.ndarray:
    """Keras': each example weighted by its class's weight (one-hot targets by their argmax;
    classes not in the dict weigh 1)."""
    if not isinstance(class_weight, dict):
        raise _errors.GradkitTypeError(
            f"tf.keras.Model.fit: class_weight is {type(class_weight).__name__}; pass a dict from class index to "
            "weight, e.g. {0: 1.0, 1: 5.0}."
        )
    flat = leaves(y)
    if len(flat) != 1:
        raise _errors.GradkitValueError(
            "tf.keras.Model.fit: class_weight is only supported for a model with one output (one array of "
            "targets); for several outputs pass sample_weight instead."
        )
    labels = flat[0]
    if labels.ndim > 1:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else np.squeeze(labels, axis=-1)
    labels = np.round(labels).astype("int32")
    return np.array([class_weight.get(int(c), 1.0) for c in labels], dtype=np.float32)


def weights_with_classes(y, sample_weight, class_weight):
    """The sample weights, or with ``class_weight`` each example's class's weight (Keras
    refuses both at once)."""
    if class_weight is None:
        return sample_weight
    if sample_weight is not None:
        raise _errors.GradkitValueError(
            "Arguments `sample_weight` and `class_weight` cannot be specified at the same time: pass one (fold "
            "the class weights into the sample weights yourself to have both)."
        )
    return class_weight_to_sample_weights(y, class_weight)


class Batches:
    """The batches of one pass over ``arrays`` (Keras' array adapter): ``batch_size``
    examples each (the last one may be smaller), in order or shuffled."""

    def __init__(self, arrays, batch_size, shuffle, what: str):
        self.arrays = arrays
        self.count = num_samples(arrays, what)
        if batch_size is None:
            batch_size = 32
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise _errors.GradkitValueError(
                f"tf.keras.Model: batch_size is {batch_size!r}, but it must be a positive int (examples per step)."
            )
        if shuffle not in (True, False, "batch"):
            raise _errors.GradkitValueError(
                f"tf.keras.Model.fit: shuffle is {shuffle!r}; it must be True, False or 'batch' (shuffle inside "
                "each batch)."
            )
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.num_batches = int(math.ceil(self.count / self.batch_size))

    def __iter__(self):
        permutation = np.random.permutation(self.count) if self.shuffle is True else None
        for i in range(self.num_batches):
            start, stop = i * self.batch_size, min((i + 1) * self.batch_size, self.count)
            if self.shuffle == "batch":
                indices = np.random.permutation(stop - start) + start
            elif permutation is not None:
                indices = permutation[start:stop]
            else:
                indices = slice(start, stop)
            batch = jax.tree_util.tree_map(
                lambda a, ix=indices: None if a is None else a[ix], self.arrays, is_leaf=_is_leaf
            )
            # As Keras hands a step its batch: (x, y) without a sample weight, (x,) without targets.
            yield pack_x_y_sample_weight(*batch)
