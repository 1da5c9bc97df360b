"""tf.nn convolution and pooling fixes, with oracles of their own and against real TensorFlow:

- ``conv2d_transpose`` takes an ``output_shape`` of the spatial sizes alone (batch from the
  input, channels from the filters), as TensorFlow's Conv2DBackpropInput does; the other
  transposed convolutions still refuse it, as TensorFlow does;
- ``conv1d``, ``conv2d`` and ``conv3d`` compute strides and dilations both above 1 (TensorFlow's
  ops do); ``tf.nn.convolution`` and ``tf.nn.pool`` still refuse them, as TensorFlow's Python does;
- what TensorFlow's eager kernels refuse with InvalidArgumentError (or UnimplementedError)
  raises gradkit classes deriving from it, and from ValueError / TypeError (TensorFlow's
  classes inside tf.function).
"""

import itertools

import jax
import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 9, 8, 3)).astype(np.float32)
W = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)
X1 = RNG.normal(size=(2, 11, 3)).astype(np.float32)
W1 = RNG.normal(size=(3, 3, 4)).astype(np.float32)
X3 = RNG.normal(size=(1, 7, 6, 7, 2)).astype(np.float32)
W3 = RNG.normal(size=(2, 2, 2, 2, 3)).astype(np.float32)
XT = RNG.normal(size=(2, 5, 6, 3)).astype(np.float32)
WT = RNG.normal(size=(3, 2, 4, 3)).astype(np.float32)
X4 = RNG.normal(size=(2, 4, 6, 8)).astype(np.float32)


def _same_pads(size, k, s, d):
    """TensorFlow's 'SAME' padding of one axis: the extra entry at the end."""
    span = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + span - size, 0)
    return total // 2, total - total // 2


def _numpy_conv(x, w, strides, dilations, pads):
    """A direct NumPy loop: y[b, o..., m] = sum x_padded[b, o * s + t * d, c] w[t..., c, m]."""
    n = w.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), *pads, (0, 0)])
    spans = [(k - 1) * d + 1 for k, d in zip(w.shape[:n], dilations)]
    outs = [(size - span) // s + 1 for size, span, s in zip(x.shape[1:-1], spans, strides)]
    y = np.zeros((x.shape[0], *outs, w.shape[-1]))
    for o in itertools.product(*(range(v) for v in outs)):
        for t in itertools.product(*(range(k) for k in w.shape[:n])):
            index = tuple(oi * s + ti * d for oi, ti, s, d in zip(o, t, strides, dilations))
            y[(slice(None), *o)] += x[(slice(None), *index)] @ w[t].astype(np.float64)
    return y


def _lax_conv(x, w, strides, dilations, pads):
    spatial = "DHW"[-(w.ndim - 2) :]
    dims = jax.lax.conv_dimension_numbers(x.shape, w.shape, (f"N{spatial}C", f"{spatial}IO", f"N{spatial}C"))
    return jax.lax.conv_general_dilated(
        x, w, strides, pads, rhs_dilation=dilations, dimension_numbers=dims, precision=jax.lax.Precision.HIGHEST
    )


def _pads(x, w, strides, dilations, padding):
    n = w.ndim - 2
    if padding == "VALID":
        return [(0, 0)] * n
    return [_same_pads(size, k, s, d) for size, k, s, d in zip(x.shape[1:-1], w.shape[:n], strides, dilations)]


STRIDED_DILATED = [
    ("conv2d SAME", lambda tf, x, w: tf.nn.conv2d(x, w, 2, "SAME", dilations=2), X, W, (2, 2), (2, 2), "SAME"),
    (
        "conv2d VALID",
        lambda tf, x, w: tf.nn.conv2d(x, w, [1, 2, 3, 1], "VALID", dilations=[2, 2]),
        X,
        W,
        (2, 3),
        (2, 2),
        "VALID",
    ),
    (
        "conv2d mixed",
        lambda tf, x, w: tf.nn.conv2d(x, w, [2, 1], "SAME", dilations=[1, 2]),
        X,
        W,
        (2, 1),
        (1, 2),
        "SAME",
    ),
    ("conv1d SAME", lambda tf, x, w: tf.nn.conv1d(x, w, 2, "SAME", dilations=2), X1, W1, (2,), (2,), "SAME"),
    ("conv1d VALID", lambda tf, x, w: tf.nn.conv1d(x, w, 3, "VALID", dilations=2), X1, W1, (3,), (2,), "VALID"),
    (
        "conv3d SAME",
        lambda tf, x, w: tf.nn.conv3d(x, w, [1, 2, 2, 2, 1], "SAME", dilations=[1, 2, 2, 2, 1]),
        X3,
        W3,
        (2, 2, 2),
        (2, 2, 2),
        "SAME",
    ),
]
SD_IDS = [case[0] for case in STRIDED_DILATED]


@pytest.mark.parametrize("case", STRIDED_DILATED, ids=SD_IDS)
def test_strided_dilated_conv_matches_numpy_loop(case):
    _, f, x, w, strides, dilations, padding = case
    want = _numpy_conv(x, w, strides, dilations, _pads(x, w, strides, dilations, padding))
    got = np.asarray(f(gtf, gtf.constant(x), gtf.constant(w)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", STRIDED_DILATED, ids=SD_IDS)
def test_strided_dilated_conv_gradients_match_lax(case):
    _, f, x, w, strides, dilations, padding = case
    pads = _pads(x, w, strides, dilations, padding)
    out_shape = jax.eval_shape(lambda a, b: _lax_conv(a, b, strides, dilations, pads), x, w).shape
    weights = np.cos(np.arange(int(np.prod(out_shape)), dtype=np.float32)).reshape(out_shape)
    want = jax.grad(lambda a, b: (_lax_conv(a, b, strides, dilations, pads) * weights).sum(), (0, 1))(x, w)
    xv, wv = gtf.Variable(x), gtf.Variable(w)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(f(gtf, xv, wv) * gtf.constant(weights))
    got = tape.gradient(loss, [xv, wv])
    for g, h in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(h), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "f",
    [
        lambda tf: tf.nn.convolution(X, W, 2, "SAME", dilations=2),
        lambda tf: tf.nn.convolution(X1, W1, [2], "VALID", dilations=[2]),
        lambda tf: tf.nn.pool(X, [2, 2], "MAX", strides=[2, 2], padding="VALID", dilations=[2, 2]),
    ],
    ids=["convolution 2d", "convolution 1d", "pool"],
)
def test_convolution_and_pool_still_refuse_strided_dilated(f):
    with pytest.raises(ValueError, match="strides and dilations both above 1") as info:
        f(gtf)
    assert type(info.value).__name__ == "GradkitValueError"  # TensorFlow's Python refuses: ValueError


@pytest.mark.parametrize(
    "spatial, full, padding, data_format",
    [
        ([10, 12], [2, 10, 12, 4], "SAME", "NHWC"),
        ((11, 13), [2, 11, 13, 4], "VALID", "NHWC"),
        (np.array([10, 12]), [2, 4, 10, 12], "SAME", "NCHW"),
    ],
)
def test_conv2d_transpose_spatial_output_shape_matches_full(spatial, full, padding, data_format):
    x = XT if data_format == "NHWC" else np.ascontiguousarray(np.moveaxis(XT, -1, 1))
    xv, wv = gtf.Variable(x), gtf.Variable(WT)
    results = []
    for shape in (spatial, full):
        with gtf.GradientTape() as tape:
            y = gtf.nn.conv2d_transpose(xv, wv, shape, 2, padding, data_format=data_format)
            loss = gtf.reduce_sum(y * y)
        results.append([np.asarray(y), *(np.asarray(g) for g in tape.gradient(loss, [xv, wv]))])
    assert results[0][0].shape == tuple(full)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "f",
    [
        lambda tf: tf.nn.conv1d_transpose(X1[:, :5], W1.transpose(0, 2, 1), [10], 2),
        lambda tf: tf.nn.conv3d_transpose(X3[:, :3, :3, :3], W3.transpose(0, 1, 2, 4, 3), [6, 6, 6], 2),
        lambda tf: tf.nn.conv_transpose(XT, WT, [10, 12], 2),
        lambda tf: tf.nn.atrous_conv2d_transpose(XT, WT, [5, 6], 2, "SAME"),
        lambda tf: tf.nn.conv2d_transpose(XT, WT, [2, 10, 12], 2),
    ],
    ids=["conv1d_transpose", "conv3d_transpose", "conv_transpose", "atrous_conv2d_transpose", "3 entries"],
)
def test_other_transposes_refuse_spatial_output_shape(f):
    with pytest.raises(ValueError, match=r"^\[gradkit\]"):
        f(gtf)


# --- error classes -----------------------------------------------------------------------

F16 = X.astype(np.float16)


def _c(tf, a):
    return tf.constant(a)


ERROR_CASES = [
    ("conv2d channels", lambda tf: tf.nn.conv2d(_c(tf, X), _c(tf, W[:, :, :2]), 1, "SAME"), "InvalidArgumentError"),
    ("conv2d stride 0", lambda tf: tf.nn.conv2d(_c(tf, X), _c(tf, W), 0, "VALID"), "InvalidArgumentError"),
    ("conv2d rank-3 filter", lambda tf: tf.nn.conv2d(_c(tf, X), _c(tf, W[0]), 1, "VALID"), "InvalidArgumentError"),
    ("conv2d padding FOO", lambda tf: tf.nn.conv2d(_c(tf, X), _c(tf, W), 1, "FOO"), "InvalidArgumentError"),
    ("conv2d f16 f32", lambda tf: tf.nn.conv2d(_c(tf, F16), _c(tf, W), 1, "SAME"), "InvalidArgumentError"),
    ("conv1d channels", lambda tf: tf.nn.conv1d(_c(tf, X1), _c(tf, W1[:, :2]), 1, "SAME"), "InvalidArgumentError"),
    (
        "conv3d stride 0",
        lambda tf: tf.nn.conv3d(_c(tf, X3), _c(tf, W3), [1, 0, 1, 1, 1], "SAME"),
        "InvalidArgumentError",
    ),
    ("avg_pool2d rank 3", lambda tf: tf.nn.avg_pool2d(_c(tf, X[0]), 2, 2, "SAME"), "InvalidArgumentError"),
    ("max_pool2d rank 3", lambda tf: tf.nn.max_pool2d(_c(tf, X[0]), 2, 2, "SAME"), "InvalidArgumentError"),
    ("avg_pool2d ksize 0", lambda tf: tf.nn.avg_pool2d(_c(tf, X), 0, 1, "SAME"), "InvalidArgumentError"),
    ("max_pool2d ksize 0", lambda tf: tf.nn.max_pool2d(_c(tf, X), 0, 1, "SAME"), "InvalidArgumentError"),
    ("avg_pool2d same", lambda tf: tf.nn.avg_pool2d(_c(tf, X), 2, 2, "same"), "InvalidArgumentError"),
    ("max_pool2d same", lambda tf: tf.nn.max_pool2d(_c(tf, X), 2, 2, "same"), "InvalidArgumentError"),
    (
        "avg_pool2d int32",
        lambda tf: tf.nn.avg_pool2d(_c(tf, (X * 4).astype(np.int32)), 2, 2, "SAME"),
        "InvalidArgumentError",
    ),
    ("max_pool2d ksize batch", lambda tf: tf.nn.max_pool2d(_c(tf, X), [2, 2, 2, 1], 1, "VALID"), "UnimplementedError"),
    ("max_pool ksize batch", lambda tf: tf.nn.max_pool(_c(tf, X), [2, 2, 2, 1], 1, "VALID"), "UnimplementedError"),
    (
        "avg_pool2d strides batch",
        lambda tf: tf.nn.avg_pool2d(_c(tf, X), 1, [2, 1, 1, 1], "VALID"),
        "UnimplementedError",
    ),
    (
        "max_pool3d ksize depth",
        lambda tf: tf.nn.max_pool3d(_c(tf, X3), [1, 1, 1, 1, 2], 1, "VALID"),
        "UnimplementedError",
    ),
    ("depth_to_space channels", lambda tf: tf.nn.depth_to_space(_c(tf, X), 2), "InvalidArgumentError"),
    ("depth_to_space block 1", lambda tf: tf.nn.depth_to_space(_c(tf, X4), 1), "InvalidArgumentError"),
    ("space_to_depth indivisible", lambda tf: tf.nn.space_to_depth(_c(tf, X), 2), "InvalidArgumentError"),
    (
        "space_to_batch_nd indivisible",
        lambda tf: tf.space_to_batch_nd(_c(tf, X), [2, 2], [[0, 0], [0, 0]]),
        "InvalidArgumentError",
    ),
    (
        "space_to_batch_nd negative padding",
        lambda tf: tf.space_to_batch_nd(_c(tf, X4), [2, 2], [[-1, 1], [0, 0]]),
        "InvalidArgumentError",
    ),
    ("batch_to_space indivisible", lambda tf: tf.batch_to_space(_c(tf, X), [3], [[0, 0]]), "InvalidArgumentError"),
    ("batch_to_space crop", lambda tf: tf.batch_to_space(_c(tf, X4), [2], [[0, 9]]), "InvalidArgumentError"),
    ("lrn rank 3", lambda tf: tf.nn.local_response_normalization(_c(tf, X[0])), "InvalidArgumentError"),
    ("softmax int32", lambda tf: tf.nn.softmax(tf.constant([1, 2])), "InvalidArgumentError"),
    ("log_softmax int32", lambda tf: tf.nn.log_softmax(tf.constant([1, 2])), "InvalidArgumentError"),
    ("silu int32", lambda tf: tf.nn.silu(tf.constant([1, 2])), "InvalidArgumentError"),
    (
        "in_top_k float16",
        lambda tf: tf.nn.in_top_k(_c(tf, X[0, 0].astype(np.float16)), tf.constant([0, 1, 2, 0, 1, 2, 0, 1]), 2),
        "InvalidArgumentError",
    ),
]
ERROR_IDS = [case[0] for case in ERROR_CASES]


@pytest.mark.parametrize("case", ERROR_CASES, ids=ERROR_IDS)
def test_kernel_refusals_raise_tensorflow_classes(case):
    _, f, name = case
    with pytest.raises(getattr(gtf.errors, name)) as info:
        f(gtf)
    assert str(info.value).startswith("[gradkit]")
    # TensorFlow raises ValueError or TypeError inside tf.function: the gradkit class is one too.
    assert isinstance(info.value, (ValueError, TypeError))


@pytest.mark.parametrize("case", ERROR_CASES, ids=ERROR_IDS)
def test_kernel_refusals_inside_function(case):
    _, f, name = case
    with pytest.raises((ValueError, TypeError)) as info:
        gtf.function(lambda: f(gtf))()
    assert isinstance(info.value, getattr(gtf.errors, name))


@pytest.mark.parametrize(
    "f",
    [
        lambda tf: tf.nn.atrous_conv2d(_c(tf, X), _c(tf, W[:, :, :2]), 2, "SAME"),
        lambda tf: tf.nn.atrous_conv2d(_c(tf, X), _c(tf, W), 2, "FOO"),
        lambda tf: tf.nn.pool(_c(tf, X), [0, 2], "AVG"),
    ],
    ids=["atrous channels", "atrous padding", "pool window 0"],
)
def test_python_level_refusals_stay_value_errors(f):
    with pytest.raises(ValueError, match=r"^\[gradkit\]") as info:
        f(gtf)
    assert not isinstance(info.value, gtf.errors.InvalidArgumentError)


# --- against real TensorFlow -------------------------------------------------------------


def _values_and_gradients(tf, f, x, w, use_function):
    def body(xv, wv):
        with tf.GradientTape() as tape:
            tape.watch([xv, wv])
            y = f(tf, xv, wv)
            loss = tf.reduce_sum(y * tf.cos(tf.reshape(tf.cast(tf.range(tf.size(y)), y.dtype), tf.shape(y))))
        return [y, *tape.gradient(loss, [xv, wv])]

    if use_function:
        body = tf.function(body)
    return [np.asarray(v) for v in body(tf.constant(x), tf.constant(w))]


@pytest.mark.parametrize("use_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("case", STRIDED_DILATED, ids=SD_IDS)
def test_strided_dilated_conv_parity(case, use_function):
    tf = pytest.importorskip("tensorflow")
    _, f, x, w, *_ = case
    want = _values_and_gradients(tf, f, x, w, use_function)
    got = _values_and_gradients(gtf, f, x, w, use_function)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "shape, padding", [([10, 12], "SAME"), ((11, 13), "VALID"), (np.array([11, 12]), "VALID")], ids=str
)
def test_conv2d_transpose_spatial_output_shape_parity(shape, padding):
    tf = pytest.importorskip("tensorflow")

    def f(tf, x, w):
        return tf.nn.conv2d_transpose(x, w, shape, 2, padding)

    want = _values_and_gradients(tf, f, XT, WT, False)
    got = _values_and_gradients(gtf, f, XT, WT, False)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ERROR_CASES, ids=ERROR_IDS)
def test_tensorflow_raises_the_same_class(case):
    tf = pytest.importorskip("tensorflow")
    _, f, name = case
    with pytest.raises(Exception) as info:  # noqa: PT011  (the class is the point)
        f(tf)
    assert type(info.value).__name__ == name
