"""Keras 3's Fourier and signal ops on gradkit.tf: ``fft``, ``fft2``, ``ifft2``, ``rfft``, ``irfft``,
``stft``, ``istft``, ``extract_sequences``, with ``cdist``, ``view_as_complex``, ``view_as_real`` and
``numpy.histogram``.

Each op is checked against NumPy where that needs no TensorFlow, and against real Keras on
TensorFlow (values, dtype names and shapes); the differentiable ones against TensorFlow's
gradients (``gtf.GradientTape`` vs ``tf.GradientTape``); and on the functional API's KerasTensors.
"""

import jax
import numpy as np
import pytest
from keras_ops_results import assert_same, case_ids, plain

import gradkit.tf as gtf

_RNG = np.random.default_rng(11)
RE = _RNG.normal(size=(2, 6)).astype(np.float32)
IM = _RNG.normal(size=(2, 6)).astype(np.float32)
SIGNAL = _RNG.normal(size=(2, 24)).astype(np.float32)
ROWS_A = _RNG.normal(size=(3, 4)).astype(np.float32)
ROWS_B = _RNG.normal(size=(5, 4)).astype(np.float32)
PAIRS = _RNG.normal(size=(3, 2)).astype(np.float32)
SAMPLES = _RNG.normal(size=(40,)).astype(np.float32)
WINDOW = np.linspace(0.2, 1.0, 5).astype(np.float32)


def _stft_of(*args, **kwargs):
    """A ``(real, imag)`` STFT of SIGNAL as NumPy arrays (computed with gradkit, checked against Keras below)."""
    return tuple(np.asarray(p) for p in gtf.keras.ops.stft(SIGNAL, *args, **kwargs))


# (name, args, kwargs): the same call on gtf.keras.ops and keras.ops.
CASES = [
    ("fft", ((RE, IM),), {}),
    ("fft", ((RE[0], IM[0]),), {}),
    ("fft2", ((RE, IM),), {}),
    ("ifft2", ((RE, IM),), {}),
    ("rfft", (RE,), {}),
    ("rfft", (RE,), dict(fft_length=4)),
    ("rfft", (RE,), dict(fft_length=9)),
    ("irfft", ((RE, IM),), {}),
    ("irfft", ((RE, IM),), dict(fft_length=7)),
    ("irfft", ((RE, IM),), dict(fft_length=16)),
    ("stft", (SIGNAL, 8, 4, 16), {}),
    ("stft", (SIGNAL, 8, 3, 8), dict(window="hamming", center=False)),
    ("stft", (SIGNAL, 6, 2, 9), dict(window=None)),
    ("stft", (SIGNAL, 5, 2, 8), dict(window=WINDOW)),
    ("istft", (_stft_of(8, 4, 16), 8, 4, 16), {}),
    ("istft", (_stft_of(8, 4, 16), 8, 4, 16), dict(length=20)),
    ("istft", (_stft_of(8, 3, 8, window="hamming", center=False), 8, 3, 8), dict(window="hamming", center=False)),
    ("istft", (_stft_of(6, 2, 9, window=None), 6, 2, 9), dict(window=None)),
    ("istft", (_stft_of(5, 2, 8, window=WINDOW), 5, 2, 8), dict(window=WINDOW)),
    ("extract_sequences", (SIGNAL, 5, 3), {}),
    ("extract_sequences", (SIGNAL[0].astype(np.int32), 4, 4), {}),
    ("cdist", (ROWS_A, ROWS_B), {}),
    ("cdist", (ROWS_A[None], ROWS_B[None]), {}),
    ("view_as_complex", (PAIRS,), {}),
    ("view_as_real", ((RE + 1j * IM).astype(np.complex64),), {}),
    ("view_as_real", (RE,), {}),
    ("histogram", (SAMPLES,), {}),
    ("histogram", (SAMPLES,), dict(bins=4, range=(-1.0, 1.0))),
]
ADDED = sorted({name for name, _, _ in CASES})


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_op_matches_keras(case):
    keras = pytest.importorskip("keras")
    name, args, kwargs = case
    want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    got = plain(getattr(gtf.keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    assert_same(got, want, name, tol=1e-4)


def test_ops_match_keras_inside_tf_function():
    keras = pytest.importorskip("keras")
    results = gtf.function(lambda: [getattr(gtf.keras.ops, n)(*a, **k) for n, a, k in CASES])()
    for (name, args, kwargs), got in zip(CASES, results):
        want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
        assert_same(plain(got, lambda d: np.dtype(d).name), want, name, tol=1e-4)


# -- independent oracles (no TensorFlow) ------------------------------------------------------


def test_transforms_match_numpy():
    ops = gtf.keras.ops
    z = RE + 1j * IM
    for name, want in (("fft", np.fft.fft(z)), ("fft2", np.fft.fft2(z)), ("ifft2", np.fft.ifft2(z))):
        real, imag = getattr(ops, name)((RE, IM))
        np.testing.assert_allclose(np.asarray(real) + 1j * np.asarray(imag), want, rtol=1e-4, atol=1e-5)
    real, imag = ops.rfft(RE, fft_length=9)
    np.testing.assert_allclose(np.asarray(real) + 1j * np.asarray(imag), np.fft.rfft(RE, 9), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ops.irfft((RE, IM), 7)), np.fft.irfft(z, 7), rtol=1e-4, atol=1e-5)
    counts, edges = ops.histogram(SAMPLES, bins=4, range=(-1.0, 1.0))
    want_counts, want_edges = np.histogram(SAMPLES, bins=4, range=(-1.0, 1.0))
    np.testing.assert_array_equal(np.asarray(counts), want_counts)
    np.testing.assert_allclose(np.asarray(edges), want_edges, rtol=1e-6)


def test_istft_inverts_stft():
    ops = gtf.keras.ops
    restored = ops.istft(ops.stft(SIGNAL, 8, 4, 16), 8, 4, 16, length=SIGNAL.shape[-1])
    np.testing.assert_allclose(np.asarray(restored), SIGNAL, rtol=1e-4, atol=1e-5)


# -- gradients --------------------------------------------------------------------------------


def _sum_of_squares(ops, parts):
    parts = parts if isinstance(parts, tuple) else (parts,)
    total = ops.sum(ops.square(parts[0]) * np.float32(0.5))
    for part in parts[1:]:
        total = total + ops.sum(part * np.float32(0.25))
    return total


# (name, inputs, call): the loss is a non-symmetric sum over the op's results.
GRADIENT_CASES = [
    ("fft", (RE, IM), lambda ops, a, b: ops.fft((a, b))),
    ("fft2", (RE, IM), lambda ops, a, b: ops.fft2((a, b))),
    ("ifft2", (RE, IM), lambda ops, a, b: ops.ifft2((a, b))),
    ("rfft", (RE,), lambda ops, a: ops.rfft(a, fft_length=9)),
    ("irfft", (RE, IM), lambda ops, a, b: ops.irfft((a, b), fft_length=14)),  # TF has no cropping gradient
    ("stft", (SIGNAL,), lambda ops, a: ops.stft(a, 8, 3, 16)),
    ("istft", _stft_of(8, 4, 16), lambda ops, a, b: ops.istft((a, b), 8, 4, 16)),
    ("extract_sequences", (SIGNAL,), lambda ops, a: ops.extract_sequences(a, 5, 3)),
    ("cdist", (ROWS_A, ROWS_B), lambda ops, a, b: ops.cdist(a, b)),
    ("view_as_complex", (PAIRS,), lambda ops, a: ops.real(ops.view_as_complex(a) * np.complex64(2 - 1j))),
]


@pytest.mark.parametrize("name,inputs,call", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradient_matches_tensorflow(name, inputs, call):
    tf_real = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    watched = [tf_real.constant(x) for x in inputs]
    with tf_real.GradientTape() as tape:
        tape.watch(watched)
        want_loss = _sum_of_squares(keras.ops, call(keras.ops, *watched))
    wants = tape.gradient(want_loss, watched)
    variables = [gtf.Variable(x) for x in inputs]
    with gtf.GradientTape() as tape:
        got_loss = _sum_of_squares(gtf.keras.ops, call(gtf.keras.ops, *variables))
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-4)
    for got, want in zip(tape.gradient(got_loss, variables), wants):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3, atol=1e-4)


# -- KerasTensors, namespaces, errors ---------------------------------------------------------


def test_ops_build_a_functional_model_with_keras_shapes():
    keras = pytest.importorskip("keras")
    outputs = {}
    for lib, name in ((gtf.keras, "ours"), (keras, "keras")):
        signal, real, imag = lib.Input((24,)), lib.Input((3, 6)), lib.Input((3, 6))
        results = [
            *lib.ops.stft(signal, 8, 4, 16),
            *lib.ops.fft2((real, imag)),
            *lib.ops.rfft(signal),
            lib.ops.irfft((real, imag)),
            lib.ops.istft((real, imag), 8, 4, 10),
            lib.ops.extract_sequences(signal, 5, 3),
        ]
        outputs[name] = [tuple(t.shape) for t in results]
    assert outputs["ours"] == outputs["keras"]
    signal = gtf.keras.Input((24,))
    model = gtf.keras.Model(signal, list(gtf.keras.ops.stft(signal, 8, 4, 16)))
    real, imag = model(SIGNAL)
    want = _stft_of(8, 4, 16)
    np.testing.assert_allclose(real.numpy(), want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(imag.numpy(), want[1], rtol=1e-5, atol=1e-5)


def test_new_names_are_in_keras_namespaces():
    keras = pytest.importorskip("keras")
    for name in ADDED:
        assert callable(getattr(gtf.keras.ops, name)), name
        assert hasattr(keras.ops, name), name
    assert gtf.keras.ops.numpy.histogram is gtf.keras.ops.histogram
    assert hasattr(keras.ops.numpy, "histogram")


def test_no_keras_math_names_are_missing():
    keras = pytest.importorskip("keras")
    from keras.src.ops import math as keras_math

    names = {
        n for n in dir(keras.ops) if not n.startswith("_") and getattr(keras.ops, n) is getattr(keras_math, n, None)
    }
    assert names and not names - set(dir(gtf.keras.ops))


@pytest.mark.parametrize(
    "call,kind,text",
    [
        (lambda ops: ops.fft(RE), ValueError, r"\(real, imag\) pair.*got float32\[2,6\]"),
        (lambda ops: ops.fft((RE, IM[:, :3])), ValueError, r"one shape and dtype.*float32\[2,3\]"),
        (lambda ops: ops.fft((RE.astype(np.int32), IM)), TypeError, r"float32 or float64.*int32.*cast"),
        (lambda ops: ops.fft2((RE[0], IM[0])), ValueError, r"last 2 axes.*rank 1.*expand_dims"),
        (lambda ops: ops.rfft(ops.cast(RE, "int32")), TypeError, r"rfft.*got dtype int32"),
        (lambda ops: ops.rfft(ops.cast(RE, "float16")), ValueError, r"rfft.*got dtype float16"),
        (lambda ops: ops.fft(([1, 2], [3, 4])), ValueError, r"float32 or float64.*int32"),
        (lambda ops: ops.irfft((RE[:, :1], IM[:, :1])), ValueError, r"length 0.*fft_length"),
        (lambda ops: ops.stft(SIGNAL, 8, 4, 4), ValueError, r"fft_length=4 < sequence_length=8"),
        (lambda ops: ops.stft(SIGNAL, 8, 0, 8), ValueError, r"sequence_stride=0.*at least 1"),
        (lambda ops: ops.stft(SIGNAL, 8, 4, 8, window="boxcar"), ValueError, r"'boxcar'.*'hann' and 'hamming'"),
        (lambda ops: ops.stft(SIGNAL, 5, 2, 8, window=WINDOW[:3]), ValueError, r"shape \(5,\).*got shape \(3,\)"),
        (
            lambda ops: ops.stft(SIGNAL[:, :4], 8, 4, 16),
            ValueError,
            r"center=True mirrors fft_length // 2 = 8 samples.*\(2, 4\).*center=False",
        ),
        (lambda ops: ops.istft((RE[0], IM[0]), 4, 2, 10), ValueError, r"last 2 axes.*rank 1"),
        (lambda ops: ops.extract_sequences(np.float32(1.0), 2, 1), ValueError, r"got a scalar"),
        (lambda ops: ops.cdist(ROWS_A, ROWS_B[:, :3]), ValueError, r"\[\.\.\., M, D\].*\(3, 4\) and \(5, 3\)"),
        (lambda ops: ops.view_as_complex(ROWS_A), ValueError, r"size 2.*\(3, 4\).*stack"),
        (lambda ops: ops.histogram(SAMPLES, bins=2.5), TypeError, r"non-negative Python int.*2\.5"),
        (lambda ops: ops.histogram(SAMPLES, range=(1.0, 0.0)), ValueError, r"lo <= hi.*\(1\.0, 0\.0\)"),
        (lambda ops: ops.histogram(ROWS_A), ValueError, r"1-D x.*\(3, 4\).*reshape"),
    ],
)
def test_bad_input_raises_a_gradkit_error(call, kind, text):
    with pytest.raises(kind, match=r"\[gradkit\].*" + text):
        call(gtf.keras.ops)


# NumPy arrays and Python lists: TensorFlow converts them to the transform's preferred dtype
# (float32 for rfft, complex64 for fft and irfft), whatever their own; tensors keep theirs.
CONVERTED_SIGNALS = [
    ("np.int32", np.arange(8, dtype=np.int32)),
    ("np.int64", np.arange(8, dtype=np.int64)),
    ("np.float16", np.linspace(-1, 1, 8).astype(np.float16)),
    ("np.float64", np.linspace(-1, 1, 8)),
    ("np.bool", np.arange(8) % 3 == 0),
    ("list_int", list(range(8))),
    ("list_float", [0.5 * i for i in range(8)]),
]
SIGNAL_CALLS = {
    "signal.rfft": lambda tf, ops, x: tf.signal.rfft(x),
    "signal.rfft2d": lambda tf, ops, x: tf.signal.rfft2d(
        np.reshape(x, (2, 4)).tolist() if isinstance(x, list) else np.reshape(x, (2, 4))
    ),
    "signal.fft": lambda tf, ops, x: tf.signal.fft(x),
    "signal.irfft": lambda tf, ops, x: tf.signal.irfft(x),
    "keras.rfft": lambda tf, ops, x: ops.rfft(x),
}


def _outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception's kind
        return type(e)
    return [(np.dtype(np.asarray(o).dtype).name, np.asarray(o)) for o in (out if isinstance(out, tuple) else [out])]


@pytest.mark.parametrize("label,x", CONVERTED_SIGNALS, ids=[c[0] for c in CONVERTED_SIGNALS])
@pytest.mark.parametrize("name", sorted(SIGNAL_CALLS))
def test_numpy_arrays_and_lists_convert_as_tensorflow_converts_them(name, label, x):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    want = _outcome(lambda: SIGNAL_CALLS[name](tf, keras.ops, x))
    got = _outcome(lambda: SIGNAL_CALLS[name](gtf, gtf.keras.ops, x))
    assert not isinstance(want, type), f"TensorFlow refuses {name}({label}): {want}"
    assert not isinstance(got, type), f"gradkit refuses {name}({label}): {got}"
    assert [d for d, _ in got] == [d for d, _ in want]
    for (_, g), (_, w) in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3)


KEPT_DTYPE_CALLS = {
    "keras.fft": lambda tf, ops, x: ops.fft((x, x)),
    "keras.irfft": lambda tf, ops, x: ops.irfft((x, x)),
    "keras.stft": lambda tf, ops, x: ops.stft(x, 4, 2, 4),
    "signal.stft": lambda tf, ops, x: tf.signal.stft(x, 4, 2),
}


@pytest.mark.parametrize("label,x", CONVERTED_SIGNALS, ids=[c[0] for c in CONVERTED_SIGNALS])
@pytest.mark.parametrize("name", sorted(KEPT_DTYPE_CALLS))
def test_ops_that_keep_the_dtype_refuse_what_keras_refuses(name, label, x):
    """Keras' complex ops and stft (and tf.signal.stft) keep a NumPy array's dtype and a list's
    convert_to_tensor dtype (int32 for ints), refusing all but float32/float64."""
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    want = _outcome(lambda: KEPT_DTYPE_CALLS[name](tf, keras.ops, x))
    got = _outcome(lambda: KEPT_DTYPE_CALLS[name](gtf, gtf.keras.ops, x))
    if name == "keras.stft" and isinstance(x, list):
        # Keras' stft reads x.dtype, an AttributeError for a list; gradkit converts the list as
        # convert_to_tensor does: ints to int32 (refused), floats to float32.
        want = TypeError if isinstance(x[0], int) else [("float32", None)] * 2
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), (want, got)
    else:
        assert not isinstance(got, type), f"gradkit refuses {name}({label}): {got}"
        canonical = [jax.dtypes.canonicalize_dtype(np.dtype(d)).name for d, _ in want]  # float64 without x64
        assert [d for d, _ in got] == canonical


def test_tensors_of_other_dtypes_are_still_refused():
    for bad in (gtf.constant([0, 1, 2, 3]), gtf.constant([0.0, 1.0, 2.0, 3.0], gtf.float16)):
        with pytest.raises(ValueError, match=r"\[gradkit\] tf\.signal\.rfft takes a float32 or float64 tensor"):
            gtf.signal.rfft(bad)
        with pytest.raises(ValueError, match=r"\[gradkit\] tf\.keras\.ops\.rfft takes x as a float32 or float64"):
            gtf.keras.ops.rfft(bad)


def test_rfft_refuses_a_complex_numpy_array_rather_than_dropping_its_imaginary_part():
    z = np.array([1 + 2j, 3 - 1j, 0, 1j])
    with pytest.raises(ValueError, match=r"\[gradkit\] tf\.signal\.rfft takes a real signal.*complex128.*np\.real"):
        gtf.signal.rfft(z)
