"""``tf.keras.layers.Attention`` and ``AdditiveAttention``: Keras 3's attention over
``[query, value]`` or ``[query, value, key]`` (the key defaults to the value), each call one
recorded op.

``Attention`` scores a query against a key by their dot product (times a learned ``scale``
with ``use_scale=True``), or, with ``score_mode='concat'``, by
``concat_score_weight * sum(tanh(scale * (q + k)))``; ``AdditiveAttention`` by
``sum(scale * tanh(q + k))`` with a learned ``scale`` of one entry per feature. As in Keras, a
call takes ``mask=[query_mask, value_mask]`` (``(batch, Tq)`` and ``(batch, Tv)``, True where
a step counts): a masked value step gets ``1e9`` subtracted from its scores before the softmax
(so a row masked whole attends uniformly, as Keras' does), and a masked query step's output
is zeros. ``use_causal_mask=True`` lets query step ``i`` see value steps up to ``i``.
``dropout`` drops attention weights when training; ``return_attention_scores=True`` also
returns the weights the values were combined with (after dropout, as Keras returns them).

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.Attention(use_scale=True, name="attention")
>>> out, weights = layer([tf.ones([2, 3, 4]), tf.ones([2, 5, 4])], return_attention_scores=True)
>>> out.shape, weights.shape, [w.name for w in layer.weights]
((2, 3, 4), (2, 3, 5), ['attention/scale:0'])
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit.nn.layer import Layer, unique_name

from .. import _dropout
from .._convert import call, convert
from . import keras_random, layer_args, layer_config
from .layers import _KerasLayer

_MASKED = 1.0e9  # Keras subtracts this from a masked step's score (65504 for float16, not taken here)


def _attend(query, value, key, scale, concat_weight, query_mask, value_mask, dropped, *, mode, causal, rate):
    """Keras' ``Attention.call`` (``mode`` 'dot', 'concat' or 'additive'): the output and the weights."""
    if mode == "dot":
        scores = jnp.matmul(query, jnp.swapaxes(key, -2, -1), precision=jax.lax.Precision.HIGHEST)
        if scale is not None:
            scores = scores * scale
    else:
        pairs = jnp.expand_dims(query, -2) + jnp.expand_dims(key, -3)  # (..., Tq, Tv, dim)
        if mode == "concat":
            inner = pairs if scale is None else scale * pairs
            scores = concat_weight * jnp.sum(jnp.tanh(inner), axis=-1)
        else:
            # Explicit rank: gradkit's strict test mode (jax_numpy_rank_promotion='raise') forbids implicit.
            weight = 1.0 if scale is None else jnp.reshape(scale, (1,) * (pairs.ndim - 1) + scale.shape)
            scores = jnp.sum(weight * jnp.tanh(pairs), axis=-1)
    keep = None
    if value_mask is not None:
        keep = value_mask.astype(bool)
        if keep.ndim == 2:
            keep = jnp.expand_dims(keep, -2)
        keep = jnp.broadcast_to(keep, scores.shape)
    if causal:
        rows, cols = scores.shape[-2:]
        lower = jnp.broadcast_to(jnp.arange(rows)[:, None] >= jnp.arange(cols)[None, :], scores.shape)
        keep = lower if keep is None else keep & lower
    if keep is not None:
        scores = jnp.where(keep, scores, scores - jnp.asarray(_MASKED, scores.dtype))
    weights = jax.nn.softmax(scores, axis=-1)
    if dropped is not None:
        weights = jnp.where(dropped >= rate, weights / (1 - rate), jnp.zeros((), weights.dtype))
    out = jnp.matmul(weights, value, precision=jax.lax.Precision.HIGHEST)
    if query_mask is not None:
        out = jnp.where(jnp.expand_dims(query_mask.astype(bool), -1), out, jnp.zeros((), out.dtype))
    return out, weights


def _shapes(input_shape):
    """``build``'s input shapes as the list ``_validate`` checks: a list (or tuple) of shapes stays
    one list; one tensor's shape stays a shape, which ``_validate`` refuses as Keras does."""
    if isinstance(input_shape, (list, tuple)) and all(isinstance(s, (list, tuple)) for s in input_shape):
        return list(input_shape)
    return input_shape


def _uniform_draws(shape, seed):
    """Uniform [0, 1) draws for attention dropout: from a seeded layer's own SeedGenerator, else
    from TensorFlow's random sequence (an op seed)."""
    if isinstance(seed, keras_random.SeedGenerator):
        return keras_random.uniform(shape, seed=seed)
    return _dropout._uniform(shape, np.dtype(np.float32), seed)


class Attention(_KerasLayer, Layer):
    """``tf.keras.layers.Attention(use_scale=False, score_mode='dot', dropout=0.0, seed=None)``,
    called as ``layer([query, value(, key)], mask=None, training=False,
    return_attention_scores=False, use_causal_mask=False)``; see the module docstring."""

    default_name = "attention"

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, name=None, trainable=True, **kwargs):
        what = f"tf.keras.layers.{type(self).__name__}"
        shape_args = layer_args.base_options(what, kwargs)
        if score_mode not in ("dot", "concat"):
            raise _errors.GradkitValueError(f"{what}: score_mode={score_mode!r}; Keras takes 'dot' or 'concat' here.")
        if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool) or not 0 <= dropout < 1:
            raise _errors.GradkitValueError(
                f"{what}: dropout={dropout!r}; gradkit.tf takes a rate in [0, 1) for the attention weights."
            )
        super().__init__(
            name=name if name is not None else unique_name(self.default_name), trainable=trainable, **shape_args
        )
        self.use_scale = use_scale
        self.score_mode = score_mode
        self.dropout = dropout
        self.seed = seed
        keras_random.own_generator(self, seed)
        self.scale = None  # (in this order: scale, then concat_score_weight, as in Keras)
        self.concat_score_weight = None

    def _what(self) -> str:
        return f"tf.keras.layers.{type(self).__name__} '{self.name}'"

    def _mode(self) -> str:
        return self.score_mode

    def _validate(self, inputs, mask=None) -> None:
        """Keras' checks: a list of 2 or 3 inputs, and a mask list of 2 or 3 entries."""
        if not isinstance(inputs, list) or not 2 <= len(inputs) <= 3:
            raise _errors.GradkitValueError(
                f"{self._what()} takes a list of inputs, [query, value] or [query, value, key], as Keras does, but "
                f"got {type(inputs).__name__}{f' of length {len(inputs)}' if isinstance(inputs, list) else ''}. "
                "Call it as layer([query, value])."
            )
        if mask is not None and (not isinstance(mask, list) or not 2 <= len(mask) <= 3):
            raise _errors.GradkitValueError(
                f"{self._what()} takes mask=[query_mask, value_mask] (a list of 2 or 3), as Keras does, but got "
                f"{type(mask).__name__}. Pass None where a part is not masked, e.g. mask=[None, value_mask]."
            )

    def build(self, input_shape) -> None:
        self._validate(_shapes(input_shape))
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones")

    def compute_output_shape(self, input_shape):
        query_shape, value_shape = tuple(input_shape[0]), tuple(input_shape[1])
        return (*query_shape[:-1], value_shape[-1])

    def compute_mask(self, inputs, mask=None):
        """Keras': the query mask, which the output keeps."""
        self._validate(inputs, mask)
        return None if mask is None or mask[0] is None else convert(mask[0])

    def _check_shapes(self, query, value, key) -> None:
        problem = None
        if query.ndim < 2 or value.ndim != query.ndim or key.ndim != query.ndim:
            problem = "query, value and key take the same rank (at least 2)"
        elif tuple(value.shape[:-1]) != tuple(key.shape[:-1]):
            problem = "value and key take the same shape but for the last axis"
        elif query.shape[-1] != key.shape[-1]:
            problem = "query and key take the same last axis (the score compares them feature by feature)"
        if problem:
            raise _errors.GradkitValueError(
                f"{self._what()} got query {tuple(query.shape)}, value {tuple(value.shape)} and key "
                f"{tuple(key.shape)}: {problem} ((batch, Tq, dim), (batch, Tv, dim_v), (batch, Tv, dim))."
            )

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        self._validate(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        for x in (query, value, key):
            layer_args.check_float(x, self._what())
        self._check_shapes(query, value, key)
        query_mask = None if not mask or mask[0] is None else convert(mask[0])
        value_mask = None if not mask or mask[1] is None else convert(mask[1])
        scores_shape = (*query.shape[:-1], key.shape[-2])
        if query_mask is not None and tuple(query_mask.shape) != tuple(query.shape[:-1]):
            raise _errors.GradkitValueError(
                f"{self._what()}: the query mask has shape {tuple(query_mask.shape)}; it takes one of shape "
                f"{tuple(query.shape[:-1])} (batch, Tq), True where a query step counts, as Keras does."
            )
        if value_mask is not None:
            expanded = (
                (*value_mask.shape[:-1], 1, value_mask.shape[-1]) if len(value_mask.shape) == 2 else value_mask.shape
            )
            fits = len(expanded) == len(scores_shape) and all(a in (1, b) for a, b in zip(expanded, scores_shape))
            if not fits:
                raise _errors.GradkitValueError(
                    f"{self._what()}: the value mask has shape {tuple(value_mask.shape)}; it takes one of shape "
                    f"{(scores_shape[0], scores_shape[-1])} (batch, Tv), True where a value step counts, as Keras does."
                )
        dropped = None
        if training and self.dropout > 0:
            dropped = _uniform_draws(scores_shape, keras_random.layer_seed(self))
        out, weights = call(
            _attend,
            query,
            value,
            key,
            None if self.scale is None else self.scale.value,
            None if self.concat_score_weight is None else self.concat_score_weight.value,
            query_mask,
            value_mask,
            dropped,
            mode=self._mode(),
            causal=bool(use_causal_mask),
            rate=float(self.dropout),
        )
        return (out, weights) if return_attention_scores else out


class AdditiveAttention(Attention):
    """``tf.keras.layers.AdditiveAttention(use_scale=True, dropout=0.0)``: Bahdanau-style
    attention, ``scores = sum(scale * tanh(query + key))`` with ``scale`` ``(dim,)``
    (glorot_uniform); called as ``Attention`` is."""

    default_name = "additive_attention"

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        if "score_mode" in kwargs:  # Keras' AdditiveAttention takes it and ignores it
            raise _errors.GradkitValueError(
                "tf.keras.layers.AdditiveAttention got score_mode=, which it does not use (its score is additive; "
                "Keras ignores the argument). Leave it out, or use tf.keras.layers.Attention(score_mode='concat')."
            )
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def _mode(self) -> str:
        return "additive"

    def build(self, input_shape) -> None:
        self._validate(_shapes(input_shape))
        if self.use_scale:
            dim = input_shape[0][-1]
            self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform")


layer_config.BUILTIN.update(
    Attention=("use_scale", "score_mode", "dropout", "seed"), AdditiveAttention=("use_scale", "dropout", "seed")
)
