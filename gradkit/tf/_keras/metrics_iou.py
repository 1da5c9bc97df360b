"""``tf.keras.metrics`` intersection-over-union metrics: ``IoU``, ``MeanIoU``, ``BinaryIoU``,
``OneHotIoU`` and ``OneHotMeanIoU``.

As in Keras 3, each update adds the batch's (weighted) confusion matrix to a
``(num_classes, num_classes)`` Variable of dtype int unless ``dtype`` says otherwise (so
float sample weights are truncated, as Keras warns); labels or predictions outside
``[0, num_classes)``, and labels equal to ``ignore_class``, are left out. The result is the
mean IoU of the target classes that occur, ``tp / (tp + fp + fn)`` each.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert
from .metrics import Metric, _unrecorded

_EPSILON = 1e-7  # keras.backend.epsilon()


def _confusion_matrix(
    y_true, y_pred, sample_weight, *, num_classes, ignore_class, threshold, sparse_true, sparse_pred, axis, dtype
):
    """The batch's confusion matrix: rows the labels, columns the predictions."""
    if threshold is not None:  # BinaryIoU: class 1 where the prediction reaches the threshold
        y_pred = y_pred.astype(jnp.float32) >= threshold
    if not sparse_true:
        y_true = jnp.argmax(y_true, axis=axis)
    if not sparse_pred:
        y_pred = jnp.argmax(y_pred, axis=axis)
    y_true = y_true.astype(dtype).reshape(-1)
    y_pred = y_pred.astype(dtype).reshape(-1)
    weights = jnp.ones((), dtype) if sample_weight is None else sample_weight.astype(dtype)
    weights = jnp.broadcast_to(weights.reshape(-1) if weights.ndim > 1 else weights, y_true.shape)
    inside = (y_true >= 0) & (y_true < num_classes) & (y_pred >= 0) & (y_pred < num_classes)
    if ignore_class is not None:
        inside = inside & (y_true != ignore_class)
    zero = jnp.zeros((), dtype)
    rows, cols = jnp.where(inside, y_true, zero).astype(jnp.int32), jnp.where(inside, y_pred, zero).astype(jnp.int32)
    counts = jnp.zeros((num_classes, num_classes), dtype).at[rows, cols].add(jnp.where(inside, weights, zero))
    return jax.lax.stop_gradient(counts)


def _mean_iou(total, *, target_class_ids, dtype):
    total = total.astype(dtype)
    tp = jnp.diag(total)
    denominator = jnp.sum(total, axis=0) + jnp.sum(total, axis=1) - tp
    ids = jnp.asarray(target_class_ids, jnp.int32)
    tp, denominator = tp[ids].astype(jnp.float32), denominator[ids].astype(jnp.float32)
    valid = denominator > 1e-9
    iou = jnp.where(valid, tp / (denominator + _EPSILON), 0.0)
    return jnp.sum(iou) / (jnp.sum(valid.astype(jnp.float32)) + _EPSILON)


class IoU(Metric):
    """The mean intersection-over-union of the classes ``target_class_ids``."""

    _CONFIG = ("num_classes", "target_class_ids", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis")

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        # Keras counts in int64; without JAX's 64-bit mode the widest integer is int32, whose
        # counts overflow past 2**31 (pass dtype="float32" for larger totals there).
        super().__init__(name=name, dtype=dtype or ("int64" if jax.config.jax_enable_x64 else "int32"))
        if max(target_class_ids) >= num_classes:
            raise _errors.GradkitValueError(
                f"Target class id {max(target_class_ids)} is out of range, which is [0, {num_classes}), as in Keras. "
                "Name classes below num_classes."
            )
        self.num_classes = num_classes
        self.target_class_ids = list(target_class_ids)
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_variable((num_classes, num_classes), dtype=self._dtype, name="total_confusion_matrix")

    _threshold = None

    def update_state(self, y_true, y_pred, sample_weight=None):
        with _unrecorded():
            weights = None if sample_weight is None else convert(sample_weight)
            counts = call(
                _confusion_matrix,
                convert(y_true),
                convert(y_pred),
                weights,
                num_classes=self.num_classes,
                ignore_class=self.ignore_class,
                threshold=self._threshold,
                sparse_true=self.sparse_y_true,
                sparse_pred=self.sparse_y_pred,
                axis=self.axis,
                dtype=self._dtype,
            )
            self.total_cm.assign_add(counts)

    def result(self):
        return call(_mean_iou, self.total_cm.value, target_class_ids=tuple(self.target_class_ids), dtype=self._dtype)

    def get_config(self):
        return {**super().get_config(), **{key: getattr(self, key) for key in self._CONFIG}}


class MeanIoU(IoU):
    """The mean intersection-over-union of every class."""

    _CONFIG = ("num_classes", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis")

    def __init__(
        self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True, axis=-1
    ):
        super().__init__(
            num_classes, list(range(num_classes)), name, dtype, ignore_class, sparse_y_true, sparse_y_pred, axis
        )


class BinaryIoU(IoU):
    """IoU of two classes, a prediction being class 1 where it is at least ``threshold``."""

    _CONFIG = ("target_class_ids", "threshold")

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = self._threshold = threshold


class OneHotIoU(IoU):
    """``IoU`` of one-hot labels (and, unless ``sparse_y_pred``, scores per class): their argmax."""

    _CONFIG = ("num_classes", "target_class_ids", "ignore_class", "sparse_y_pred", "axis")

    def __init__(
        self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1
    ):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False, sparse_y_pred, axis)


class OneHotMeanIoU(IoU):
    """``MeanIoU`` of one-hot labels (and, unless ``sparse_y_pred``, scores per class)."""

    _CONFIG = ("num_classes", "ignore_class", "sparse_y_pred", "axis")

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name, dtype, ignore_class, False, sparse_y_pred, axis)


NAMES = "IoU MeanIoU BinaryIoU OneHotIoU OneHotMeanIoU"
