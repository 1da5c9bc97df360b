"""``Variable``: a named handle on an array whose value assignments replace.

A Variable's shape and dtype are fixed at creation. Reads and assignments go through
:mod:`gradkit._core.frames`, so the same imperative code runs eagerly, inside a
functional transform (where it is a pure function of a State), or under a tape.
"""

from __future__ import annotations

import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from . import dynamic_index, frames
from .index_bounds import check_indices
from .index_update import index_update
from .operators import ValueOperators
from .reference import Reference

_counter = itertools.count()


# Types whose shape and dtype a function gives without building ``.shape`` (the tape's Tensor
# registers itself: its ``.shape`` is a TensorShape-like object, slower to make and read).
SHAPE_DTYPE_OF: dict = {}


def _shape_dtype(value) -> tuple[tuple[int, ...], Any]:
    known = SHAPE_DTYPE_OF.get(type(value))
    if known is not None:
        return known(value)
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        arr = jnp.asarray(frames.concrete(value))
        return arr.shape, arr.dtype
    return tuple(shape), np.dtype(dtype)


def owned_array(value, dtype=None):
    """``value`` as a JAX array that shares no memory with it.

    ``jnp.asarray`` may keep a NumPy array's buffer on CPU; a later write into that array
    must not change a Variable or a recorded constant, as it does not in TensorFlow.
    """
    if isinstance(value, np.ndarray):
        value = value.copy()
    return jnp.asarray(value, dtype=dtype)


def _astype(x, dtype):
    return jnp.asarray(x).astype(dtype)


def _is_weak(x) -> bool:
    # JAX marks arrays made from Python scalars "weakly typed", and weak_type is part of a
    # jit cache key: a Variable holding one would recompile a gk.jit step after its first
    # assignment (whose result is strongly typed). Variables therefore always hold strong types.
    return bool(getattr(getattr(x, "aval", None), "weak_type", False))


_PYTHON_SCALARS = (bool, int, float, complex)
_PYTHON_VALUES = (bool, int, float, complex, list, tuple)


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"the str {value!r}"
    return f"a value of type {type(value).__name__}"


def _numeric_shape_dtype(value, name: str, shape, dtype) -> tuple[tuple[int, ...], Any]:
    """The shape and dtype ``value`` has as an array, or a clear error if it is not numeric."""
    try:
        if isinstance(value, _PYTHON_SCALARS):
            # No array is made: assign_add(1.0) in an eager loop stays as cheap as it was.
            got_shape, got_dtype = (), np.dtype(jnp.result_type(value))
        else:
            got_shape, got_dtype = _shape_dtype(value)
    except (TypeError, ValueError, OverflowError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise _errors.GradkitTypeError(
            _errors.MSG_NOT_NUMERIC.format(
                what=_describe(value), name=name, shape=tuple(shape), dtype=np.dtype(dtype), why=why
            )
        ) from None
    if got_dtype.kind in "OSU":  # a NumPy array of objects or strings
        raise _errors.GradkitTypeError(
            _errors.MSG_NOT_NUMERIC.format(
                what=f"an array of dtype {got_dtype}",
                name=name,
                shape=tuple(shape),
                dtype=np.dtype(dtype),
                why=f"dtype {got_dtype}",
            )
        )
    return got_shape, got_dtype


def _python_int(value, dtype, name: str, verb: str):
    """A Python int operand for a Variable of ``dtype``, checked before any array is made.

    JAX refuses an int outside int32 even where the Variable is a float (TensorFlow
    converts it: ``assign_add(2**40)`` on a float32), and would otherwise raise its own
    OverflowError for an int that its integer dtype cannot hold.
    """
    if type(value) is not int:  # bool is an int, but always fits
        return value
    dtype = np.dtype(dtype)
    to = "from" if verb == "subtract" else ("to" if verb in ("add", "assign") else "into")
    if dtype.kind in "fc":
        try:
            return float(value)  # as TensorFlow converts it
        except OverflowError:
            raise _errors.AssignmentError(
                _errors.MSG_INT_TOO_LARGE_FOR_FLOAT.format(verb=verb, value=value, to=to, name=name, dtype=dtype)
            ) from None
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise _errors.AssignmentError(
                _errors.MSG_INT_OUT_OF_RANGE.format(
                    verb=verb, value=value, to=to, name=name, dtype=dtype, lo=info.min, hi=info.max
                )
            )
    return value


def broadcasts_to(shape, target) -> bool:
    """Whether a value of ``shape`` broadcasts to exactly ``target`` (it may not grow it).

    The one rule for an update of a slice, the operand of ``assign_add``/``assign_sub`` and
    an ``output_gradients`` cotangent: each must have its target's shape or one that
    broadcasts to it (a scalar does), since the result keeps the target's shape.
    """
    target, shape = tuple(target), tuple(shape)
    if shape == target:
        return True  # the usual case, without NumPy's general (and slower) broadcasting
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _as_numpy_kind(dtype):
    """``dtype``, or float32 for a floating dtype NumPy does not know (bfloat16, the float8s):
    ml_dtypes registers casts into those that ``np.can_cast`` calls "same_kind" even from
    complex, so a complex value would lose its imaginary part where float16 refuses it."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.kind == "V" and jnp.issubdtype(dtype, jnp.floating) else dtype


def _loses_kind(got_dtype, dtype) -> bool:
    """Whether a cast from ``got_dtype`` to ``dtype`` would lose a fraction, an imaginary part, ..."""
    return got_dtype != dtype and not np.can_cast(_as_numpy_kind(got_dtype), _as_numpy_kind(dtype), casting="same_kind")


def _check_kind(got_dtype, dtype, name: str) -> None:
    if _loses_kind(got_dtype, dtype):
        raise _errors.AssignmentError(_errors.MSG_DTYPE_CHANGE.format(got=got_dtype, name=name, want=np.dtype(dtype)))


def _check_initial_cast(value, dtype, name) -> None:
    """Refuse an initial value that ``dtype`` cannot hold without losing information (a fraction, an
    imaginary part, a Python int out of range), as an assignment refuses it."""
    dtype = np.dtype(dtype)
    label = "a Variable" if name is None else f"Variable {name!r}"
    if type(value) is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise _errors.GradkitValueError(
                f"[gradkit] cannot create {label} of dtype {dtype} from the Python int {value}: it does not fit "
                f"(range {info.min} to {info.max}), and converting it would wrap it around to another number. Pass "
                "a value in that range, or a dtype that holds it."
            )
        return
    if isinstance(value, _PYTHON_SCALARS):
        got = np.asarray(value).dtype
    elif isinstance(value, (list, tuple)):
        try:
            got = np.asarray(value).dtype
        except ValueError:
            return  # ragged: the conversion below says so
    else:
        got = getattr(value, "dtype", None)
        if got is None:
            return
    got = np.dtype(got)
    if _loses_kind(got, dtype):
        given = f"the Python {type(value).__name__} {value!r}" if isinstance(value, _PYTHON_SCALARS) else None
        raise _errors.GradkitTypeError(
            f"[gradkit] cannot create {label} of dtype {dtype} from {given or f'a value of dtype {got}'}: that cast would lose "
            f"information, which an assignment to it refuses too. Cast the value first "
            f"(jnp.asarray(x).astype(jnp.{dtype})) if that is what you mean, or give a dtype of its kind."
        )


def _cast(value, got_dtype, dtype, name: str = "", verb: str = "assign"):
    """An already checked ``value`` as a strongly typed array of ``dtype``."""
    if isinstance(value, _PYTHON_VALUES):
        try:
            if isinstance(value, (bool, int, float, complex)):
                # Made by NumPy and put on the device: jnp.asarray would compile a
                # conversion program on its first use in a process (a learning rate assigned
                # between compiled steps would count as a compilation).
                return jax.device_put(np.asarray(value, dtype=np.dtype(dtype)))
            return jnp.asarray(value, dtype=dtype)
        except OverflowError:
            # A nested list holding an int the integer dtype cannot hold (a bare int is
            # checked by _python_int before any array is made).
            info = np.iinfo(dtype)
            big = next(x for x in np.ravel(np.asarray(value, dtype=object)) if not info.min <= x <= info.max)
            to = "into" if verb == "write" else "to"
            raise _errors.AssignmentError(
                _errors.MSG_INT_OUT_OF_RANGE.format(
                    verb=verb, value=big, to=to, name=name, dtype=np.dtype(dtype), lo=info.min, hi=info.max
                )
            ) from None
    if isinstance(value, (np.ndarray, np.generic)):
        # Copied now, as TensorFlow's assign copies: a later write into the NumPy array must
        # not change the Variable (jnp.asarray may share a NumPy array's buffer on CPU).
        return owned_array(value, dtype)
    if got_dtype != dtype or _is_weak(value):
        value = frames.apply(_astype, value, dtype)
    return value


def coerce_to(value, shape: tuple[int, ...], dtype, name: str):
    """``value`` as an array of exactly ``shape`` and ``dtype``, or a clear error.

    Python scalars and nested lists convert as TensorFlow converts them; arrays may be
    cast only where the cast keeps their kind (int -> float, float64 -> float32).
    """
    if isinstance(value, (Variable, VariableSlice)):
        value = value._read_value()  # its value, not the handle (a slice would keep its Variable alive)
    value = _python_int(value, dtype, name, "assign")
    got_shape, got_dtype = _numeric_shape_dtype(value, name, shape, dtype)
    if got_shape != tuple(shape):
        raise _errors.AssignmentError(_errors.MSG_SHAPE_CHANGE.format(got=got_shape, name=name, want=tuple(shape)))
    _check_kind(got_dtype, dtype, name)
    return _cast(value, got_dtype, dtype, name)


def coerce_update(value, var: Variable, index):
    """``value`` ready to be written into ``var[index]`` (by set, add, multiply, ...), or a clear error.

    The rules of :func:`coerce_to`, except that the value need only broadcast to the
    slice's shape: a slice assignment may not do what a whole assignment may not.
    """
    if isinstance(value, (Variable, VariableSlice)):
        value = value._read_value()  # its value, not the handle (a slice would keep its Variable alive)
    name = var._label()
    value = _python_int(value, var.dtype, name, "write")
    got_shape, got_dtype = _numeric_shape_dtype(value, name, var.shape, var.dtype)
    _check_kind(got_dtype, var.dtype, name)
    target = slice_shape(var, index)
    if not broadcasts_to(got_shape, target):
        raise _errors.SliceAssignmentError(
            _errors.MSG_SLICE_SHAPE.format(got=got_shape, index=index, name=name, want=target)
        )
    return _cast(value, got_dtype, var.dtype, name, "write")


def check_delta(delta, var: Variable, verb: str):
    """``delta`` as the operand of ``var + delta`` (``verb`` "add") or ``var - delta`` ("subtract").

    Checked before any arithmetic, so a bad delta gets a clear error rather than jax's.
    The result's dtype is checked by the assignment that follows.
    """
    if isinstance(delta, (Variable, VariableSlice)):
        delta = delta._read_value()
    name = var._label()
    delta = _python_int(delta, var.dtype, name, verb)
    got_shape, _ = _numeric_shape_dtype(delta, name, var.shape, var.dtype)
    if not broadcasts_to(got_shape, var.shape):
        raise _errors.AssignmentError(
            _errors.MSG_DELTA_SHAPE.format(
                verb=verb, got=got_shape, to="to" if verb == "add" else "from", name=name, want=var.shape
            )
        )
    # Python lists have no arithmetic with arrays (array + [1.0] raises), but TensorFlow
    # accepts them wherever a tensor is expected.
    return jnp.asarray(delta) if isinstance(delta, (list, tuple)) else delta


def slice_shape(var: Variable, index) -> tuple[int, ...]:
    """The shape of ``var[index]``."""
    return tuple(jax.eval_shape(lambda x: x[index], jax.ShapeDtypeStruct(var.shape, var.dtype)).shape)


def check_not_list_index(index) -> None:
    """Refuse a list as a whole index: NumPy reads ``t[[0, 1]]`` as rows 0 and 1, TensorFlow as
    ``t[0, 1]``, and jax refuses it; guessing either would be silently wrong for the other."""
    if type(index) is list:
        raise _errors.GradkitTypeError(
            f"a list index {index!r:.60} is read differently by NumPy (as the rows it lists) and by "
            "TensorFlow (as a tuple of indices). Write a tuple for TensorFlow's meaning (t[0, 1]), or an array "
            "for NumPy's (t[np.array([0, 1])], or tf.gather(t, [0, 1]))."
        )


def _is_concrete_mask(i) -> bool:
    return (
        isinstance(i, (np.ndarray, jax.Array)) and not isinstance(i, jax.core.Tracer) and i.dtype == np.bool_ and i.ndim
    )


def _mask_as_indices(index):
    """``index`` with each concrete boolean mask (a NumPy or JAX array, not a traced one) as the
    integer indices of its True entries, as NumPy reads it: the same selection, which a layer
    above can pass to a recorded scatter as runtime arrays (a mask's result size depends on
    its values). A tensor of a layer above among the indices (``v[tf.constant(1)]``) is taken
    as its value first: an index carries no gradient, and jax indexes with arrays only."""
    index = _index_values(index)
    items = index if type(index) is tuple else (index,)
    if not any(map(_is_concrete_mask, items)):
        return index
    out: list = []
    for i in items:
        if _is_concrete_mask(i):
            out.extend(np.nonzero(np.asarray(i)))
        else:
            out.append(i)
    return tuple(out)


def read_index(index):
    """``index`` with each Variable (or slice of one) in it read now: as an index item, its
    current value (a recorded tensor under a tape, so ``x[k]`` follows ``k``); as a slice bound
    (``x[k:]``), a Python int, since a bound fixes the result's shape. A handle left in the index
    would be read once, where a compiled program was traced, and never again."""
    if type(index) is tuple:
        return tuple(map(_read_item, index)) if any(map(_holds_handle, index)) else index
    return _read_item(index) if _holds_handle(index) else index


def _holds_handle(i) -> bool:
    if isinstance(i, slice):
        return any(isinstance(b, (Variable, VariableSlice)) for b in (i.start, i.stop, i.step))
    return isinstance(i, (Variable, VariableSlice))


def _read_item(i):
    if isinstance(i, slice):
        return slice(*(_bound(b) for b in (i.start, i.stop, i.step)))
    return i._read_value() if isinstance(i, (Variable, VariableSlice)) else i


def _bound(b):
    if not isinstance(b, (Variable, VariableSlice)):
        return b
    value = frames.concrete(b._read_value())
    label = b._label() if isinstance(b, Variable) else f"a slice of {b._var._label()}"
    if isinstance(value, jax.core.Tracer):
        raise _errors.TracedValueNeededError(
            f"[gradkit] the slice bound {label} (a Variable) is read inside a compiled function (gk.jit, tf.function), "
            "where its value is not known while tracing, but a bound fixes the slice's shape. Index with a "
            "known number, or select with a mask, whose shape does not depend on it (jnp.where(jnp.arange(n) >= k, x, 0), "
            "tf.where(tf.range(n) >= k, x, 0.0)), or take a fixed length with jax.lax.dynamic_slice(x.value, (k.value,), (m,))."
        )
    if not np.issubdtype(np.asarray(value).dtype, np.integer) or np.ndim(value) != 0:
        raise _errors.GradkitTypeError(
            f"[gradkit] the slice bound {label} is not an integer scalar (dtype {np.asarray(value).dtype}, shape "
            f"{np.shape(value)}); slice bounds are integers."
        )
    return int(value)


def index_for_update(index, shape):
    """``index`` as an update (``t.at[index]``, ``v[index].assign``) of an array of ``shape`` takes
    it: Variables in it read (``read_index``) and a concrete boolean mask, checked against the
    axes it covers, as the integer indices of its True entries, which a compiled update can take
    as runtime arrays."""
    index = _index_values(read_index(index))
    check_indices(index, shape, masks_only=True)  # an update may still ask for jax's out-of-range modes
    return _mask_as_indices(index)


def _index_values(index):
    return tuple(map(_index_value, index)) if type(index) is tuple else _index_value(index)


def _index_value(i):
    return frames.concrete(i) if hasattr(type(i), "__gradkit_value__") else i


def _scatter(current, index, update, how):
    return index_update(current, index, update, how)


def _filled(update, shape, dtype):
    return jnp.broadcast_to(jnp.asarray(update, dtype), shape)


def _covers_all(index) -> bool:
    """Whether ``index`` selects every entry as it is (``v[:]``, ``v[...]``, ``v[:, :]``)."""
    items = index if type(index) is tuple else (index,)
    return all(item is Ellipsis or (type(item) is slice and item == slice(None)) for item in items)


class Variable(ValueOperators):
    """A named handle on an array, replaced by assignment.

    Args:
      value: the initial value: anything ``jnp.asarray`` accepts.
      name: a label for printing and error messages (need not be unique).
      trainable: whether ``Module.trainable_variables`` includes it.
      dtype: the dtype to store; by default the value's own (Python floats give float32).

    A Variable used in an expression is its current value, and the result is a plain
    array. Assignment (:meth:`assign`, :meth:`assign_add`, :meth:`assign_sub`,
    ``v[idx].assign(p)``) replaces the value; under a gradkit transform or tape it is a
    pure state-threading step, so gradients flow through it.

    >>> import gradkit as gk
    >>> v = gk.Variable([1.0, 2.0], name="v")
    >>> v.assign_add([10.0, 10.0]).numpy()
    array([11., 12.], dtype=float32)
    >>> v[0].assign(0.0).numpy()
    array([ 0., 12.], dtype=float32)
    """

    __slots__ = ("_value", "_name", "_trainable", "_shape", "_dtype", "_uid", "__weakref__")

    def __init__(self, value, *, name: str | None = None, trainable: bool = True, dtype=None):
        if isinstance(value, (Variable, VariableSlice)):
            value = value._read_value()
        # A Python or NumPy initial value is converted now even inside jax.jit, so that a
        # function may create a local Variable (an accumulator) while it is traced.
        if value is None:
            raise _errors.GradkitValueError(
                "a Variable needs an initial value, but got None. Pass the value it starts from: "
                "gk.Variable(jnp.zeros(shape)) (gradkit.tf: tf.Variable(tf.zeros(shape)))."
            )
        if dtype is not None:
            _check_initial_cast(value, dtype, name)
        with frames.Suspend(), jax.ensure_compile_time_eval():
            try:
                arr = owned_array(frames.concrete(value), dtype)
            except (TypeError, ValueError) as e:
                if str(e).startswith("[gradkit]"):
                    raise
                raise _errors.GradkitTypeError(
                    f"a Variable's initial value must be an array, a number or a nested list of numbers, but got "
                    f"{type(value).__name__} ({str(e).splitlines()[0] if str(e) else 'not convertible'}). "
                    "Convert it to an array first."
                ) from None
            if _is_weak(arr):
                arr = arr.astype(arr.dtype)
        traced = None
        if isinstance(arr, jax.core.Tracer):
            # Only a Variable local to the call being traced (gk.jit, gk.vmap, gk.grad, ...) can
            # start from a traced value: that call's frame holds it. Its live value, which no
            # one can read while it stays local, is a placeholder of its shape and dtype.
            traced = arr
            with jax.ensure_compile_time_eval():
                arr = jnp.zeros(traced.shape, traced.dtype)
        self._value = arr
        self._shape = tuple(arr.shape)
        self._dtype = arr.dtype
        self._uid = next(_counter)
        self._name = name if name is not None else "Variable"
        self._trainable = bool(trainable)
        if not frames.idle():
            frames.note_created(self)
        if traced is not None:
            adopt = getattr(frames.top(), "adopt_traced", None)
            if adopt is None or not adopt(self, traced):
                raise _errors.GradkitTypeError(_errors.MSG_TRACED_INITIAL_VALUE)
        else:
            # A frame that records (a tape) may take the creation as the initial value's
            # assignment, so that nothing cuts the path from what the value was computed from.
            created = getattr(frames.top(), "created", None)
            if created is not None:
                created(self, value)

    def __getstate__(self):
        # Pickled (or deep-copied) with its value, computed if a tape left it pending: the
        # recording behind a pending value holds functions and weak references no pickle takes.
        slots = {}
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if name not in ("__weakref__", "__dict__") and hasattr(self, name):
                    slots[name] = getattr(self, name)
        slots["_value"] = frames.live(self)
        del slots["_uid"]
        return (getattr(self, "__dict__", None) or None, slots)

    def __setstate__(self, state):
        # A copy is a Variable of its own: a new identity, so it is never taken for the
        # original (nor for one made before it, by a transform telling its local Variables apart).
        attributes, slots = state
        if attributes:
            self.__dict__.update(attributes)
        for name, value in slots.items():
            object.__setattr__(self, name, value)
        self._uid = next(_counter)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _register_variable_type(cls)  # a pytree as Variable is (see below)

    # -- reading ---------------------------------------------------------------------------
    def _read_value(self):
        return frames.read(self)

    @property
    def __jax_array__(self):
        # ``x @ v`` with ``x`` a JAX array probes this first: where the read is recorded the
        # property is absent, so jax defers to our reflected operator, which reads ``v`` and
        # records. Answered without reading when that is known, so the operator reads once.
        if frames.read_is_recorded(self):
            raise AttributeError("__jax_array__")
        return ValueOperators.__jax_array__.fget(self)

    @property
    def value(self):
        """The current value (a JAX array; a recorded tensor under a tape)."""
        return frames.read(self)

    def read_value(self):
        """The current value, as ``tf.Variable.read_value`` gives it."""
        return frames.read(self)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def trainable(self) -> bool:
        # Tapes watch a Variable on read by ``_trainable``, the flag it was made with: a
        # subclass may let users change ``trainable`` (Keras freezes a layer's weights
        # that way) without changing what a tape watches, as in TensorFlow.
        return self._trainable

    @property
    def at(self):
        """Not a Variable's: a jax array's ``.at`` makes a new array, where a Variable is written in place."""
        raise _errors.GradkitAttributeError(
            f"Variable {self._label()} has no .at: jax's x.at[idx].set(p) makes a new array, and a Variable is "
            "written in place. Write part of it with v[idx].assign(p) (or .assign_add, .assign_sub, ...); for a pure "
            "update, state.at[v][idx].set(p); for a new array from its value, v.value.at[idx].set(p)."
        )

    # -- assignment ------------------------------------------------------------------------
    def assign(self, value) -> Variable:
        """Replace the value with ``value`` (same shape; a dtype that casts without loss).

        Returns the Variable, so calls chain. On a bad value nothing changes.
        """
        frames.assign(self, coerce_to(value, self._shape, self._dtype, self._label()))
        return self

    def assign_add(self, delta) -> Variable:
        """``v.assign(v + delta)``."""
        delta = check_delta(delta, self, "add")
        return self.assign(self._read_value() + delta)

    def assign_sub(self, delta) -> Variable:
        """``v.assign(v - delta)``."""
        delta = check_delta(delta, self, "subtract")
        return self.assign(self._read_value() - delta)

    def __getitem__(self, index) -> VariableSlice:
        check_not_list_index(index)
        return VariableSlice(self, index)

    # -- identity --------------------------------------------------------------------------
    # A Variable is a handle: two Variables are the same key only if they are the same object.
    # ``==`` compares values elementwise, like arrays.
    __hash__ = object.__hash__

    def ref(self) -> Reference:
        """A hashable reference that compares by identity (TensorFlow's ``v.ref()``); ``deref()``
        gives the Variable back. (A Variable hashes by identity too, but its ``==`` compares values.)"""
        return Reference(self)

    def _label(self) -> str:
        return f"'{self._name}'"

    def __repr__(self) -> str:
        try:
            value = np.asarray(frames.concrete(self._value))
            shown = np.array2string(value, precision=6, separator=", ")
        except Exception:  # a traced value left over from a transform, or none: show what it is
            shown = getattr(self._value, "shown", None) or type(self._value).__name__
        return f"<gk.Variable '{self._name}' shape={self._shape} dtype={self._dtype}, value={shown}>"


class VariableSlice(ValueOperators):
    """``v[index]``: reads as the sliced value; ``.assign(p)`` writes ``p`` into that slice.

    As in TensorFlow, the value is the Variable's value when the slice was taken (a later
    assignment to the Variable does not change it), while ``assign`` writes into the
    Variable's current value. Basic and advanced indexing follow ``jax.numpy``
    (``x.at[index].set(p)``); the value written must broadcast to the slice's shape.
    """

    __slots__ = ("_var", "_index", "_base", "_sliced")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _register_slice_type(cls)  # a pytree as VariableSlice is (see below)

    def __init__(self, var: Variable, index):
        self._var = var
        self._index = index = index_for_update(index, var.shape)
        check_indices(index, var.shape)  # jax would clamp a read and drop a write
        self._base = var._read_value()
        # Under a frame (a recording tape, a transform) the slice is taken now, where it is
        # recorded, so it is a tensor of that frame even when used after it; otherwise only
        # when used (a slice taken to be assigned is never computed).
        self._sliced = None if frames.idle() else self._base[index]

    def _read_value(self):
        if self._sliced is None:
            self._sliced = self._base[self._index]
        return self._sliced

    @property
    def shape(self):
        return slice_shape(self._var, self._index)

    @property
    def dtype(self):
        return self._var.dtype

    def _update(self, update, how: str) -> Variable:
        var = self._var
        update = coerce_update(update, var, self._index)
        if how == "subtract":
            update, how = -update, "add"
        if how == "set" and _covers_all(self._index):
            # The whole value replaced: the new value does not depend on the old one (a gradient
            # with respect to the Variable's entry value is then None, as for v.assign).
            return var.assign(frames.apply(_filled, update, var.shape, var.dtype))
        runtime = dynamic_index.runtime_box(self._index, var.shape) if how in dynamic_index.WRITES else None
        if runtime is not None:  # outside a jax trace: one program for every start (see dynamic_index)
            box, starts = runtime
            new = frames.apply(dynamic_index.write_compiled, var._read_value(), starts, box, update, how)
        else:
            new = frames.apply(_scatter, var._read_value(), self._index, update, how)
        return var.assign(new)

    def assign(self, value) -> Variable:
        """Write ``value`` into this slice of the Variable; returns the Variable."""
        return self._update(value, "set")

    def assign_add(self, delta) -> Variable:
        return self._update(delta, "add")

    def assign_sub(self, delta) -> Variable:
        return self._update(delta, "subtract")

    def __getitem__(self, index):
        return self._read_value()[index]

    def __repr__(self) -> str:
        return f"<gk.Variable '{self._var.name}'[{self._index!r}]>"


# A Variable flattens to its current value, so ``jnp`` functions, ``jax.jit`` and the
# tree utilities accept it where an array is expected. It unflattens to that plain value:
# jax never makes a second handle with the same name. jax registers exact types, so each
# subclass (gradkit.tf's Variable, Keras' variables, a user's own) registers as it is defined.
def _register_variable_type(cls) -> None:
    jax.tree_util.register_pytree_node(cls, lambda v: ((v._read_value(),), None), lambda _, c: c[0])


def _register_slice_type(cls) -> None:
    jax.tree_util.register_pytree_node(cls, lambda s: ((s._read_value(),), None), lambda _, c: c[0])


_register_variable_type(Variable)
_register_slice_type(VariableSlice)


def is_variable(x) -> bool:
    return isinstance(x, Variable)
