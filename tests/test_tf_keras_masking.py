"""Keras masks (``Embedding(mask_zero=True)``, ``Masking``) against Keras 3 on TensorFlow: the
programs of Keras' guide "Understanding masking & padding", and training on padded sequences
with a masked loss and metric, from the same weights."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

# Padded sequences of token ids (0 is padding) and per-step targets.
_TOKENS = np.array([[5, 2, 9, 0, 0], [3, 0, 0, 0, 0], [7, 7, 1, 4, 2], [1, 8, 0, 0, 0]], np.int32)
_FEATURES = np.random.default_rng(0).normal(size=(4, 5, 3)).astype(np.float32)
_FEATURES[_TOKENS == 0] = 0.0  # padded steps: all features 0, for Masking
_TARGETS = np.random.default_rng(1).normal(size=(4, 5, 2)).astype(np.float32)


def _same_weights(model, seed=0):
    model.set_weights(
        [
            np.random.default_rng(seed + i).normal(scale=0.4, size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    return model


def _token_model(tf, *layers):
    """A Sequential over ``_TOKENS``: their Embedding (0 masked), then ``layers``."""
    return tf.keras.Sequential(
        [tf.keras.Input(shape=(5,), dtype="int32"), tf.keras.layers.Embedding(10, 4, mask_zero=True), *layers]
    )


def _embedding_lstm(tf, **lstm):
    return _token_model(tf, tf.keras.layers.LSTM(3, **lstm), tf.keras.layers.Dense(2))


def p_embedding_lstm_last_output(tf):
    return _same_weights(_embedding_lstm(tf))(_TOKENS)


def p_embedding_lstm_sequences(tf):
    return _same_weights(_embedding_lstm(tf, return_sequences=True))(_TOKENS)


def p_masking_gru(tf):
    layers = [tf.keras.layers.Masking(mask_value=0.0), tf.keras.layers.GRU(4), tf.keras.layers.Dense(1)]
    model = tf.keras.Sequential([tf.keras.Input(shape=(5, 3)), *layers])
    return _same_weights(model)(_FEATURES)


def p_average_over_unpadded_steps(tf):
    model = _token_model(tf, tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(1))
    return _same_weights(model)(_TOKENS)


def p_bidirectional_then_lstm(tf):
    bidirectional = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3, return_sequences=True))
    model = _token_model(tf, bidirectional, tf.keras.layers.Dropout(0.5), tf.keras.layers.SimpleRNN(2))
    return _same_weights(model)(_TOKENS)


def p_subclassed_passes_the_mask(tf):
    """The guide's subclassed model: the mask from ``compute_mask``, passed by hand."""

    class MyLayer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(input_dim=10, output_dim=4, mask_zero=True)
            self.lstm = tf.keras.layers.LSTM(3)

        def call(self, inputs):
            x = self.embedding(inputs)
            mask = self.embedding.compute_mask(inputs)
            return self.lstm(x, mask=mask)

    layer = MyLayer()
    layer(_TOKENS)
    _same_weights(layer)
    return [layer(_TOKENS), layer.embedding.compute_mask(_TOKENS)]


def p_fit_with_masked_loss_and_metric(tf):
    # SGD: Keras' TensorFlow backend steps an Embedding by its sparse gradient (IndexedSlices),
    # and Adam squares each slice before summing a repeated index's; gradkit's gradient is dense.
    model = _same_weights(_embedding_lstm(tf, return_sequences=True))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9), loss="mse", metrics=["mae"])
    history = model.fit(_TOKENS, _TARGETS, batch_size=2, epochs=3, shuffle=False, verbose=0)
    return [
        history.history["loss"],
        history.history["mae"],
        model.get_weights(),
        model.evaluate(_TOKENS, _TARGETS, verbose=0),
    ]


PROGRAMS = [
    p_embedding_lstm_last_output,
    p_embedding_lstm_sequences,
    p_masking_gru,
    p_average_over_unpadded_steps,
    p_bidirectional_then_lstm,
    p_subclassed_passes_the_mask,
    p_fit_with_masked_loss_and_metric,
]


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(e) for e in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _close(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    else:
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_masking_matches_keras(program):
    _close(_np(program(tf_real)), _np(program(gtf)))


def test_the_mask_changes_the_result():
    """Without the mask the padded steps count: the masked model is not that one."""
    masked = _np(p_embedding_lstm_last_output(gtf))
    model = _embedding_lstm(gtf)
    model.layers[0].mask_zero = False
    unmasked = _np(_same_weights(model)(_TOKENS))
    assert not np.allclose(masked[:2], unmasked[:2], atol=1e-4)  # the padded rows differ
    np.testing.assert_allclose(masked[2], unmasked[2], rtol=1e-5)  # the unpadded one does not


def test_a_layer_without_masking_drops_the_mask_with_keras_warning():
    with pytest.warns(UserWarning, match="Layer 'conv' .* does not support masking"):
        model = gtf.keras.Sequential(  # built at once, from its Input: the warning comes here, as in Keras
            [
                gtf.keras.Input(shape=(5,), dtype="int32"),
                gtf.keras.layers.Embedding(10, 4, mask_zero=True),
                gtf.keras.layers.Conv1D(2, 3, name="conv"),
            ]
        )
    with pytest.warns(UserWarning, match="does not support masking"):
        model(_TOKENS)


def p_merged_masks(tf):
    """Two masked branches merged (Add and Concatenate keep the steps either branch keeps), and
    the LSTM after each skips the rest."""

    class Merged(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.a = tf.keras.layers.Embedding(10, 3, mask_zero=True)
            self.b = tf.keras.layers.Embedding(10, 3, mask_zero=True)
            self.add = tf.keras.layers.Add()
            self.cat = tf.keras.layers.Concatenate()
            self.lstm_add = tf.keras.layers.LSTM(2)
            self.lstm_cat = tf.keras.layers.LSTM(2)

        def call(self, inputs):
            first, second = inputs
            a, b = self.a(first), self.b(second)
            return [self.lstm_add(self.add([a, b])), self.lstm_cat(self.cat([a, b]))]

    layer = Merged()
    shifted = np.roll(_TOKENS, 1, axis=1)
    layer([_TOKENS, shifted])
    _same_weights(layer)
    return layer([_TOKENS, shifted])


def test_merged_masks_match_keras():
    _close(_np(p_merged_masks(tf_real)), _np(p_merged_masks(gtf)))


def p_self_attention_on_padded_tokens(tf):
    """An encoder block on padded tokens: MultiHeadAttention reads the Keras mask (padded keys
    get no attention, padded queries attend nowhere) and gives its output the query's mask; the
    residual Add sees the query's mask taken off (as Keras 3 takes it), so the average after it
    covers every step."""

    class Block(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(10, 4, mask_zero=True)
            self.attention = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
            self.add = tf.keras.layers.Add()
            self.norm = tf.keras.layers.LayerNormalization()
            self.pool = tf.keras.layers.GlobalAveragePooling1D()

        def call(self, tokens):
            x = self.embedding(tokens)
            attended, scores = self.attention(x, x, return_attention_scores=True)
            return [self.pool(self.norm(self.add([x, attended]))), scores, self.pool(attended)]

    block = Block()
    block(_TOKENS)
    _same_weights(block)
    with tf.GradientTape() as tape:
        pooled, scores, attended = block(_TOKENS)
        loss = tf.reduce_sum(pooled**2) + tf.reduce_sum(attended)
    grads = [
        tf.convert_to_tensor(g) for g in tape.gradient(loss, block.trainable_weights)
    ]  # TF: sparse for the embedding
    return [pooled, scores, attended, *grads]


def test_multi_head_attention_reads_keras_masks_as_keras():
    _close(_np(p_self_attention_on_padded_tokens(tf_real)), _np(p_self_attention_on_padded_tokens(gtf)))


@pytest.mark.parametrize("kind", ["Attention", "AdditiveAttention"])
def test_dot_attention_layers_read_keras_masks_as_keras(kind):
    def program(tf):
        embedding = tf.keras.layers.Embedding(10, 4, mask_zero=True)
        attention = getattr(tf.keras.layers, kind)()
        pool = tf.keras.layers.GlobalAveragePooling1D()
        x = embedding(_TOKENS)
        _same_weights(embedding)
        x = embedding(_TOKENS)
        out = attention([x, x])
        _same_weights(attention, seed=7)
        out = attention([x, x])
        return [out, pool(out)]

    _close(_np(program(tf_real)), _np(program(gtf)))


def test_a_tensors_keras_mask_attribute():
    # The masking guide's `masked_output._keras_mask`; a mask set on it is the one later layers take.
    padded = np.array([[711, 632, 71, 0], [73, 8, 3215, 55]])
    out = gtf.keras.layers.Embedding(5000, 4, mask_zero=True)(padded)
    assert np.asarray(out._keras_mask).tolist() == [[True, True, True, False], [True, True, True, True]]
    x = gtf.constant([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]])
    assert x._keras_mask is None
    x._keras_mask = gtf.constant([[True, True, False], [True, False, False]])
    pooled = gtf.keras.layers.GlobalAveragePooling1D()(x)
    np.testing.assert_allclose(pooled.numpy(), [[1.5], [4.0]])  # the kept steps' mean
    last = gtf.keras.layers.SimpleRNN(1, kernel_initializer="ones", recurrent_initializer="zeros", activation=None)
    # The masked steps are skipped: the output is the last kept step's input, as in Keras.
    np.testing.assert_allclose(last(x).numpy(), [[2.0], [4.0]])


def test_embedding_takes_keras_2s_input_length_with_keras_3s_warning():
    with pytest.warns(UserWarning, match="`input_length` is deprecated"):
        layer = gtf.keras.layers.Embedding(7, 2, input_length=3)
    assert tuple(layer(np.zeros((2, 3), np.int32)).shape) == (2, 3, 2)
    gtf.keras.layers.Embedding(7, 2, input_length=None)  # silently, as Keras
