"""``tf.nn.dilation2d`` and ``tf.nn.erosion2d``: values against a NumPy loop over windows (the
definition), gradients with ``check_grads`` where no two candidates tie, and values and
gradients with ties against real TensorFlow (the first largest candidate takes the gradient)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit.tf as gtf
from gradkit import GradkitError
from gradkit.tf import _morphology

RNG = np.random.default_rng(3)


def _numpy_dilation(x, f, strides, rates, padding):
    """The definition: for each output, the largest x + f over the taps inside the input."""
    b, h, w, c = x.shape
    fh, fw, _ = f.shape
    windows = [(k - 1) * r + 1 for k, r in zip((fh, fw), rates)]
    if padding == "SAME":
        outs = [-(-n // s) for n, s in zip((h, w), strides)]
        tops = [max((o - 1) * s + k - n, 0) // 2 for o, s, k, n in zip(outs, strides, windows, (h, w))]
    else:
        outs = [(n - k) // s + 1 for n, k, s in zip((h, w), windows, strides)]
        tops = [0, 0]
    y = np.full((b, *outs, c), np.finfo(np.float32).min, np.float32)
    for i in range(outs[0]):
        for j in range(outs[1]):
            for dy in range(fh):
                for dx in range(fw):
                    r = i * strides[0] - tops[0] + dy * rates[0]
                    q = j * strides[1] - tops[1] + dx * rates[1]
                    if 0 <= r < h and 0 <= q < w:
                        y[:, i, j, :] = np.maximum(y[:, i, j, :], x[:, r, q, :] + f[dy, dx])
    return y


CASES = [
    ((2, 5, 6, 2), (2, 3), (1, 1), (1, 1), "VALID"),
    ((1, 6, 5, 3), (3, 2), (2, 1), (1, 2), "SAME"),
    ((2, 7, 7, 1), (2, 2), (2, 3), (2, 2), "SAME"),
    ((1, 4, 9, 2), (1, 3), (1, 2), (3, 1), "VALID"),
]


@pytest.mark.parametrize("shape, window, strides, rates, padding", CASES)
def test_values_are_the_max_plus_convolution(shape, window, strides, rates, padding):
    x = RNG.normal(size=shape).astype(np.float32)
    f = RNG.normal(size=(*window, shape[3])).astype(np.float32)
    args = ([1, *strides, 1], padding, "NHWC", [1, *rates, 1])
    want = _numpy_dilation(x, f, strides, rates, padding)
    np.testing.assert_allclose(gtf.nn.dilation2d(x, f, *args).numpy(), want, rtol=1e-6)
    # Erosion is the dilation of -x by the reversed filter, negated (TensorFlow's definition).
    eroded = -_numpy_dilation(-x, f[::-1, ::-1], strides, rates, padding)
    np.testing.assert_allclose(gtf.nn.erosion2d(x, f, *args).numpy(), eroded, rtol=1e-6)


@pytest.mark.parametrize("fn", [_morphology._dilate, _morphology._erode])
def test_gradients_match_finite_differences(fn):
    # Distinct random values: no ties, so the max is differentiable at this point.
    x = jnp.asarray(RNG.normal(size=(1, 5, 4, 2)), jnp.float32)
    f = jnp.asarray(RNG.normal(size=(2, 2, 2)), jnp.float32)
    pads = ((1, 1), (0, 1))
    check_grads(lambda x, f: fn(x, f, strides=(2, 1), rates=(1, 2), padding=pads), (x, f), order=1, eps=1e-3, atol=2e-2)


def test_refusals_say_what_tensorflow_takes():
    x, f = np.zeros((1, 3, 3, 1), np.float32), np.zeros((2, 2, 1), np.float32)
    with pytest.raises(GradkitError, match="NHWC"):
        gtf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NCHW", [1, 1, 1, 1])
    with pytest.raises(GradkitError, match="1 for batch and channels"):
        gtf.nn.erosion2d(x, f, [2, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    with pytest.raises(GradkitError, match="smaller than the dilated filter"):
        gtf.nn.dilation2d(x, np.zeros((4, 1, 1), np.float32), [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])
    with pytest.raises(GradkitError, match="channels"):
        gtf.nn.dilation2d(x, np.zeros((2, 2, 2), np.float32), [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])
    with pytest.raises(GradkitError, match="dtype"):
        gtf.nn.dilation2d(x, f.astype(np.int32), [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])


def _has_tap_inside(shape, window, strides, rates, padding):
    """Every output window has a tap inside the input (see the module: otherwise TensorFlow's
    backprop kernels send a gradient to a pixel the lowest-value output does not depend on)."""
    x = np.zeros(shape, np.float32)
    f = np.zeros((*window, shape[3]), np.float32)
    return (_numpy_dilation(x, f, strides, rates, padding) > np.finfo(np.float32).min).all()


def test_values_and_gradients_with_ties_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(0)
    checked = 0
    while checked < 24:
        shape = (2, *rng.integers(1, 7, size=2), int(rng.integers(1, 3)))
        window = tuple(int(k) for k in rng.integers(1, 4, size=2))
        strides, rates = tuple(rng.integers(1, 3, size=2)), tuple(rng.integers(1, 3, size=2))
        padding = "SAME" if rng.random() < 0.5 else "VALID"
        if padding == "VALID" and any(n < (k - 1) * r + 1 for n, k, r in zip(shape[1:3], window, rates)):
            continue
        if not _has_tap_inside(shape, window, strides, rates, padding):
            continue
        checked += 1
        x = rng.integers(-3, 4, size=shape).astype(np.float32)  # small integers: many ties
        f = rng.integers(-2, 3, size=(*window, shape[3])).astype(np.float32)
        args = ([1, *strides, 1], padding, "NHWC", [1, *rates, 1])
        for op in ("dilation2d", "erosion2d"):
            results = []
            for lib in (tf, gtf):
                xt, ft = lib.constant(x), lib.constant(f)
                with lib.GradientTape(persistent=True) as tape:
                    tape.watch([xt, ft])
                    y = getattr(lib.nn, op)(xt, ft, *args)
                    weights = np.cos(np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape)).astype(np.float32)
                    loss = lib.reduce_sum(y * weights)
                results.append([y.numpy(), *(g.numpy() for g in tape.gradient(loss, [xt, ft]))])
            for got, want in zip(results[1], results[0]):
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{op} {shape} {window} {args}")


def test_integer_images_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    x = np.random.default_rng(1).integers(0, 100, size=(1, 5, 4, 2)).astype(np.int32)
    f = np.random.default_rng(2).integers(0, 5, size=(2, 2, 2)).astype(np.int32)
    for op in ("dilation2d", "erosion2d"):
        args = ([1, 1, 2, 1], "SAME", "NHWC", [1, 2, 1, 1])
        np.testing.assert_array_equal(getattr(gtf.nn, op)(x, f, *args).numpy(), getattr(tf.nn, op)(x, f, *args).numpy())


def test_inside_tf_function_and_jit():
    x = RNG.normal(size=(1, 4, 4, 1)).astype(np.float32)
    f = RNG.normal(size=(2, 2, 1)).astype(np.float32)
    args = ([1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    compiled = gtf.function(lambda x: gtf.nn.dilation2d(x, f, *args))
    want = _numpy_dilation(x, f, (1, 1), (1, 1), "SAME")
    np.testing.assert_allclose(compiled(gtf.constant(x)).numpy(), want, rtol=1e-6)
    grad = jax.jit(jax.grad(lambda x: jnp.sum(_morphology._dilate(x, f, (1, 1), (1, 1), ((0, 1), (0, 1))))))(x)
    assert grad.shape == x.shape and float(grad.sum()) == 16.0  # one winner per output


def test_a_window_of_minus_infinity_gives_the_lowest_value():
    x = np.full((1, 3, 3, 1), -np.inf, np.float32)
    x[0, 2, 2, 0] = 1.0
    f = np.zeros((2, 2, 1), np.float32)
    lowest = np.finfo(np.float32).min
    y = gtf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]).numpy()
    # Windows start at (0, 0), (0, 1), ...: each holds the one at (2, 2) only if it reaches it.
    want = np.full((3, 3), lowest, np.float32)
    want[1:, 1:] = 1.0
    np.testing.assert_array_equal(y[0, :, :, 0], want)
    np.testing.assert_array_equal(gtf.nn.erosion2d(-x, f, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]).numpy(), -y)
