"""tf.nn's remaining training names against real TensorFlow: silu/swish with beta, lrn,
space_to_depth / depth_to_space, in_top_k, top_k, zero_fraction, log_poisson_loss,
weighted_cross_entropy_with_logits, compute_average_loss, scale_regularization_loss,
sufficient_statistics, normalize_moments, weighted_moments and
batch_norm_with_global_normalization: values, dtypes, gradients through Variables (None where
TensorFlow has none), tf.function and errors."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 4, 6, 5)).astype(np.float32)
V = RNG.normal(size=(3, 4)).astype(np.float32)
LABELS = np.array([[0.0, 1.0, 0.3, 1.0], [1.0, 0.0, 0.0, 0.5], [0.2, 1.0, 1.0, 0.0]], np.float32)
V[0, 0] = 0.0  # a logit at TensorFlow's kink


def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float32)).reshape(tuple(shape))


def _with_gradients(f, *arrays):
    def program(tf):
        variables = [tf.Variable(a) for a in arrays]
        with tf.GradientTape() as tape:
            out = f(tf, *variables)
            outs = out if isinstance(out, (list, tuple)) else [out]
            loss = tf.add_n([tf.reduce_sum(o * tf.constant(_weights(o.shape))) for o in outs])
        return [*outs, tape.gradient(loss, variables)]

    return program


CASES = {
    "silu_beta": (lambda tf, x, b: tf.nn.silu(x, beta=b), V, np.float32(1.7)),
    "swish_default": (lambda tf, x: tf.nn.swish(x), V),
    "lrn_default": (lambda tf, x: tf.nn.local_response_normalization(x), X),
    "lrn_args": (lambda tf, x: tf.nn.lrn(x, depth_radius=1, bias=2.0, alpha=0.3, beta=0.75), X),
    "lrn_wide": (lambda tf, x: tf.nn.lrn(x, 10, 0.5, 1e-2, 1.0), X),
    "space_to_depth": (lambda tf, x: tf.nn.space_to_depth(x, 2), X),
    "depth_to_space": (lambda tf, x: tf.nn.depth_to_space(x[..., :4], 2), X),
    "log_poisson": (lambda tf, x: tf.nn.log_poisson_loss(tf.constant(np.abs(LABELS) * 3), x), V),
    "log_poisson_full": (lambda tf, x, t: tf.nn.log_poisson_loss(t, x, compute_full_loss=True), V, LABELS * 3 + 0.5),
    "weighted_xent": (lambda tf, z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, 2.5), LABELS, V),
    "weighted_xent_per_class": (
        lambda tf, z, x, q: tf.nn.weighted_cross_entropy_with_logits(z, x, q),
        LABELS,
        V,
        np.array([0.5, 1.0, 2.0, 3.0], np.float32),
    ),
    "weighted_xent_numpy_weights": (
        lambda tf, z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, np.array([0.5, 1.0, 2.0, 3.0])),
        LABELS,
        V,
    ),
    "average_loss": (lambda tf, x: tf.nn.compute_average_loss(x), V),
    "average_loss_global_batch": (lambda tf, x: tf.nn.compute_average_loss(x[:, 0], global_batch_size=8), V),
    "average_loss_zero_batch": (lambda tf, x: tf.nn.compute_average_loss(x, global_batch_size=0), V),
    "average_loss_weights": (lambda tf, x, w: tf.nn.compute_average_loss(x, sample_weight=w), V, V[:, 0] ** 2),
    "average_loss_weights_expanded": (
        lambda tf, x, w: tf.nn.compute_average_loss(x[:, 0], sample_weight=w, global_batch_size=tf.constant(6)),
        V,
        V[:, :1] ** 2,
    ),
    "average_loss_scalar_weight": (lambda tf, x: tf.nn.compute_average_loss(x, sample_weight=0.5), V),
    "regularization_loss": (lambda tf, x: tf.nn.scale_regularization_loss(x), V),
    "regularization_loss_list": (lambda tf, x: tf.nn.scale_regularization_loss([x[0, 0], x[1, 1] * 2.0]), V),
    "sufficient_statistics": (lambda tf, x: tf.nn.sufficient_statistics(x, [0])[:3], V),
    "sufficient_statistics_shift": (
        lambda tf, x, s: tf.nn.sufficient_statistics(x, [-1, 0], shift=s, keepdims=True),
        V,
        np.float32(0.25),
    ),
    "normalize_moments": (
        lambda tf, x, s: tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [0], shift=s)),
        V,
        V[0],
    ),
    "weighted_moments": (lambda tf, x, w: tf.nn.weighted_moments(x, [0], w), V, np.abs(V[:, :1])),
    "weighted_moments_keepdims": (
        lambda tf, x, w: tf.nn.weighted_moments(x, 1, w, keepdims=True),
        V,
        np.abs(V[0]),
    ),
    "batch_norm_global": (
        lambda tf, x, m, v, b, g: [
            tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 1e-3, True),
            tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 1e-3, False),
        ],
        V,
        V[0],
        V[1] ** 2,
        V[2],
        V[0] + 2.0,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    f, *arrays = CASES[name]
    _ok(_with_gradients(f, *arrays))


SECOND = {
    "silu_beta": lambda tf, x: tf.nn.silu(x, 1.7),
    "log_poisson_full": lambda tf, x: tf.nn.log_poisson_loss(tf.constant(LABELS * 3 + 0.5), x, compute_full_loss=True),
    "weighted_xent": lambda tf, x: tf.nn.weighted_cross_entropy_with_logits(tf.constant(LABELS), x, 2.5),
    "weighted_moments": lambda tf, x: tf.nn.weighted_moments(x, [0], tf.constant(np.abs(V[:, :1])))[1],
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives_match_tensorflow(name):
    def program(tf):
        v = tf.Variable(V)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = SECOND[name](tf, v)
                loss = tf.reduce_sum(y * tf.constant(_weights(y.shape)))
            g = inner.gradient(loss, v)
            total = tf.reduce_sum(g * g)
        return [g, outer.gradient(total, v)]

    _ok(program)


def test_non_differentiable_outputs_give_none_as_in_tensorflow():
    def program(tf):
        v = tf.Variable(V)
        with tf.GradientTape(persistent=True) as tape:
            hit = tf.nn.in_top_k([1, 0, 3], v, 2)
            fraction = tf.nn.zero_fraction(tf.nn.relu(v))
            values, indices = tf.nn.top_k(v, 2)
            loss = tf.reduce_sum(values)
        return [hit, fraction, values, indices, tape.gradient(fraction, v), tape.gradient(loss, v)]

    _ok(program)


IN_TOP_K = np.array(
    [[0.1, 0.3, 0.3, 0.2], [0.5, np.nan, 0.1, 0.2], [0.1, np.inf, 0.2, 0.3], [0.4, 0.4, 0.4, 0.4]], np.float32
)


@pytest.mark.parametrize("k", [0, 1, 2, 4, -1])
@pytest.mark.parametrize("targets", [[1, 0, 3, 2], [2, 2, 2, 0], [3, 2, 0, 3], [4, -1, 0, 1]])
def test_in_top_k_matches_tensorflow(targets, k):
    _ok(lambda tf: tf.nn.in_top_k(targets, IN_TOP_K, k))


def test_zero_fraction_and_in_top_k_dtypes_match_tensorflow():
    def program(tf):
        return [
            tf.nn.zero_fraction(tf.constant([[0, 1], [2, 0]])),
            tf.nn.zero_fraction(tf.constant([True, False, False])),
            tf.nn.zero_fraction(tf.zeros([0])),
            tf.nn.in_top_k(tf.constant([1, 0]), tf.constant(V[:2]), tf.constant(2)),
        ]

    out = _ok(program)
    assert [o.dtype for o in out] == [np.float32, np.float32, np.float32, np.bool_]


def test_average_loss_in_other_dtypes_matches_tensorflow():
    def program(tf):
        losses16 = tf.constant([1.0, 2.0], tf.float16)
        return [
            tf.nn.compute_average_loss(losses16, sample_weight=[1.0, 0.3]),
            tf.nn.compute_average_loss(tf.constant([[1.0, 2.0]]), sample_weight=tf.constant([3])),
            tf.nn.compute_average_loss([1.0, 2.0], global_batch_size=tf.constant(4)),
        ]

    out = _ok(program)
    assert [o.dtype for o in out] == [np.float16, np.float32, np.float32]


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        v, t = tf.Variable(V), tf.Variable(np.abs(LABELS))

        @tf.function
        def step(labels):
            per_example = tf.reduce_mean(tf.nn.weighted_cross_entropy_with_logits(labels, v, 2.0), axis=1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=6)
            loss += tf.nn.scale_regularization_loss(tf.nn.l2_loss(v))
            mean, variance = tf.nn.weighted_moments(tf.nn.silu(v, 0.5), [0], labels)
            return loss + tf.reduce_sum(mean * variance) + tf.reduce_sum(tf.nn.log_poisson_loss(labels, v))

        with tf.GradientTape() as tape:
            loss = step(t)
        return [loss, tape.gradient(loss, [v, t])]

    _ok(program)


BAD = {
    "silu_int": lambda tf: tf.nn.silu(tf.constant([1, 2])),
    "lrn_rank3": lambda tf: tf.nn.lrn(tf.constant(X[0])),
    "lrn_negative_radius": lambda tf: tf.nn.lrn(tf.constant(X), -1),
    "space_to_depth_block_1": lambda tf: tf.nn.space_to_depth(tf.constant(X), 1),
    "space_to_depth_not_divisible": lambda tf: tf.nn.space_to_depth(tf.constant(X), 3),
    "space_to_depth_rank3": lambda tf: tf.nn.space_to_depth(tf.constant(X[0]), 2),
    "depth_to_space_not_divisible": lambda tf: tf.nn.depth_to_space(tf.constant(X), 2),
    "in_top_k_rank1": lambda tf: tf.nn.in_top_k([0], tf.constant(V[0]), 1),
    "in_top_k_batch": lambda tf: tf.nn.in_top_k([0, 1], tf.constant(V), 1),
    "log_poisson_shapes": lambda tf: tf.nn.log_poisson_loss(tf.constant(V[0]), tf.constant(V)),
    "log_poisson_dtypes": lambda tf: tf.nn.log_poisson_loss(
        tf.constant([1.0, 2.0], tf.float16), tf.constant([1.0, 2.0])
    ),
    "weighted_xent_shapes": lambda tf: tf.nn.weighted_cross_entropy_with_logits(tf.constant(V[0]), tf.constant(V), 2.0),
    "weighted_xent_int_labels": lambda tf: tf.nn.weighted_cross_entropy_with_logits(
        tf.constant([0, 1]), [0.0, 2.0], 2.0
    ),
    "weighted_xent_weight_dtype": lambda tf: tf.nn.weighted_cross_entropy_with_logits(
        tf.constant([0.0, 1.0]), tf.constant([0.0, 2.0]), tf.constant(2.0, tf.float16)
    ),
    "average_loss_scalar": lambda tf: tf.nn.compute_average_loss(tf.constant(2.0)),
    "average_loss_float_batch": lambda tf: tf.nn.compute_average_loss(tf.constant(V), global_batch_size=2.0),
    "average_loss_vector_batch": lambda tf: tf.nn.compute_average_loss(tf.constant(V), global_batch_size=[4]),
    "average_loss_negative_batch": lambda tf: tf.nn.compute_average_loss(tf.constant(V), global_batch_size=-1),
    "average_loss_weight_shape": lambda tf: tf.nn.compute_average_loss(tf.constant(V), sample_weight=tf.ones([5])),
    "sufficient_statistics_int_axes": lambda tf: tf.nn.sufficient_statistics(tf.constant(V), 0),
    "sufficient_statistics_same_axis_twice": lambda tf: tf.nn.sufficient_statistics(tf.constant(V), [1, -1]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    # in_top_k is tf.math's op, which tf.nn also exposes
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf\.(nn|math)\.\w+"):
        BAD[name](gtf)
