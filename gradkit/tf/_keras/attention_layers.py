"""``tf.keras.layers.MultiHeadAttention``: Keras 3's multi-head attention, with its weights layout.

Each projection is one of Keras' EinsumDense sublayers (``query``, ``key``, ``value``,
``attention_output``), its kernel ``(features, num_heads, key_dim)`` (the output one
``(num_heads, value_dim, output_size)``), so ``set_weights(keras_layer.get_weights())`` carries
a Keras layer's weights over. The whole attention (projections, masks, softmax, dropout on
the probabilities) is one recorded op.
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .. import _dropout
from .._convert import call, convert
from . import functional, keras_random, layer_args, layer_regularization, masking
from .base_layer import Layer, _as_input

_LARGE_NEGATIVE = -1e9  # Keras' Softmax sets masked logits to this (float32)


def _uniform_draws(shape, seed):
    """Uniform [0, 1) draws for attention dropout: from a seeded layer's own SeedGenerator, else
    from TensorFlow's random sequence (an op seed)."""
    if isinstance(seed, keras_random.SeedGenerator):
        return keras_random.uniform(shape, seed=seed)
    return _dropout._uniform(shape, np.dtype(np.float32), seed)


class _Projection(Layer):
    """One of MultiHeadAttention's EinsumDense sublayers: a ``kernel`` and an optional ``bias``,
    applied by the attention op itself."""

    def __init__(self, name):
        super().__init__(name=name)
        self.kernel = self.bias = None
        self.built = True


def _project(x, kernel, bias):
    # (batch, seq, features) x (features, *out) -> (batch, seq, *out)
    y = jnp.tensordot(x, kernel, axes=[[x.ndim - 1], [0]])
    return y if bias is None else y + _leading_ones(bias, y.ndim)


def _leading_ones(a, ndim):
    # Explicit rank: gradkit's strict test mode (jax_numpy_rank_promotion='raise') forbids implicit.
    return jnp.reshape(a, (1,) * (ndim - a.ndim) + a.shape)


def _equations(rank: int, axes: tuple[int, ...]) -> tuple[str, str]:
    """Keras' einsum equations for projected inputs of ``rank`` (``(batch, ..., heads, channels)``)
    attending over ``axes``: the scores ``(batch dims, heads, query axes, key axes)`` of key and
    query, and the output of scores and value. Every axis but the attention axes and the channels
    (the heads too) is a batch axis of both products."""
    target = "".join(chr(ord("a") + i) for i in range(rank))
    source = "".join(chr(ord("a") + rank + axes.index(i)) if i in axes else target[i] for i in range(rank))
    batch = [i for i in range(rank) if i not in axes and i != rank - 1]
    scores = "".join([target[i] for i in batch] + [target[i] for i in axes] + [source[i] for i in axes])
    return f"{source},{target}->{scores}", f"{scores},{source}->{target}"


def _attention(
    query,
    key,
    value,
    wq,
    bq,
    wk,
    bk,
    wv,
    bv,
    wo,
    bo,
    mask,
    dropped,
    wg=None,
    bg=None,
    *,
    scale,
    rate,
    causal,
    fused,
    axes,
    kv_repeats=1,
    window=None,
):
    """Keras' ``MultiHeadAttention.call``: the output and the probabilities, attending over the
    inputs' ``axes`` (``(1,)`` for ``(batch, seq, features)`` inputs).

    ``fused``: Keras' path through ``ops.dot_product_attention`` (a layer without dropout, not
    asked for its scores, on rank-3 inputs), where a query row masked whole attends to every
    position alike; on its other path such a row gives zeros. ``kv_repeats``: Keras'
    GroupQueryAttention, each key and value head shared by that many query heads in a row;
    ``window``: its sliding window (a query sees the keys less than ``window`` positions away);
    ``wg``/``bg``: its gate, a sigmoid projection of the query multiplying the heads' outputs."""
    if kv_repeats > 1:
        wk, wv = jnp.repeat(wk, kv_repeats, axis=1), jnp.repeat(wv, kv_repeats, axis=1)
        bk, bv = (None if b is None else jnp.repeat(b, kv_repeats, axis=0) for b in (bk, bv))
    q = _project(query, wq, bq) * jnp.asarray(scale, query.dtype)  # (B, ..., T..., N, H)
    k = _project(key, wk, bk)  # (B, ..., S..., N, H)
    v = _project(value, wv, bv)  # (B, ..., S..., N, V)
    scores_equation, combine_equation = _equations(q.ndim, axes)
    logits = jnp.einsum(scores_equation, k, q)  # (B, ..., N, T..., S...)
    keep = None
    if mask is not None:
        keep = mask.astype(bool)
        while keep.ndim < logits.ndim:  # Keras' expansion: a unit axis before the query axes (the heads')
            keep = jnp.expand_dims(keep, -2 * len(axes) - 1)
    if causal:
        lower = jnp.tril(jnp.ones(logits.shape[-2:], bool))[None, None]
        keep = lower if keep is None else keep & lower
    if window is not None:
        rows, cols = logits.shape[-2:]
        band = (jnp.abs(jnp.arange(rows)[:, None] - jnp.arange(cols)[None, :]) < window)[None, None]
        keep = band if keep is None else keep & band
    if keep is not None:
        logits = jnp.where(keep, logits, jnp.asarray(_LARGE_NEGATIVE, logits.dtype))
    probs = jax.nn.softmax(logits, axis=tuple(range(logits.ndim - len(axes), logits.ndim)))
    if keep is not None and not fused:  # a row masked whole gives zeros, not a uniform distribution
        probs = jnp.where(keep, probs, jnp.zeros((), probs.dtype))
    used = probs
    if dropped is not None:
        used = jnp.where(dropped >= rate, probs / (1 - rate), jnp.zeros((), probs.dtype))
    combined = jnp.einsum(combine_equation, used, v)  # (B, ..., T..., N, V)
    if wg is not None:
        combined = combined * jax.nn.sigmoid(_project(query, wg, bg))
    out = jnp.tensordot(combined, wo, axes=[[combined.ndim - 2, combined.ndim - 1], [0, 1]])
    if bo is not None:
        out = out + _leading_ones(bo, out.ndim)
    return out, probs


def _positive_int(value, arg, what, allow_none=False):
    if allow_none and value is None:
        return None
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
        raise _errors.GradkitValueError(
            f"{what}: {arg}={value!r}; Keras takes a positive int here{' or None' if allow_none else ''}."
        )
    return int(value)


class MultiHeadAttention(Layer):
    """``tf.keras.layers.MultiHeadAttention(num_heads, key_dim, value_dim=None, dropout=0.0,
    use_bias=True, output_shape=None, attention_axes=None, kernel_initializer='glorot_uniform',
    bias_initializer='zeros')``, called as ``layer(query, value, key=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)`` on
    ``(batch, seq, features)`` inputs, or on ``(batch, ..., features)`` inputs of higher rank
    attending over ``attention_axes`` (by default every axis between batch and features, as in
    Keras; the other axes are batch axes, and ``attention_mask`` then has the shape ``(batch,
    other axes, query axes, key axes)``).

    Query, key and value are projected to ``num_heads`` heads, the scaled dot products are
    softmaxed over the key positions (``attention_mask`` and ``use_causal_mask`` mark the
    positions each query may see, as Keras combines them; a query that sees none gets zero
    probabilities), ``dropout`` is applied to the probabilities when training, and the heads
    are projected back to the query's feature size (or ``output_shape``). With
    ``return_attention_scores=True`` the call also returns the probabilities, ``(batch,
    num_heads, T, S)``, before dropout. Dropout masks are fresh at each call, also at each
    call of a ``tf.function``; they are not TensorFlow's draws.

    Keras masks (``Embedding(mask_zero=True)``) are read as Keras 3 reads them: the value's and
    key's as ``value_mask``/``key_mask``, the query's keeping its padded rows from attending and
    given to the output; an explicit ``query_mask`` is ignored, as Keras 3 ignores it. Keras
    masks, ``value_mask``/``key_mask`` and ``use_causal_mask`` are implemented for rank-3
    inputs attending over their sequence axis; ``sliding_window``, ``use_gate`` and
    ``flash_attention=True`` raise an error.

    >>> import gradkit.tf as tf
    >>> mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")
    >>> out, scores = mha(tf.ones([1, 4, 5]), tf.ones([1, 6, 5]), return_attention_scores=True)
    >>> out.shape, scores.shape, [tuple(w.shape) for w in mha.weights][:2]
    ((1, 4, 5), (1, 2, 4, 6), [(5, 2, 3), (2, 3)])
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = "tf.keras.layers.MultiHeadAttention"
        layer_args.refuse_unimplemented(
            what,
            "num_heads, key_dim, value_dim, dropout, use_bias, output_shape, the default attention_axes, the "
            "initializers, the kernel and bias regularizers and constraints, seed, name and trainable",
            sliding_window=sliding_window,
            flash_attention=flash_attention,
            use_gate=use_gate,
        )
        if activity_regularizer is not None:
            raise _errors.GradkitNotImplementedError(
                f"{what}(activity_regularizer={activity_regularizer!r}): Keras applies it to the output of each of "
                "the four projections inside the attention, which gradkit.tf computes in one op without them. Leave "
                "it out; add a penalty of the layer's output with add_loss in a layer around it if you need one."
            )
        layer_args.base_options(what, kwargs)
        layer_args.check_initializers(what, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer)
        axes = (attention_axes,) if isinstance(attention_axes, numbers.Integral) else attention_axes
        if axes is not None and (
            not isinstance(axes, (list, tuple))
            or not axes
            or not all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in axes)
        ):
            raise _errors.GradkitValueError(
                f"{what}: attention_axes={attention_axes!r}; Keras takes an int or a list of ints (the input axes "
                "attended over, not the batch or features axis), or None for all the axes between them."
            )
        self.num_heads = _positive_int(num_heads, "num_heads", what)
        self.key_dim = _positive_int(key_dim, "key_dim", what)
        self.value_dim = _positive_int(value_dim, "value_dim", what, allow_none=True) or self.key_dim
        if not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
            raise _errors.GradkitValueError(
                f"{what}: dropout={dropout!r}; Keras takes a rate in [0, 1) for the attention probabilities."
            )
        if output_shape is not None:
            shape = (output_shape,) if isinstance(output_shape, numbers.Integral) else tuple(output_shape)
            output_shape = tuple(_positive_int(d, "output_shape", what) for d in shape)
        super().__init__(name=name, trainable=trainable)
        layer_regularization.keep_options(
            self,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.output_shape = output_shape
        self.attention_axes = axes  # Keras' form: None (the default), or the tuple/list given
        self.seed = seed
        keras_random.own_generator(self, seed)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self._query_dense = self._key_dense = self._value_dense = self._output_dense = None
        self._input_rank = None

    @property
    def query_dense(self):
        return self._query_dense

    @property
    def key_dense(self):
        return self._key_dense

    @property
    def value_dense(self):
        return self._value_dense

    @property
    def output_dense(self):
        return self._output_dense

    def _what(self) -> str:
        return f"tf.keras.layers.MultiHeadAttention '{self.name}'"

    def _projection(self, name, kernel_shape, bias_shape):
        layer = _Projection(f"{self.name}/{name}")  # Keras' paths: 'multi_head_attention/query/kernel'

        layer.kernel = layer.add_weight("kernel", kernel_shape, self.kernel_initializer)
        if self.use_bias:
            layer.bias = layer.add_weight("bias", bias_shape, self.bias_initializer)
        # Keras gives each projection the layer's kernel and bias regularizers and constraints.
        for weight in ("kernel", "bias"):
            variable = getattr(layer, weight)
            if variable is not None:
                options = (getattr(self, f"{weight}_regularizer"), getattr(self, f"{weight}_constraint"))
                layer_regularization.attach(variable, *options)
        return layer

    def build(self, query_shape, value_shape=None, key_shape=None) -> None:
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        self.attention_axes = self._axes(len(query_shape))
        for shape, arg in ((value_shape, "value"), (key_shape, "key")):
            if len(shape) != len(query_shape):
                raise _errors.GradkitValueError(
                    f"{self._what()}: query has shape {tuple(query_shape)} and {arg} {tuple(shape)}; Keras takes "
                    "inputs of one rank."
                )
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise _errors.GradkitValueError(
                f"{self._what()}: value has shape {tuple(value_shape)} and key {tuple(key_shape)}; all their axes "
                "but the last must be equal, as Keras requires."
            )
        n, h, v = self.num_heads, self.key_dim, self.value_dim
        out = self.output_shape or (query_shape[-1],)
        self._input_rank = len(query_shape)
        # Keras' built layer holds a Softmax and a Dropout layer, which take the next of those
        # default names ('softmax', 'dropout_1', ...); so a layer made after this one is named as in Keras.
        unique_name("softmax")
        unique_name("dropout")
        self._query_dense = self._projection("query", (query_shape[-1], n, h), (n, h))
        self._key_dense = self._projection("key", (key_shape[-1], n, h), (n, h))
        self._value_dense = self._projection("value", (value_shape[-1], n, v), (n, v))
        self._output_dense = self._projection("attention_output", (n, v, *out), out)

    def _axes(self, rank: int) -> tuple[int, ...]:
        """The attention axes for inputs of ``rank``, as a built Keras layer holds them (its config
        too): a tuple of non-negative axes, by default every axis between the batch and features."""
        if rank < 3:
            raise _errors.GradkitValueError(
                f"{self._what()} got inputs of rank {rank}: it takes (batch, ..., features) inputs of rank 3 or more "
                "(batch, the attended axes, features), as Keras does."
            )
        if self.attention_axes is None:
            return tuple(range(1, rank - 1))
        axes = tuple(int(a) + rank if a < 0 else int(a) for a in self.attention_axes)
        if not all(0 < a < rank - 1 for a in axes) or len(set(axes)) != len(axes):
            raise _errors.GradkitValueError(
                f"{self._what()}: attention_axes={tuple(self.attention_axes)} for inputs of rank {rank}; each must be "
                f"an axis between the batch and features axes (1 to {rank - 2}, or negative), once."
            )
        return axes

    _keras_masking = True  # it reads the inputs' masks itself (__call__) and gives the output the query's
    _kv_repeats = 1  # query heads per key and value head (GroupQueryAttention's)
    _window = None  # a sliding window's size (GroupQueryAttention's)

    def _gate_weights(self) -> tuple:
        """The gate's kernel and bias values (GroupQueryAttention's ``use_gate``), or none."""
        return ()

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        """Keras': the query's shape with the last axis ``output_shape`` (the query's features)."""
        query_shape = tuple(query_shape)
        return (*query_shape[:-1], *(self.output_shape or (query_shape[-1],)))

    def __call__(self, query=None, value=None, key=None, **kwargs):
        if query is None or value is None:
            raise _errors.GradkitTypeError(
                f"{self._what()} takes query and value (and optionally key), as Keras does: "
                "mha(query, value, key=None, ...) or mha(query=x, value=x, key=x)."
            )
        if functional.is_symbolic((query, value, key, kwargs)):  # Keras' functional API
            return functional.record_call(self, (query, value), {"key": key, **kwargs})
        # Keras masks (Embedding(mask_zero=True), Masking), read and taken off the inputs as
        # Keras 3 does: the value's and key's become value_mask/key_mask where none is given,
        # the query's keeps its padded rows from attending and becomes the output's mask.
        query_mask, value_mask = masking.get_keras_mask(query), masking.get_keras_mask(value)
        key_mask = None if key is None or key is value else masking.get_keras_mask(key)
        for t in (query, value, key):
            masking.set_keras_mask(t, None)
        if kwargs.get("value_mask") is None and value_mask is not None:
            kwargs["value_mask"] = value_mask
        if kwargs.get("key_mask") is None and key_mask is not None:
            kwargs["key_mask"] = key_mask
        query, value = _as_input(query), _as_input(value)
        key = value if key is None else _as_input(key)
        if query_mask is not None:
            rows = call(_query_rows, query_mask)
            given = kwargs.get("attention_mask")
            kwargs["attention_mask"] = rows if given is None else call(_and, call(jnp.asarray, given, bool), rows)
        if not self.built:
            self.build(*(tuple(t.shape) for t in (query, value, key)))
        outputs = super().__call__(query, value, key=key, **kwargs)
        if query_mask is not None:
            masking.set_keras_mask(outputs[0] if isinstance(outputs, tuple) else outputs, query_mask)
        return outputs

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        what = self._what()
        del query_mask  # Keras 3 ignores an explicit one (the query's Keras mask is read instead)
        key = value if key is None else key
        axes = self.attention_axes
        if any(t.ndim != self._input_rank for t in (query, value, key)):
            raise _errors.GradkitValueError(
                f"{what} was built for inputs of rank {self._input_rank}, but got query, value and key of shapes "
                f"{tuple(query.shape)}, {tuple(value.shape)}, {tuple(key.shape)}. Use a new layer for the new rank."
            )
        query, value, key = (layer_args.float_input(t) for t in (query, value, key))
        built = (self._query_dense.kernel.shape[0], self._key_dense.kernel.shape[0], self._value_dense.kernel.shape[0])
        got = (query.shape[-1], key.shape[-1], value.shape[-1])
        if built != got:
            raise _errors.GradkitValueError(
                f"{what} was built for query, key and value with {built} features, but got {got}. Use a new layer "
                "for the new sizes."
            )
        sequence = query.ndim == 3 and axes == (1,)
        if not sequence and (use_causal_mask or value_mask is not None or key_mask is not None):
            raise _errors.GradkitNotImplementedError(
                f"{what}: use_causal_mask, value_mask, key_mask and Keras masks are implemented for (batch, seq, "
                f"features) inputs; these have shape {tuple(query.shape)} attending over axes {axes}. Pass an "
                "attention_mask of shape (batch, ..., query axes, key axes) instead."
            )
        batch = query.shape[0]
        if sequence:
            mask = self._mask(attention_mask, value_mask, key_mask, (batch, query.shape[1], value.shape[1]))
        else:
            mask = None if attention_mask is None else self._general_mask(attention_mask, query, value, axes)
        dropped = None
        if training and self.dropout > 0:
            others = [query.shape[i] for i in range(1, query.ndim - 1) if i not in axes]
            score_shape = (
                batch,
                *others,
                self.num_heads,
                *(query.shape[i] for i in axes),
                *(value.shape[i] for i in axes),
            )
            dropped = _uniform_draws(score_shape, keras_random.layer_seed(self))
        q, k, v, o = self._query_dense, self._key_dense, self._value_dense, self._output_dense
        out, scores = call(
            _attention,
            query,
            key,
            value,
            q.kernel.value,
            None if q.bias is None else q.bias.value,
            k.kernel.value,
            None if k.bias is None else k.bias.value,
            v.kernel.value,
            None if v.bias is None else v.bias.value,
            o.kernel.value,
            None if o.bias is None else o.bias.value,
            mask,
            dropped,
            *self._gate_weights(),
            scale=1.0 / math.sqrt(float(self.key_dim)),
            rate=self.dropout,
            causal=bool(use_causal_mask),
            fused=sequence and not (self.dropout > 0 or return_attention_scores),
            axes=axes,
            kv_repeats=self._kv_repeats,
            window=self._window,
        )
        return (out, scores) if return_attention_scores else out

    def _general_mask(self, attention_mask, query, value, axes):
        """An ``attention_mask`` for inputs attending over ``axes``: it must broadcast, after Keras
        puts a unit axis for the heads before its query axes, to the scores' shape ``(batch, ...,
        heads, query axes, key axes)``."""
        m = convert(attention_mask)
        others = [query.shape[i] for i in range(1, query.ndim - 1) if i not in axes]
        scores = (
            query.shape[0],
            *others,
            self.num_heads,
            *(query.shape[i] for i in axes),
            *(value.shape[i] for i in axes),
        )
        want = scores[: -2 * len(axes) - 1] + scores[-2 * len(axes) :]
        m_shape = tuple(m.shape)
        ok = len(m_shape) <= len(want) and all(a in (1, b) for a, b in zip(m_shape[::-1], want[::-1]))
        if not ok or len(m_shape) < 2 * len(axes):
            raise _errors.GradkitValueError(
                f"{self._what()}: attention_mask has shape {m_shape}, but the attention over axes {axes} takes one of "
                f"shape {want} (batch, the other axes, the query's attended axes, the key's). True where a query may "
                "attend."
            )
        return call(_as_mask, m, shape=m_shape)

    def _mask(self, attention_mask, value_mask, key_mask, shape):
        """Keras' combination: ``attention_mask & value_mask[:, None] & key_mask[:, None]``, as
        booleans of shape (batch or 1, T, S); None when nothing masks."""
        parts = []
        for given, arg, expand in (
            (value_mask, "value_mask", True),
            (key_mask, "key_mask", True),
            (attention_mask, "attention_mask", False),
        ):
            if given is None:
                continue
            m = convert(given)
            m_shape = tuple(m.shape)
            full = (shape[0], 1, shape[2]) if expand else shape
            want = (shape[0], shape[2]) if expand else shape
            if not expand and len(m_shape) in (2, 4):
                # Keras broadcasts these to the scores (batch, heads, T, S): (T, S) for every example
                # and head, (batch, heads, T, S) one mask per head.
                want = (shape[1], shape[2]) if len(m_shape) == 2 else (shape[0], self.num_heads, *shape[1:])
            ok = len(m_shape) == len(want) and all(a in (1, b) for a, b in zip(m_shape, want))
            if not ok:
                takes = (
                    f"{want}"
                    if expand
                    else f"{shape} (batch, T, S), ({shape[1]}, {shape[2]}) or {(shape[0], self.num_heads, *shape[1:])} (batch, heads, T, S)"
                )
                raise _errors.GradkitValueError(
                    f"{self._what()}: {arg} has shape {m_shape}, but the attention is {shape} (batch, T, S); Keras "
                    f"takes {arg} of shape {takes}, or with 1 for any axis to broadcast. True where a query may attend."
                )
            parts.append(call(_as_mask, m, shape=full if expand else m_shape))
        if not parts:
            return None
        combined = parts[0]
        for p in parts[1:]:
            combined = call(_and, combined, p)
        return combined


def _as_mask(m, shape):
    return jnp.reshape(m.astype(bool), shape)


def _and(a, b):
    # Broadcast as NumPy (and Keras) do: the lower-rank mask gets leading unit axes.
    rank = max(a.ndim, b.ndim)
    a, b = (jnp.reshape(m, (1,) * (rank - m.ndim) + m.shape) for m in (a, b))
    return a & b


def _query_rows(query_mask):
    return query_mask.astype(bool)[:, :, None]  # (batch, T, 1): a padded query attends nowhere
