"""``tf.keras.layers.Embedding``: a table of ``input_dim`` vectors looked up by integer index."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit.nn.layer import Layer, unique_name

from .._convert import call, convert, known_value
from . import layer_args, layer_regularization
from .layers import _KerasLayer


def _lookup(embeddings, indices):
    # A negative index counts from the end, as Keras' TensorFlow backend takes it.
    indices = jnp.where(indices < 0, indices + embeddings.shape[0], indices)
    return jnp.take(embeddings, indices, axis=0)


class Embedding(_KerasLayer, Layer):
    """``tf.keras.layers.Embedding(input_dim, output_dim, embeddings_initializer='uniform')``:
    ``embeddings[inputs]``, an ``(..., output_dim)`` float32 result for integer inputs of any shape.

    'uniform' is Keras' ``RandomUniform(-0.05, 0.05)``. Float inputs are cast to int32, as in
    Keras, and integer inputs carry no gradient. The gradient with respect to ``embeddings`` is
    a dense tensor (TensorFlow gives ``tf.IndexedSlices`` with the same values once densified).
    An index outside ``[-input_dim, input_dim)`` raises an IndexError when its value is known;
    inside ``tf.function`` it cannot be checked and the row is NaN. With ``mask_zero=True`` index 0
    is padding: the output carries the mask ``inputs != 0`` to the layers after it (``masking.py``).

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Embedding(10, 4, name="embedding")
    >>> layer(tf.constant([[1, 2, 3]])).shape, layer.embeddings.name
    ((1, 3, 4), 'embedding/embeddings:0')
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        activity_regularizer=None,
        mask_zero=False,
        weights=None,
        lora_rank=None,
        lora_alpha=None,
        quantization_config=None,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = "tf.keras.layers.Embedding"
        layer_args.refuse_unimplemented(
            what,
            "input_dim, output_dim, embeddings_initializer, embeddings_regularizer, embeddings_constraint, "
            "activity_regularizer, mask_zero, name and trainable (assign embeddings after the first call instead of "
            "weights=)",
            weights=weights,
            lora_rank=lora_rank,
            lora_alpha=lora_alpha,
            quantization_config=quantization_config,
        )
        if "input_length" in kwargs:
            kwargs = dict(kwargs)
            if kwargs.pop("input_length") is not None:  # Keras 3 drops it with a warning
                warnings.warn("Argument `input_length` is deprecated. Just remove it.", stacklevel=2)
        shape_args = layer_args.base_options(what, kwargs)
        layer_args.check_initializers(what, embeddings_initializer=embeddings_initializer)
        for value, arg in ((input_dim, "input_dim"), (output_dim, "output_dim")):
            # Keras' test: a Python int (a NumPy integer is refused, as Keras refuses it).
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise _errors.GradkitValueError(f"{what}: {arg}={value!r}; Keras takes a positive int here.")
        super().__init__(
            name=name if name is not None else unique_name("embedding"),
            trainable=trainable,
            activity_regularizer=activity_regularizer,
            **shape_args,
        )
        layer_regularization.keep_options(
            self, embeddings_regularizer=embeddings_regularizer, embeddings_constraint=embeddings_constraint
        )
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero  # Keras': it makes a mask only with mask_zero
        # Keras' 'uniform' is RandomUniform's default range, [-0.05, 0.05].
        uniform = isinstance(embeddings_initializer, str) and embeddings_initializer == "uniform"
        self.embeddings_initializer = "random_uniform" if uniform else embeddings_initializer
        self.embeddings = None

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape), self.output_dim)

    def compute_mask(self, inputs, mask=None):
        """With ``mask_zero``: True where the index is not 0 (the padding index), as Keras."""
        if not self.mask_zero:
            return None
        return call(jnp.not_equal, convert(inputs), 0)

    def build(self, input_shape) -> None:
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim), self.embeddings_initializer)
        layer_regularization.attach_to_weights(self, "embeddings")

    def call(self, x):
        if not np.issubdtype(np.dtype(x.dtype), np.integer):
            x = convert(x, np.int32)  # as Keras casts them
        value = known_value(x)
        if value is not None and value.size and ((value < -self.input_dim) | (value >= self.input_dim)).any():
            bad = int(value[(value < -self.input_dim) | (value >= self.input_dim)][0])
            raise _errors.GradkitIndexError(
                f"[gradkit] tf.keras.layers.Embedding '{self.name}': index {bad} is not in "
                f"[-{self.input_dim}, {self.input_dim}) (input_dim={self.input_dim}), as TensorFlow requires. "
                "Pass indices below input_dim, or make the layer with a larger input_dim."
            )
        return call(_lookup, self.embeddings.value, x)
