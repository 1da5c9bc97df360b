"""``tf.keras.layers.Discretization``: values bucketed by ``bin_boundaries`` (``boundaries[i-1]
<= x < boundaries[i]`` is bucket ``i``), as int32 bucket ids or encoded as ``CategoryEncoding``
encodes them. ``adapt`` finds ``num_bins`` boundaries from data with Keras' approximate quantiles:
each batch summarized to about ``1 / epsilon`` weighted points, summaries merged, and the
boundaries read off the merged summary's cumulative weights, step for step as Keras computes them,
so an adapted layer has Keras' boundaries.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0])
>>> layer([[-0.5, 0.0, 0.7, 3.0]]).numpy().tolist()
[[0, 1, 1, 2]]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from .._convert import call, convert
from .base_layer import Layer
from .category_encoding import _encode
from .layer_names import KerasNamedLayer

_MODES = ("int", "one_hot", "multi_hot", "count")


def _summarize(values, epsilon):
    """About ``1 / epsilon`` of the sorted values, each weighing the values it stands for."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(values.size / (1.0 / epsilon), 1)
    points = values[int(step - 1) :: int(step)]
    return np.stack([points, np.ones_like(points) * step])


def _compress(summary, epsilon):
    """The summary read at cumulative-weight fractions ``epsilon, 2 epsilon, ..., 1``."""
    if summary.shape[1] * epsilon < 1:
        return summary
    fractions = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    at = cumulative / cumulative[-1]
    points = np.interp(fractions, at, summary[0])
    cumulative = np.interp(fractions, at, cumulative)
    weights = cumulative - np.concatenate((np.array([0]), cumulative[:-1]))
    return np.stack((points, weights)).astype("float32")


def _merge(first, second, epsilon):
    merged = np.concatenate((first, second), axis=1)
    return _compress(np.take(merged, np.argsort(merged[0]), axis=1), epsilon)


def _bucketize(x, boundaries, mode, dtype):
    ids = jnp.searchsorted(boundaries, x, side="right").astype(jnp.int32)  # boundaries[i-1] <= x < boundaries[i]
    if mode == "int":
        return ids
    return _encode(ids, None, boundaries.shape[0] + 1, mode, dtype)


class Discretization(KerasNamedLayer, Layer):
    """``Discretization(bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int")``."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(
        self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False, dtype=None, name=None
    ):
        # Keras' signature: no other keyword (an unknown one is a TypeError, as there).
        super().__init__(dtype=dtype, name=name)
        if sparse:
            raise _errors.GradkitNotImplementedError(
                "tf.keras.layers.Discretization(sparse=True): gradkit.tf has no sparse tensors. Leave sparse=False."
            )
        if output_mode not in _MODES:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.Discretization got output_mode={output_mode!r}; Keras takes one of {list(_MODES)}."
            )
        if num_bins is not None and num_bins < 0:
            raise _errors.GradkitValueError(
                f"`num_bins` must be greater than or equal to 0, as Keras says. Received: `num_bins={num_bins}`"
            )
        if num_bins is not None and bin_boundaries is not None:
            raise _errors.GradkitValueError(
                "Both `num_bins` and `bin_boundaries` should not be set, as Keras says. Received: "
                f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`. Give one of them."
            )
        if num_bins is None and bin_boundaries is None:
            raise _errors.GradkitValueError(
                "You need to set either `num_bins` (then call adapt) or `bin_boundaries`, as Keras says."
            )
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        if self.bin_boundaries is not None and np.any(np.diff(self.bin_boundaries) < 0):
            # Keras' bucketize refuses them when called; a binary search of unsorted ones has no meaning.
            raise _errors.InvalidArgumentValueError(
                f"Discretization got bin_boundaries={self.bin_boundaries}, which are not sorted: Keras refuses them "
                "too (Expected sorted boundaries). Pass them in ascending order: sorted(bin_boundaries)."
            )
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = False
        self.summary = None if self.bin_boundaries else np.array([[], []], dtype="float32")

    def adapt(self, data, steps=None):
        """``num_bins`` boundaries from ``data`` (an array, a dataset or an iterable of batches)."""
        if self.num_bins is None:
            raise _errors.GradkitValueError(
                "Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, use "
                "`num_bins` instead, as Keras says."
            )
        self.summary = np.array([[], []], dtype="float32")
        if isinstance(data, np.ndarray) or hasattr(data, "shape") or not hasattr(data, "__iter__"):
            batches = [data]
        else:
            batches = data
        for i, batch in enumerate(batches):
            if steps is not None and i >= steps:
                break
            batch = np.asarray(batch.numpy() if hasattr(batch, "numpy") else batch, dtype="float32")
            self.summary = _merge(_summarize(batch, self.epsilon), self.summary, self.epsilon)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise _errors.GradkitValueError(
                "You need to either pass the `bin_boundaries` argument at construction time or call "
                "`adapt(dataset)` before you can start using the `Discretization` layer, as Keras says."
            )
        boundaries = np.asarray(self.bin_boundaries, np.float32)
        return call(_bucketize, convert(inputs), boundaries, mode=self.output_mode, dtype=self.compute_dtype)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.output_mode == "int":
            return shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            return (*shape[:-1], depth) if len(shape) > 1 and shape[-1] == 1 else (*shape, depth)
        return (shape[0], *shape[2:], depth) if len(shape) >= 2 else (depth,)

    def get_config(self):
        # Keras' keys: the dtype as its name, and no trainable flag.
        dtype = super().get_config()["dtype"]
        return {
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "name": self.name,
            "dtype": dtype["config"]["name"] if isinstance(dtype, dict) else dtype,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        boundaries = config.get("bin_boundaries")
        if boundaries is not None and config.get("num_bins") is not None:
            config["bin_boundaries"] = None  # an adapted layer: its boundaries applied after creation, as Keras
            layer = cls(**config)
            layer.bin_boundaries = list(boundaries)
            return layer
        return cls(**config)


# Bucket indices and their encodings are piecewise constant: TensorFlow gives no gradient (None).
record.cut_by_design(_bucketize, "tf.keras.layers.Discretization (its output has no gradient in TensorFlow)")
