"""``fit``/``evaluate``/``predict`` on a ``tf.data.Dataset`` (Keras 3's ``TFDatasetAdapter``).

Each element of the dataset is one batch: ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``.
As in Keras: the dataset's cardinality is the number of batches an epoch (an infinite or unknown
one reads until ``steps_per_epoch``, or until the data runs out); each epoch that starts over
iterates the dataset afresh, so a ``shuffle`` inside reshuffles, while with ``steps_per_epoch``
an epoch continues where the last one stopped; ``class_weight`` turns each batch's targets into
sample weights through a table of the classes up to the largest key (a class beyond it is
refused, as TensorFlow's gather refuses it). ``y`` and ``sample_weight`` belong inside the
dataset (ValueError), ``batch_size`` is ignored, and ``shuffle=True`` (``fit``'s default) is
ignored with Keras' warning.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from .training_data import as_arrays, leaves, unpack_x_y_sample_weight


def refuse_arguments(y, sample_weight) -> None:
    """Keras' refusal of ``y``/``sample_weight`` beside a dataset."""
    for value, name, description in ((y, "y", "the targets"), (sample_weight, "sample_weights", "the sample weights")):
        if value is not None:
            raise _errors.GradkitValueError(
                f"When providing `x` as a tf.data.Dataset, `{name}` should not be passed. Instead, {description} "
                "should be included as part of the tf.data.Dataset: e.g. "
                "tf.data.Dataset.from_tensor_slices((x, y, sample_weight)).batch(32)."
            )


def _class_table(class_weight) -> np.ndarray:
    if not isinstance(class_weight, dict) or not class_weight:
        raise _errors.GradkitTypeError(
            f"tf.keras.Model.fit: class_weight is {class_weight!r}; pass a dict from class index to weight, "
            "e.g. {0: 1.0, 1: 5.0}."
        )
    size = max(int(k) for k in class_weight) + 1
    return np.array([class_weight.get(c, 1.0) for c in range(size)], np.float32)


def _with_class_weights(batch, table: np.ndarray):
    x, y, sample_weight = unpack_x_y_sample_weight(batch)
    if sample_weight is not None:
        raise _errors.GradkitValueError(
            "You cannot `class_weight` and `sample_weight` at the same time: the dataset's batches hold sample "
            "weights; fold the class weights into them instead."
        )
    if y is None:
        raise _errors.GradkitValueError(
            "tf.keras.Model.fit: class_weight needs targets, but the dataset's batches hold inputs alone; make its "
            "elements (x, y)."
        )
    if isinstance(y, (tuple, list, dict)):
        raise _errors.GradkitValueError(
            "`class_weight` is only supported for Models with a single output; for several outputs put sample "
            "weights in the dataset instead."
        )
    labels = np.asarray(y)
    if labels.ndim >= 2:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] > 1 else np.round(np.squeeze(labels, -1))
    else:
        labels = np.round(labels)
    classes = labels.astype(np.int32)
    outside = (classes < 0) | (classes >= table.size)
    if outside.any():
        raise _errors.GradkitInvalidArgumentError(
            f"indices = {int(classes[outside].flat[0])} is not in [0, {table.size}): a batch holds a class that "
            "class_weight's table (its classes 0 to the largest key) lacks, as Keras' gather refuses it. Give "
            "class_weight an entry for every class."
        )
    return x, y, table[classes]


class DatasetAdapter:
    def __init__(self, dataset, class_weight):
        self.dataset = dataset
        self.table = None if class_weight is None else _class_table(class_weight)

    @property
    def num_batches(self):
        count = self.dataset._cardinality()
        return None if count < 0 else count

    def iterator(self):
        return (self._standardized(batch) for batch in self.dataset._numpy_elements())

    def _standardized(self, batch):
        """A batch as the step takes it: ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``, or the
        inputs alone where the dataset's element is not a tuple (Keras hands such an element to
        ``train_step`` as it is: ``tf.shape(data)[0]`` is the batch size)."""
        if self.table is not None:
            batch = _with_class_weights(batch, self.table)
        bare = not isinstance(batch, tuple)
        if bare:
            batch = (batch,)
        x, y, sample_weight = (as_arrays(part, "a dataset's batch") for part in unpack_x_y_sample_weight(batch))
        if not leaves(x):
            raise _errors.GradkitValueError("tf.keras.Model: a dataset's batch holds no inputs x.")
        if y is not None:
            return tuple(part for part in (x, y, sample_weight) if part is not None)
        return x if bare else (x,)

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass
