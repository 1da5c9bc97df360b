"""tf.nn names gradkit.tf lacked, against real TensorFlow: tf.compat.v1.nn.fused_batch_norm
(training with the Bessel-corrected running variance, inference, exponential_avg_factor,
NHWC/NCHW/NCDHW), tf.nn.space_to_batch, embedding_lookup(max_norm=), nce_loss and
sampled_softmax_loss with explicit sampled_values (and accidental hits), compute_accidental_hits:
values, gradients (None where TensorFlow has none), tf.function and errors."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

RNG = np.random.default_rng(11)
X4 = RNG.normal(size=(2, 3, 2, 4)).astype(np.float32)
X5 = RNG.normal(size=(2, 4, 2, 1, 3)).astype(np.float32)
SCALE, OFFSET = RNG.normal(size=4).astype(np.float32), RNG.normal(size=4).astype(np.float32)
MEAN, VAR = RNG.normal(size=4).astype(np.float32), np.abs(RNG.normal(size=4)).astype(np.float32) + 0.1

W = RNG.normal(size=(7, 3)).astype(np.float32)
B = RNG.normal(size=7).astype(np.float32)
INPUTS = RNG.normal(size=(4, 3)).astype(np.float32)
LABELS2 = np.array([[1, 2], [3, 3], [0, 5], [6, 1]], np.int64)
LABELS1 = np.array([[1], [3], [0], [6]], np.int64)
# Class 2 sampled twice, and classes that are some examples' labels: accidental hits.
SAMPLED = np.array([2, 4, 1, 2, 0], np.int64)
TRUE_COUNT2 = np.full((4, 2), 0.5, np.float32) + np.arange(8, dtype=np.float32).reshape(4, 2) / 20
TRUE_COUNT1 = TRUE_COUNT2[:, :1]
SAMPLED_COUNT = np.array([0.3, 0.2, 0.6, 0.3, 0.9], np.float32)


def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float32)).reshape(tuple(shape))


def _dense(tf, g):
    return None if g is None else tf.convert_to_tensor(g)  # TensorFlow's gather gradient: IndexedSlices


def _with_gradients(f, *arrays):
    def program(tf):
        variables = [tf.Variable(a) for a in arrays]
        with tf.GradientTape() as tape:
            out = f(tf, *variables)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            loss = tf.add_n([tf.reduce_sum(o * tf.constant(_weights(o.shape))) for o in outs])
        return [*outs, [_dense(tf, g) for g in tape.gradient(loss, variables)]]

    return program


def _fbn(tf):
    return tf.compat.v1.nn.fused_batch_norm


NCHW = np.ascontiguousarray(np.transpose(X4, (0, 3, 1, 2)))
NCDHW = np.ascontiguousarray(np.transpose(X5, (0, 4, 1, 2, 3)))
BN_CASES = {
    "train_nhwc": (lambda tf, x, s, o: _fbn(tf)(x, s, o), X4, SCALE, OFFSET),
    "train_nchw": (lambda tf, x, s, o: _fbn(tf)(x, s, o, data_format="NCHW", epsilon=0.01), NCHW, SCALE, OFFSET),
    "train_ema": (
        lambda tf, x, s, o, m, v: _fbn(tf)(x, s, o, m, v, exponential_avg_factor=0.3),
        X4,
        SCALE,
        OFFSET,
        MEAN,
        VAR,
    ),
    "train_ignores_stats": (lambda tf, x, s, o, m, v: _fbn(tf)(x, s, o, m, v), X4, SCALE, OFFSET, MEAN, VAR),
    "inference": (lambda tf, x, s, o, m, v: _fbn(tf)(x, s, o, m, v, is_training=False), X4, SCALE, OFFSET, MEAN, VAR),
    "inference_ema": (
        lambda tf, x, s, o, m, v: _fbn(tf)(x, s, o, m, v, is_training=False, exponential_avg_factor=0.5),
        X4,
        SCALE,
        OFFSET,
        MEAN,
        VAR,
    ),
    "train_ndhwc": (lambda tf, x, s, o: _fbn(tf)(x, s, o, data_format="NDHWC"), X5, SCALE[:3], OFFSET[:3]),
    "train_ncdhw": (lambda tf, x, s, o: _fbn(tf)(x, s, o, data_format="NCDHW"), NCDHW, SCALE[:3], OFFSET[:3]),
    "one_value_per_channel": (lambda tf, x, s, o: _fbn(tf)(x[:1, :1, :1], s, o), X4, SCALE, OFFSET),
    "running_stats_only": (
        lambda tf, x, s, o, m, v: _fbn(tf)(x, s, o, m, v, exponential_avg_factor=0.5)[1:],
        X4,
        SCALE,
        OFFSET,
        MEAN,
        VAR,
    ),
}


@pytest.mark.parametrize("name", sorted(BN_CASES))
def test_fused_batch_norm_matches_tensorflow(name):
    f, *arrays = BN_CASES[name]
    _ok(_with_gradients(f, *arrays))


def test_fused_batch_norm_float16_input_matches_tensorflow():
    def program(tf):
        x = tf.Variable(X4.astype(np.float16))
        s = tf.Variable(SCALE)
        with tf.GradientTape() as tape:
            y, mean, var = tf.compat.v1.nn.fused_batch_norm(x, s, OFFSET)
            loss = tf.reduce_sum(tf.cast(y, tf.float32) * _weights(y.shape))
        return [y, mean, var, *tape.gradient(loss, [x, s])]

    real, mine = program(tf_real), program(gtf)
    assert [str(np.dtype(np.asarray(a).dtype)) for a in mine] == ["float16", "float32", "float32", "float16", "float32"]
    for a, b in zip(real, mine):
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(b, np.float32), np.asarray(a, np.float32), rtol=2e-3, atol=2e-3)


def test_fused_batch_norm_bessel_correction_is_tensorflows():
    _, mean, var = gtf.compat.v1.nn.fused_batch_norm(X4, SCALE, OFFSET)
    np.testing.assert_allclose(mean.numpy(), X4.mean((0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), X4.var((0, 1, 2)) * 12 / 11, rtol=1e-5)


def _sampled(num_true):
    count = TRUE_COUNT2 if num_true == 2 else TRUE_COUNT1
    return lambda tf: (tf.constant(SAMPLED), tf.constant(count), tf.constant(SAMPLED_COUNT))


def _loss_case(loss, num_true, **kw):
    labels = LABELS2 if num_true == 2 else LABELS1
    return lambda tf, w, b, x: getattr(tf.nn, loss)(
        w, b, labels, x, 5, 7, num_true=num_true, sampled_values=_sampled(num_true)(tf), **kw
    )


SAMPLED_CASES = {
    f"{loss}_true{n}_hits{hits}": (_loss_case(loss, n, remove_accidental_hits=hits), W, B, INPUTS)
    for loss in ("nce_loss", "sampled_softmax_loss")
    for n in (1, 2)
    for hits in (False, True)
}
SAMPLED_CASES["nce_default_hits"] = (_loss_case("nce_loss", 2), W, B, INPUTS)
SAMPLED_CASES["softmax_default_hits"] = (_loss_case("sampled_softmax_loss", 2), W, B, INPUTS)
SAMPLED_CASES["nce_sharded_weights"] = (
    lambda tf, w, b, x: tf.nn.nce_loss([w[:4], w[4:]], b, LABELS2, x, 5, 7, 2, _sampled(2)(tf)),
    W,
    B,
    INPUTS,
)
SAMPLED_CASES["nce_float_labels_flat"] = (
    lambda tf, w, b, x: tf.nn.nce_loss(w, b, LABELS1[:, 0].astype(np.float32), x, 5, 7, 1, _sampled(1)(tf)),
    W,
    B,
    INPUTS,
)


@pytest.mark.parametrize("name", sorted(SAMPLED_CASES))
def test_sampled_losses_match_tensorflow(name):
    f, *arrays = SAMPLED_CASES[name]
    _ok(_with_gradients(f, *arrays))


def test_sampled_values_get_no_gradient_as_in_tensorflow():
    def program(tf):
        w, x = tf.Variable(W), tf.Variable(INPUTS)
        true_count, sampled_count = tf.Variable(TRUE_COUNT2), tf.Variable(SAMPLED_COUNT)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(
                tf.nn.sampled_softmax_loss(w, B, LABELS2, x, 5, 7, 2, (SAMPLED, true_count, sampled_count))
            )
        grads = tape.gradient(loss, [w, x, true_count, sampled_count])
        return [loss, [_dense(tf, g) for g in grads]]

    out = _ok(program)
    assert out[1][2] is None and out[1][3] is None


def test_default_sampling_draws_log_uniform_classes():
    # gradkit's own draws (not TensorFlow's): the same shapes and a finite, positive loss.
    nce = gtf.nn.nce_loss(W, B, LABELS1, INPUTS, num_sampled=3, num_classes=7)
    softmax = gtf.nn.sampled_softmax_loss(W, B, LABELS2, INPUTS, 4, 7, num_true=2, seed=5)
    for loss in (nce, softmax):
        assert loss.shape == (4,) and np.all(np.isfinite(loss.numpy())) and np.all(loss.numpy() > 0)


def test_compute_accidental_hits_matches_tensorflow():
    out = _ok(
        lambda tf: [
            list(tf.nn.compute_accidental_hits(LABELS2, SAMPLED, 2)),
            list(tf.nn.compute_accidental_hits([[2, 2]], [2, 5], 2)),
            list(tf.nn.compute_accidental_hits(LABELS1.astype(np.int32), [5, 4], 1)),
        ]
    )
    assert out[2][0].shape == (0,)


EMBED = RNG.normal(size=(5, 3)).astype(np.float32) * 2
EMBED[1] = 0.0  # a zero row: clip_by_norm's safe gradient
EMBED[3] *= 0.1  # a row already within the norm
EMBED_CASES = {
    "max_norm": (lambda tf, p: tf.nn.embedding_lookup(p, [[0, 1], [3, 0]], max_norm=1.5), EMBED),
    "max_norm_scalar_ids": (lambda tf, p: tf.nn.embedding_lookup([p], 4, max_norm=0.5), EMBED),
    "max_norm_3d_params": (
        lambda tf, p: tf.nn.embedding_lookup(tf.reshape(p, [5, 1, 3]), [2, 3, 2], max_norm=1.0),
        EMBED,
    ),
    "no_max_norm": (lambda tf, p: tf.nn.embedding_lookup(p, [4, 2]), EMBED),
    "space_to_batch": (lambda tf, x: tf.nn.space_to_batch(x, [2, 2], [[0, 1], [0, 0]]), X4),
}


@pytest.mark.parametrize("name", sorted(EMBED_CASES))
def test_embedding_max_norm_and_space_to_batch_match_tensorflow(name):
    f, *arrays = EMBED_CASES[name]
    _ok(_with_gradients(f, *arrays))


TABLE = np.arange(22, dtype=np.float32).reshape(11, 2) / 4


@pytest.mark.parametrize("sizes", [(6, 5), (5, 6), (4, 4, 3), (3, 3, 3, 2)])
def test_embedding_lookup_of_shards_reads_them_as_tensorflows_div_strategy(sizes):
    # TensorFlow's "div" strategy: the first total % n shards hold one id more, whatever sizes the
    # shards have (so shards of 5 and 6 rows do not read as their concatenation), and the gradient
    # reaches each shard.
    def program(tf):
        shards = [tf.Variable(part) for part in np.split(TABLE, np.cumsum(sizes)[:-1])]
        ids = tf.constant([[0, 7], [10, 3], [4, 6]])
        with tf.GradientTape() as tape:
            rows = tf.nn.embedding_lookup(shards, ids, max_norm=3.0)
            loss = tf.reduce_sum(rows * tf.reshape(tf.range(12.0), (3, 2, 2)))
        return [rows, [_dense(tf, g) for g in tape.gradient(loss, shards)]]

    _ok(program)


@pytest.mark.parametrize("ids", [[5], [-1], [11]])
def test_embedding_lookup_of_shards_refuses_ids_outside_them(ids):
    # [5] lies past the end of the first of shards of 3 and 8 rows (the plan is 6 and 5).
    out = run_both(lambda tf: tf.nn.embedding_lookup([TABLE[:3], TABLE[3:]], ids))
    assert isinstance(out, GradkitError) and str(out).startswith("[gradkit] "), out


def test_l2_loss_of_half_precision_does_not_overflow_its_sum():
    # TensorFlow's kernel returns 4.97e4 here; a float16 sum of the squares would pass 65504 first.
    tf = pytest.importorskip("tensorflow")
    z = np.random.RandomState(0).randn(100000).astype(np.float16)
    want = float(tf.nn.l2_loss(z).numpy())
    got = float(gtf.nn.l2_loss(z).numpy())
    assert np.isfinite(got) and abs(got - want) <= 4 * 32  # float16's spacing there is 32
    assert abs(got - float(np.sum(z.astype(np.float64) ** 2) / 2)) <= 32


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        w, x, p, s = tf.Variable(W), tf.Variable(X4), tf.Variable(EMBED), tf.Variable(SCALE)

        @tf.function
        def step(inputs):
            y, mean, var = tf.compat.v1.nn.fused_batch_norm(x, s, OFFSET, MEAN, VAR, exponential_avg_factor=0.25)
            nce = tf.nn.nce_loss(w, B, LABELS2, inputs, 5, 7, 2, _sampled(2)(tf), remove_accidental_hits=True)
            softmax = tf.nn.sampled_softmax_loss(w, B, LABELS1, inputs, 5, 7, 1, _sampled(1)(tf))
            rows = tf.nn.embedding_lookup(p, [0, 1, 2], max_norm=1.0)
            return tf.reduce_sum(y * y) + tf.reduce_sum(nce) + tf.reduce_sum(softmax) + tf.reduce_sum(rows), mean, var

        with tf.GradientTape() as tape:
            loss, mean, var = step(tf.constant(INPUTS))
        return [loss, mean, var, [_dense(tf, g) for g in tape.gradient(loss, [w, x, p, s])]]

    _ok(program)


ERROR_CASES = {
    "bn_inference_without_stats": lambda tf: _fbn(tf)(X4, SCALE, OFFSET, is_training=False),
    "bn_ema_without_stats": lambda tf: _fbn(tf)(X4, SCALE, OFFSET, exponential_avg_factor=0.5),
    "bn_int": lambda tf: _fbn(tf)(X4.astype(np.int32), SCALE, OFFSET),
    "bn_float16_scale": lambda tf: _fbn(tf)(X4, SCALE.astype(np.float16), OFFSET),
    "bn_rank3": lambda tf: _fbn(tf)(X4[0], SCALE, OFFSET),
    "bn_rank5_nhwc": lambda tf: _fbn(tf)(X5, SCALE[:3], OFFSET[:3]),
    "bn_bad_format": lambda tf: _fbn(tf)(X4, SCALE, OFFSET, data_format="NWHC"),
    "bn_scale_size": lambda tf: _fbn(tf)(X4, SCALE[:3], OFFSET),
    "bn_scale_2d": lambda tf: _fbn(tf)(X4, SCALE[None], OFFSET),
    "bn_mean_size_inference": lambda tf: _fbn(tf)(X4, SCALE, OFFSET, MEAN[:3], VAR, is_training=False),
    "nce_label_out_of_range": lambda tf: tf.nn.nce_loss(W, B, LABELS2 + 3, INPUTS, 5, 7, 2, _sampled(2)(tf)),
    "nce_num_true_mismatch": lambda tf: tf.nn.nce_loss(W, B, LABELS2, INPUTS, 5, 7, 1, _sampled(2)(tf)),
    "nce_dim_mismatch": lambda tf: tf.nn.nce_loss(W, B, LABELS2, INPUTS[:, :2], 5, 7, 2, _sampled(2)(tf)),
    "nce_counts_float16": lambda tf: tf.nn.nce_loss(
        W, B, LABELS2, INPUTS, 5, 7, 2, (SAMPLED, TRUE_COUNT2.astype(np.float16), SAMPLED_COUNT)
    ),
    "softmax_num_sampled_mismatch": lambda tf: tf.nn.sampled_softmax_loss(
        W, B, LABELS2, INPUTS, 4, 7, 2, _sampled(2)(tf)
    ),
    "hits_num_true": lambda tf: tf.nn.compute_accidental_hits(LABELS2, SAMPLED, 1),
    "hits_matrix_candidates": lambda tf: tf.nn.compute_accidental_hits(LABELS2, SAMPLED[None], 2),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_tensorflow(name):
    error = run_both(ERROR_CASES[name])
    assert isinstance(error, GradkitError), error
    assert str(error).startswith("[gradkit] ")


def test_error_messages_say_what_to_do():
    with pytest.raises(ValueError, match=r"\[gradkit\].*both mean and variance.*is_training is False"):
        gtf.compat.v1.nn.fused_batch_norm(X4, SCALE, OFFSET, is_training=False)
    with pytest.raises(ValueError, match=r"\[gradkit\].*index 8 is not in \[0, 7\)"):
        gtf.nn.nce_loss(W, B, LABELS2 + 3, INPUTS, 5, 7, 2, (SAMPLED, TRUE_COUNT2, SAMPLED_COUNT))
    with pytest.raises(ValueError, match=r"\[gradkit\].*'div' partition strategy"):
        gtf.nn.nce_loss([W[:3], W[3:]], B, LABELS2, INPUTS, 5, 7, 2, (SAMPLED, TRUE_COUNT2, SAMPLED_COUNT))

    @gtf.function
    def draws_inside(x):
        return gtf.nn.nce_loss(W, B, LABELS1, x, 3, 7)

    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*pass sampled_values="):
        draws_inside(gtf.constant(INPUTS))


def test_fused_batch_norm_is_under_compat_v1_only_as_in_tensorflow():
    assert not hasattr(tf_real.nn, "fused_batch_norm") and hasattr(tf_real.compat.v1.nn, "fused_batch_norm")
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        gtf.nn.fused_batch_norm  # noqa: B018
