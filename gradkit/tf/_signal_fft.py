"""``tf.signal``'s Fourier transforms: ``fft``/``ifft`` over the inner 1, 2 or 3 axes, the real
forms ``rfft``/``irfft`` (1-3-D) with TensorFlow's ``fft_length``, and ``fftshift``/``ifftshift``.

``fft`` and ``ifft`` take complex tensors only, as TensorFlow (cast a real one first); ``rfft``
takes float32 or float64 and gives complex64 or complex128. As in TensorFlow, Python values and
NumPy arrays of any number dtype are converted first: to float32 for ``rfft`` (an int, float16 or
float64 array too), to complex64 for ``fft`` and ``irfft``. ``fft_length`` crops or zero-pads
each transformed axis of the input to its length (for ``irfft`` the innermost axis to
``fft_length[-1] // 2 + 1`` bins), and is by default the input's inner shape (``irfft``:
``2 * (bins - 1)`` innermost). Gradients are the exact derivatives of these transforms,
padding and cropping included (TensorFlow's gradient kernels raise for a cropping
``fft_length`` and it defines none for the 3-D real transforms); complex gradients follow
TensorFlow's convention.

>>> import gradkit.tf as tf
>>> tf.signal.rfft(tf.constant([1.0, 2.0, 3.0, 4.0])).numpy().tolist()
[(10+0j), (-2+2j), (-2+0j)]
>>> tf.signal.irfft(tf.signal.rfft(tf.constant([1.0, 2.0, 3.0])), fft_length=[3]).numpy().round(4).tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import _is_python_value, axis_arg, call, convert, known_value

_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _inner_axes(rank: int) -> tuple:
    return tuple(range(-rank, 0))


def _complex_fft(x, rank, inverse):
    transform = jnp.fft.ifftn if inverse else jnp.fft.fftn
    return transform(x, axes=_inner_axes(rank))


def _real_fft(x, lengths):
    return jnp.fft.rfftn(x, s=lengths, axes=_inner_axes(len(lengths)))


def _inverse_real_fft(x, lengths):
    return jnp.fft.irfftn(x, s=lengths, axes=_inner_axes(len(lengths)))


def _input(value, rank, what, allowed, python_dtype, dtype_error, rank_error):
    """``value`` as a tensor of one of the ``allowed`` dtypes with at least ``rank`` axes; a Python
    number or list is converted to ``python_dtype`` first, as TensorFlow prefers. Another dtype
    raises ``dtype_error`` and too few axes ``rank_error``: TensorFlow's real transforms check both
    in Python (ValueError), its complex kernels refuse them eagerly (InvalidArgumentError; the
    dtype is a TypeError where ``tf.function`` traces them)."""
    # As TensorFlow converts Python values: numbers to the preferred dtype (booleans too for the
    # real transforms, not for the complex kernels), complex numbers to complex128 (complex64
    # without jax_enable_x64).
    # A NumPy array (or scalar) converts to the preferred dtype whatever its own: an int, bool,
    # float16 or float64 array becomes float32 for the real transforms and complex64 for the complex
    # ones (a complex128 array too); only tensors must have an allowed dtype already.
    convertible = "biuf" if python_dtype in _REAL else "iuf"
    if _is_python_value(value) and np.asarray(value).dtype.kind in convertible:
        x = convert(value, python_dtype)
    elif isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufc":
        if value.dtype.kind == "c" and python_dtype in _REAL:
            # TensorFlow drops the imaginary part here (NumPy's ComplexWarning); refused instead.
            raise dtype_error(
                f"{what} takes a real signal, but got a NumPy array of dtype {value.dtype.name}: TensorFlow would "
                f"silently drop its imaginary part. Pass {what}(np.real(x)) for the real part, or use "
                f"tf.signal.fft{'' if rank == 1 else f'{rank}d'} for a complex signal."
            )
        x = convert(np.asarray(value).astype(python_dtype))
    else:
        x = convert(value)
    if np.dtype(x.dtype) not in allowed:
        names = " or ".join(d.name for d in allowed)
        target = "complex64" if allowed == _COMPLEX else "float32"
        raise dtype_error(
            f"{what} takes a {names} tensor, as TensorFlow, but got dtype {np.dtype(x.dtype).name}. "
            f"Cast it first: {what}(tf.cast(x, tf.{target}))."
        )
    if x.ndim < rank:
        inner = "innermost axis" if rank == 1 else f"inner {rank} axes"
        raise rank_error(
            f"{what} transforms the {inner}, but got a tensor of shape {tuple(x.shape)} (rank {x.ndim}). "
            f"Give it at least {rank} {'axis' if rank == 1 else 'axes'}, e.g. with tf.reshape or tf.expand_dims."
        )
    return x


def _lengths(fft_length, x, rank, what, inverse):
    """``fft_length`` as a tuple of ``rank`` positive ints (the default as TensorFlow infers it)."""
    if fft_length is None:
        lengths = list(x.shape[-rank:])
        if inverse:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
    else:
        value = known_value(fft_length)
        if value is None:
            raise _errors.GradkitTypeError(
                f"{what} inside tf.function needs fft_length known when tracing: it sets the result's shape. "
                "Pass a Python list or a constant."
            )
        # TensorFlow converts fft_length in Python (a TypeError for a scalar, a nested list or
        # floats); its kernel refuses a list of the wrong length (InvalidArgumentError).
        error = _errors.GradkitTypeError if value.ndim != 1 or value.dtype.kind not in "iu" else None
        if error is None and value.shape[0] != rank:
            error = _errors.InvalidArgumentValueError
        if error is not None:
            raise error(
                f"{what} takes fft_length as a list of {rank} ints (one per transformed axis), but got "
                f"{value.tolist()!r}. Write it as a list, e.g. fft_length=[{', '.join(['8'] * rank)}]."
            )
        lengths = value.tolist()
    if any(n < 1 for n in lengths):  # TensorFlow's kernel: InvalidArgumentError for a negative one
        raise _errors.InvalidArgumentValueError(
            f"{what} has fft_length {lengths} for an input of shape {tuple(x.shape)}: every length must be at "
            "least 1 (TensorFlow's kernel aborts the process on an empty transform). Pass a positive fft_length."
        )
    return tuple(int(n) for n in lengths)


def _complex_transform(rank, inverse, tf_name):
    what = f"tf.signal.{tf_name}"

    def transform(input, name=None):  # noqa: A002  (TensorFlow's argument name)
        x = _input(
            input,
            rank,
            what,
            _COMPLEX,
            np.complex64,
            _errors.InvalidArgumentTypeError,
            _errors.InvalidArgumentValueError,
        )
        return call(_complex_fft, x, rank=rank, inverse=inverse)

    transform.__name__ = transform.__qualname__ = tf_name
    transform.__doc__ = (
        f"TensorFlow's ``{what}``: the {'inverse ' if inverse else ''}discrete Fourier transform over the "
        f"inner {rank} axes of a complex tensor."
    )
    return transform


def _real_transform(rank, inverse, tf_name):
    what = f"tf.signal.{tf_name}"

    def transform(input_tensor, fft_length=None, name=None):
        if inverse:
            x = _input(
                input_tensor, rank, what, _COMPLEX, np.complex64, _errors.GradkitValueError, _errors.GradkitValueError
            )
        else:
            x = _input(
                input_tensor, rank, what, _REAL, np.float32, _errors.GradkitValueError, _errors.GradkitValueError
            )
        lengths = _lengths(fft_length, x, rank, what, inverse)
        return call(_inverse_real_fft if inverse else _real_fft, x, lengths=lengths)

    transform.__name__ = transform.__qualname__ = tf_name
    transform.__doc__ = (
        f"TensorFlow's ``{what}``: the {'inverse of the ' if inverse else ''}real-input discrete Fourier "
        f"transform over the inner {rank} axes, each cropped or zero-padded to ``fft_length``."
    )
    return transform


fft = _complex_transform(1, False, "fft")
ifft = _complex_transform(1, True, "ifft")
fft2d = _complex_transform(2, False, "fft2d")
ifft2d = _complex_transform(2, True, "ifft2d")
fft3d = _complex_transform(3, False, "fft3d")
ifft3d = _complex_transform(3, True, "ifft3d")
rfft = _real_transform(1, False, "rfft")
irfft = _real_transform(1, True, "irfft")
rfft2d = _real_transform(2, False, "rfft2d")
irfft2d = _real_transform(2, True, "irfft2d")
rfft3d = _real_transform(3, False, "rfft3d")
irfft3d = _real_transform(3, True, "irfft3d")


def _shift(x, axes, inverse):
    return jnp.fft.ifftshift(x, axes) if inverse else jnp.fft.fftshift(x, axes)


def _shifted(x, axes, inverse):
    x = convert(x)
    axes = tuple(range(x.ndim)) if axes is None else axis_arg(axes)
    return call(_shift, x, axes=axes, inverse=inverse)


def fftshift(x, axes=None, name=None):
    """TensorFlow's ``tf.signal.fftshift``: rolls each axis in ``axes`` (all by default) by half its
    length, so the zero frequency moves to the center.

    >>> import gradkit.tf as tf
    >>> tf.signal.fftshift([0, 1, 2, -2, -1]).numpy().tolist()
    [-2, -1, 0, 1, 2]
    """
    return _shifted(x, axes, inverse=False)


def ifftshift(x, axes=None, name=None):
    """TensorFlow's ``tf.signal.ifftshift``: the inverse of ``fftshift`` (they differ for odd lengths)."""
    return _shifted(x, axes, inverse=True)


def _refuse_nd(tf_name):
    what = f"tf.signal.{tf_name}"

    def refused(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        raise _errors.GradkitNotImplementedError(
            f"{what} is not implemented: TensorFlow 2.21 has no CPU kernel for it, so its semantics (its wrapper "
            "pads the innermost axes rather than the given ones, and infers fft_length from the whole shape) "
            "cannot be checked against TensorFlow. Use the 1-3-D transforms (tf.signal.fft, fft2d, fft3d, rfft, "
            "...) after moving the axes inward with tf.transpose, or gk.numpy.fft.fftn for NumPy's semantics."
        )

    refused.__name__ = refused.__qualname__ = tf_name
    refused.__doc__ = f"TensorFlow's ``{what}``, refused: TensorFlow 2.21 has no CPU kernel to check it against."
    return refused


fftnd = _refuse_nd("fftnd")
ifftnd = _refuse_nd("ifftnd")
rfftnd = _refuse_nd("rfftnd")
irfftnd = _refuse_nd("irfftnd")
