"""TensorFlow's Transformer tutorial ("Neural machine translation with a Transformer and Keras",
tensorflow.org/text/tutorials/transformer) and tf.keras.layers.MultiHeadAttention, run unchanged
under real TensorFlow 2.21 / Keras 3 and gradkit.tf, with the same weights (TensorFlow's copied
over with set_weights), comparing losses, gradients and weights after optimizer steps.

The tutorial's padding masks are Keras masks (``Embedding(mask_zero=True)``), which the
attention layers read and the residual ``Add`` layers pass on, under both frameworks.
"""

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from _oracles import count_compiles  # noqa: E402
from test_tf_parity import _compare, _np, run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
# Token ids with padding (0) at the end, as the tutorial's batches have. No id appears twice in a
# batch: Keras 3's Adam on TensorFlow squares an Embedding's gradient per lookup (its sparse
# IndexedSlices) before summing repeated ids, where gradkit.tf squares the summed (dense) gradient.
_CONTEXT = np.array([[3, 7, 2, 9, 0], [5, 1, 4, 6, 8]], np.int64)
_TARGET_IN = np.array([[1, 6, 2, 8], [5, 3, 7, 0]], np.int64)
_TARGET_OUT = np.array([[6, 2, 8, 4], [3, 7, 4, 0]], np.int64)


# The tutorial's own layers do not define compute_mask, so Keras 3 (and gradkit.tf) warn that
# each drops the mask after its call; inside the call the attention layers read it.
pytestmark = pytest.mark.filterwarnings("ignore:.*does not support masking:UserWarning")


@pytest.fixture
def _tensorflow_broadcasting():
    # The tutorial's `x + self.pos_encoding[tf.newaxis, :length, :]` broadcasts by rank as
    # TensorFlow does; the suite's strict rank-promotion mode is for gradkit's own internals.
    with jax.numpy_rank_promotion("allow"):
        yield


# -- the tutorial, written against the module `tf` -------------------------------------------


def _transformer_tutorial(tf):
    """The tutorial's code, as it is there (see the module docstring for the two changes)."""

    def positional_encoding(length, depth):
        depth = depth / 2
        positions = np.arange(length)[:, np.newaxis]  # (seq, 1)
        depths = np.arange(depth)[np.newaxis, :] / depth  # (1, depth)
        angle_rates = 1 / (10000**depths)  # (1, depth)
        angle_rads = positions * angle_rates  # (pos, depth)
        pos_encoding = np.concatenate([np.sin(angle_rads), np.cos(angle_rads)], axis=-1)
        return tf.cast(pos_encoding, dtype=tf.float32)

    class PositionalEmbedding(tf.keras.layers.Layer):
        def __init__(self, vocab_size, d_model):
            super().__init__()
            self.d_model = d_model
            self.embedding = tf.keras.layers.Embedding(vocab_size, d_model, mask_zero=True)
            self.pos_encoding = positional_encoding(length=2048, depth=d_model)

        def compute_mask(self, *args, **kwargs):
            return self.embedding.compute_mask(*args, **kwargs)

        def call(self, x):
            length = tf.shape(x)[1]
            x = self.embedding(x)
            # This factor sets the relative scale of the embedding and positonal_encoding.
            x *= tf.math.sqrt(tf.cast(self.d_model, tf.float32))
            x = x + self.pos_encoding[tf.newaxis, :length, :]
            return x

    class BaseAttention(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__()
            self.mha = tf.keras.layers.MultiHeadAttention(**kwargs)
            self.layernorm = tf.keras.layers.LayerNormalization()
            self.add = tf.keras.layers.Add()

    class CrossAttention(BaseAttention):
        def call(self, x, context):
            attn_output, attn_scores = self.mha(query=x, key=context, value=context, return_attention_scores=True)
            # Cache the attention scores for plotting later.
            self.last_attn_scores = attn_scores
            x = self.add([x, attn_output])
            x = self.layernorm(x)
            return x

    class GlobalSelfAttention(BaseAttention):
        def call(self, x):
            attn_output = self.mha(query=x, value=x, key=x)
            x = self.add([x, attn_output])
            x = self.layernorm(x)
            return x

    class CausalSelfAttention(BaseAttention):
        def call(self, x):
            attn_output = self.mha(query=x, value=x, key=x, use_causal_mask=True)
            x = self.add([x, attn_output])
            x = self.layernorm(x)
            return x

    class FeedForward(tf.keras.layers.Layer):
        def __init__(self, d_model, dff, dropout_rate=0.1):
            super().__init__()
            self.seq = tf.keras.Sequential(
                [
                    tf.keras.layers.Dense(dff, activation="relu"),
                    tf.keras.layers.Dense(d_model),
                    tf.keras.layers.Dropout(dropout_rate),
                ]
            )
            self.add = tf.keras.layers.Add()
            self.layer_norm = tf.keras.layers.LayerNormalization()

        def call(self, x):
            x = self.add([x, self.seq(x)])
            x = self.layer_norm(x)
            return x

    class EncoderLayer(tf.keras.layers.Layer):
        def __init__(self, *, d_model, num_heads, dff, dropout_rate=0.1):
            super().__init__()
            self.self_attention = GlobalSelfAttention(num_heads=num_heads, key_dim=d_model, dropout=dropout_rate)
            self.ffn = FeedForward(d_model, dff)

        def call(self, x):
            x = self.self_attention(x)
            x = self.ffn(x)
            return x

    class Encoder(tf.keras.layers.Layer):
        def __init__(self, *, num_layers, d_model, num_heads, dff, vocab_size, dropout_rate=0.1):
            super().__init__()
            self.d_model = d_model
            self.num_layers = num_layers
            self.pos_embedding = PositionalEmbedding(vocab_size=vocab_size, d_model=d_model)
            self.enc_layers = [
                EncoderLayer(d_model=d_model, num_heads=num_heads, dff=dff, dropout_rate=dropout_rate)
                for _ in range(num_layers)
            ]
            self.dropout = tf.keras.layers.Dropout(dropout_rate)

        def call(self, x):
            x = self.pos_embedding(x)  # Shape `(batch_size, seq_len, d_model)`.
            x = self.dropout(x)
            for i in range(self.num_layers):
                x = self.enc_layers[i](x)
            return x

    class DecoderLayer(tf.keras.layers.Layer):
        def __init__(self, *, d_model, num_heads, dff, dropout_rate=0.1):
            super().__init__()
            self.causal_self_attention = CausalSelfAttention(num_heads=num_heads, key_dim=d_model, dropout=dropout_rate)
            self.cross_attention = CrossAttention(num_heads=num_heads, key_dim=d_model, dropout=dropout_rate)
            self.ffn = FeedForward(d_model, dff)

        def call(self, x, context):
            x = self.causal_self_attention(x=x)
            x = self.cross_attention(x=x, context=context)
            self.last_attn_scores = self.cross_attention.last_attn_scores
            x = self.ffn(x)  # Shape `(batch_size, seq_len, d_model)`.
            return x

    class Decoder(tf.keras.layers.Layer):
        def __init__(self, *, num_layers, d_model, num_heads, dff, vocab_size, dropout_rate=0.1):
            super().__init__()
            self.d_model = d_model
            self.num_layers = num_layers
            self.pos_embedding = PositionalEmbedding(vocab_size=vocab_size, d_model=d_model)
            self.dropout = tf.keras.layers.Dropout(dropout_rate)
            self.dec_layers = [
                DecoderLayer(d_model=d_model, num_heads=num_heads, dff=dff, dropout_rate=dropout_rate)
                for _ in range(num_layers)
            ]
            self.last_attn_scores = None

        def call(self, x, context):
            x = self.pos_embedding(x)  # (batch_size, target_seq_len, d_model)
            x = self.dropout(x)
            for i in range(self.num_layers):
                x = self.dec_layers[i](x, context)
            self.last_attn_scores = self.dec_layers[-1].last_attn_scores
            return x

    class Transformer(tf.keras.Model):
        def __init__(
            self, *, num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size, dropout_rate=0.1
        ):
            super().__init__()
            self.encoder = Encoder(
                num_layers=num_layers,
                d_model=d_model,
                num_heads=num_heads,
                dff=dff,
                vocab_size=input_vocab_size,
                dropout_rate=dropout_rate,
            )
            self.decoder = Decoder(
                num_layers=num_layers,
                d_model=d_model,
                num_heads=num_heads,
                dff=dff,
                vocab_size=target_vocab_size,
                dropout_rate=dropout_rate,
            )
            self.final_layer = tf.keras.layers.Dense(target_vocab_size)

        def call(self, inputs):
            context, x = inputs
            context = self.encoder(context)  # (batch_size, context_len, d_model)
            x = self.decoder(x, context)  # (batch_size, target_len, d_model)
            logits = self.final_layer(x)  # (batch_size, target_len, target_vocab_size)
            try:
                # Drop the keras mask, so it doesn't scale the losses/metrics.
                del logits._keras_mask
            except AttributeError:
                pass
            return logits

    class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __init__(self, d_model, warmup_steps=4000):
            super().__init__()
            self.d_model = d_model
            self.d_model = tf.cast(self.d_model, tf.float32)
            self.warmup_steps = warmup_steps

        def __call__(self, step):
            step = tf.cast(step, dtype=tf.float32)
            arg1 = tf.math.rsqrt(step)
            arg2 = step * (self.warmup_steps**-1.5)
            return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)

    def masked_loss(label, pred):
        mask = label != 0
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
        loss = loss_object(label, pred)
        mask = tf.cast(mask, dtype=loss.dtype)
        loss *= mask
        loss = tf.reduce_sum(loss) / tf.reduce_sum(mask)
        return loss

    def masked_accuracy(label, pred):
        pred = tf.argmax(pred, axis=2)
        label = tf.cast(label, pred.dtype)
        match = label == pred
        mask = label != 0
        match = match & mask
        match = tf.cast(match, dtype=tf.float32)
        mask = tf.cast(mask, dtype=tf.float32)
        return tf.reduce_sum(match) / tf.reduce_sum(mask)

    return Transformer, CustomSchedule, masked_loss, masked_accuracy


def _tiny_transformer(tf, dropout_rate=0.1):
    Transformer, CustomSchedule, masked_loss, masked_accuracy = _transformer_tutorial(tf)
    model = Transformer(
        num_layers=1,
        d_model=8,
        num_heads=2,
        dff=16,
        input_vocab_size=10,
        target_vocab_size=9,
        dropout_rate=dropout_rate,
    )
    model((tf.constant(_CONTEXT), tf.constant(_TARGET_IN)))  # builds the weights
    # warmup_steps=2 (the tutorial's 4000 makes the first rates ~1e-6): steps of visible size.
    optimizer = tf.keras.optimizers.Adam(CustomSchedule(8, warmup_steps=2), beta_1=0.9, beta_2=0.98, epsilon=1e-9)

    def train_step(inputs, labels, training):
        with tf.GradientTape() as tape:
            logits = model(inputs, training=training)
            loss = masked_loss(labels, logits)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss, masked_accuracy(labels, logits), [tf.convert_to_tensor(g) for g in gradients]

    return model, optimizer, train_step


def _batch(tf):
    return (tf.constant(_CONTEXT), tf.constant(_TARGET_IN)), tf.constant(_TARGET_OUT)


def _is_key_bias(path):
    # The key projection's bias has a gradient of exactly 0 in exact arithmetic (it shifts every
    # logit of a query by the same amount, which softmax ignores); both frameworks give float
    # rounding noise there, which Adam's epsilon=1e-9 turns into steps of +-lr of either sign.
    return path.endswith("key/bias") or path.endswith("key/bias:0")


@pytest.mark.usefixtures("_tensorflow_broadcasting")
def test_the_transformer_tutorial_trains_as_in_tensorflow_and_compiles_once():
    # Fixed initial weights: with Adam's epsilon=1e-9 a weight whose gradient happens to be
    # near 0 moves by a rounding-sized ratio, so some draws leave one weight past the tolerance.
    tf_real.keras.utils.set_random_seed(0)
    tf_model, _, tf_step = _tiny_transformer(tf_real)
    gk_model, gk_opt, gk_step = _tiny_transformer(gtf)
    assert [tuple(v.shape) for v in gk_model.weights] == [tuple(v.shape) for v in tf_model.weights]
    gk_model.set_weights(tf_model.get_weights())
    tf_step, gk_step = tf_real.function(tf_step), gtf.function(gk_step)
    paths = [v.path for v in tf_model.trainable_variables]
    traces = None
    for step in range(3):  # step 0 has rate 0 (rsqrt(0) = inf, min(inf, 0) = 0)
        tf_out = _np(tf_step(*_batch(tf_real), training=False))
        gk_out = []
        compiles = count_compiles(lambda out=gk_out: out.extend(_np(gk_step(*_batch(gtf), training=False))))
        if step == 0:
            traces = gk_step.trace_count
        else:  # same-shaped steps neither trace nor compile again
            assert (compiles, gk_step.trace_count) == (0, traces)
        _compare(tf_out[:2], gk_out[:2])
        _compare(tf_out[2], gk_out[2])
    for path, tf_w, gk_w in zip(paths, tf_model.get_weights(), gk_model.get_weights()):
        # Adam divides by sqrt(v): float rounding in a small gradient entry moves its step a little.
        if not _is_key_bias(path):
            np.testing.assert_allclose(gk_w, tf_w, rtol=2e-4, atol=2e-4, err_msg=path)
    assert int(gk_opt.iterations.numpy()) == 3
    scores = gk_model.decoder.last_attn_scores
    assert tuple(scores.shape) == (2, 2, 4, 5)  # (batch, heads, target, context), from return_attention_scores


@pytest.mark.usefixtures("_tensorflow_broadcasting")
def test_the_transformer_draws_fresh_dropout_at_each_compiled_call():
    model = _tiny_transformer(gtf, dropout_rate=0.3)[0]
    inputs = _batch(gtf)[0]
    forward = gtf.function(lambda inputs: gtf.reduce_sum(model(inputs, training=True) ** 2))
    sums = {float(forward(inputs).numpy()) for _ in range(3)}
    assert len(sums) == 3, sums  # a mask baked in at trace time would repeat the value
    inference = [model(inputs, training=False).numpy() for _ in range(2)]
    np.testing.assert_array_equal(inference[0], inference[1])


@pytest.mark.usefixtures("_tensorflow_broadcasting")
def test_the_tutorials_schedule_matches_tensorflow():
    def program(tf):
        schedule = _transformer_tutorial(tf)[1](8)
        return [schedule(tf.constant(float(s))) for s in (1, 10, 4000, 9000)]

    run_both(program)


# -- tf.keras.layers.MultiHeadAttention against Keras -------------------------------------------

_Q = _rs.randn(2, 3, 5).astype(np.float32)
_V = _rs.randn(2, 4, 6).astype(np.float32)
_K = _rs.randn(2, 4, 3).astype(np.float32)
_MASK = np.random.RandomState(1).rand(2, 3, 4) > 0.3


def _mha_program(make, call_kwargs, key=False):
    def program(tf):
        mha = make(tf)
        args = (tf.constant(_Q), tf.constant(_V)) + ((tf.constant(_K),) if key else ())
        mha(*args)
        rng = np.random.default_rng(0)
        mha.set_weights([rng.standard_normal(tuple(v.shape)).astype(np.float32) * 0.5 for v in mha.weights])
        inputs = [tf.Variable(a) for a in (_Q, _V, _K)[: 3 if key else 2]]
        with tf.GradientTape() as tape:
            out = mha(*inputs, **call_kwargs)
            out, scores = out if isinstance(out, tuple) else (out, tf.zeros([1]))
            weights = tf.constant(np.linspace(-1, 1, int(np.prod(out.shape)), dtype=np.float32).reshape(out.shape))
            loss = tf.reduce_sum(out * weights) + tf.reduce_sum(scores * scores)
        grads = tape.gradient(loss, inputs + mha.trainable_weights)
        # The key projection's bias shifts all of a row's logits alike, which softmax ignores: its
        # gradient is 0 by hand, and each library gives its own rounding noise (~1e-7) there.
        key_bias = mha.key_dense.bias
        grads = [
            np.round(g.numpy(), 5) if key_bias is not None and v is key_bias else g
            for g, v in zip(grads, inputs + mha.trainable_weights)
        ]
        return [out, scores, grads, [tuple(v.shape) for v in mha.weights]]

    return program


@pytest.mark.parametrize(
    "make, call_kwargs, key",
    [
        (lambda tf: tf.keras.layers.MultiHeadAttention(2, 3), {}, False),
        (lambda tf: tf.keras.layers.MultiHeadAttention(2, 3), {"return_attention_scores": True}, True),
        (
            lambda tf: tf.keras.layers.MultiHeadAttention(3, 2, value_dim=4, output_shape=7, use_bias=False),
            {"return_attention_scores": True, "use_causal_mask": True},
            False,
        ),
        (
            lambda tf: tf.keras.layers.MultiHeadAttention(2, 3, output_shape=(2, 3), dropout=0.5),
            {"return_attention_scores": True, "attention_mask": _MASK, "training": False},
            True,
        ),
        (
            lambda tf: tf.keras.layers.MultiHeadAttention(1, 4),
            {"return_attention_scores": True, "attention_mask": _MASK.astype(np.int32), "use_causal_mask": True},
            False,
        ),
        (
            lambda tf: tf.keras.layers.MultiHeadAttention(2, 2),
            {"return_attention_scores": True, "value_mask": _MASK[:, 0], "key_mask": _MASK[:, 1]},
            True,
        ),
    ],
)
def test_multi_head_attention_matches_keras(make, call_kwargs, key):
    run_both(_mha_program(make, call_kwargs, key))


def test_multi_head_attention_weights_are_named_and_ordered_as_in_keras():
    def program(tf):
        mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")
        mha(tf.constant(_Q), tf.constant(_V))
        return [
            [v.name.split(":")[0] for v in mha.weights],
            [tuple(v.shape) for v in mha.weights],
            tuple(mha.query_dense.kernel.shape),
        ]

    tf_out = program(tf_real)
    tf_out[0] = [v.path for v in tf_real.keras.layers.MultiHeadAttention(2, 3, name="mha").weights] or [
        f"mha/{n}/{w}" for n in ("query", "key", "value", "attention_output") for w in ("kernel", "bias")
    ]
    assert program(gtf) == tf_out


def test_multi_head_attention_dropout_is_fresh_per_compiled_call_and_scaled():
    mha = gtf.keras.layers.MultiHeadAttention(2, 3, dropout=0.5)
    q, v = gtf.constant(_Q), gtf.constant(_V)
    mha(q, v)

    @gtf.function
    def attend(q, v):
        return mha(q, v, return_attention_scores=True, training=True)

    outs = [attend(q, v) for _ in range(3)]
    assert len({float(o[0].numpy().sum()) for o in outs}) == 3
    # Scores are the probabilities before dropout: each row sums to 1.
    np.testing.assert_allclose(outs[0][1].numpy().sum(-1), 1.0, rtol=1e-5)
    inference = mha(q, v, training=False).numpy()
    np.testing.assert_array_equal(inference, mha(q, v).numpy())


def test_multi_head_attention_refuses_what_it_does_not_implement():
    run_both(lambda tf: tf.keras.layers.MultiHeadAttention(0, 3))
    for kwargs in ({"attention_axes": "time"}, {"use_gate": True}, {"sliding_window": 2}):
        with pytest.raises((NotImplementedError, TypeError, ValueError), match=r"\[gradkit\]"):
            gtf.keras.layers.MultiHeadAttention(2, 3, **kwargs)
    mha = gtf.keras.layers.MultiHeadAttention(2, 3)
    with pytest.raises(ValueError, match=r"\[gradkit\].*attention_mask.*shape"):
        mha(gtf.constant(_Q), gtf.constant(_V), attention_mask=np.ones((3, 3), bool))
    x = gtf.ones([2, 2, 3, 5])
    with pytest.raises(ValueError, match=r"\[gradkit\].*attention_axes=\(3,\) for inputs of rank 4"):
        gtf.keras.layers.MultiHeadAttention(2, 3, attention_axes=3)(x, x)
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*use_causal_mask"):
        gtf.keras.layers.MultiHeadAttention(2, 3)(x, x, use_causal_mask=True)
    with pytest.raises(ValueError, match=r"\[gradkit\].*attention_mask has shape \(4, 4\)"):
        gtf.keras.layers.MultiHeadAttention(2, 3, attention_axes=2)(x, x, attention_mask=np.ones((4, 4), bool))


# -- tf.keras.activations -------------------------------------------------------------------

# Points on and beside each activation's kinks (0, 6, -3, 3, the thresholds used below).
_KINKS = np.array([-7.0, -3.0, -2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 6.0, 7.0], np.float32)
_ACTIVATIONS = [
    ("relu", {}),
    ("relu", {"negative_slope": 0.1}),
    ("relu", {"max_value": 6.0}),
    ("relu", {"max_value": 2.5}),
    ("relu", {"threshold": 1.0}),
    ("relu", {"negative_slope": 0.3, "max_value": 5.0, "threshold": 0.5}),
    ("leaky_relu", {}),
    ("relu6", {}),
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
    ("selu", {}),
    ("gelu", {}),
    ("gelu", {"approximate": True}),
    ("silu", {}),
    ("swish", {}),
    ("softsign", {}),
    ("hard_sigmoid", {}),
    ("hard_silu", {}),
    ("hard_swish", {}),
    ("exponential", {}),
    ("mish", {}),
    ("log_softmax", {}),
    ("softmax", {}),
    ("log_sigmoid", {}),
    ("linear", {}),
    ("sigmoid", {}),
    ("tanh", {}),
    ("softplus", {}),
]


@pytest.mark.parametrize("name, kwargs", _ACTIVATIONS)
def test_keras_activations_and_their_gradients_at_kinks_match_tensorflow(name, kwargs):
    def program(tf):
        x = tf.Variable(_KINKS)
        weights = tf.constant(np.linspace(-1, 1, _KINKS.size, dtype=np.float32))
        with tf.GradientTape() as tape:
            y = getattr(tf.keras.activations, name)(x, **kwargs)
            loss = tf.reduce_sum(y * weights)
        return [y, tape.gradient(loss, x)]

    # Values and gradients are O(1); float32 approximations of erf/tanh/exp differ by a few
    # units in 1e-6 between TensorFlow's kernels and XLA's (gelu's gradient at -7 is 6e-11,
    # TensorFlow's kernel gives 7e-6).
    tf_out, gk_out = _np(program(tf_real)), _np(program(gtf))
    for want, got in zip(tf_out, gk_out):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["gelu", "swish", "hard_sigmoid", "selu", "mish", "leaky_relu", "relu6"])
def test_activation_names_reach_dense_and_activation_layers(name):
    def program(tf):
        dense = tf.keras.layers.Dense(3, activation=name)
        x = tf.constant(_KINKS.reshape(2, 7))
        dense(x)
        dense.set_weights([np.linspace(-2, 2, 21, dtype=np.float32).reshape(7, 3), np.zeros(3, np.float32)])
        return [dense(x), tf.keras.layers.Activation(name)(x), tf.keras.activations.get(name)(x)]

    run_both(program)


def test_activations_get_serialize_and_backend_constants_match_keras():
    def program(tf):
        names = [tf.keras.activations.serialize(tf.keras.activations.get(n)) for n in ("relu", "gelu", "silu")]
        return [names, tf.keras.backend.epsilon(), tf.keras.backend.floatx()]

    tf_out, gk_out = program(tf_real), program(gtf)
    assert tf_out == gk_out
    run_both(lambda tf: tf.keras.activations.get("no_such_activation"))


# -- tf.math.l2_normalize, tf.debugging.check_numerics, tf.config.run_functions_eagerly ----------


def test_math_l2_normalize_matches_tensorflow():
    def program(tf):
        x = tf.Variable(np.array([[3.0, 4.0], [0.0, 0.0], [1e-7, 0.0]], np.float32))
        with tf.GradientTape() as tape:
            y = tf.math.l2_normalize(x, axis=1)
            loss = tf.reduce_sum(y * tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        return [y, tape.gradient(loss, x)]

    run_both(program)


def test_check_numerics_passes_finite_values_and_their_gradient():
    def program(tf):
        x = tf.Variable([1.0, -2.0])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.debugging.check_numerics(x * x, "square") * 3.0)
        return tape.gradient(loss, x)

    run_both(program)


@pytest.mark.parametrize(
    "bad, says", [([np.nan], "NaN"), ([np.inf], "Inf"), ([-np.inf, np.nan], "Inf and NaN")], ids=["nan", "inf", "both"]
)
def test_check_numerics_raises_eagerly_on_nan_and_inf(bad, says):
    """TensorFlow's three messages: 'had NaN values', 'had Inf values', 'had Inf and NaN values'."""
    run_both(lambda tf: tf.debugging.check_numerics(tf.constant([1.0, *bad]), "bad value"))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=rf"\[gradkit\] bad value : Tensor had {says} values"):
        gtf.debugging.check_numerics(gtf.constant([1.0, *bad]), "bad value")


def test_check_numerics_inside_tf_function_raises_from_the_call():
    # As TensorFlow's CheckNumerics op: the check runs with the compiled program.
    f = gtf.function(lambda x: gtf.debugging.check_numerics(x, "traced"))
    assert f(gtf.constant([1.0])).numpy().tolist() == [1.0]
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"traced : Tensor had NaN values"):
        f(gtf.constant([np.nan]))


def test_run_functions_eagerly_calls_the_python_function():
    def program(tf):
        calls = []

        @tf.function
        def f(x):
            calls.append(float(x.numpy()))  # only works eagerly
            return x * 2.0

        tf.config.run_functions_eagerly(True)
        try:
            outs = [f(tf.constant(1.0)), f(tf.constant(2.0))]
            state = tf.config.functions_run_eagerly()
        finally:
            tf.config.run_functions_eagerly(False)
        return [outs, calls, state, tf.config.functions_run_eagerly()]

    tf_out, gk_out = _np(program(tf_real)), _np(program(gtf))
    _compare(tf_out, gk_out)


def test_an_explicit_query_mask_is_ignored_as_keras_ignores_it():
    def program(tf):
        mha = tf.keras.layers.MultiHeadAttention(2, 3, kernel_initializer="ones")
        q, v = tf.constant(_Q), tf.constant(_V)
        masked = mha(q, v, query_mask=np.array([[True, False, True]] * len(_Q)))
        return [masked, mha(q, v)]

    ours = run_both(program)
    np.testing.assert_array_equal(ours[0], ours[1])
