"""``Tensor``: the value of a recorded op (or a concrete value wrapped for the tape API).

A Tensor knows its shape and dtype at once. Its value is computed when Python needs it
(``.numpy()``, ``bool()``, ``float()``, printing, ``np.asarray``), as one compiled call
for its whole recorded history.
"""

from __future__ import annotations

import contextlib
import math
import operator
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._core import dynamic_index, index_bounds
from .._core.operators import DIRECT_REFLECTED, OPERATOR_SYMBOLS, install_binary_operators
from .._core.reference import Reference
from .._core.variable import SHAPE_DTYPE_OF, check_not_list_index, read_index
from . import array_methods, bounded, graph, record
from .bounded import BoundedDict
from .graph import Node, make_leaf
from .shape import Shape

# While a tf.data function is traced for its element spec: {id(tensor): the sizes set_shape declared}.
SHAPE_DECLARATIONS = threading.local()


def _getitem(x, index):
    return x[index]


_STATIC_ITEMS = frozenset((int, bool, type(None), type(Ellipsis)))
_SLICE_BOUNDS = frozenset((int, type(None)))
_index_ops: dict = BoundedDict(bounded.INTERNED)  # (index key, input aval id) -> (op, output_avals)


def _static_index_key(index):
    """A cache key for an index made of Python ints, bools, None, Ellipsis and slices of ints
    (``t[:, 0]``, ``t[1:-1]``), whose meaning is fixed by its value; None for any other."""
    items = index if type(index) is tuple else (index,)
    for item in items:
        kind = type(item)
        if kind is slice:
            if not (
                type(item.start) in _SLICE_BOUNDS
                and type(item.stop) in _SLICE_BOUNDS
                and type(item.step) in _SLICE_BOUNDS
            ):
                return None
        elif kind not in _STATIC_ITEMS:
            return None
    return graph._hashable(index)


def _remember_index_op(key, index, aval) -> None:
    """After ``t[index]`` was recorded (its checks passed) for a float tensor of ``aval``: the
    op and output avals its next use takes without checking again."""
    if not jnp.issubdtype(aval.dtype, jnp.inexact):
        return  # an integer tensor's static index may give a known value instead (see __getitem__)
    runtime = dynamic_index.runtime_box(index, aval.shape)
    if runtime is not None:  # recorded as dynamic_index.take: its box and starts, checked
        _index_ops[(key, id(aval))] = runtime
        return
    if dynamic_index.box_of(index, aval.shape) is not None:
        return  # under a trace: the static op, checked each time (an eager tape must not meet it)
    op = graph.intern_op(_getitem, record.args_treedef(2, ()), (None, index), (0,))
    shapes = graph._aval_cache.get((op.key, id(aval)))
    if shapes is not None:
        _index_ops[(key, id(aval))] = (op, shapes)


def _is_static_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(
        isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis))) and not isinstance(i, bool) for i in items
    )


def _concrete_index(item):
    """An index item's value as a NumPy array when it is a concrete integer or boolean index (a
    number, a NumPy or JAX array, a tensor already computed), else None."""
    if isinstance(item, Tensor):
        values = item._node.values
        value = None if values is None else values[item._index]
        if value is None or isinstance(value, jax.core.Tracer):
            return None
        value = np.asarray(value)
        return value if value.dtype.kind in "iub" else None
    return index_bounds.concrete_index(item)


@contextlib.contextmanager
def _index_errors(index, shape):
    """jax's refusal of an index (two Ellipses, more indices than axes, a float) as gradkit's
    error, which names the index and the tensor's shape."""
    try:
        yield
    except (IndexError, TypeError) as e:
        if str(e).startswith("[gradkit]"):
            raise
        if isinstance(e, jax.errors.TracerArrayConversionError) and _has_slice_bound(index):
            raise _errors.TracedValueNeededError(
                f"[gradkit] a tensor of shape {tuple(shape)} cannot be sliced with a traced bound inside a compiled "
                "function (tf.function, gk.jit): the bound has no value while the function is traced, and the "
                "bounds fix the result's shape. Take a fixed length from a traced start: tf.slice(x, [i], [2]) or "
                "tf.gather(x, i + tf.range(2)); or select with a mask, tf.where(...)."
            ) from None
        kind = _errors.GradkitIndexError if isinstance(e, IndexError) else _errors.GradkitTypeError
        raise kind(
            f"[gradkit] a tensor of shape {tuple(shape)} cannot be indexed by {index!r:.80}: {e}. Give at most one "
            "index per axis and one Ellipsis; each index an int, a slice, None (a new axis), an integer array or a "
            "boolean mask."
        ) from None


def _has_slice_bound(index) -> bool:
    items = index if type(index) is tuple else (index,)
    return any(
        isinstance(i, slice) and any(b is not None and not isinstance(b, int) for b in (i.start, i.stop, i.step))
        for i in items
    )


def _check_indices(index, shape) -> None:
    """Refuse an integer index outside its axis, as NumPy and TensorFlow do (jax would clamp it
    silently to the last element)."""
    index_bounds.check_indices(index, shape, _concrete_index)


def _boolean_mask_index(index):
    """``index`` with a concrete boolean mask (``t[t > 0]``, ``t[np_mask]``, ``t[mask, 0]``) as the
    integer indices of its True entries, which a recorded op can take (a mask's result size
    depends on its values)."""
    if type(index) is tuple:
        items, changed = [], False
        for item in index:  # a tuple inside it is a sequence index, left as it is
            expanded = item if type(item) is tuple else _boolean_mask_index(item)
            changed = changed or expanded is not item
            items.extend(expanded if type(expanded) is tuple and type(item) is not tuple else (expanded,))
        return tuple(items) if changed else index  # the same object when no mask was read
    value = _concrete_index(index)
    if value is None and isinstance(index, Tensor) and index.dtype == np.bool_ and not _traced(index):
        value = np.asarray(record.value_of(index))
    if value is None or value.dtype.kind != "b":
        return index
    if value.ndim == 0:
        return bool(value)  # t[np.True_] adds an axis, as t[True] does (jax takes it for a mask)
    return tuple(np.nonzero(value))


def _traced(t) -> bool:
    values = t._node.values
    return values is not None and isinstance(values[t._index], jax.core.Tracer)


class Tensor:
    """An array value that a GradientTape may be recording.

    Behaves like an array: Python operators, indexing, ``.shape``, ``.dtype``,
    ``.numpy()``, ``np.asarray(t)``. Operations on it go through ``gk.numpy`` (or
    ``gk.lift``) so that a recording tape sees them; a plain ``jnp`` call on a recorded
    tensor raises an error instead of silently dropping its gradient.
    """

    __slots__ = ("_node", "_index", "__weakref__")
    __array_priority__ = 1000

    @classmethod
    def _make(cls, node: Node, index: int = 0) -> Tensor:
        t = object.__new__(cls)
        t._node = node
        t._index = index
        return t

    @classmethod
    def concrete(cls, value) -> Tensor:
        """Wrap a JAX array (not recorded by any tape)."""
        return cls._make(make_leaf(value, 0, None))

    def __init__(self, value):
        self._node = make_leaf(value.__gradkit_value__() if isinstance(value, Tensor) else value, 0, None)
        self._index = 0

    # -- what it is --------------------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        return Shape(self._node.avals[self._index].shape)

    def get_shape(self) -> Shape:
        return self.shape

    def set_shape(self, shape) -> None:
        """TensorFlow's ``set_shape``: a check, since a gradkit tensor's shape is always known;
        a shape that does not fit (``None`` dimensions fit any) raises ``ValueError``."""
        if shape is None or getattr(shape, "rank", 0) is None:
            return
        dims = [None if d is None or d == -1 else int(d) for d in shape]
        declarations = getattr(SHAPE_DECLARATIONS, "found", None)
        if declarations is not None:
            # Traced on stand-in sizes for a dataset's element spec: the declaration is kept for
            # the spec (TensorFlow's static shape), and checked when the function runs on data.
            declarations[id(self)] = dims
            return
        if len(dims) != len(self.shape) or any(d is not None and d != s for d, s in zip(dims, self.shape)):
            from .._errors import GradkitValueError

            raise GradkitValueError(
                f"set_shape({list(shape)}) does not fit the tensor's shape {list(self.shape)}, as TensorFlow "
                "checks. Reshape it (tf.reshape) if you mean to change the shape."
            )

    @property
    def dtype(self):
        return np.dtype(self._node.avals[self._index].dtype)

    @property
    def ndim(self) -> int:
        return len(self._node.avals[self._index].shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def weak_type(self) -> bool:
        return bool(self._node.avals[self._index].weak_type)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError(
                "[gradkit] cannot iterate over a 0-d tensor (a scalar), as in TensorFlow; read it with t[()]"
            )
        return (self[i] for i in range(self.shape[0]))

    # -- its value ---------------------------------------------------------------------------
    def __gradkit_value__(self):
        return record.value_of(self)

    @property
    def numpy(self):
        """The value as a NumPy array of its own (writable, as TensorFlow's), and for a 0-d
        tensor a NumPy scalar (``np.float32``), as TensorFlow's ``Tensor.numpy()``; the value
        leaves every tape here. A tensor traced inside a compiled function has no ``numpy``
        (``hasattr(x, "numpy")`` is False there, as for TensorFlow's symbolic tensors)."""
        values = self._node.values
        if values is not None and isinstance(values[self._index], jax.core.Tracer):
            raise _errors.TracedTensorNumpyError(
                f"[gradkit] x.numpy() of a tensor of shape {tuple(self.shape)} inside a compiled function "
                "(tf.function, gk.jit): a traced tensor has no value yet, and, as TensorFlow's symbolic tensors, "
                "no numpy(). Return the tensor from the function and call .numpy() on the result, or show it "
                "with tf.print(x) / jax.debug.print."
            )
        return self._numpy

    def _numpy(self) -> np.ndarray | np.generic:
        out = np.array(record.value_of(self))
        if out.ndim == 0:
            out = out[()]
        if self._node.mask and self._node.session is graph.local.session:
            record.note_numpy_exit(out, self._node, graph.user_site())  # explain() recognises it later
        return out

    def _refuse_jax_conversion(self, what: str) -> None:
        """Raise where jax converts this tensor while a tape records it (its gradient would be
        lost); a Variable whose read is this tensor asks too (``ValueOperators.__array__``)."""
        if record.is_recorded(self):
            record.check_not_recorded(self, what)

    def __array__(self, dtype=None, copy=None):
        # NumPy, matplotlib and friends may take the value (it leaves the tape, as in
        # TensorFlow); a jax function converting it would silently lose the gradient.
        if record.is_recorded(self) and sys._getframe(1).f_globals.get("__name__", "").startswith("jax."):
            record.check_not_recorded(self, "a jax.numpy function")
        return np.asarray(self._numpy(), dtype=dtype)

    @property
    def __jax_array__(self):
        # Absent while a tape records this tensor, so that ``jax_array + tensor`` defers to
        # our ``__radd__`` (which records) instead of converting and losing the gradient.
        if record.is_recorded(self):
            raise AttributeError("__jax_array__")
        return lambda: record.value_of(self)

    def item(self):
        return self._numpy().item()

    def tolist(self):
        return self._numpy().tolist()

    def __bool__(self):
        value = self._numpy()
        return bool(value.size > 0 and value)  # an empty tensor is False, as in TensorFlow

    def __float__(self):
        return float(self._numpy())

    def __int__(self):
        return int(self._numpy())

    def __index__(self):
        return operator.index(self._numpy())

    def __complex__(self):
        return complex(self._numpy())

    def __format__(self, spec):
        # As TensorFlow's: the value formatted (f"loss={loss}" shows 0.25), with or without a spec;
        # inside a compiled function, where there is no value, the tensor's description.
        values = self._node.values
        if values is not None and isinstance(values[self._index], jax.core.Tracer):
            return str(self)
        return format(self._numpy(), spec)

    def __repr__(self):
        return f"<gk.Tensor: shape={self.shape}, dtype={self.dtype}, numpy={_show(self)}>"

    def __str__(self):
        return f"gk.Tensor({_show(self)}, shape={self.shape}, dtype={self.dtype})"

    __hash__ = object.__hash__

    @property
    def device(self) -> str:
        """Where the value is, by TensorFlow's full device name
        (``'/job:localhost/replica:0/task:0/device:CPU:0'``), as TensorFlow's ``Tensor.device``; ``''``
        for a tensor traced inside a compiled function, as for TensorFlow's graph tensors."""
        values = self._node.values
        value = None if values is None else values[self._index]
        if isinstance(value, jax.core.Tracer):
            return ""
        return device_name(value)

    backing_device = device

    def experimental_ref(self) -> Reference:
        """TensorFlow's older name of ``ref()``."""
        return Reference(self)

    def ref(self) -> Reference:
        """A hashable reference that compares by identity (TensorFlow's ``t.ref()``); ``deref()``
        gives the tensor back."""
        return Reference(self)

    # -- operators (the binary ones are installed below, from the core's table) --------------
    def __neg__(self):
        return record.apply_unary(operator.neg, self)

    def __pos__(self):
        return self

    def __abs__(self):
        return record.apply_unary(jnp.abs, self)

    def __invert__(self):
        return record.apply_unary(operator.invert, self)

    def __getitem__(self, index):
        # The hot path: a recorded float tensor indexed by Python ints and slices, as it was
        # before (the checks below passed then, for this shape): the node, from a cached op.
        node = self._node
        session = graph.local.session
        key = None
        if session is not None and node.session is session:
            key = _static_index_key(index)
            if key is not None:
                hit = _index_ops.get((key, id(node.avals[self._index])))
                if hit is not None:
                    if type(hit[0]) is dynamic_index.Box:  # box, starts: a walking index (see below)
                        return record.apply(dynamic_index.take, self, hit[1], hit[0])
                    return record.record_single(hit[0], self, hit[1], session)
        out = self._getitem_checked(index)
        if key is not None:
            _remember_index_op(key, index, node.avals[self._index])
        return out

    def _getitem_checked(self, index):
        index = read_index(index)  # a Variable in it (x[k:], x[k]) read now, not baked into a cached op
        check_not_list_index(index)
        shape = self._node.avals[self._index].shape
        _check_indices(index, shape)  # a mask's shape too, before it is read as indices
        read = _boolean_mask_index(index)
        if read is not index:  # a mask only now computed may hide the axes after it from the first check
            _check_indices(read, shape)
        index = read
        if _is_static_index(index) and np.issubdtype(self.dtype, np.integer) and not record.is_recorded(self):
            # A known integer (tf.shape(x)[0], an element of tf.range(n)) stays known inside a
            # tf.function trace, as a number a Python loop or a TensorArray index can read.
            value = record.value_of(self)
            if not isinstance(value, jax.core.Tracer):
                with jax.ensure_compile_time_eval(), _index_errors(index, self.shape):
                    return Tensor.concrete(_getitem(value, index))
        if record.is_recorded(self):
            runtime = dynamic_index.runtime_box(index, shape)
            if runtime is not None:
                # An eager tape records the starts as an input: a loop that walks the tensor
                # (x[i:i + 16], x[:, t]) runs one compiled program for every position.
                return record.apply(dynamic_index.take, self, runtime[1], runtime[0])
        with _index_errors(index, self.shape):
            return record.apply(_getitem, self, index)

    # -- array methods -----------------------------------------------------------------------
    @property
    def T(self):
        return record.apply_unary(jnp.transpose, self)

    def astype(self, dtype):
        return record.apply(jnp.asarray, self, dtype=np.dtype(dtype))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return record.apply(jnp.reshape, self, tuple(int(s) for s in shape))

    def transpose(self, *axes):
        if sys._getframe(1).f_globals.get("__name__", "").startswith("numpy"):
            return self._numpy().transpose(*axes)  # np.moveaxis(t, ...): NumPy takes the value
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return record.apply(jnp.transpose, self, tuple(axes) if axes else None)

    def flatten(self):
        return record.apply(jnp.ravel, self)

    # The other jax.Array methods (sum, mean, clip, cumsum, at[], real, ...) are installed
    # below, lifted wholesale from jax.Array (array_methods.py).


def device_name(value=None) -> str:
    """The device holding ``value`` (a jax array; else the one JAX computes on), by TensorFlow's full
    name: ``'/job:localhost/replica:0/task:0/device:GPU:0'``."""
    devices = getattr(value, "devices", None)
    device = next(iter(devices())) if devices is not None else jax.devices()[0]
    kind = {"cpu": "CPU", "tpu": "TPU"}.get(device.platform, "GPU")
    return f"/job:localhost/replica:0/task:0/device:{kind}:{device.id}"


def _show(t: Tensor) -> str:
    try:
        return np.array2string(np.asarray(record.value_of(t)), precision=7, separator=", ")
    except Exception:  # a traced value inside jax.jit: shapes only
        return "<traced>"


_SYMBOLS = OPERATOR_SYMBOLS


def _forward(fn):
    def method(self, other):
        try:
            return record.apply_binary(fn, self, other)
        except (TypeError, ValueError, IndexError) as error:
            raise _errors.bad_op_inputs(error, f"the operator {_SYMBOLS[fn]}", (self, other)) from error

    return method


def _reflected(fn):
    def method(self, other):
        try:
            return record.apply_binary_reflected(fn, self, other)
        except (TypeError, ValueError, IndexError) as error:
            raise _errors.bad_op_inputs(error, f"the operator {_SYMBOLS[fn]}", (other, self)) from error

    return method


install_binary_operators(Tensor, _forward, _reflected)
# As jax.Array's: divmod(t, y) is (t // y, t % y); round(t) rounds half to even, to integers
# without ndigits (as Python's round of a float).
Tensor.__divmod__ = lambda self, other: (self // other, self % other)
Tensor.__rdivmod__ = lambda self, other: (other // self, other % self)
Tensor.__round__ = lambda self, ndigits=None: record.apply(type(jnp.zeros(())).__round__, self, ndigits)
DIRECT_REFLECTED.add(Tensor)


def shapes_cannot_compare(shape, other) -> bool:
    """Whether ``==`` of a value of ``shape`` with ``other`` is TensorFlow's no-match answer: ``other``
    is None, or its shape does not broadcast with ``shape``."""
    if other is None:
        return True
    if isinstance(other, (list, tuple)):
        try:
            other_shape = np.shape(other)
        except ValueError:  # ragged: the op itself says what is wrong
            return False
    else:
        other_shape = getattr(other, "shape", None)
        if other_shape is None:
            return False
    try:
        np.broadcast_shapes(tuple(shape), tuple(other_shape))
    except (ValueError, TypeError):  # TypeError: a None dimension (a Keras symbolic tensor)
        return not any(d is None for d in tuple(other_shape))
    return False


def compare_any_shapes(method, no_match: bool):
    # TensorFlow's ``==`` (``incompatible_shape_error=False``): against None a Python bool, between
    # shapes that do not broadcast a scalar bool tensor, so that ``v in variables``, ``list.index``
    # and ``list.remove`` work over tensors of different shapes.
    def compare(self, other):
        if shapes_cannot_compare(self.shape, other):
            return no_match if other is None else Tensor.concrete(np.bool_(no_match))
        return method(self, other)

    compare.__name__ = method.__name__
    return compare


Tensor.__eq__ = compare_any_shapes(Tensor.__eq__, False)
Tensor.__ne__ = compare_any_shapes(Tensor.__ne__, True)


def _shape_dtype(t: Tensor) -> tuple:
    aval = t._node.avals[t._index]
    return aval.shape, aval.dtype


SHAPE_DTYPE_OF[Tensor] = _shape_dtype
array_methods.install(Tensor)
record.install_tensor(Tensor)


def _flatten_tensor(t: Tensor):
    record.check_not_recorded(t, "a jax transform or tree utility")
    return (record.value_of(t),), None


# A concrete Tensor passes into jax code as its value; a recorded one raises the clear
# error above instead of losing its gradient.
jax.tree_util.register_pytree_node(Tensor, _flatten_tensor, lambda _, c: c[0])
