"""``tf.nn.with_space_to_batch``: an op run on the input moved into the batch by the dilation
rate's blocks is the op's dilated version. Oracles: ``jax.lax.conv_general_dilated`` with
``rhs_dilation`` (the dilated convolution by definition) and TensorFlow itself."""

import jax
import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import GradkitError

RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 9, 8, 3)).astype(np.float32)
F = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)


def _conv(lib):
    return lambda x, n, padding: lib.nn.conv2d(x, F, 1, padding)


@pytest.mark.parametrize("rates", [(2, 2), (3, 2), (1, 1)])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_a_convolution_becomes_the_dilated_convolution(rates, padding):
    got = gtf.nn.with_space_to_batch(X, list(rates), padding, _conv(gtf), filter_shape=F.shape)
    want = jax.lax.conv_general_dilated(
        X,
        F,
        (1, 1),
        padding,
        rhs_dilation=rates,
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        precision=jax.lax.Precision.HIGHEST,
    )
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_gradients_flow_through_and_errors_are_clear():
    x = gtf.Variable(X)
    with gtf.GradientTape() as tape:
        y = gtf.nn.with_space_to_batch(x, [2, 2], "VALID", _conv(gtf))
        loss = gtf.reduce_sum(y * y)
    pull = jax.vjp(
        lambda v: jax.lax.conv_general_dilated(
            v,
            F,
            (1, 1),
            "VALID",
            rhs_dilation=(2, 2),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            precision=jax.lax.Precision.HIGHEST,
        ),
        X,
    )
    want = pull[1](2 * pull[0])[0]
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), want, rtol=1e-4, atol=1e-4)
    with pytest.raises(GradkitError, match="filter_shape must be specified"):
        gtf.nn.with_space_to_batch(X, [2, 2], "SAME", _conv(gtf))
    with pytest.raises(GradkitError, match="monotonically increasing"):
        gtf.nn.with_space_to_batch(X, [2, 2], "VALID", _conv(gtf), spatial_dims=[2, 1])


@pytest.mark.parametrize(
    "case",
    [
        dict(rates=[2, 2], padding="SAME", pool="MAX"),
        dict(rates=[2, 3], padding="VALID", pool="AVG"),
        dict(rates=[2, 2], padding="SAME", pool="MAX", data_format="NCHW"),
        dict(rates=[3], padding="VALID", pool="MAX", spatial_dims=[2]),
    ],
)
def test_matches_tensorflow(case):
    tf = pytest.importorskip("tensorflow")
    case = dict(case)
    pool = case.pop("pool")
    data_format = case.get("data_format")
    x = np.transpose(X, (0, 3, 1, 2)) if data_format == "NCHW" else X
    results = []
    for lib in (tf, gtf):

        def op(v, n, padding, lib=lib):
            if data_format == "NCHW":  # TensorFlow's CPU pools take NHWC: pool the channels-last view
                v = lib.transpose(v, [0, 2, 3, 1])
            out = lib.nn.pool(v, [2] * n if n == 2 else [1, 2], pool, padding=padding)
            return lib.transpose(out, [0, 3, 1, 2]) if data_format == "NCHW" else out

        results.append(
            np.asarray(
                lib.nn.with_space_to_batch(
                    x,
                    case["rates"],
                    case["padding"],
                    op,
                    filter_shape=[2, 2],
                    spatial_dims=case.get("spatial_dims"),
                    data_format=data_format,
                )
            )
        )
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)
