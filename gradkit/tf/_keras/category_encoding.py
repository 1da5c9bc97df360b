"""``tf.keras.layers.CategoryEncoding``: integer category ids as one-hot, multi-hot or count
vectors of ``num_tokens`` entries, as Keras 3 encodes them.

``one_hot`` encodes each id (a trailing axis of size 1 is the id's own, and is replaced);
``multi_hot`` and ``count`` encode each sample, the ids along axis 1 (axis 0 for a rank-1
input, one sample), as Keras reduces them; ``count_weights`` weighs each id's count. Ids outside
``[0, num_tokens)`` encode as zeros, as Keras' TensorFlow backend gives them (where it counts,
a negative id raises, as Keras' bincount does).

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="count")
>>> layer([[0, 1], [1, 1]]).numpy().tolist()
[[1.0, 1.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert, known_value
from .base_layer import Layer
from .layer_names import KerasNamedLayer

_MODES = ("one_hot", "multi_hot", "count")


def _encode(ids, weights, num_tokens, mode, dtype):
    ids = ids.astype(jnp.int32)
    if ids.ndim == 0:
        ids = ids[None]
    if mode == "one_hot":
        if ids.ndim > 1 and ids.shape[-1] == 1:
            ids = ids[..., 0]
        return jax.nn.one_hot(ids, num_tokens, dtype=dtype)
    encoded = jax.nn.one_hot(ids, num_tokens, dtype=dtype if weights is None else weights.dtype)
    axis = 1 if ids.ndim > 1 else 0
    if mode == "multi_hot":
        return jnp.max(encoded, axis=axis)
    if weights is not None:
        encoded = encoded * jnp.reshape(weights, weights.shape + (1,))
    return jnp.sum(encoded, axis=axis)


class CategoryEncoding(KerasNamedLayer, Layer):
    """``CategoryEncoding(num_tokens, output_mode="multi_hot")``; called as ``layer(ids,
    count_weights=None)`` (weights only with ``output_mode="count"``)."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if num_tokens is None or isinstance(num_tokens, bool) or not isinstance(num_tokens, int) or num_tokens < 1:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.CategoryEncoding got num_tokens={num_tokens!r}; Keras takes the number of categories "
                "(a positive int): the ids must be in [0, num_tokens)."
            )
        if output_mode not in _MODES:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.CategoryEncoding got output_mode={output_mode!r}; Keras takes one of {list(_MODES)}."
            )
        if sparse:
            raise _errors.GradkitNotImplementedError(
                "tf.keras.layers.CategoryEncoding(sparse=True): gradkit.tf has no sparse tensors. Leave sparse=False "
                "for dense outputs."
            )
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = False

    def call(self, inputs, count_weights=None):
        ids = convert(inputs)
        known = known_value(ids)
        if self.output_mode != "one_hot" and known is not None and (known < 0).any():
            raise _errors.GradkitInvalidArgumentError(
                f"tf.keras.layers.CategoryEncoding(output_mode={self.output_mode!r}) got a negative id: Input arr must "
                "be non-negative!, as Keras' bincount says. Map the ids into [0, num_tokens) first."
            )
        if count_weights is None:
            return call(_encode, ids, None, num_tokens=self.num_tokens, mode=self.output_mode, dtype=self.compute_dtype)
        if self.output_mode != "count":
            raise _errors.GradkitValueError(
                "`count_weights` is not used when `output_mode` is not `'count'`, as Keras says. Received "
                f"output_mode={self.output_mode!r}; use output_mode='count' to weigh the counts."
            )
        weights = convert(count_weights, self.compute_dtype)
        return call(_encode, ids, weights, num_tokens=self.num_tokens, mode=self.output_mode, dtype=self.compute_dtype)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape) or (1,)
        if self.output_mode == "one_hot":
            if len(shape) > 1 and shape[-1] == 1:
                shape = shape[:-1]
            return (*shape, self.num_tokens)
        if len(shape) == 1:
            return (self.num_tokens,)
        return (shape[0], *shape[2:], self.num_tokens)

    def get_config(self):
        config = super().get_config()
        config.update({"num_tokens": self.num_tokens, "output_mode": self.output_mode})
        return config
