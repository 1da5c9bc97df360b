"""``tf.keras.layers.ReversibleEmbedding``: an Embedding that also projects back to the vocabulary."""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .._convert import call, convert
from . import layer_config
from .embedding import Embedding
from .masking import set_keras_mask


def _reverse(hidden, kernel, soft_cap):
    logits = hidden @ kernel
    if soft_cap is not None:
        # Keras' soft cap: tanh(logits / cap) * cap keeps the logits within (-cap, cap).
        logits = jnp.tanh(logits / soft_cap) * soft_cap
    return logits


class ReversibleEmbedding(Embedding):
    """``tf.keras.layers.ReversibleEmbedding(input_dim, output_dim, tie_weights=True,
    reverse_dtype=None, logit_soft_cap=None, ...)``: ``layer(ids)`` is an Embedding lookup;
    ``layer(hidden, reverse=True)`` is ``hidden @ embeddings.T`` (``tie_weights=True``) or
    ``hidden @ reverse_embeddings`` (a separate ``(output_dim, input_dim)`` weight), the logits over
    the vocabulary, optionally soft-capped as ``tanh(logits / cap) * cap``.

    With ``mask_zero=True`` the forward output carries the mask ``ids != 0``; the reverse output
    carries none, as in Keras.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.ReversibleEmbedding(10, 4)
    >>> hidden = layer(tf.constant([[1, 2, 3]]))
    >>> layer(hidden, reverse=True).shape
    (1, 3, 10)
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        tie_weights=True,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        reverse_dtype=None,
        logit_soft_cap=None,
        **kwargs,
    ):
        kwargs.setdefault("name", unique_name("reversible_embedding"))
        super().__init__(
            input_dim,
            output_dim,
            embeddings_initializer=embeddings_initializer,
            embeddings_regularizer=embeddings_regularizer,
            embeddings_constraint=embeddings_constraint,
            mask_zero=mask_zero,
            **kwargs,
        )
        if logit_soft_cap is not None and (isinstance(logit_soft_cap, bool) or not logit_soft_cap > 0):
            raise _errors.GradkitValueError(
                f"tf.keras.layers.ReversibleEmbedding: logit_soft_cap={logit_soft_cap!r}; it must be a positive "
                "number (the logits' bound), or None for no cap."
            )
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap
        self.reverse_embeddings = None

    def build(self, input_shape) -> None:
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                "reverse_embeddings", (self.output_dim, self.input_dim), self.embeddings_initializer
            )

    def compute_output_shape(self, input_shape, reverse=False):
        if reverse:
            return (*tuple(input_shape)[:-1], self.input_dim)
        return super().compute_output_shape(input_shape)

    def compute_mask(self, inputs, mask=None):
        # The forward call attaches its mask itself; the reverse projection's output has none.
        return None

    def call(self, inputs, reverse=False):
        if not reverse:
            result = super().call(inputs)
            if self.mask_zero:
                set_keras_mask(result, super().compute_mask(inputs))
            return result
        hidden = convert(inputs)
        if hidden.shape[-1:] != (self.output_dim,):
            raise _errors.GradkitValueError(
                f"[gradkit] tf.keras.layers.ReversibleEmbedding '{self.name}': reverse=True takes hidden states whose "
                f"last axis is output_dim={self.output_dim}, but got shape {tuple(hidden.shape)}. Pass the layer's "
                "embedding outputs (or states of that width)."
            )
        if self.tie_weights:
            kernel = call(jnp.transpose, self.embeddings.value)
        else:
            kernel = convert(self.reverse_embeddings.value)
        dtype = self.reverse_dtype if self.reverse_dtype is not None else self.compute_dtype
        hidden, kernel = convert(hidden, dtype), convert(kernel, dtype)
        return call(_reverse, hidden, kernel, soft_cap=self.logit_soft_cap)


layer_config.BUILTIN["ReversibleEmbedding"] = (
    *layer_config.BUILTIN["Embedding"],
    "tie_weights",
    "reverse_dtype",
    "logit_soft_cap",
)
