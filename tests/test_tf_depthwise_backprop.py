"""``tf.nn.depthwise_conv2d_backprop_input`` / ``_filter``: the pullbacks of TensorFlow's native
depthwise convolution. Oracles: ``jax.vjp`` of the same grouped ``jax.lax.conv_general_dilated``
written here, and TensorFlow itself (undilated: its oneDNN kernels abort on some dilated
backprops)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import GradkitError

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
F = RNG.normal(size=(3, 2, 3, 2)).astype(np.float32)


def _jax_conv(x, f, strides, padding, rates):
    w = f.reshape((*f.shape[:2], 1, f.shape[2] * f.shape[3]))
    if not isinstance(padding, str):
        x = jnp.pad(x, [(0, 0), *padding, (0, 0)])
        padding = "VALID"
    return jax.lax.conv_general_dilated(
        x,
        w,
        strides,
        padding,
        rhs_dilation=rates,
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=x.shape[3],
        precision=jax.lax.Precision.HIGHEST,
    )


CASES = [
    ((1, 1), "VALID", (1, 1)),
    ((2, 1), "SAME", (1, 1)),
    ((2, 2), "SAME", (1, 1)),
    ((1, 2), [[0, 0], [1, 2], [0, 1], [0, 0]], (1, 1)),
    ((1, 1), "VALID", (2, 1)),
    ((1, 1), "SAME", (2, 2)),
]


def _tf_padding(padding):
    return padding if isinstance(padding, str) else [list(p) for p in padding]


@pytest.mark.parametrize("strides, padding, rates", CASES)
def test_backprops_are_the_pullbacks_of_the_convolution(strides, padding, rates):
    pads = padding if isinstance(padding, str) else [tuple(p) for p in padding[1:3]]
    y, pull = jax.vjp(lambda x, f: _jax_conv(x, f, strides, pads, rates), X, F)
    g = RNG.normal(size=y.shape).astype(np.float32)
    want_x, want_f = pull(g)
    args = ([1, *strides, 1], _tf_padding(padding), "NHWC", [1, *rates, 1])
    got_x = gtf.nn.depthwise_conv2d_backprop_input(list(X.shape), F, g, *args)
    got_f = gtf.nn.depthwise_conv2d_backprop_filter(X, list(F.shape), g, *args)
    np.testing.assert_allclose(got_x.numpy(), want_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_f.numpy(), want_f, rtol=1e-4, atol=1e-4)


# TensorFlow takes equal row and column strides only here (gradkit takes any).
@pytest.mark.parametrize("strides, padding, rates", [c for c in CASES if c[2] == (1, 1) and c[0][0] == c[0][1]])
def test_backprops_match_tensorflow(strides, padding, rates):
    tf = pytest.importorskip("tensorflow")
    g = RNG.normal(
        size=_jax_conv(
            X, F, strides, padding if isinstance(padding, str) else [tuple(p) for p in padding[1:3]], rates
        ).shape
    ).astype(np.float32)
    args = ([1, *strides, 1], _tf_padding(padding), "NHWC", [1, *rates, 1])
    for lib_fn, a, b in [
        ("depthwise_conv2d_backprop_input", list(X.shape), F),
        ("depthwise_conv2d_backprop_filter", X, list(F.shape)),
    ]:
        want = getattr(tf.nn, lib_fn)(a, b, g, *args).numpy()
        got = getattr(gtf.nn, lib_fn)(a, b, g, *args).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_channels_first_and_a_second_derivative():
    g = RNG.normal(size=(2, 5, 5, 6)).astype(np.float32)
    last = gtf.nn.depthwise_conv2d_backprop_input([2, 7, 6, 3], F, g, [1, 1, 1, 1], "VALID").numpy()
    first = gtf.nn.depthwise_conv2d_backprop_input(
        [2, 3, 7, 6], F, np.transpose(g, (0, 3, 1, 2)), [1, 1, 1, 1], "VALID", data_format="NCHW"
    ).numpy()
    np.testing.assert_allclose(np.transpose(first, (0, 2, 3, 1)), last, rtol=1e-5, atol=1e-5)
    f = gtf.Variable(F)
    with gtf.GradientTape() as tape:
        back = gtf.nn.depthwise_conv2d_backprop_input([2, 7, 6, 3], f, g, [1, 1, 1, 1], "VALID")
        loss = gtf.reduce_sum(back * X)
    # <pullback(g), X> = <g, conv(X, f)>: its gradient in f is the filter backprop of X and g.
    want = gtf.nn.depthwise_conv2d_backprop_filter(X, list(F.shape), g, [1, 1, 1, 1], "VALID")
    np.testing.assert_allclose(tape.gradient(loss, f).numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_wrong_shapes_are_refused():
    with pytest.raises(GradkitError, match="out_backprop has shape"):
        gtf.nn.depthwise_conv2d_backprop_input(
            [2, 7, 6, 3], F, np.zeros((2, 3, 3, 6), np.float32), [1, 1, 1, 1], "VALID"
        )
    with pytest.raises(GradkitError, match="in_channels=3"):
        gtf.nn.depthwise_conv2d_backprop_input(
            [2, 7, 6, 3], F[:, :, :2], np.zeros((2, 5, 5, 4), np.float32), [1, 1, 1, 1], "VALID"
        )
    with pytest.raises(GradkitError, match="input_sizes"):
        gtf.nn.depthwise_conv2d_backprop_input([2, 7, 6], F, np.zeros((2, 5, 5, 6), np.float32), [1, 1, 1, 1], "VALID")
