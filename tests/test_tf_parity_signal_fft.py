"""``tf.signal``'s Fourier transforms against real TensorFlow 2.21: the same program text under
both modules (values, shapes, dtypes, gradients and exception classes compared).

Each program takes the real dtype it runs in; ``test_tf_parity_signal_float64.py`` runs them
again in float64. Where TensorFlow's gradient kernels raise (an ``fft_length`` that crops) or
are missing (``rfft3d``/``irfft3d``), TensorFlow differentiates the same function written with
ops it does differentiate (a slice, or the complex transform of the cast input).
"""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(7)
X5 = RNG.normal(size=5)
X23 = RNG.normal(size=(2, 3))
X234 = RNG.normal(size=(2, 3, 4))
X2345 = RNG.normal(size=(2, 3, 4, 5))
Z4 = RNG.normal(size=4) + 1j * RNG.normal(size=4)
Z34 = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
Z2345 = RNG.normal(size=(2, 3, 4, 5)) + 1j * RNG.normal(size=(2, 3, 4, 5))


def _complex(dtype):
    return "complex64" if dtype == "float32" else "complex128"


def _energy(tf, y):
    """A real loss of a complex output: its gradient is TensorFlow's convention for both modules."""
    return tf.reduce_sum(tf.math.real(y) * tf.math.imag(y)) + tf.reduce_sum(tf.abs(y) ** 2)


def _grad_of_complex(tf, transform, value, dtype):
    z = tf.Variable(tf.constant(value.astype(_complex(dtype))))
    with tf.GradientTape() as tape:
        y = transform(z)
        loss = _energy(tf, y) if "complex" in y.dtype.name else tf.reduce_sum(y * tf.cos(y))
    return [y, tape.gradient(loss, z), y.dtype.name]


def _grad_of_real(tf, transform, value, dtype):
    x = tf.Variable(tf.constant(value.astype(dtype)))
    with tf.GradientTape() as tape:
        y = transform(x)
        loss = _energy(tf, y) if "complex" in y.dtype.name else tf.reduce_sum(y * tf.cos(y))
    return [y, tape.gradient(loss, x), y.dtype.name]


def p_fft_and_ifft_1d_2d_3d(tf, dtype="float32"):
    out = []
    for forward, inverse in (
        (tf.signal.fft, tf.signal.ifft),
        (tf.signal.fft2d, tf.signal.ifft2d),
        (tf.signal.fft3d, tf.signal.ifft3d),
    ):
        out += _grad_of_complex(tf, forward, Z2345, dtype)
        out += _grad_of_complex(tf, inverse, Z2345, dtype)
    return out


def p_fft_odd_and_even_lengths(tf, dtype="float32"):
    return [
        *_grad_of_complex(tf, tf.signal.fft, Z4, dtype),
        *_grad_of_complex(tf, tf.signal.fft, Z4[:3], dtype),
        *_grad_of_complex(tf, tf.signal.ifft2d, Z34, dtype),
        *_grad_of_complex(tf, lambda z: tf.signal.ifft(tf.signal.fft(z)), Z34, dtype),
    ]


def p_rfft_and_irfft_default_lengths(tf, dtype="float32"):
    return [
        *_grad_of_real(tf, tf.signal.rfft, X5, dtype),
        *_grad_of_real(tf, tf.signal.rfft, X234, dtype),
        *_grad_of_real(tf, tf.signal.rfft2d, X234, dtype),
        *_grad_of_complex(tf, tf.signal.irfft, Z4, dtype),
        *_grad_of_complex(tf, tf.signal.irfft, Z34, dtype),
        *_grad_of_complex(tf, tf.signal.irfft2d, Z34, dtype),
    ]


def p_rfft_fft_length_pads(tf, dtype="float32"):
    return [
        *_grad_of_real(tf, lambda x: tf.signal.rfft(x, [8]), X5, dtype),
        *_grad_of_real(tf, lambda x: tf.signal.rfft(x, fft_length=tf.constant([7])), X234, dtype),
        *_grad_of_real(tf, lambda x: tf.signal.rfft2d(x, [4, 6]), X234, dtype),
        *_grad_of_complex(tf, lambda z: tf.signal.irfft(z, [9]), Z4, dtype),
        *_grad_of_complex(tf, lambda z: tf.signal.irfft(z, [8]), Z34, dtype),
        *_grad_of_complex(tf, lambda z: tf.signal.irfft(z, [7]), Z34, dtype),
        *_grad_of_complex(tf, lambda z: tf.signal.irfft2d(z, [5, 6]), Z34, dtype),
    ]


def p_second_order_through_rfft_and_fft(tf, dtype="float32"):
    x = tf.Variable(tf.constant(X5.astype(dtype)))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.signal.rfft(x * x, [8])
            z = tf.signal.ifft(tf.signal.fft(tf.cast(x, y.dtype) * y[..., :5]))
            loss = tf.reduce_sum(tf.abs(y) ** 2) + tf.reduce_sum(tf.math.real(z) ** 2)
        gradient = inner.gradient(loss, x)
        second = tf.reduce_sum(gradient * tf.constant(X5[::-1].astype(dtype)))
    return [gradient, outer.gradient(second, x)]


def p_fft_length_crops_values(tf, dtype="float32"):
    x, z = tf.constant(X234.astype(dtype)), tf.constant(Z34.astype(_complex(dtype)))
    return [
        tf.signal.rfft(x, [3]),
        tf.signal.rfft(x, [2]),
        tf.signal.rfft2d(x, [2, 3]),
        tf.signal.rfft2d(x, [1, 7]),
        tf.signal.irfft(z, [4]),
        tf.signal.irfft(z, [3]),
        tf.signal.irfft2d(z, [2, 5]),
    ]


def p_empty_complex_transforms(tf, dtype="float32"):
    return [tf.signal.fft(tf.ones([0], tf.complex64)), tf.signal.ifft2d(tf.ones([2, 0, 3], tf.complex64))]


def p_python_lists_take_tensorflows_preferred_dtypes(tf, dtype="float32"):
    return [
        tf.signal.fft([1.0, 2.0, 3.0]),
        tf.signal.ifft([[1.0, 2.0], [3.0, 4.0]]),
        tf.signal.rfft([1, 2, 3]),
        tf.signal.irfft([1.0, 2.0, 3.0]),
        tf.signal.rfft([1.0, 2.0, 3.0]).dtype.name,
        tf.signal.fft([1.0, 2.0, 3.0]).dtype.name,
        tf.signal.fft([1, 2]),
        tf.signal.rfft([True, False]),
        tf.signal.irfft([1, 2]),
        tf.signal.fft([1 + 1j, 2]),
    ]


def p_fft_refuses_a_boolean_list(tf, dtype="float32"):
    return tf.signal.fft([True, False])


def p_fftshift_and_ifftshift(tf, dtype="float32"):
    grid = tf.reshape(tf.range(15), [3, 5])
    x = tf.Variable(tf.constant(X23.astype(dtype)))
    with tf.GradientTape() as tape:
        y = tf.signal.fftshift(x, axes=0) * tf.constant(X23.astype(dtype))
    return [
        tf.signal.fftshift([0.0, 1.0, 2.0, 3.0, 4.0, -5.0, -4.0, -3.0, -2.0, -1.0]),
        tf.signal.fftshift(grid),
        tf.signal.ifftshift(grid),
        tf.signal.fftshift(grid, axes=1),
        tf.signal.ifftshift(grid, axes=[-1]),
        tf.signal.ifftshift(grid, axes=(0, -1)),
        tape.gradient(y, x),
    ]


def p_fft_refuses_a_real_tensor(tf, dtype="float32"):
    return tf.signal.fft(tf.constant(X5.astype(dtype)))


def p_rfft_refuses_a_complex_tensor(tf, dtype="float32"):
    return tf.signal.rfft(tf.constant(Z4.astype(_complex(dtype))))


def p_rfft_refuses_an_integer_tensor(tf, dtype="float32"):
    return tf.signal.rfft(tf.constant([1, 2, 3]))


def p_rfft_refuses_a_float16_tensor(tf, dtype="float32"):
    return tf.signal.rfft(tf.constant([1.0, 2.0], tf.float16))


def p_irfft_refuses_a_real_tensor(tf, dtype="float32"):
    return tf.signal.irfft(tf.constant(X5.astype(dtype)))


def p_fft2d_refuses_a_vector(tf, dtype="float32"):
    return tf.signal.fft2d(tf.constant(Z4.astype(_complex(dtype))))


def p_rfft2d_refuses_a_vector(tf, dtype="float32"):
    return tf.signal.rfft2d(tf.constant(X5.astype(dtype)), [2, 2])


def p_rfft_refuses_an_fft_length_of_another_rank(tf, dtype="float32"):
    return tf.signal.rfft(tf.constant(X5.astype(dtype)), [2, 3])


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]
# Run again in float64 by test_tf_parity_signal_float64.py.
FLOAT64 = [
    p_fft_and_ifft_1d_2d_3d,
    p_rfft_and_irfft_default_lengths,
    p_rfft_fft_length_pads,
    p_fft_length_crops_values,
    p_second_order_through_rfft_and_fft,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from _signal_parity import run_both

    run_both(program)


# Where TensorFlow's gradient kernels fail, TensorFlow's tape differentiates the same function
# written another way: a cropping fft_length as a slice, a 3-D real transform as the complex
# one of the cast input, kept to its non-negative innermost frequencies.
CROPS = {
    "rfft_crop": (
        lambda tf, x: tf.signal.rfft(x, [3]),
        lambda tf, x: tf.signal.rfft(x[..., :3]),
        X234,
    ),
    "rfft2d_crop_and_pad": (
        lambda tf, x: tf.signal.rfft2d(x, [2, 6]),
        lambda tf, x: tf.signal.rfft2d(tf.pad(x[:, :2, :], [[0, 0], [0, 0], [0, 2]])),
        X234,
    ),
    "rfft3d": (
        lambda tf, x: tf.signal.rfft3d(x),
        lambda tf, x: tf.signal.fft3d(tf.cast(x, tf.complex64))[..., :3],
        X2345,
    ),
    "rfft3d_crop": (
        lambda tf, x: tf.signal.rfft3d(x, [2, 4, 3]),
        lambda tf, x: tf.signal.fft3d(tf.cast(x[:, :2, :, :3], tf.complex64))[..., :2],
        X2345,
    ),
}
INVERSE_CROPS = {
    "irfft_crop": (
        lambda tf, z: tf.signal.irfft(z, [4]),
        lambda tf, z: tf.signal.irfft(z[..., :3]),
        Z34,
    ),
    "irfft2d_crop": (
        lambda tf, z: tf.signal.irfft2d(z, [2, 4]),
        lambda tf, z: tf.signal.irfft2d(z[..., :2, :3]),
        Z34,
    ),
}


@pytest.mark.parametrize("case", sorted(CROPS))
def test_real_transform_gradients_where_tensorflows_kernels_fail(case):
    tf = pytest.importorskip("tensorflow")
    from _signal_parity import _np, compare

    ours, theirs, value = CROPS[case]
    got = _np(_grad_of_real(gtf, lambda x: ours(gtf, x), value, "float32")[:2])
    want = _np(_grad_of_real(tf, lambda x: theirs(tf, x), value, "float32")[:2])
    compare(want, got, 2e-5)


@pytest.mark.parametrize("case", sorted(INVERSE_CROPS))
def test_inverse_real_transform_gradients_where_tensorflows_kernels_fail(case):
    tf = pytest.importorskip("tensorflow")
    from _signal_parity import _np, compare

    ours, theirs, value = INVERSE_CROPS[case]
    got = _np(_grad_of_complex(gtf, lambda z: ours(gtf, z), value, "float32")[:2])
    want = _np(_grad_of_complex(tf, lambda z: theirs(tf, z), value, "float32")[:2])
    compare(want, got, 2e-5)


def test_irfft3d_against_numpy_and_its_gradient_against_tensorflows_irfft2d():
    tf = pytest.importorskip("tensorflow")
    from _signal_parity import _np, compare

    z = Z2345[:, :3, :, :3]
    np.testing.assert_allclose(
        gtf.signal.irfft3d(gtf.constant(z.astype(np.complex64)), [3, 4, 5]).numpy(),
        np.fft.irfftn(z, s=[3, 4, 5], axes=(1, 2, 3)),
        rtol=1e-5,
        atol=1e-5,
    )

    # irfft3d is an ifft over the middle axis, then irfft2d over the inner two.
    def theirs(x):
        moved = tf.transpose(tf.signal.ifft(tf.transpose(x, [0, 2, 3, 1])), [0, 3, 1, 2])
        return tf.signal.irfft2d(moved, [4, 4])

    got = _np(_grad_of_complex(gtf, lambda x: gtf.signal.irfft3d(x, [3, 4, 4]), z, "float32")[:2])
    want = _np(_grad_of_complex(tf, theirs, z, "float32")[:2])
    compare(want, got, 2e-5)


@pytest.mark.parametrize("name", ["fftnd", "ifftnd", "rfftnd", "irfftnd"])
def test_nd_transforms_are_refused_with_a_reason(name):
    from gradkit._errors import GradkitNotImplementedError

    with pytest.raises(GradkitNotImplementedError, match=r"^\[gradkit\] tf\.signal\." + name + " is not implemented"):
        getattr(gtf.signal, name)(gtf.constant([[1.0, 2.0]]))


def test_a_zero_fft_length_is_refused_before_it_reaches_a_kernel():
    from gradkit._errors import GradkitValueError

    # TensorFlow's kernel aborts the whole process here.
    with pytest.raises(GradkitValueError, match="at least 1"):
        gtf.signal.rfft(gtf.constant([1.0, 2.0]), [0])
    with pytest.raises(GradkitValueError, match="at least 1"):
        gtf.signal.irfft(gtf.constant([1.0 + 0j]))


def test_a_refused_input_says_what_to_call_and_leaves_variables_unchanged():
    v = gtf.Variable([1.0, 2.0, 3.0])
    with gtf.GradientTape():
        with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.signal\.fft takes a complex64 or complex128"):
            gtf.signal.fft(v)
        with pytest.raises(ValueError, match=r"tf\.signal\.rfft\(tf\.cast\(x, tf\.float32\)\)"):
            gtf.signal.rfft(gtf.cast(v, gtf.int32))
    assert v.numpy().tolist() == [1.0, 2.0, 3.0]
