"""Keras 3's ``keras.ops`` added in a second round: the NaN reductions, bitwise ops, ``ldexp``, ``cross``,
``correlate``, ``unique``, the windows, ``segment_min``/``segment_prod`` and nn ops (``depth_to_space``,
``layer_normalization``, ``psnr``, ``sparsemax``, ...).

Each op is checked against NumPy (or a hand value), which needs no TensorFlow, and against real
Keras on TensorFlow (values, dtype names and shapes, float32 and int32 inputs where Keras takes
them); a few against JAX's or TensorFlow's gradients, and on the functional API's KerasTensors.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from keras_ops_results import assert_same, case_ids, plain

import gradkit.tf as gtf

_RNG = np.random.default_rng(11)
F = _RNG.normal(size=(3, 4)).astype(np.float32)
P = _RNG.uniform(0.5, 2.0, size=(3, 4)).astype(np.float32)
I = _RNG.integers(-6, 7, size=(3, 4)).astype(np.int32)  # noqa: E741
N = np.abs(I).astype(np.int32) + 1
B = I > 0
FN = F.copy()
FN[0, 1], FN[2, :] = np.nan, np.nan  # a NaN, and a row of NaNs
FN1 = FN[:2]  # no all-NaN column along axis 0? (column 1 has one NaN of two)
V3 = _RNG.normal(size=(2, 3)).astype(np.float32)
W3 = _RNG.normal(size=(2, 3)).astype(np.float32)
SIG = _RNG.normal(size=(6,)).astype(np.float32)
DISTINCT = np.array([7, 2, 9, 4, 1, 8], np.int32)
REPEATS = np.array([[3, 1], [3, 1], [2, 5], [3, 1]], np.int32)
IDS = np.array([0, 0, 1, 3], np.int32)
DATA = _RNG.normal(size=(4, 2)).astype(np.float32)
IMG = _RNG.normal(size=(2, 4, 4, 8)).astype(np.float32)
KDW = _RNG.normal(size=(3, 3, 8, 2)).astype(np.float32)  # depthwise: (h, w, channels, multiplier)
KPW = _RNG.normal(size=(1, 1, 16, 3)).astype(np.float32)
KT = _RNG.normal(size=(3, 3, 5, 8)).astype(np.float32)  # transposed: (h, w, out, in)
Q = _RNG.normal(size=(2, 3, 2, 4)).astype(np.float32)  # (batch, length, heads, head_dim)
Q4 = _RNG.normal(size=(2, 3, 4, 4)).astype(np.float32)
K = _RNG.normal(size=(2, 5, 2, 4)).astype(np.float32)
VV = _RNG.normal(size=(2, 5, 2, 4)).astype(np.float32)
BIAS = _RNG.normal(size=(2, 2, 3, 5)).astype(np.float32)
MASK = _RNG.uniform(size=(2, 1, 3, 5)) > 0.3

NAN_REDUCTIONS = "nansum nanmean nanmax nanmin nanprod nanstd nanvar nanargmax nanargmin"
NAN_SCANS = "nancumsum nancumprod"
BITWISE = "bitwise_and bitwise_or bitwise_xor"
SHIFTS = "bitwise_left_shift bitwise_right_shift left_shift right_shift"

# (name, args, kwargs): the same call on gtf.keras.ops and keras.ops.
CASES = (
    [(n, (x,), kw) for n in NAN_REDUCTIONS.split() for x in (FN, I, B) for kw in ({}, dict(axis=1))]
    + [(n, (FN,), dict(axis=0, keepdims=True)) for n in NAN_REDUCTIONS.split()]
    + [(n, (x,), kw) for n in NAN_SCANS.split() for x in (FN, I, B) for kw in ({}, dict(axis=1))]
    + [
        ("nanmedian", (FN,), {}),
        ("nanmedian", (FN,), dict(axis=1)),
        ("nanmedian", (I,), {}),
        ("nanmedian", (FN1,), dict(axis=0, keepdims=True)),
        ("nanquantile", (FN, 0.3), dict(axis=1)),
        ("nanquantile", (FN, [0.25, 0.5]), {}),
        ("nanpercentile", (FN1, [[10.0], [75.0]]), dict(axis=1, method="nearest")),
        ("nanquantile", (FN1, [0.25, 0.9]), dict(axis=1, method="nearest")),
        ("nanquantile", (FN, 0.4), dict(keepdims=True, method="midpoint")),
        ("nanpercentile", (FN, 40.0), dict(axis=1)),
        ("nanpercentile", (FN1, [10.0, 75.0]), dict(axis=1, method="lower")),
        ("nanmean", (FN,), dict(axis=())),
    ]
    + [(n, (I, N), {}) for n in BITWISE.split()]
    + [(n, (I.astype(np.int8), 3), {}) for n in BITWISE.split()]
    + [(n, (N, np.array([0, 1, 2, 3], np.int32)), {}) for n in SHIFTS.split()]
    + [(n, (N.astype(np.int8), 2), {}) for n in SHIFTS.split()]
    + [
        ("bitwise_invert", (I,), {}),
        ("bitwise_not", (N.astype(np.uint8),), {}),
        ("ldexp", (F, I), {}),
        ("ldexp", (I, N.astype(np.int8)), {}),
        ("ldexp", (np.array([0.0, np.inf, -1.5], np.float32), np.array([3, 2, 200], np.int32)), {}),
        ("angle", (F,), {}),
        ("angle", (I,), {}),
        ("cross", (V3, W3), {}),
        ("cross", (V3[:, :2], W3[:, :2]), {}),
        ("cross", (V3[:, :2], W3), {}),
        ("cross", (V3.T, W3.T), dict(axis=0)),
        ("cross", (I[:, :3], N[0, :3]), {}),
        ("corrcoef", (F,), {}),
        ("corrcoef", (I,), {}),
        ("correlate", (SIG, SIG[:3]), {}),
        ("correlate", (SIG, SIG[:4]), dict(mode="same")),
        ("correlate", (SIG, SIG[:3]), dict(mode="same")),
        ("correlate", (I[0], N[1, :3]), dict(mode="full")),
        ("logspace", (0.0, 2.0, 5), {}),
        ("logspace", (1, 3, 4), dict(endpoint=False, base=2)),
        ("logspace", (0, 2, 3), dict(dtype="int32")),
        ("geomspace", (1.0, 1000.0, 4), {}),
        ("geomspace", (-2.0, -64.0, 6), dict(endpoint=False)),
        ("argpartition", (DISTINCT, 2), {}),
        ("argpartition", (np.abs(I) + np.arange(12).reshape(3, 4).astype(np.int32) * 20, 1), {}),
        ("argpartition", (DISTINCT.astype(np.float32) + 0.5, 4), {}),
        ("unique", (I,), {}),
        ("unique", (I,), dict(return_index=True, return_inverse=True, return_counts=True)),
        ("unique", (I,), dict(sorted=False, return_index=True, return_inverse=True, return_counts=True)),
        ("unique", (I,), dict(sorted=False, size=20, fill_value=-9, return_index=True, return_counts=True)),
        ("unique", (I,), dict(size=3, return_counts=True)),
        ("unique", (REPEATS,), dict(axis=0, return_index=True, return_inverse=True, return_counts=True)),
        ("unique", (REPEATS,), dict(axis=0, sorted=False, return_inverse=True)),
        ("unique", (F,), {}),
        ("bartlett", (7,), {}),
        ("bartlett", (1,), {}),
        ("bartlett", (0,), {}),
        ("blackman", (6,), {}),
        ("blackman", (1,), {}),
        ("hamming", (5,), {}),
        ("hanning", (6,), {}),
        ("kaiser", (7, 4.0), {}),
    ]
    + [
        ("segment_min", (DATA, IDS), {}),
        ("segment_min", (DATA, IDS), dict(sorted=True)),
        ("segment_min", (I[:, 0], np.array([1, 0, 1], np.int32)), dict(num_segments=3)),
        ("segment_prod", (DATA, IDS), {}),
        ("segment_prod", (DATA, IDS), dict(num_segments=5)),
        ("segment_prod", (N[0], np.array([0, 0, 1, 1], np.int32)), dict(sorted=True)),
    ]
    + [
        ("depth_to_space", (IMG, 2), {}),
        ("depth_to_space", (IMG.transpose(0, 3, 1, 2), 2), dict(data_format="channels_first")),
        ("space_to_depth", (IMG, 2), {}),
        ("space_to_depth", (IMG.transpose(0, 3, 1, 2), 2), dict(data_format="channels_first")),
        ("depthwise_conv", (IMG, KDW), {}),
        ("depthwise_conv", (IMG, KDW), dict(strides=2, padding="same")),
        ("depthwise_conv", (IMG, KDW), dict(dilation_rate=2, padding="same")),
        ("depthwise_conv", (IMG[:, 0], KDW[0]), {}),
        ("depthwise_conv", (IMG.transpose(0, 3, 1, 2), KDW), dict(data_format="channels_first")),
        ("separable_conv", (IMG, KDW, KPW), {}),
        ("separable_conv", (IMG, KDW, KPW), dict(strides=(1, 2), padding="same")),
        ("separable_conv", (IMG[:, 0], KDW[0], KPW[0]), dict(padding="same")),
        ("conv_transpose", (IMG, KT), {}),
        ("conv_transpose", (IMG, KT), dict(strides=2, padding="same")),
        ("conv_transpose", (IMG, KT), dict(strides=2, output_padding=1)),
        ("conv_transpose", (IMG[:, 0], KT[0]), dict(strides=3)),
        ("conv_transpose", (IMG.transpose(0, 3, 1, 2), KT), dict(data_format="channels_first", padding="same")),
        ("layer_normalization", (F,), {}),
        ("layer_normalization", (F, P[0], F[0]), {}),
        ("layer_normalization", (IMG,), dict(axis=(1, 3), epsilon=1e-3)),
        ("layer_normalization", (IMG, np.ones((4,), np.float32) * 2), dict(axis=1)),
        ("layer_normalization", (F.astype(np.float16),), {}),
        ("rms_normalization", (F,), {}),
        ("rms_normalization", (F, P[0]), dict(epsilon=1e-3)),
        ("rms_normalization", (IMG,), dict(axis=(1, 2))),
        ("psnr", (P, P + 0.1 * F, 2.0), {}),
        ("psnr", (P, P * 1.1, 1), {}),
        ("sparsemax", (np.array([[3.0, 0.1, -1.0], [0.0, 2.0, -2.0]], np.float32),), dict(axis=-1)),
        ("polar", (P, F), {}),
        ("dot_product_attention", (Q, K, VV), {}),
        ("dot_product_attention", (Q, K, VV), dict(is_causal=True, scale=0.3)),
        ("dot_product_attention", (Q, K, VV), dict(bias=BIAS, mask=MASK)),
        ("dot_product_attention", (Q4, K, VV), {}),
    ]
)

ADDED = sorted({name for name, _, _ in CASES})


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_op_matches_keras(case):
    keras = pytest.importorskip("keras")
    name, args, kwargs = case
    want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    got = plain(getattr(gtf.keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    assert_same(got, want, name, tol=2e-4 if name == "kaiser" else 2e-5)


def test_ops_match_keras_inside_tf_function():
    keras = pytest.importorskip("keras")
    cases = [c for c in CASES if c[0] != "unique"]  # unique's length is data-dependent: eager only
    results = gtf.function(lambda: [getattr(gtf.keras.ops, n)(*a, **k) for n, a, k in cases])()
    for (name, args, kwargs), got in zip(cases, results):
        want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
        assert_same(plain(got, lambda d: np.dtype(d).name), want, name, tol=2e-4)


# -- independent oracles (no TensorFlow) ------------------------------------------------------


def _sparsemax(z):
    """The projection onto the simplex, row by row (Martins and Astudillo, 2016)."""
    ranked = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1)
    support = 1 + k * ranked > np.cumsum(ranked, axis=-1)
    size = support.sum(-1, keepdims=True)
    tau = (np.take_along_axis(np.cumsum(ranked, -1), size - 1, -1) - 1) / size
    return np.maximum(z - tau, 0)


def _layer_norm(x, axis, eps=1e-7):
    mean, var = x.mean(axis, keepdims=True), x.var(axis, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _conv2d_np(x, w, stride=1):
    """A VALID channels_last cross-correlation, with a (kh, kw, in, out) kernel."""
    kh, kw = w.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[-1]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            out[:, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def _depthwise_np(x, w):
    c, m = w.shape[-2:]
    return np.concatenate(
        [_conv2d_np(x[..., ch : ch + 1], w[:, :, ch : ch + 1, :]) for ch in range(c)], axis=-1
    ).reshape(*_conv2d_np(x[..., :1], w[:, :, :1, :]).shape[:3], c * m)


def _conv_transpose_np(x, w, stride):
    """VALID transposed convolution: each input pixel scatters its kernel-weighted copy."""
    kh, kw = w.shape[:2]
    out = np.zeros((x.shape[0], (x.shape[1] - 1) * stride + kh, (x.shape[2] - 1) * stride + kw, w.shape[2]))
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            out[:, i * stride : i * stride + kh, j * stride : j * stride + kw] += np.einsum(
                "bc,hwoc->bhwo", x[:, i, j], w
            )
    return out


def _attention_np(q, k, v, mask=None):
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if mask is not None:
        logits = np.where(mask, logits, -np.inf)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", probs, v)


def _segments(fn, data, ids, num):
    return np.stack([fn(data[ids == s], axis=0) if (ids == s).any() else fn(data[:0], axis=0) for s in range(num)])


ORACLES = [
    ("nansum", (FN,), dict(axis=1), np.nansum(FN, axis=1)),
    ("nansum", (I,), {}, np.nansum(I)),
    ("nanprod", (FN,), dict(axis=0), np.nanprod(FN, axis=0)),
    ("nanmean", (FN1,), {}, np.nanmean(FN1)),
    ("nanmean", (FN1,), dict(axis=0, keepdims=True), np.nanmean(FN1, axis=0, keepdims=True)),
    ("nanmax", (FN1,), dict(axis=1), np.nanmax(FN1, axis=1)),
    ("nanmin", (FN1,), dict(axis=0), np.nanmin(FN1, axis=0)),
    ("nanstd", (FN1,), dict(axis=1), np.nanstd(FN1, axis=1)),
    ("nanvar", (FN1,), {}, np.nanvar(FN1)),
    ("nanargmax", (FN1,), dict(axis=1), np.nanargmax(FN1, axis=1)),
    ("nanargmin", (FN1,), {}, np.nanargmin(FN1)),
    ("nancumsum", (FN,), dict(axis=1), np.nancumsum(FN, axis=1)),
    ("nancumprod", (FN1,), {}, np.nancumprod(FN1)),
    ("nanmedian", (FN1,), dict(axis=1), np.nanmedian(FN1, axis=1)),
    ("nanquantile", (FN1, [0.2, 0.7]), dict(axis=1), np.nanquantile(FN1, [0.2, 0.7], axis=1)),
    ("nanpercentile", (FN1, 35.0), dict(keepdims=True), np.nanpercentile(FN1, 35.0, keepdims=True)),
    ("bitwise_and", (I, N), {}, np.bitwise_and(I, N)),
    ("bitwise_or", (I, N), {}, np.bitwise_or(I, N)),
    ("bitwise_xor", (I, N), {}, np.bitwise_xor(I, N)),
    ("bitwise_invert", (I,), {}, np.invert(I)),
    ("bitwise_not", (I,), {}, np.bitwise_not(I)),
    ("bitwise_left_shift", (N, 3), {}, np.left_shift(N, 3)),
    ("left_shift", (N, N % 4), {}, np.left_shift(N, N % 4)),
    ("bitwise_right_shift", (N * 16, 2), {}, np.right_shift(N * 16, 2)),
    ("right_shift", (N * 16, N % 4), {}, np.right_shift(N * 16, N % 4)),
    ("ldexp", (F, I), {}, np.ldexp(F, I)),
    ("angle", (F.astype(np.complex64) * (1 + 1j),), {}, np.angle(F * (1 + 1j))),
    ("angle", (F[F != 0],), {}, np.angle(F[F != 0])),
    ("cross", (V3, W3), {}, np.cross(V3, W3)),
    ("cross", (V3[:, :2], W3), {}, np.cross(np.pad(V3[:, :2], ((0, 0), (0, 1))), W3)),  # a 2-vector: z = 0
    ("cross", (V3.T, W3.T), dict(axisa=0, axisb=0, axisc=0), np.cross(V3.T, W3.T, axisa=0, axisb=0, axisc=0)),
    ("corrcoef", (F,), {}, np.corrcoef(F)),
    ("correlate", (SIG, SIG[:3]), {}, np.correlate(SIG, SIG[:3])),
    ("correlate", (SIG, SIG[:4]), dict(mode="same"), np.correlate(SIG, SIG[:4], mode="same")),
    ("correlate", (SIG, SIG[:3]), dict(mode="full"), np.correlate(SIG, SIG[:3], mode="full")),
    ("logspace", (0.0, 2.0, 5), {}, np.logspace(0.0, 2.0, 5)),
    ("logspace", (1, 3, 4), dict(endpoint=False, base=2), np.logspace(1, 3, 4, endpoint=False, base=2)),
    ("geomspace", (1.0, 1000.0, 4), {}, np.geomspace(1.0, 1000.0, 4)),
    ("geomspace", (-2.0, -64.0, 6), dict(endpoint=False), np.geomspace(-2.0, -64.0, 6, endpoint=False)),
    ("unique", (I,), {}, np.unique(I)),
    ("unique", (REPEATS,), dict(axis=0, return_counts=True), np.unique(REPEATS, axis=0, return_counts=True)),
    (
        "unique",
        (I,),
        dict(return_index=True, return_inverse=True),
        np.unique(I, return_index=True, return_inverse=True),
    ),
    (
        "nanquantile",
        (FN1, [[0.25, 0.5], [0.75, 0.1]]),
        dict(axis=1),
        np.nanquantile(FN1, [[0.25, 0.5], [0.75, 0.1]], axis=1),
    ),
    ("bartlett", (7,), {}, np.bartlett(7)),
    ("bartlett", (1,), {}, np.bartlett(1)),
    ("blackman", (6,), {}, np.blackman(6)),
    ("hamming", (5,), {}, np.hamming(5)),
    ("hanning", (6,), {}, np.hanning(6)),
    ("kaiser", (7, 4.0), {}, np.kaiser(7, 4.0)),
    ("segment_min", (DATA, IDS), {}, _segments(np.min, DATA, IDS, 4) if False else None),
    ("segment_prod", (DATA, IDS), {}, _segments(np.prod, DATA, IDS, 4)),
    ("depth_to_space", (IMG, 2), {}, IMG.reshape(2, 4, 4, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(2, 8, 8, 2)),
    ("space_to_depth", (IMG, 2), {}, IMG.reshape(2, 2, 2, 2, 2, 8).transpose(0, 1, 3, 2, 4, 5).reshape(2, 2, 2, 32)),
    ("depthwise_conv", (IMG, KDW), {}, _depthwise_np(IMG, KDW)),
    ("separable_conv", (IMG, KDW, KPW), {}, _conv2d_np(_depthwise_np(IMG, KDW), KPW)),
    ("conv_transpose", (IMG, KT), dict(strides=2), _conv_transpose_np(IMG, KT, 2)),
    ("layer_normalization", (F,), {}, _layer_norm(F, -1)),
    ("layer_normalization", (F, P[0], F[0]), {}, _layer_norm(F, -1) * P[0] + F[0]),
    ("rms_normalization", (F, P[0]), {}, F / np.sqrt((F * F).mean(-1, keepdims=True) + 1e-7) * P[0]),
    ("psnr", (P, P + 0.1 * F, 2.0), {}, 20 * np.log10(2.0) - 10 * np.log10(np.mean((0.1 * F) ** 2))),
    ("sparsemax", (F * 4,), {}, _sparsemax(F * 4)),
    ("sparsemax", (np.full((1, 3), 0.5, np.float32),), {}, np.full((1, 3), 1 / 3)),
    ("polar", (P, F), {}, P * np.exp(1j * F)),
    ("dot_product_attention", (Q, K, VV), {}, _attention_np(Q, K, VV)),
    ("dot_product_attention", (Q, K, VV), dict(mask=MASK), _attention_np(Q, K, VV, MASK)),
]


@pytest.mark.parametrize("name,args,kwargs,want", ORACLES, ids=case_ids(ORACLES))
def test_op_matches_numpy(name, args, kwargs, want):
    got = getattr(gtf.keras.ops, name)(*args, **kwargs)
    if want is None:  # segment_min: its empty segment holds the dtype's largest value, as TensorFlow's
        want = np.stack([DATA[:2].min(0), DATA[2], np.full(2, np.finfo(np.float32).max), DATA[3]])
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.reshape(b, np.shape(a)), rtol=1e-4, atol=1e-5)
        return
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
    assert np.asarray(got).shape == np.shape(want)


def test_hand_values():
    ops = gtf.keras.ops
    nan = float("nan")
    assert ops.nanargmax(np.array([nan, nan], np.float32)).numpy().item() == -1
    assert np.isnan(ops.nanmax(np.array([nan], np.float32)).numpy())
    assert ops.nansum(np.array([nan], np.float32)).numpy().item() == 0.0
    assert ops.nancumsum(np.array([np.inf], np.float32)).numpy().item() == np.finfo(np.float32).max  # nan_to_num
    assert ops.bitwise_and(np.int8(5), 3).dtype.name == "int32"  # Keras converts 3 to int32 first
    assert ops.left_shift(np.array([1], np.int8), 2).dtype.name == "int8"
    assert ops.ldexp(np.float32(0.0), 200).numpy().item() == 0.0
    assert ops.argpartition(np.array([0, 0, 5], np.int32), 0).numpy().tolist() == [0, 2, 1]
    values, index, counts = ops.unique(np.array([3, 1, 3], np.int32), size=4, return_index=True, return_counts=True)
    assert (values.numpy().tolist(), index.numpy().tolist(), counts.numpy().tolist()) == (
        [1, 3, 0, 0],
        [1, 0, 1, 1],
        [1, 2, 0, 0],
    )
    assert ops.psnr(np.ones(3, np.float32), np.zeros(3, np.float32), 1.0).numpy().item() == pytest.approx(0.0)


# -- gradients --------------------------------------------------------------------------------


def _jnp_grad(fn, x):
    return np.asarray(jax.grad(lambda v: jnp.sum(fn(v)))(jnp.asarray(x)))


def _nan_mean(x):
    valid = ~jnp.isnan(jnp.asarray(FN1))
    return jnp.sum(jnp.where(valid, x, 0.0), axis=1) / jnp.sum(valid, axis=1)


@pytest.mark.parametrize(
    "name,call,formula,x0",
    [
        ("nanmean", lambda o, x: o.nanmean(o.where(np.isnan(FN1), np.nan, x), axis=1), _nan_mean, P[:2]),
        ("nanstd", lambda o, x: o.nanstd(x, axis=0), lambda x: jnp.std(x, axis=0), P),
        ("ldexp", lambda o, x: o.ldexp(x, I), lambda x: x * 2.0 ** jnp.asarray(I, jnp.float32), P),
        ("cross", lambda o, x: o.cross(x, W3), lambda x: jnp.cross(x, jnp.asarray(W3)), V3),
        (
            "correlate",
            lambda o, x: o.correlate(x, SIG[:3], mode="same"),
            lambda x: jnp.correlate(x, SIG[:3], "same"),
            SIG,
        ),
        ("corrcoef", lambda o, x: o.corrcoef(x), jnp.corrcoef, F),
        ("layer_normalization", lambda o, x: o.layer_normalization(x) * P, lambda x: _jnp_layer_norm(x) * P, F),
        ("rms_normalization", lambda o, x: o.rms_normalization(x) * P, lambda x: _jnp_rms(x) * P, F),
        ("sparsemax", lambda o, x: o.sparsemax(x) * P, lambda x: _jnp_sparsemax(x) * P, F * 4),
        (
            "psnr",
            lambda o, x: o.psnr(x, P, 2.0),
            lambda x: 20 * jnp.log10(2.0) - 10 * jnp.log10(jnp.mean((x - P) ** 2)),
            F,
        ),
    ],
)
def test_gradient_matches_jax(name, call, formula, x0):
    w = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        loss = gtf.keras.ops.sum(call(gtf.keras.ops, w))
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), _jnp_grad(formula, x0), rtol=2e-4, atol=2e-5)


def _jnp_layer_norm(x):
    return (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-7)


def _jnp_rms(x):
    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-7)


def _jnp_sparsemax(z):
    ranked = -jnp.sort(-z, axis=-1)
    k = jnp.arange(1, z.shape[-1] + 1, dtype=z.dtype)[None]
    cumulative = jnp.cumsum(ranked, axis=-1)
    support = 1 + k * ranked > cumulative
    size = jnp.sum(support, -1, keepdims=True)
    tau = (jnp.sum(jnp.where(support, ranked, 0.0), -1, keepdims=True) - 1) / size
    return jnp.maximum(z - tau, 0)


@pytest.mark.parametrize("name", ["depthwise_conv", "separable_conv", "conv_transpose", "dot_product_attention"])
def test_nn_gradient_matches_tensorflow(name):
    tf_real = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    calls = {
        "depthwise_conv": (lambda o, x: o.depthwise_conv(x, KDW, padding="same"), IMG),
        "separable_conv": (lambda o, x: o.separable_conv(x, KDW, KPW, strides=2), IMG),
        "conv_transpose": (lambda o, x: o.conv_transpose(x, KT, strides=2, padding="same"), IMG),
        "dot_product_attention": (lambda o, x: o.dot_product_attention(x, K, VV, mask=MASK), Q),
    }
    call, x0 = calls[name]
    xt = tf_real.Variable(x0)
    with tf_real.GradientTape() as tape:
        want_loss = keras.ops.sum(keras.ops.square(call(keras.ops, xt)))
    want = tape.gradient(want_loss, xt).numpy()
    xg = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        got_loss = gtf.keras.ops.sum(gtf.keras.ops.square(call(gtf.keras.ops, xg)))
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-4)
    np.testing.assert_allclose(tape.gradient(got_loss, xg).numpy(), want, rtol=2e-3, atol=2e-4)


# -- KerasTensors, namespaces, errors ---------------------------------------------------------


def test_new_ops_build_a_functional_model_with_keras_shapes():
    keras = pytest.importorskip("keras")
    outputs = {}
    for lib, name in ((gtf.keras, "ours"), (keras, "keras")):
        inputs = lib.Input((4, 4, 8))
        outputs[name] = [
            lib.ops.nanmean(inputs, axis=-1),
            lib.ops.nanargmax(inputs, axis=1),
            lib.ops.depth_to_space(inputs, 2),
            lib.ops.space_to_depth(inputs, 2),
            lib.ops.layer_normalization(inputs, axis=(1, 2)),
            lib.ops.rms_normalization(inputs),
            lib.ops.depthwise_conv(inputs, KDW, padding="same"),
            lib.ops.conv_transpose(inputs, KT, strides=2),
            lib.ops.cross(inputs[..., :3], inputs[..., 3:6]),
            lib.ops.nancumsum(inputs, axis=2),
        ]
    assert [tuple(t.shape) for t in outputs["ours"]] == [tuple(t.shape) for t in outputs["keras"]]
    inputs = gtf.keras.Input((4, 4, 8))
    model = gtf.keras.Model(
        inputs,
        [
            gtf.keras.ops.nanmean(inputs, axis=-1),
            gtf.keras.ops.depth_to_space(inputs, 2),
            gtf.keras.ops.layer_normalization(inputs),
        ],
    )
    x = IMG.copy()
    x[0, 0, 0, :3] = np.nan
    mean, moved, normed = model(x)
    np.testing.assert_allclose(mean.numpy(), np.nanmean(x, -1), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(moved.numpy(), gtf.nn.depth_to_space(x, 2).numpy())
    np.testing.assert_allclose(normed.numpy()[1], _layer_norm(x[1], -1), rtol=1e-4, atol=1e-5)


NUMPY_NAMES = [n for n in ADDED if not n.startswith("segment_")]
NN_NAMES = (
    "depth_to_space space_to_depth depthwise_conv separable_conv conv_transpose layer_normalization "
    "rms_normalization psnr sparsemax polar dot_product_attention"
).split()


def test_new_names_are_in_keras_namespaces():
    keras = pytest.importorskip("keras")
    for name in ADDED:
        assert callable(getattr(gtf.keras.ops, name)), name
        assert hasattr(keras.ops, name), name
    for name in set(NUMPY_NAMES) - set(NN_NAMES):
        assert getattr(gtf.keras.ops.numpy, name) is getattr(gtf.keras.ops, name), name
    for name in NN_NAMES:
        assert getattr(gtf.keras.ops.nn, name) is getattr(gtf.keras.ops, name), name


@pytest.mark.parametrize(
    "call,kind,text",
    [
        (lambda ops: ops.ldexp(F, F), TypeError, "integer exponent"),
        (lambda ops: ops.bitwise_and(F, I), TypeError, "integers"),
        (lambda ops: ops.nanquantile(F, 0.5, method="bad"), ValueError, "method"),
        (lambda ops: ops.correlate(SIG, SIG, mode="bad"), ValueError, "mode"),
        (lambda ops: ops.cross(F, F), ValueError, "2 or 3"),
        (lambda ops: ops.corrcoef(IMG), ValueError, "2-D"),
        (lambda ops: ops.depth_to_space(IMG, 1), ValueError, "block_size"),
        (lambda ops: ops.psnr(F, P[0], 1.0), ValueError, "one shape"),
        (lambda ops: ops.dot_product_attention(F, F, F), ValueError, "4-D"),
        (lambda ops: ops.dot_product_attention(Q, K, VV, flash_attention=True), ValueError, "flash"),
        (lambda ops: ops.layer_normalization(F, rms_scaling=True), TypeError, "rms_normalization"),
        (lambda ops: ops.depthwise_conv(IMG, KT), ValueError, "kernel"),
        (lambda ops: ops.segment_min(DATA, IDS, num_segments=4, sorted=True), ValueError, "sorted"),
        (lambda ops: gtf.function(lambda: ops.unique(gtf.constant(I) * 1))(), TypeError, "traced"),
    ],
)
def test_bad_input_raises_a_gradkit_error(call, kind, text):
    with pytest.raises(kind, match=r"\[gradkit\].*" + text):
        call(gtf.keras.ops)


# -- "nearest" quantiles at half-way positions, empty NaN reductions, polar's broadcasting --------

SIX = np.arange(1.0, 7.0, dtype=np.float32)  # positions q * 5: 0.3 -> 1.5 (rounds to 2), 0.5 -> 2.5 (to 2)
FOUR = np.arange(1.0, 5.0, dtype=np.float32)  # positions q * 3: 0.5 -> 1.5 (rounds to 2), 0.25 -> 0.75 (to 1)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("x, q", [(SIX, [0.3, 0.5, 0.9]), (FOUR, [0.25, 0.5, 0.75])], ids=["six", "four"])
def test_nearest_quantile_rounds_half_way_positions_to_even_as_numpy_and_keras(name, x, q):
    keras = pytest.importorskip("keras")
    ours = np.asarray(getattr(gtf.keras.ops, name)(x, q, method="nearest"))
    np.testing.assert_array_equal(ours, getattr(np, name)(x, q, method="nearest"))
    np.testing.assert_array_equal(ours, np.asarray(getattr(keras.ops, name)(x, q, method="nearest")))
    per_row = np.asarray(gtf.keras.ops.nanquantile(np.stack([SIX, SIX[::-1]]), 0.3, axis=1, method="nearest"))
    np.testing.assert_array_equal(per_row, [3.0, 3.0])


def test_nearest_quantile_gradient_reaches_the_chosen_entry():
    x = gtf.Variable(SIX)
    with gtf.GradientTape() as tape:
        y = gtf.keras.ops.quantile(x, 0.3, method="nearest")
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), [0, 0, 1, 0, 0, 0])


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda ops, x: ops.nanmedian(x), np.nan),
        (lambda ops, x: ops.nanmedian(x, axis=0), [np.nan] * 3),
        (lambda ops, x: ops.nanquantile(x, [0.3, 0.6], axis=0, keepdims=True), np.full((2, 1, 3), np.nan)),
        (lambda ops, x: ops.nanpercentile(x, 30.0, axis=-2), [np.nan] * 3),
    ],
)
def test_nan_reductions_of_no_entries_are_nan_as_numpy(call, expected):
    out = np.asarray(call(gtf.keras.ops, np.zeros((0, 3), np.float32)))
    np.testing.assert_array_equal(out, np.asarray(expected, np.float32))


@pytest.mark.parametrize("abs_shape, angle_shape", [((2,), ()), ((), (2,)), ((2,), (2, 1))])
def test_polar_broadcasts_abs_and_angle_as_keras(abs_shape, angle_shape):
    keras = pytest.importorskip("keras")
    a = np.full(abs_shape, 2.0, np.float32)
    t = np.linspace(0.0, 1.0, int(np.prod(angle_shape))).astype(np.float32).reshape(angle_shape)
    with jax.numpy_rank_promotion("allow"):  # TensorFlow's broadcasting, which the suite's strict mode forbids
        ours = np.asarray(gtf.keras.ops.polar(a, t))
    np.testing.assert_allclose(ours, a * np.exp(1j * t), rtol=1e-6)
    np.testing.assert_allclose(ours, np.asarray(keras.ops.polar(a, t)), rtol=1e-6)
