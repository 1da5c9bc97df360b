"""``tf.TensorArray``: a list of same-typed tensors written one step at a time, as TensorFlow 2
runs it eagerly.

Its elements are ordinary tensors, so a tape records what is written and read, and gradients
flow through ``write``/``read``/``stack``/``gather``/``unstack``/``scatter``/``concat``/``split``
as in TensorFlow. Inside ``tf.function`` it works in Python loops (``for t in range(n)`` or
``for t in tf.range(n)`` with a size known when tracing), which gradkit's tf.function unrolls;
indices must be known when tracing, so a TensorArray cannot be a loop variable of a traced
``tf.while_loop`` (an error says so: loop in Python, or carry a preallocated tensor instead).

>>> import gradkit.tf as tf
>>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
>>> for t in range(3):
...     ta = ta.write(t, tf.constant(float(t)) * 10)
>>> ta.stack().numpy().tolist(), int(ta.size())
([0.0, 10.0, 20.0], 3)
"""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from . import _array, _control
from ._convert import TensorShape, convert, wrap


def _concrete_int(x, what: str) -> int:
    """An index or size TensorFlow's eager TensorArray reads as a number."""
    value = _control._value(x)
    if isinstance(value, jax.core.Tracer):
        raise _errors.GradkitTypeError(
            f"tf.TensorArray.{what} got an index or size whose value is only known when the compiled "
            "program runs (a traced tf.while_loop variable inside tf.function). gradkit's TensorArray holds "
            "one tensor per step and needs it while tracing: loop with Python (`for t in range(n)`, or "
            "`for t in tf.range(n)` with n known), or carry the values in the tf.while_loop's variables and "
            "tf.stack them."
        )
    array = np.asarray(value)
    if array.ndim != 0 or not np.issubdtype(array.dtype, np.integer):
        raise _errors.GradkitTypeError(
            f"tf.TensorArray.{what} takes a scalar integer index, but got {array.dtype.name} of shape "
            f"{array.shape}. Pass an int or an int32 scalar tensor."
        )
    return int(array)


def _indices(indices, what: str) -> list:
    value = _control._value(indices)
    if isinstance(value, jax.core.Tracer):
        _concrete_int(value, what)  # raises the traced-index error
    return [_concrete_int(i, what) for i in np.asarray(value).reshape(-1)]


def _known(array: np.ndarray) -> Tensor:
    """A tensor of ``array``, known while tf.function traces (not a value of the program)."""
    with jax.ensure_compile_time_eval():
        return Tensor.concrete(jnp.asarray(array))


def _compatible(known, shape) -> bool:
    if known is None:
        return True
    return len(known) == len(shape) and all(k is None or k == s for k, s in zip(known, shape))


class TensorArray:
    """``tf.TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None,
    tensor_array_name=None, handle=None, flow=None, infer_shape=True, element_shape=None,
    colocate_with_first_write_call=True, name=None)``; see the module docstring.

    As in eager TensorFlow, ``write``, ``unstack``, ``scatter`` and ``split`` change the array
    and return it, reading an element never written gives zeros of the element shape, and with
    ``clear_after_read`` (the default) an element read once cannot be read again (``stack``,
    ``gather`` and ``concat`` do not clear). Inside ``tf.function`` TensorFlow's graph arrays
    keep their elements after a read; so does gradkit's while tracing.
    """

    _gradkit_tensor_array = True  # tf.while_loop/tf.cond refuse one among traced values

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size=None,
        clear_after_read=None,
        tensor_array_name=None,
        handle=None,
        flow=None,
        infer_shape=True,
        element_shape=None,
        colocate_with_first_write_call=True,
        name=None,
    ):
        if handle is not None or flow is not None:
            raise _errors.GradkitValueError(
                "tf.TensorArray got handle= or flow=, which TensorFlow 2 does not support when executing "
                "eagerly and gradkit.tf does not implement. Make a new TensorArray(dtype, size=...)."
            )
        if size is None:
            raise _errors.GradkitValueError(
                "tf.TensorArray needs size= (as TensorFlow's eager TensorArray does). Pass size=0 with "
                "dynamic_size=True for an array that grows as you write."
            )
        self._dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        # What its elements hold: int64 is int32 unless JAX's 64-bit mode is on, as for every tensor.
        self._element_dtype = np.dtype(jax.dtypes.canonicalize_dtype(self._dtype))
        self._dynamic_size = builtins.bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else builtins.bool(clear_after_read)
        self._infer_shape = builtins.bool(infer_shape)
        self._element_shape = (
            None if element_shape is None else tuple(None if d is None or d == -1 else int(d) for d in element_shape)
        )
        self._elements: list = [None] * _concrete_int(size, "__init__ size")
        self._cleared: set = set()

    # -- what it is --------------------------------------------------------------------------

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        """The elements' shape as far as it is known, as TensorFlow's ``TensorShape`` (``None``
        for an unknown size; ``TensorShape(None)``, unknown rank, until a write tells it)."""
        return TensorShape(self._element_shape)

    def size(self, name=None) -> Tensor:
        # Known while tracing too (the number of elements is Python's), so that
        # `ta.write(ta.size(), v)` appends inside tf.function as it does eagerly.
        return _known(np.asarray(len(self._elements), np.int32))

    def identity(self) -> TensorArray:
        return self

    def close(self, name=None) -> None:
        self._elements.clear()

    def grad(self, source, flow=None, name=None):
        raise _errors.GradkitTypeError(
            "tf.TensorArray.grad is TensorFlow 1's graph-mode gradient array, which TensorFlow 2 does not "
            "support when executing eagerly and gradkit.tf does not implement. Take gradients with "
            "tf.GradientTape: they flow through the TensorArray's reads and writes."
        )

    def __repr__(self) -> str:
        return f"<tf.TensorArray size={len(self._elements)} dtype={self._dtype.name}>"

    # -- writing -----------------------------------------------------------------------------

    def _value_of(self, value):
        if isinstance(value, (Tensor, Variable, jax.Array)) and np.dtype(value.dtype) != self._element_dtype:
            raise _errors.InvalidArgumentTypeError(
                f"tf.TensorArray of dtype {self._dtype.name} got a value of dtype {np.dtype(value.dtype).name}, "
                "which TensorFlow refuses (InvalidArgumentError). Cast it first: tf.cast(value, ta.dtype)."
            )
        return wrap(convert(value, self._element_dtype))

    def _write(self, index: int, value) -> None:
        if index < 0:
            raise _errors.OutOfRangeValueError(
                f"tf.TensorArray.write got index {index}; TensorFlow does not write to negative indices."
            )
        if index >= len(self._elements):
            if not self._dynamic_size:
                raise _errors.GradkitOutOfRangeError(
                    f"tf.TensorArray.write got index {index}, but the array has size {len(self._elements)} and "
                    "is not resizeable. Make it with dynamic_size=True to let it grow."
                )
            self._elements.extend([None] * (index - len(self._elements) + 1))
        value = self._value_of(value)
        shape = tuple(value.shape)
        if not _compatible(self._element_shape, shape):
            raise _errors.GradkitValueError(
                f"tf.TensorArray.write got a value of shape {shape}, but its elements have shape "
                f"{self._element_shape}, as TensorFlow requires. Write values of one shape (infer_shape=False "
                "lets them differ)."
            )
        if self._infer_shape:
            self._element_shape = shape
        self._elements[index] = value

    def write(self, index, value, name=None) -> TensorArray:
        """Write ``value`` at ``index`` (growing the array if ``dynamic_size``); returns the array."""
        self._write(_concrete_int(index, "write"), value)
        return self

    def unstack(self, value, name=None) -> TensorArray:
        """The rows of ``value`` (along axis 0) become the elements."""
        rows = _array.unstack(self._value_of(value))
        if len(rows) > len(self._elements) and not self._dynamic_size:
            raise _errors.GradkitValueError(
                f"tf.TensorArray.unstack: cannot unstack {len(rows)} tensors into a TensorArray of static size "
                f"{len(self._elements)}, as TensorFlow says. Make it with dynamic_size=True or the right size."
            )
        self._elements = list(rows)
        self._cleared.clear()
        return self

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Write the rows of ``value`` at ``indices``."""
        for index, row in zip(_indices(indices, "scatter"), _array.unstack(self._value_of(value))):
            self._write(index, row)
        return self

    def split(self, value, lengths, name=None) -> TensorArray:
        """Split ``value`` along axis 0 into pieces of ``lengths`` rows, one per element."""
        lengths = _indices(lengths, "split")
        value = self._value_of(value)
        if sum(lengths) != value.shape[0]:
            raise _errors.GradkitValueError(
                f"tf.TensorArray.split: the lengths {lengths} add up to {sum(lengths)}, but the value has "
                f"{value.shape[0]} rows; TensorFlow requires them equal."
            )
        if not self._dynamic_size and len(lengths) != len(self._elements):
            raise _errors.GradkitValueError(
                f"tf.TensorArray.split: {len(lengths)} lengths for an array of static size "
                f"{len(self._elements)}; TensorFlow requires them equal (or dynamic_size=True)."
            )
        self._elements = list(_array.split(value, lengths))
        self._cleared.clear()
        return self

    # -- reading -----------------------------------------------------------------------------

    def _element(self, index: int):
        value = self._elements[index]
        if value is None:
            if self._element_shape is None or any(d is None for d in self._element_shape):
                raise _errors.GradkitValueError(
                    f"tf.TensorArray: element {index} was never written and the element shape is not known, "
                    "so there are no zeros to give. Write it first, or pass element_shape=."
                )
            value = self._elements[index] = _known(np.zeros(self._element_shape, self._element_dtype))
        return value

    def _check_index(self, index: int, what: str) -> None:
        if not 0 <= index < len(self._elements):
            raise _errors.OutOfRangeValueError(
                f"tf.TensorArray.{what}: index {index} is outside the array of size {len(self._elements)}."
            )

    def read(self, index, name=None):
        """The element at ``index`` (zeros if never written)."""
        index = _concrete_int(index, "read")
        self._check_index(index, "read")
        if self._elements[index] is None and index in self._cleared:
            raise _errors.GradkitInvalidArgumentError(
                f"tf.TensorArray.read: could not read index {index} twice because it was cleared after a previous "
                "read, as in TensorFlow. Make the array with clear_after_read=False to read it again."
            )
        value = self._element(index)
        if self._clear_after_read and _control.executing_eagerly():
            self._elements[index] = None
            self._cleared.add(index)
        return value

    def stack(self, name=None):
        """The elements stacked along a new axis 0."""
        if not self._elements:
            return self._empty()
        return _array.stack([self._element(i) for i in range(len(self._elements))])

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        chosen = _indices(indices, "gather")
        if not chosen:
            return self._empty()
        for i in chosen:
            self._check_index(i, "gather")
        return _array.stack([self._element(i) for i in chosen])

    def _empty(self) -> Tensor:
        """No elements stacked: shape ``(0, *element_shape)``, or ``(0,)`` where the element shape
        is not fully known, as eager TensorFlow gives."""
        known = self._element_shape
        dims = (0,) if known is None or None in known else (0, *known)
        return _known(np.zeros(dims, self._element_dtype))

    def concat(self, name=None):
        """The elements concatenated along axis 0 (each at least a vector)."""
        elements = [self._element(i) for i in range(len(self._elements))]
        if any(len(e.shape) == 0 for e in elements):
            raise _errors.GradkitValueError(
                "tf.TensorArray.concat takes elements that are at least vectors, as TensorFlow does, but an "
                "element is a scalar. Use stack() instead."
            )
        return _array.concat(elements, 0)
