"""gradkit.tf's pools and new convolutions against brute-force NumPy references (no TensorFlow
needed): values, and gradients through a Variable, including TensorFlow's rules for ties in a
max pool (first maximal entry for 1-D and 2-D, every entry within 1e-5 of the maximum for 3-D)
and average pooling's count of the entries inside the input."""

import itertools

import numpy as np
import pytest

import gradkit.tf as tf

RNG = np.random.default_rng(2)


def _pads(size, k, s, d, padding):
    """(lo, hi) padding of one axis, TensorFlow's 'SAME' (extra at the end) or 'VALID'."""
    if padding == "VALID":
        return 0, 0
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return total // 2, total - total // 2


def pool_reference(x, ksize, strides, padding, kind, dilations=None, ties="first"):
    """A channels-last pool and its gradient map: ``(y, vjp)`` with ``vjp(w)`` the input's gradient
    of ``sum(y * w)``."""
    n = x.ndim - 2
    dilations = dilations or (1,) * n
    pads = [
        p if not isinstance(padding, str) else _pads(x.shape[1 + i], ksize[i], strides[i], dilations[i], padding)
        for i, p in enumerate(padding if not isinstance(padding, str) else [None] * n)
    ]
    spatial = x.shape[1:-1]
    out_shape = [
        (spatial[i] + pads[i][0] + pads[i][1] - (ksize[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(n)
    ]
    y = np.zeros((x.shape[0], *out_shape, x.shape[-1]), x.dtype)
    chosen = {}
    for b, c in itertools.product(range(x.shape[0]), range(x.shape[-1])):
        for o in itertools.product(*(range(m) for m in out_shape)):
            entries = []
            for k in itertools.product(*(range(m) for m in ksize)):  # row-major window order
                pos = tuple(o[i] * strides[i] - pads[i][0] + k[i] * dilations[i] for i in range(n))
                if all(0 <= p < s for p, s in zip(pos, spatial)):
                    entries.append(pos)
            values = np.array([x[(b, *p, c)] for p in entries])
            if kind == "avg":
                y[(b, *o, c)] = values.mean()
                chosen[(b, *o, c)] = [(p, 1.0 / len(entries)) for p in entries]
            else:
                top = values.max()
                y[(b, *o, c)] = top
                if ties == "first":
                    chosen[(b, *o, c)] = [(entries[int(np.argmax(values == top))], 1.0)]
                else:
                    chosen[(b, *o, c)] = [(p, 1.0) for p, v in zip(entries, values) if abs(v - top) < 1e-5]

    def vjp(w):
        g = np.zeros_like(x)
        for (b, *o, c), picks in chosen.items():
            for p, scale in picks:
                g[(b, *p, c)] += scale * w[(b, *o, c)]
        return g

    return y, vjp


X1 = RNG.normal(size=(2, 7, 2)).astype(np.float32)
X2 = RNG.normal(size=(1, 5, 6, 2)).astype(np.float32)
X3 = RNG.normal(size=(1, 4, 5, 3, 2)).astype(np.float32)
T1, T2, T3 = (np.round(x) for x in (X1, X2, X3))
T3[0, 0, 0, 0, 0], T3[0, 0, 0, 1, 0] = 3.0, 3.0 - 4e-6  # within 3-D's tolerance

POOLS = {
    "max_pool1d_same_ties": (lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"), T1, ([3], [2], "SAME", "max", None, "first")),
    "max_pool1d_explicit": (
        lambda x: tf.nn.max_pool1d(x, 3, 1, [[0, 0], [2, 1], [0, 0]]),
        T1,
        ([3], [1], [(2, 1)], "max", None, "first"),
    ),
    "max_pool2d_ties": (
        lambda x: tf.nn.max_pool2d(x, 3, 1, "SAME"),
        T2,
        ([3, 3], [1, 1], "SAME", "max", None, "first"),
    ),
    "max_pool_rank4_valid": (
        lambda x: tf.nn.max_pool(x, [2, 3], [1, 2], "VALID"),
        T2,
        ([2, 3], [1, 2], "VALID", "max", None, "first"),
    ),
    "max_pool3d_ties": (
        lambda x: tf.nn.max_pool3d(x, 2, 1, "SAME"),
        T3,
        ([2, 2, 2], [1, 1, 1], "SAME", "max", None, "tol"),
    ),
    "avg_pool1d_same": (lambda x: tf.nn.avg_pool1d(x, 4, 3, "SAME"), X1, ([4], [3], "SAME", "avg", None, None)),
    "avg_pool2d_same": (
        lambda x: tf.nn.avg_pool2d(x, [3, 2], [2, 1], "SAME"),
        X2,
        ([3, 2], [2, 1], "SAME", "avg", None, None),
    ),
    "avg_pool3d_same": (
        lambda x: tf.nn.avg_pool3d(x, 2, 2, "SAME"),
        X3,
        ([2, 2, 2], [2, 2, 2], "SAME", "avg", None, None),
    ),
    "pool_max_dilated": (
        lambda x: tf.nn.pool(x, [2, 2], "MAX", dilations=[2, 1]),
        T2,
        ([2, 2], [1, 1], "VALID", "max", [2, 1], "first"),
    ),
    "pool_avg_dilated": (
        lambda x: tf.nn.pool(x, [2, 2], "AVG", dilations=[1, 2]),
        X2,
        ([2, 2], [1, 1], "VALID", "avg", [1, 2], None),
    ),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pools_match_a_numpy_reference(name):
    f, x, (ksize, strides, padding, kind, dilations, ties) = POOLS[name]
    want, vjp = pool_reference(x, ksize, strides, padding, kind, dilations, ties)
    w = np.cos(np.arange(want.size, dtype=np.float32)).reshape(want.shape)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = f(v)
        loss = tf.reduce_sum(y * w)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), vjp(w), rtol=1e-5, atol=1e-6)


def test_channels_first_pools_are_the_channels_last_ones_transposed():
    want, vjp = pool_reference(T2, [2, 2], [1, 2], "SAME", "max")
    w = np.cos(np.arange(want.size, dtype=np.float32)).reshape(want.shape)
    v = tf.Variable(np.moveaxis(T2, -1, 1))
    with tf.GradientTape() as tape:
        y = tf.nn.max_pool2d(v, 2, [1, 2], "SAME", data_format="NCHW")
        loss = tf.reduce_sum(y * np.moveaxis(w, -1, 1))
    np.testing.assert_allclose(np.moveaxis(y.numpy(), 1, -1), want)
    np.testing.assert_allclose(np.moveaxis(tape.gradient(loss, v).numpy(), 1, -1), vjp(w), rtol=1e-6)


def test_max_pool_with_argmax_matches_a_numpy_reference():
    out, argmax = tf.nn.max_pool_with_argmax(T2, 2, 2, "VALID", include_batch_in_index=True)
    want, _ = pool_reference(T2, [2, 2], [2, 2], "VALID", "max")
    np.testing.assert_array_equal(out.numpy(), want)
    # The flat index of the first maximal entry of each window, in row-major window order.
    flat = T2.ravel()
    np.testing.assert_array_equal(flat[argmax.numpy()], want.ravel().reshape(want.shape))
    for b, i, j, c in itertools.product(*(range(m) for m in want.shape)):
        window = T2[b, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2, c].ravel()
        first = int(np.argmax(window == window.max()))
        assert argmax.numpy()[b, i, j, c] == np.ravel_multi_index(
            (b, 2 * i + first // 2, 2 * j + first % 2, c), T2.shape
        )


def conv_reference(x, w, strides, pads, dilations, depthwise=False):
    """A channels-last convolution (``w`` ``[*spatial, in, out]``, or ``[*spatial, in, multiplier]``
    for a depthwise one) by summing shifted slices of the padded input."""
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    out_shape = [(xp.shape[1 + i] - (w.shape[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(n)]
    y = 0
    for k in itertools.product(*(range(m) for m in w.shape[:n])):
        index = tuple(
            slice(k[i] * dilations[i], k[i] * dilations[i] + (out_shape[i] - 1) * strides[i] + 1, strides[i])
            for i in range(n)
        )
        patch = xp[(slice(None), *index)]
        if depthwise:
            y = y + (patch[..., None] * w[k]).reshape(*patch.shape[:-1], -1)
        else:
            y = y + patch @ w[k]
    return y


def _linear_check(f, reference, *arrays):
    """Value against the reference, and the gradient of ``sum(y * c)`` with respect to each
    argument against the reference's exact finite differences (the op is linear in each)."""
    variables = [tf.Variable(a) for a in arrays]
    with tf.GradientTape() as tape:
        y = f(*variables)
        c = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float64)).reshape(tuple(y.shape))
        loss = tf.reduce_sum(y * c.astype(np.float32))
    grads = tape.gradient(loss, variables)
    arrays64 = [a.astype(np.float64) for a in arrays]
    np.testing.assert_allclose(y.numpy(), reference(*arrays64), rtol=1e-4, atol=1e-4)
    for i, (a, g) in enumerate(zip(arrays64, grads)):
        for flat in RNG.choice(a.size, size=min(a.size, 6), replace=False):
            bumped = [b.copy() for b in arrays64]
            bumped[i].flat[flat] += 1.0
            want = np.sum((reference(*bumped) - reference(*arrays64)) * c)
            np.testing.assert_allclose(g.numpy().flat[flat], want, rtol=1e-4, atol=1e-4)


XC = RNG.normal(size=(1, 6, 5, 3)).astype(np.float32)
F = RNG.normal(size=(3, 2, 3, 2)).astype(np.float32)
X5 = RNG.normal(size=(1, 4, 5, 3, 2)).astype(np.float32)
F5 = RNG.normal(size=(2, 2, 2, 2, 3)).astype(np.float32)
DW = RNG.normal(size=(3, 2, 3, 2)).astype(np.float32)
PW = RNG.normal(size=(1, 1, 6, 2)).astype(np.float32)

CONVS = {
    "conv3d_same": (
        lambda x, w: tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME"),
        lambda x, w: conv_reference(x, w, (2, 1, 1), [(0, 0), (0, 1), (0, 1)], (1, 1, 1)),
        X5,
        F5,
    ),
    "convolution_3d_dilated": (
        lambda x, w: tf.nn.convolution(x, w, padding="VALID", dilations=[2, 1, 1]),
        lambda x, w: conv_reference(x, w, (1, 1, 1), [(0, 0)] * 3, (2, 1, 1)),
        X5,
        F5,
    ),
    "atrous_conv2d_same": (
        lambda x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"),
        lambda x, w: conv_reference(x, w, (1, 1), [(2, 2), (1, 1)], (2, 2)),
        XC,
        F,
    ),
    "depthwise_strided": (
        lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"),
        lambda x, w: conv_reference(x, w, (2, 2), [(0, 1), (0, 1)], (1, 1), depthwise=True),
        XC,
        DW,
    ),
    "depthwise_dilated": (
        lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID", dilations=[1, 2]),
        lambda x, w: conv_reference(x, w, (1, 1), [(0, 0), (0, 0)], (1, 2), depthwise=True),
        XC,
        DW,
    ),
    "separable": (
        lambda x, w, p: tf.nn.separable_conv2d(x, w, p, [1, 1, 1, 1], "VALID"),
        lambda x, w, p: conv_reference(
            conv_reference(x, w, (1, 1), [(0, 0)] * 2, (1, 1), True), p, (1, 1), [(0, 0)] * 2, (1, 1)
        ),
        XC,
        DW,
        PW,
    ),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolutions_match_a_numpy_reference(name):
    _linear_check(*CONVS[name])


def test_strided_dilated_depthwise_is_tensorflows_space_to_batch_program():
    # TensorFlow's with_space_to_batch, step by step along the height: pad to a multiple of the
    # rate, split into `rate` phases, convolve each phase with the stride, interleave, crop.
    x = RNG.normal(size=(1, 9, 1, 1))
    w = RNG.normal(size=(2, 1, 1, 1))
    rate, stride = 2, 2
    padded = np.concatenate([x[0, :, 0, 0], np.zeros(1)])  # 9 -> 10
    phases = [padded[p::rate] for p in range(rate)]
    outputs = [
        [sum(w[i, 0, 0, 0] * ph[s + i] for i in range(2)) for s in range(0, len(ph) - 1, stride)] for ph in phases
    ]
    interleaved = [outputs[p][j] for j in range(len(outputs[0])) for p in range(rate)]
    want = interleaved[: len(interleaved) - 1]  # the extra padding's output is cropped
    y = tf.nn.depthwise_conv2d(
        x.astype(np.float32), w.astype(np.float32), [1, stride, 1, 1], "VALID", dilations=[rate, 1]
    )
    np.testing.assert_allclose(y.numpy()[0, :, 0, 0], want, rtol=1e-5)


def test_a_window_of_minus_infinity_gives_the_lowest_float_and_its_first_entry_the_gradient():
    # TensorFlow's MaxPool kernels start each window from float32's lowest value; MaxPoolGrad
    # still sends the window's gradient to its first entry. MaxPoolWithArgmax keeps -inf.
    a = np.full((1, 3, 3, 1), -np.inf, np.float32)
    a[0, 2, 2, 0] = 1.0
    lowest = np.finfo(np.float32).min
    x = tf.constant(a)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.max_pool2d(x, 2, 2, "SAME")
        y1 = tf.nn.max_pool1d(tf.reshape(x, [1, 9, 1]), 2, 2, "VALID")
        out, argmax = tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [lowest, lowest, lowest, 1.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy().ravel(), [1, 0, 1, 0, 0, 0, 1, 0, 1])
    np.testing.assert_array_equal(y1.numpy().ravel(), [lowest] * 4)
    np.testing.assert_array_equal(tape.gradient(y1, x).numpy().ravel(), [1, 0, 1, 0, 1, 0, 1, 0, 0])
    np.testing.assert_array_equal(out.numpy().ravel(), [-np.inf, -np.inf, -np.inf, 1.0])
    np.testing.assert_array_equal(argmax.numpy().ravel(), [0, 2, 6, 8])
    np.testing.assert_array_equal(tape.gradient(out, x).numpy().ravel(), [1, 0, 1, 0, 0, 0, 1, 0, 1])
