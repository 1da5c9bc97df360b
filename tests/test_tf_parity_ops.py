"""Values and gradients of gradkit.tf's ops against real TensorFlow (small shapes)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


def run_both_ok(program):
    """``run_both`` for programs valid in TensorFlow: both must run and agree (not raise alike)."""
    out = run_both(program)
    assert not isinstance(out, Exception), out


X = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]], np.float32)
W = np.array([[0.7, 0.2, -0.5], [0.3, -0.9, 0.4]], np.float32)  # weights, so no gradient is all ones
SPD = np.array([[4.0, 1.0, 0.5], [0.2, 3.0, 0.3], [0.1, 0.7, 2.0]], np.float32)  # TF reads the lower triangle


def _weights(w, shape):
    shape = [int(d) for d in shape]
    return np.resize(w.ravel(), int(np.prod(shape))).reshape(shape).astype(np.float32)


def _values_and_gradient(f, x=X, w=W):
    """``f(tf, x)`` and the gradient of ``sum(f(tf, x) * w)`` (each output weighted) with respect to x."""

    def program(tf):
        xv = tf.Variable(x)
        with tf.GradientTape() as t:
            outs = f(tf, xv)
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            loss = sum(
                tf.reduce_sum(o * tf.constant(_weights(w, o.shape))) for o in outs if o.dtype.name.startswith("float")
            )
        return outs + [tf.convert_to_tensor(t.gradient(loss, xv))]  # TF gives IndexedSlices for gathers

    return program


UNARY = {
    "gelu_exact": lambda tf, x: tf.nn.gelu(x),
    "gelu_tanh": lambda tf, x: tf.nn.gelu(x, approximate=True),
    "l2_normalize_axis": lambda tf, x: tf.nn.l2_normalize(x, axis=1),
    "l2_normalize_all": lambda tf, x: tf.nn.l2_normalize(x),
    "moments": lambda tf, x: tf.nn.moments(x, axes=[0]),
    "moments_keepdims": lambda tf, x: tf.nn.moments(x, axes=[1], keepdims=True),
    "asin_acos_atan": lambda tf, x: [tf.math.asin(x / 2.0), tf.math.acos(x / 2.0), tf.math.atan(x), tf.asin(x / 3.0)],
    "log_sigmoid": lambda tf, x: tf.math.log_sigmoid(x * 3.0),
    "reduce_euclidean_norm": lambda tf, x: [tf.math.reduce_euclidean_norm(x), tf.math.reduce_euclidean_norm(x, 1)],
    "cumsum": lambda tf, x: [tf.math.cumsum(x, axis=1), tf.cumsum(x, exclusive=True), tf.math.cumsum(x, 1, True, True)],
    "cumprod": lambda tf, x: [tf.math.cumprod(x, axis=1), tf.math.cumprod(x, 1, exclusive=True, reverse=True)],
    "top_k": lambda tf, x: list(tf.math.top_k(x, k=2)),
    "sort": lambda tf, x: [tf.sort(x), tf.sort(x, axis=0, direction="DESCENDING"), tf.argsort(x)],
    "reverse_slice": lambda tf, x: [tf.reverse(x, [1]), tf.reverse(x, axis=[0, 1]), tf.slice(x, [0, 1], [-1, 2])],
    "broadcast_newaxis": lambda tf, x: [tf.broadcast_to(x[0], [3, 3]), x[:, tf.newaxis, 1:] * 2.0],
    "gather_nd": lambda tf, x: [tf.gather_nd(x, [[1, 2], [0, 0], [1, 2]]), tf.gather_nd(x, [[1]])],
    "gather_nd_batch": lambda tf, x: tf.gather_nd(x, [[2], [0]], batch_dims=1),
    "embedding_lookup": lambda tf, x: tf.nn.embedding_lookup(x, [[1, 0], [1, 1]]),
    "bias_add": lambda tf, x: [
        tf.nn.bias_add(tf.reshape(x, [1, 2, 3]), x[0]),
        tf.nn.bias_add(tf.reshape(x, [1, 2, 3]), x[:, 0], "NCHW"),
    ],
    "band_part_transpose": lambda tf, x: [
        tf.linalg.band_part(tf.reshape(tf.concat([x, x], 1), [3, 4]), 1, 0),
        tf.linalg.band_part(tf.reshape(tf.concat([x, x], 1), [3, 4]), -1, 1),
        tf.linalg.matrix_transpose(x),
    ],
    "xlogy_divide_no_nan": lambda tf, x: [
        tf.math.xlogy(x * tf.constant([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), tf.abs(x)),
        tf.math.divide_no_nan(x, x * tf.constant([[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]])),
    ],
    "clip_by_global_norm": lambda tf, x: [
        *tf.clip_by_global_norm([x, x[0] * 2.0], 1.5)[0],
        tf.clip_by_global_norm([x, x[0] * 2.0], 1.5)[1],
        *tf.clip_by_global_norm([x * 0.1], 100.0)[0],
    ],
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_op_values_and_gradients(name):
    run_both_ok(_values_and_gradient(UNARY[name]))


LOSSES = {
    "sigmoid_cross_entropy": lambda tf, x, y: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=y, logits=x * tf.constant([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    ),
    "softmax_cross_entropy": lambda tf, x, y: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.nn.softmax(y), logits=x
    ),
    "softmax_cross_entropy_axis0": lambda tf, x, y: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.nn.softmax(y, axis=0), logits=x, axis=0
    ),
    "sparse_softmax_cross_entropy": lambda tf, x, y: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([2, 0]), logits=x * y
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_values_and_gradients_in_logits_and_labels(name):
    def program(tf):
        x, y = tf.Variable(X), tf.Variable(W)
        with tf.GradientTape() as t:
            loss = LOSSES[name](tf, x, y)
            total = tf.reduce_sum(
                loss * tf.constant(np.arange(1.0, 1.0 + np.prod(loss.shape), dtype=np.float32).reshape(loss.shape))
            )
        return [loss, t.gradient(total, [x, y])]

    run_both_ok(program)


LINALG = {
    "slogdet": lambda tf, a: list(tf.linalg.slogdet(a)),
    "eigh_values": lambda tf, a: tf.linalg.eigh(a)[0],
    "eigh_vectors_sign_free": lambda tf, a: [tf.abs(tf.linalg.eigh(a)[1]), tf.linalg.eigh(a)[1] ** 2],
    "qr": lambda tf, a: list(tf.linalg.qr(tf.concat([a, a[:1] * 2.0], 0))),
    "triangular_solve": lambda tf, a: [
        tf.linalg.triangular_solve(a, a[:, :2]),
        tf.linalg.triangular_solve(a, a[:, 1:], lower=False, adjoint=True),
    ],
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_values_and_gradients(name):
    w = np.array(
        [[0.7, 0.2, -0.5, 0.3], [-0.9, 0.4, 1.1, 0.6], [0.8, -0.3, 0.5, 0.9], [0.2, 0.1, -0.7, 0.4]], np.float32
    )
    run_both_ok(_values_and_gradient(LINALG[name], x=SPD, w=w))


def test_keras_sequential():
    def program(tf):
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(3, activation="tanh"),
                tf.keras.layers.Dense(2),
                tf.keras.layers.BatchNormalization(),
            ]
        )
        x = tf.constant(X)
        model(x)
        rng = np.random.default_rng(0)
        for v in model.trainable_variables:
            v.assign(rng.standard_normal(v.shape).astype(np.float32))
        with tf.GradientTape() as t:
            y = tf.reduce_sum(model(x, training=True) * tf.constant(W[:, :2]))
        grads = t.gradient(y, model.trainable_variables)
        return [y, type(model.trainable_variables).__name__, len(model.variables), grads, model(x, training=False)]

    run_both_ok(program)


def test_norms_at_zero_follow_tensorflow():
    x = np.array([[0.0, -1.2, 0.8], [1.5, 0.0, -0.4]], np.float32)
    run_both_ok(
        _values_and_gradient(
            lambda tf, x: [tf.norm(x, ord=1), tf.norm(x, ord=1, axis=1), tf.norm(x, ord=np.inf, axis=0)], x=x
        )
    )


def test_a_numpy_function_on_a_tensor_leaves_the_tape():
    # TensorFlow's guide ("calculation outside TensorFlow"): the gradient is None, the value NumPy's.
    def program(tf):
        x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
        with tf.GradientTape() as tape:
            x2 = x**2
            y = np.mean(x2, axis=0) + np.sum(np.clip(x2, 2.0, 9.0), axis=1)
            y = tf.reduce_mean(y, axis=0)
        return [y, tape.gradient(y, x)]

    run_both_ok(program)  # None-ness compared too: TensorFlow's gradient is None


@pytest.mark.parametrize(
    "numpy_fn",
    [
        lambda y: np.repeat(y, 2),
        lambda y: np.squeeze(y),
        lambda y: np.swapaxes(y, 0, 1),
        lambda y: np.moveaxis(y, 0, 1),
        lambda y: np.real(y),
        lambda y: np.argsort(y).astype(np.float32),
    ],
)
def test_numpy_functions_calling_tensor_methods_leave_the_tape(numpy_fn):
    def program(tf):
        x = tf.Variable([[1.0, 2.0, 3.0]])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.convert_to_tensor(numpy_fn(x * 1.0)) * 2.0)
        return [y, tape.gradient(y, x)]

    run_both_ok(program)


def test_numpy_arrays_of_tensors_and_variables_are_writable_copies():
    def program(tf):
        x = tf.Variable([[1.0, 2.0, 3.0]])
        a, b, c = (x * 1.0).numpy(), np.array(x * 1.0, copy=True), x.numpy()
        a[0, 0], b[0, 0], c[0, 0] = 9.0, 7.0, 5.0
        return [a, b, c, tf.identity(x)]

    run_both_ok(program)


def test_a_boolean_mask_index_selects_and_differentiates_as_in_tensorflow():
    def program(tf):
        v = tf.Variable(X)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v[v > 0.2] ** 2)
        return [y, tape.gradient(y, v)]

    run_both_ok(program)


def test_tensor_shapes_read_as_tensorflows():
    def facts(tf):
        t = tf.ones([2, 3]) * tf.Variable(2.0)
        s = t.shape
        return [
            s.as_list(),
            s.rank,
            s.ndims,
            s == [2, 3],
            s == (2, 3),
            s != [2, 3],
            s.num_elements(),
            s.is_fully_defined(),
            s[1:].as_list(),
            (s[:-1] + [5]).as_list(),
            ([1] + s).as_list(),
            tf.reshape(t, t.shape[:1] + [3]).shape.as_list(),
        ]

    assert facts(gtf) == facts(tf_real)
    assert gtf.ones([2, 3]).get_shape().as_list() == tf_real.ones([2, 3]).get_shape().as_list()


def test_a_frozen_keras_layer_lists_its_variables_as_tensorflow_does():
    def facts(tf):
        layer = tf.keras.layers.Dense(2, name="d")
        layer(tf.ones([1, 3]))
        layer.trainable = False
        out = [
            len(layer.trainable_variables),
            [v.name.split("/")[-1].split(":")[0] for v in layer.non_trainable_variables],
        ]
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(layer(tf.ones([1, 3])))
        out.append(tape.gradient(y, layer.bias).numpy().tolist())  # still watched, as in Keras
        layer.trainable = True
        out.append(len(layer.trainable_variables))
        model = tf.keras.Sequential([tf.keras.layers.Dense(2), tf.keras.layers.Dense(1)])
        model(tf.ones([1, 3]))
        model.layers[0].trainable = False
        out += [len(model.trainable_variables), len(model.non_trainable_variables)]
        model.trainable = False
        out += [len(model.trainable_variables), len(model.non_trainable_variables), model.layers[1].trainable]
        bn = tf.keras.layers.BatchNormalization()
        bn(tf.ones([2, 3]), training=True)
        bn.trainable = False
        return out + [len(bn.trainable_variables), len(bn.non_trainable_variables)]

    assert facts(gtf) == facts(tf_real)


@pytest.mark.parametrize(
    "index",
    [
        lambda tf, t: t[5],
        lambda tf, t: t[-4],
        lambda tf, t: t[1, 3],
        lambda tf, t: tf.gather(t, [2, 3]),
        lambda tf, t: t[..., 5],
        lambda tf, t: t[None, ..., 3],
        lambda tf, t: t[tf.constant(5)],
        lambda tf, t: t[np.int64(2)],
        lambda tf, t: t[:, np.int32(-4)],
        lambda tf, t: tf.gather_nd(t, [[2, 0]]),
        lambda tf, t: tf.gather_nd(t, [[1, -1]]),
    ],
)
def test_an_index_out_of_bounds_raises_as_in_tensorflow(index):
    # jax would clamp (or fill) silently; TensorFlow raises, and so does gradkit.tf.
    def program(tf):
        return index(tf, tf.constant(X))

    assert isinstance(run_both(program), Exception)
    run_both_ok(
        lambda tf: [tf.constant(X)[1, -1], tf.gather(tf.constant(X), [1, 0]), tf.gather_nd(tf.constant(X), [[1, 2]])]
    )


@pytest.mark.parametrize("which", ["sgd_momentum", "adam", "adam_amsgrad"])
def test_optimizer_slots_belong_to_each_variable_as_in_keras(which):
    # A Variable left out of a step keeps its moments; Adam's bias correction counts the
    # optimizer's steps. (Slots keyed by the set of Variables restarted whenever it changed.)
    make = {
        "sgd_momentum": lambda tf: tf.keras.optimizers.SGD(0.1, momentum=0.9),
        "adam": lambda tf: tf.keras.optimizers.Adam(0.1),
        "adam_amsgrad": lambda tf: tf.keras.optimizers.Adam(0.1, amsgrad=True),
    }[which]

    def program(tf):
        v1, v2 = tf.Variable(1.0), tf.Variable(2.0)
        opt = make(tf)
        out = []
        for step in range(4):
            vs = [v1, v2] if step % 2 == 0 else [v2]
            with tf.GradientTape() as tape:
                loss = v1 * v1 + v2 * v2 * v2
            opt.apply_gradients(zip(tape.gradient(loss, vs), vs))
            out += [tf.identity(v1), tf.identity(v2)]
        return out

    run_both_ok(program)


def test_a_frozen_batch_normalization_runs_in_inference_mode_and_trainable_is_a_layer_argument():
    def program(tf):
        bn = tf.keras.layers.BatchNormalization()
        x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
        bn(x, training=True)
        bn.trainable = False
        y = bn(x, training=True)  # Keras: inference mode, moving statistics untouched
        dense = tf.keras.layers.Dense(2, trainable=False)
        dense(x)
        counts = tf.constant([len(dense.trainable_variables), len(dense.non_trainable_variables)])
        return [y, tf.identity(bn.moving_mean), counts]

    run_both_ok(program)
