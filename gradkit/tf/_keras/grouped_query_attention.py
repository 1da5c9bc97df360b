"""``tf.keras.layers.GroupQueryAttention``: Keras 3's grouped-query attention (Ainslie et al., 2023).

MultiHeadAttention with fewer key and value heads than query heads: each of the
``num_key_value_heads`` key and value projections serves ``num_query_heads //
num_key_value_heads`` query heads in a row (Keras' ``ops.repeat`` along the heads), so one key
and value head is multi-query attention and as many as the query's is multi-head attention. Its
weights are Keras' EinsumDense sublayers (``query`` ``(features, query heads, head_dim)``,
``key`` and ``value`` ``(features, key/value heads, head_dim)``, with ``use_gate`` a ``gate``
like the query's, ``attention_output`` ``(query heads, head_dim, features)``), so a Keras
layer's weights carry over. ``sliding_window`` lets a query see only the keys less than that many
positions away (with ``use_causal_mask``, the causal sliding window); ``use_gate`` multiplies each
head's output by a sigmoid projection of the query. Masks, dropout and the returned scores
``(batch, query heads, T, S)`` are MultiHeadAttention's, on ``(batch, seq, features)`` inputs.

>>> import gradkit.tf as tf
>>> gqa = tf.keras.layers.GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2)
>>> out, scores = gqa(tf.ones([1, 5, 6]), tf.ones([1, 7, 6]), return_attention_scores=True)
>>> out.shape, scores.shape, [tuple(w.shape) for w in gqa.weights][::2]
((1, 5, 6), (1, 4, 5, 7), [(6, 4, 3), (6, 2, 3), (6, 2, 3), (4, 3, 6)])
"""

from __future__ import annotations

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .attention_layers import MultiHeadAttention, _positive_int


class GroupQueryAttention(MultiHeadAttention):
    """``tf.keras.layers.GroupQueryAttention(head_dim, num_query_heads, num_key_value_heads,
    dropout=0.0, use_bias=True, sliding_window=None, ...)``; see the module docstring."""

    _keras_python_class_name = "GroupedQueryAttention"  # Keras' class (exported as GroupQueryAttention)

    def __init__(
        self,
        head_dim,
        num_query_heads,
        num_key_value_heads,
        dropout=0.0,
        use_bias=True,
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
        what = "tf.keras.layers.GroupQueryAttention"
        self.head_dim = _positive_int(head_dim, "head_dim", what)
        self.num_query_heads = _positive_int(num_query_heads, "num_query_heads", what)
        self.num_key_value_heads = _positive_int(num_key_value_heads, "num_key_value_heads", what)
        if self.num_query_heads % self.num_key_value_heads:
            raise _errors.GradkitValueError(
                f"{what}: `num_query_heads` must be divisible by `num_key_value_heads` (got {num_query_heads} and "
                f"{num_key_value_heads}), as Keras requires: each key and value head serves a group of query heads."
            )
        if sliding_window is not None and (
            not isinstance(sliding_window, int) or isinstance(sliding_window, bool) or sliding_window <= 0
        ):
            raise _errors.GradkitValueError(
                f"{what}: `sliding_window` must be `None` or a positive integer. Received: sliding_window={sliding_window}"
            )
        if flash_attention:
            raise _errors.GradkitNotImplementedError(
                f"{what}(flash_attention=True): gradkit computes the attention with XLA's fused ops, without a "
                "flash-attention kernel. Leave flash_attention as None or False."
            )
        self.sliding_window = sliding_window
        self.use_gate = bool(use_gate)
        super().__init__(
            num_heads=self.num_query_heads,
            key_dim=self.head_dim,
            dropout=dropout,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
            seed=seed,
            name=name if name is not None else unique_name("grouped_query_attention"),
            trainable=trainable,
            **kwargs,
        )
        self._kv_repeats = self.num_query_heads // self.num_key_value_heads
        self._window = sliding_window
        self._gate_dense = None

    def _what(self) -> str:
        return f"tf.keras.layers.GroupQueryAttention '{self.name}'"

    def build(self, query_shape, value_shape=None, key_shape=None) -> None:
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        for shape, arg in ((query_shape, "query"), (value_shape, "value"), (key_shape, "key")):
            if len(shape) != 3:
                raise _errors.GradkitValueError(
                    f"{self._what()}: {arg} has shape {tuple(shape)}; Keras' GroupQueryAttention takes (batch, seq, "
                    "features) inputs."
                )
        self.attention_axes = (1,)
        self._input_rank = 3
        n, kv, h = self.num_query_heads, self.num_key_value_heads, self.head_dim
        # Keras' built layer holds a Softmax and a Dropout layer, taking the next of those default names.
        unique_name("softmax")
        unique_name("dropout")
        # The sublayers' weights are listed in the order their attributes were set: Keras' build order.
        for attribute in ("_query_dense", "_key_dense", "_gate_dense", "_value_dense", "_output_dense"):
            self.__dict__.pop(attribute, None)
        self._query_dense = self._projection("query", (query_shape[-1], n, h), (n, h))
        self._key_dense = self._projection("key", (key_shape[-1], kv, h), (kv, h))
        self._gate_dense = None
        if self.use_gate:
            self._gate_dense = self._projection("gate", (query_shape[-1], n, h), (n, h))
        self._value_dense = self._projection("value", (value_shape[-1], kv, h), (kv, h))
        self._output_dense = self._projection("attention_output", (n, h, query_shape[-1]), (query_shape[-1],))

    def _gate_weights(self) -> tuple:
        gate = self._gate_dense
        if gate is None:
            return ()
        return (gate.kernel.value, None if gate.bias is None else gate.bias.value)

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        """Keras': the query's shape (the output has the query's features)."""
        return tuple(query_shape)
