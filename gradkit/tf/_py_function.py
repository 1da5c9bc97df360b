"""``tf.numpy_function`` and ``tf.py_function``: Python called on a step's values, eagerly.

``numpy_function`` hands ``func`` NumPy arrays (a Python number or list among the inputs
too), so its results carry no gradient (as in
TensorFlow); ``py_function`` hands it tensors, so a tape records the ops ``func`` runs and
gradients flow through them, as in eager TensorFlow. As there, an array result keeps its
dtype and a Python number takes ``Tout``'s. Inside ``tf.function`` the inputs are only known when the compiled program runs and
gradkit compiles the whole function with ``jax.jit``, which cannot call back into arbitrary
Python with results of unknown shape: both raise there (call the step eagerly, or write the
Python part with tf ops).

>>> import numpy as np, gradkit.tf as tf
>>> tf.numpy_function(lambda a: (a * 2).astype(np.float32), [tf.constant([1.0, 2.0])], tf.float32).numpy().tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import _control
from ._convert import check_python_value, convert, wrap


def _refuse_traced(inputs, what: str) -> None:
    # Inside tf.function even a call on constants is refused: run now, while the function is
    # traced, it would run once and its result would be baked into the program, where
    # TensorFlow calls the Python function at every call.
    if not _control.executing_eagerly() or any(isinstance(_control._value(x), jax.core.Tracer) for x in inputs):
        raise _errors.GradkitTypeError(
            f"tf.{what} was called inside tf.function, where TensorFlow calls the Python function at every "
            "call of the compiled program, on inputs only known then. gradkit's tf.function compiles the whole "
            "function with jax.jit, which cannot call back into arbitrary Python with results of unknown shape "
            "(and running it once now would bake its result into every call). Call the step eagerly (without "
            "@tf.function), or write the Python part with tf ops."
        )


def _dtypes(Tout):
    single = not isinstance(Tout, (list, tuple))
    dtypes = [Tout] if single else list(Tout)
    # int64/float64 are int32/float32 unless jax's x64 mode is on, as everywhere in gradkit.tf.
    return single, [
        None if t is None else jax.dtypes.canonicalize_dtype(np.dtype(getattr(t, "as_numpy_dtype", t))) for t in dtypes
    ]


def _results(out, Tout, what: str):
    if Tout is None or (isinstance(Tout, (list, tuple)) and not Tout):
        return None if Tout is None else []
    single, dtypes = _dtypes(Tout)
    values = [out] if single else list(out) if isinstance(out, (list, tuple)) else [out]
    if len(values) != len(dtypes):
        raise _errors.GradkitValueError(
            f"tf.{what}: the function returned {len(values)} values where Tout names {len(dtypes)}; "
            "return one value per Tout dtype, as TensorFlow requires."
        )
    tensors = [_result(value, dtype, what, i) for i, (value, dtype) in enumerate(zip(values, dtypes))]
    return tensors[0] if single else tensors


def _result(value, dtype, what: str, index: int):
    """One result as TensorFlow gives it: ``numpy_function`` keeps an array's dtype; ``py_function``
    casts a NumPy result to ``Tout`` and refuses a tensor of another dtype; a Python number takes
    ``Tout``'s dtype in both."""
    if isinstance(value, (Tensor, jax.Array)):
        if what == "py_function" and dtype is not None and np.dtype(value.dtype) != dtype:
            raise _errors.GradkitInvalidArgumentError(
                f"tf.py_function: result {index} is a {np.dtype(value.dtype).name} tensor where Tout gives "
                f"{dtype.name} (TensorFlow's InvalidArgumentError). Cast it in the function (tf.cast(y, "
                f"tf.{dtype.name})) or give Tout that dtype."
            )
        return wrap(convert(value))
    if isinstance(value, (np.ndarray, np.generic)):
        if what == "py_function" and dtype is not None:
            return wrap(convert(np.asarray(value).astype(dtype)))
        return wrap(convert(value))
    if what == "py_function" and dtype is not None:
        try:
            check_python_value(value, dtype, f"tf.py_function (result {index})")
        except _errors.GradkitTypeError as error:  # TensorFlow's InvalidArgumentError there
            raise _errors.GradkitInvalidArgumentError(str(error)) from None
    return wrap(convert(value, dtype))


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """``tf.numpy_function(func, inp, Tout)``: ``func(*arrays)`` on the inputs' NumPy values."""
    inputs = list(inp)
    _refuse_traced(inputs, "numpy_function")
    return _results(func(*[_as_ndarray(x) for x in inputs]), Tout, "numpy_function")


def _as_ndarray(x) -> np.ndarray:
    """What TensorFlow hands ``func`` for one input: always a NumPy array (``np.array`` of a
    Python number or list, so ``3.0`` is a float64 scalar array and ``[1, 2]`` an int64 vector,
    as there), a copy ``func`` may write to."""
    if isinstance(x, Tensor) or hasattr(x, "numpy"):
        x = _control._value(x)
    return np.array(x)


def py_function(func, inp, Tout, name=None):
    """``tf.py_function(func, inp, Tout)``: ``func(*tensors)``, recorded by a tape."""
    inputs = list(inp)
    _refuse_traced(inputs, "py_function")
    # Tensors, Python numbers and lists included, as TensorFlow converts every input first.
    return _results(wrap(func(*[wrap(convert(x)) for x in inputs])), Tout, "py_function")
