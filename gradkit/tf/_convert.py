"""Turning TF-style inputs into values the tape records, and results into ``gk.Tensor``.

TensorFlow accepts Variables, Python (nested) lists of tensors and plain numbers
wherever a tensor goes; gradkit.tf ops do the same. A list holding a Tensor or a
Variable is stacked with ``gnp.stack`` so the tape records the stacking.
"""

from __future__ import annotations

import sys

import jax
import jax.export  # is_symbolic_dim: a submodule jax < 0.8 does not import with jax itself
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable, VariableSlice, owned_array
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.shape import Shape
from gradkit._tape.tensor import Tensor

from . import _name_scope

_stack = lift(jnp.stack)


# What TensorFlow counts as a tensor: a tensor, a Variable, and a read of a Variable's slice
# (``v[0]``, which is also a handle for ``v[0].assign``).
TENSOR_LIKE = (Tensor, Variable, VariableSlice)


def _has_tensor(x) -> bool:
    if isinstance(x, (Tensor, Variable, VariableSlice)):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(e) for e in x)
    return False


def convert(x, dtype=None):
    """A value an op can take: a Tensor, a traced value, or a strongly typed JAX array."""
    dense = getattr(type(x), "__gradkit_dense__", None)  # a tf.IndexedSlices: its dense tensor
    if dense is not None:
        x = dense(x)
    if isinstance(x, Variable):
        x = x.value
    elif isinstance(x, VariableSlice):
        x = x._read_value()
    elif isinstance(x, (list, tuple)) and _has_tensor(x):
        x = _stack(list(convert_like(*x, what="a list of tensors")))  # [h, [1.0, 2.0]]: float16 rows
    elif not isinstance(x, (Tensor, jax.Array, jax.core.Tracer)):
        try:
            arr = np.asarray(x)
        except _errors.GradkitError:  # an object's own refusal to be a value (a KerasTensor's)
            raise
        except ValueError:  # NumPy's refusal of ragged rows
            raise _errors.GradkitValueError(
                f"Can't convert non-rectangular Python sequence to Tensor (TensorFlow's error): {_short(x)}. Give "
                "rows of one length (pad them, e.g. with tf.keras.utils.pad_sequences); tf.ragged is not part of "
                "gradkit.tf."
            ) from None
        if arr.dtype == object:
            _refuse_objects(x, arr)
        # Python numbers and lists get TensorFlow's defaults; a NumPy array keeps its dtype, as
        # in TensorFlow (float64 stays float64 where JAX has 64-bit types: jax_enable_x64).
        if dtype is None and not isinstance(x, (np.ndarray, np.generic)):
            first = _first_leaf(x)
            if isinstance(first, (np.ndarray, np.generic)) and first.dtype.kind == "f":
                # TensorFlow takes a list's float dtype from its first element when that is NumPy's:
                # [np.float16(1), 2.0] is float16, [2.0, np.float64(1)] float32.
                arr = arr.astype(first.dtype)
            elif arr.dtype == np.float64:
                arr = arr.astype(np.float32)
            elif arr.dtype == np.int64 and _fits(arr, np.int32):
                arr = arr.astype(np.int32)  # TensorFlow's int32, and int64 only where it must
        if dtype is not None and arr.dtype.kind in "iu":
            target = np.dtype(dtype)
            # In NumPy: 2**40 as a float (bfloat16 too) needs no 64-bit JAX integer, nor does
            # 3000000000 as a uint32.
            if target.kind in "fc" or target == np.dtype(jnp.bfloat16) or (target.kind in "iu" and _fits(arr, target)):
                arr = arr.astype(target)
        _check_integers_fit(arr, x)
        # Data given in Python or NumPy stays known inside tf.function, as a TensorFlow graph
        # constant is: indices, ids and counts are checked there as eagerly, and a tf.data
        # pipeline built inside the function can hold it.
        with jax.ensure_compile_time_eval():
            x = owned_array(arr)  # tf.constant copies: later writes to a NumPy input must not leak in
            if dtype is not None and np.dtype(x.dtype) != np.dtype(dtype):
                x = _cast(x, np.dtype(dtype))
        return x
    if dtype is not None and np.dtype(x.dtype) != np.dtype(dtype):
        x = _cast(x, np.dtype(dtype))
    return x


def _first_leaf(x):
    """The first number of nested lists and tuples (or what stands in its place)."""
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return x


def _refuse_objects(x, arr: np.ndarray) -> None:
    """TensorFlow's ValueError for a value no tensor can hold: None (often a gradient a tape gave
    for a source the target does not depend on), or an object of no numeric kind."""
    leaves = arr.ravel().tolist() if arr.size <= 10_000 else []
    if x is None or any(leaf is None for leaf in leaves):
        raise _errors.GradkitValueError(
            f"Attempt to convert a value ({_short(x)}) with an unsupported type (None) to a Tensor (TensorFlow's "
            "error). A None from tape.gradient means the target does not depend on that source: pass "
            "unconnected_gradients=tf.UnconnectedGradients.ZERO to get zeros, or leave that source out."
        )
    raise _errors.GradkitValueError(
        f"Attempt to convert a value ({_short(x)}) with an unsupported type ({type(x).__name__}) to a Tensor "
        "(TensorFlow's error). Give a number, a NumPy array, or nested lists of numbers."
    )


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _fits(arr: np.ndarray, dtype) -> bool:
    info = np.iinfo(dtype)
    return arr.size == 0 or (int(arr.min()) >= info.min and int(arr.max()) <= info.max)


def _check_integers_fit(arr: np.ndarray, x) -> None:
    """64-bit integers that JAX would wrap into 32 bits (its 64-bit types are off): a clear error
    rather than a silently different number (2**40 would become 0)."""
    if arr.dtype.kind not in "iu" or arr.dtype.itemsize != 8:
        return
    narrow = np.dtype(jax.dtypes.canonicalize_dtype(arr.dtype))
    if narrow.itemsize == 8 or _fits(arr, narrow):
        return
    shown = str(arr.tolist()) if arr.size <= 6 else f"of shape {arr.shape}"
    raise _errors.GradkitValueError(
        f"the integer data {shown} ({type(x).__name__}) does not fit in {narrow.name}, and JAX's "
        f"64-bit types are off, so it would silently wrap (TensorFlow makes it {arr.dtype.name}). Turn them "
        "on before creating any array: jax.config.update('jax_enable_x64', True), or the environment "
        "variable JAX_ENABLE_X64=1."
    )


def _is_python_value(x) -> bool:
    return isinstance(x, (bool, int, float, complex, list, tuple)) and not _has_tensor(x)


def _takes_tensors_dtype(x) -> bool:
    """A Python number or list, or NumPy numbers: an op converts them to its tensors' dtype."""
    return _is_python_value(x) or (isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biufc")


def convert_like(*xs, what: str = "an op"):
    """``xs`` converted as one op's operands: a Python number or list takes the dtype of the first
    tensor among them, as TensorFlow converts it (``tf.multiply(h, 2.0)`` of a float16 ``h`` is
    float16, where a float32 constant would promote it, and ``tf.add(n, 2.5)`` of an int32 ``n``
    raises); NumPy numbers are cast to it, as TensorFlow casts them (``tf.multiply(h,
    np.float32(0.5))`` is float16 too). The operators keep jax's rule for NumPy operands."""
    dtype = next((x.dtype for x in xs if not _takes_tensors_dtype(x) and hasattr(x, "dtype")), None)
    if dtype is None:
        return tuple(convert(x) for x in xs)
    out = []
    for x in xs:
        if _takes_tensors_dtype(x):
            check_python_value(x, dtype, what)
            out.append(convert(x, dtype))
        else:
            out.append(convert(x))
    return tuple(out)


def check_python_value(value, dtype, what: str) -> None:
    """Refuse a Python number or list that ``dtype`` cannot hold as it is, as TensorFlow does
    (``tf.constant(1.7, dtype=tf.int32)`` raises there; a cast would truncate it silently).
    NumPy arrays and tensors are cast, as in TensorFlow. Strings are refused: gradkit.tf has
    no string tensors."""
    strings = isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.dtype.kind in "SU")
    if not strings and isinstance(value, (list, tuple)) and value and not _has_tensor(value):
        strings = any(isinstance(x, (str, bytes)) for x in jax.tree_util.tree_leaves(value))
    if strings:
        raise _errors.GradkitTypeError(
            f"{what} got the string {value!r:.60}, but gradkit.tf has no string tensors (JAX arrays hold "
            "numbers only). Keep strings in Python (a dict from string to index, then tf.constant(index))."
        )
    if dtype is None or not isinstance(value, (bool, int, float, complex, list, tuple)) or _has_tensor(value):
        return
    array = np.asarray(value)
    if array.size == 0:  # no value to lose: tf.constant([], tf.int32) is an empty int32 vector
        return
    kind, target = array.dtype.kind, np.dtype(dtype).kind
    if (kind == "c" and target != "c") or (kind == "f" and target in "iub") or (kind in "iu" and target == "b"):
        raise _errors.GradkitTypeError(
            f"{what} cannot convert {value!r} to dtype {np.dtype(dtype).name}: TensorFlow refuses a Python "
            f"value that type cannot hold as written. Write it in that type, or cast it: "
            f"tf.cast(tf.constant({value!r}), tf.{np.dtype(dtype).name})."
        )


_astype = lift(lambda x, dtype: x.astype(dtype))


def _cast(x, dtype):
    return _astype(x, dtype=dtype)


def wrap(out, traced: bool = False):
    """JAX arrays in ``out`` become ``gk.Tensor``: concrete ones always, traced ones while a
    ``tf.function`` is traced or with ``traced=True`` (the values gradkit.tf hands a user's function
    it traces itself: a tape watches them, ``.shape.as_list()`` works); under a plain jax transform
    they stay jax values, as jax expects. A dict keeps its keys' order (a Keras model's dict
    output), which jax's tree_map would sort."""
    if type(out) is dict:
        return {key: wrap(value, traced) for key, value in out.items()}
    if type(out) in (list, tuple):
        return type(out)(wrap(value, traced) for value in out)
    traced_too = traced or _name_scope.in_graph()
    return jax.tree_util.tree_map(
        lambda v: (
            Tensor.concrete(v) if isinstance(v, jax.Array) and (traced_too or not isinstance(v, jax.core.Tracer)) else v
        ),
        out,
        is_leaf=lambda v: isinstance(v, Tensor),
    )


def call(fn, *args, **static):
    """``fn(*args, **static)`` recorded as one op, the result as ``gk.Tensor``.

    ``fn`` must be a module-level function (the tape caches compiled programs per op).
    """
    try:
        return wrap(lift(fn)(*args, **static))
    except (TypeError, ValueError, IndexError) as error:
        raise _errors.bad_op_inputs(error, public_name(sys._getframe(1)), args) from error


def public_name(frame) -> str:
    """``tf.linalg.inv``: the gradkit.tf function that ``frame`` (or the nearest frame above it in
    gradkit.tf) runs, named as a user calls it; for error messages."""
    from gradkit import tf

    while frame is not None and frame.f_globals.get("__name__", "").startswith("gradkit.tf"):
        code = frame.f_code
        if not code.co_name.startswith("_"):
            namespaces = (
                ("tf.", tf),
                ("tf.nn.", tf.nn),
                ("tf.math.", tf.math),
                ("tf.linalg.", tf.linalg),
                ("tf.debugging.", tf.debugging),
                ("tf.image.", tf.image),
                ("tf.signal.", tf.signal),
            )
            for prefix, namespace in namespaces:
                for name, member in vars(namespace).items():
                    if not name.startswith("_") and _runs(member, frame):
                        return prefix + name
        frame = frame.f_back
    return "this gradkit.tf op"


def _runs(function, frame) -> bool:
    """Whether ``frame`` runs ``function``: its code, and for the functions one factory makes
    (``tf.exp``, ``tf.sin``: one code), the same closure."""
    code = frame.f_code
    if getattr(function, "__code__", None) is not code:
        return False
    values = frame.f_locals
    cells = function.__closure__ or ()
    return all(values.get(name, cells) is cell.cell_contents for name, cell in zip(code.co_freevars, cells))


def axis_arg(axis):
    """TF axes may be lists (nested ones too, as TensorFlow flattens them) or tensors; jax wants
    ints or tuples (static). A float axis is refused, as TensorFlow refuses it (TypeError)."""
    if axis is None:
        return None
    if isinstance(axis, (Tensor, jax.Array, np.ndarray)):
        axis = np.asarray(axis).tolist()
    if isinstance(axis, (list, tuple)):
        return tuple(_axis_int(a) for a in _flat_axes(axis))
    return _axis_int(axis)


def scalar_int(value, what: str) -> int:
    """An argument that must be one integer (a cumulative op's or ``argmax``'s axis,
    ``num_segments``, ``minlength``): a float, string, list or array of several is refused, as
    TensorFlow refuses it, not truncated or taken apart."""
    if type(value) is int:  # the common case, without an array made per op
        return value
    if isinstance(value, (Tensor, Variable)):
        kind, ndim = np.dtype(value.dtype).kind, len(value.shape)
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):  # ragged lists
            array = np.asarray(None)
        kind, ndim = array.dtype.kind, array.ndim
    if kind not in "iu" or ndim != 0:
        shown = value.tolist() if isinstance(value, np.ndarray) else value
        raise _errors.InvalidArgumentTypeError(
            f"{what} must be one integer, but got {shown!r}; TensorFlow refuses it too. Pass a Python int."
        )
    return int(value)


def _flat_axes(axes):
    for a in axes:
        if isinstance(a, (list, tuple)):
            yield from _flat_axes(a)
        elif isinstance(a, (Tensor, jax.Array, np.ndarray)) and np.ndim(a):
            yield from np.asarray(a).ravel().tolist()
        else:
            yield a


def _axis_int(axis) -> int:
    if type(axis) is int:  # the common case, without an array made per op
        return axis
    if isinstance(axis, (float, np.floating)) or np.asarray(axis).dtype.kind in "fc":
        raise _errors.GradkitTypeError(
            f"[gradkit] an axis must be an integer, but got {axis!r}; TensorFlow raises TypeError too. Pass an int "
            f"(axis={int(np.real(axis))})."
        )
    return int(axis)


def float_operand(value):
    """A setting of an op (a slope, a rate, a threshold) as an operand of its program: a tensor as it
    is (traced inside ``tf.function``), a number as a Python float, which an op registered with
    ``floats_are_runtime`` records as a runtime value, so a new value compiles nothing."""
    return value if isinstance(value, TENSOR_LIKE) else float(value)


def known_value(x):
    """``x`` (a tensor, Variable, array or Python value) as a NumPy array, or None while it is
    traced inside ``tf.function`` and has no value yet."""
    if isinstance(x, Variable):
        x = x.value
    if isinstance(x, Tensor):
        x = x.__gradkit_value__()
    return None if isinstance(x, jax.core.Tracer) else np.asarray(x)


def static_ints(x):
    """A shape-like argument (list, tuple, tensor) as a tuple of Python ints."""
    if isinstance(x, TENSOR_LIKE):
        x = np.asarray(x.numpy() if isinstance(x, Tensor) else convert(x))
    if isinstance(x, (jax.Array, np.ndarray)):
        x = np.asarray(x).tolist()
    if isinstance(x, (int, np.integer)):
        return (int(x),)
    return tuple(int(np.asarray(d)) if d is not None else -1 for d in x)


class _TensorShapeKind(type):
    """Makes a tensor's ``.shape`` (the tape's ``Shape``, which knows nothing of gradkit.tf) an
    instance of ``tf.TensorShape`` too, as it is in TensorFlow: ``isinstance(x.shape,
    tf.TensorShape)`` is a common test in ``build`` methods."""

    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or (cls is TensorShape and isinstance(obj, Shape))


class TensorShape(Shape, metaclass=_TensorShapeKind):
    """TensorFlow's ``tf.TensorShape``: a tuple of ints with ``as_list()``, ``rank``, ...;
    ``TensorShape(None)`` is a shape of unknown rank.

    >>> TensorShape((2, 3)).as_list(), TensorShape((2, 3)).rank, TensorShape(None).rank
    ([2, 3], 2, None)
    """

    __slots__ = ()

    def __new__(cls, dims=()):
        if dims is None:
            return tuple.__new__(_UnknownRank)
        if isinstance(dims, TensorShape) and dims.rank is None:
            return dims
        if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
            dims = (dims,)  # TensorFlow takes one number as a shape of one dimension
        if isinstance(dims, (str, bytes)):
            raise _errors.GradkitTypeError(f"tf.TensorShape got {dims!r}; pass a list of sizes (None where unknown).")
        sizes = tuple(_dimension(d) for d in dims)
        return super().__new__(cls, sizes)

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return repr(tuple(self))  # TensorFlow prints (2, 3), (None, 3), (2,)

    # A tf.TensorSpec's shape may have unknown (None) dimensions.
    def is_fully_defined(self) -> bool:
        return None not in self

    def num_elements(self):
        return None if None in self else super().num_elements()

    # TensorFlow's shape algebra: None is an unknown size, TensorShape(None) an unknown rank.
    def is_compatible_with(self, other) -> bool:
        other = TensorShape(other)
        if self.rank is None or other.rank is None:
            return True
        return self.rank == other.rank and all(a is None or b is None or a == b for a, b in zip(self, other))

    def merge_with(self, other):
        other = TensorShape(other)
        if self.rank is None:
            return other
        if other.rank is None:
            return self
        if not self.is_compatible_with(other):
            raise _errors.GradkitValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([b if a is None else a for a, b in zip(self, other)])

    def most_specific_compatible_shape(self, other):
        other = TensorShape(other)
        if self.rank is None or other.rank is None or self.rank != other.rank:
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self, other)])

    def concatenate(self, other):
        other = TensorShape(other)
        if self.rank is None or other.rank is None:
            return TensorShape(None)
        return TensorShape(tuple(self) + tuple(other))

    def with_rank(self, rank):
        if self.rank is None:
            return TensorShape([None] * int(rank))
        if self.rank != rank:
            raise _errors.GradkitValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        if self.rank is not None and self.rank < rank:
            raise _errors.GradkitValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self.rank is not None and self.rank > rank:
            raise _errors.GradkitValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank) -> None:
        if self.rank not in (None, rank):
            raise _errors.GradkitValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other) -> None:
        other = TensorShape(other)
        if self.rank is not None and other.rank is not None and self.rank != other.rank:
            raise _errors.GradkitValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise _errors.GradkitValueError(f"Shapes {self} and {TensorShape(other)} are incompatible")

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise _errors.GradkitValueError(f"Shape {self} is not fully defined")


def _dimension(d):
    """One size of a ``tf.TensorShape``: None (unknown) or an int >= 0, as TensorFlow accepts."""
    d = getattr(d, "value", d)  # a tf.compat.v1 Dimension
    if d is None:
        return None
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        if jax.export.is_symbolic_dim(d):
            # A size jax.export leaves unknown (a None dimension of a saved function's signature).
            return None
        try:
            as_int = int(d)
        except (TypeError, ValueError):
            raise _errors.GradkitTypeError(
                f"tf.TensorShape got the size {d!r} ({type(d).__name__}); each size is an int >= 0 or None."
            ) from None
        if as_int != d:
            raise _errors.GradkitTypeError(f"tf.TensorShape got the size {d!r}; each size is an int >= 0 or None.")
        d = as_int
    if d < 0:
        raise _errors.GradkitValueError(
            f"Dimension {int(d)} must be >= 0 (tf.TensorShape takes None for an unknown size)."
        )
    return int(d)


def dimension_value(dimension):
    """``tf.compat.dimension_value``: a shape's size as an int or None (TensorFlow 1's
    ``Dimension`` read as its value; gradkit's shapes already hold ints and None).

    >>> dimension_value(TensorShape([3, None])[0]), dimension_value(TensorShape([3, None])[1])
    (3, None)
    """
    return getattr(dimension, "value", dimension)


SHAPE_ALGEBRA = (
    "is_compatible_with merge_with most_specific_compatible_shape concatenate with_rank with_rank_at_least "
    "with_rank_at_most assert_has_rank assert_same_rank assert_is_compatible_with assert_is_fully_defined"
).split()


def _on_tensor_shape(name: str):
    def method(self, *args):
        return getattr(TensorShape(self), name)(*args)

    method.__name__ = name
    method.__doc__ = f"TensorFlow's ``TensorShape.{name}``."
    return method


class _UnknownRank(TensorShape):
    """``tf.TensorShape(None)``: any number of dimensions, of any sizes."""

    __slots__ = ()

    def __repr__(self):
        return "TensorShape(None)"

    def __str__(self):
        return "<unknown>"

    def __getitem__(self, key):
        # TensorFlow: any size of a shape of unknown rank is unknown, and so is any part of it.
        return self if isinstance(key, slice) else None

    def __eq__(self, other):
        return isinstance(other, _UnknownRank)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(_UnknownRank)

    def as_list(self):
        raise _errors.GradkitValueError("as_list() is not defined on an unknown TensorShape, as in TensorFlow.")

    @property
    def rank(self):
        return None

    ndims = rank

    @property
    def dims(self):
        return None

    def is_fully_defined(self) -> bool:
        return False

    def num_elements(self):
        return None


# A tensor's ``.shape`` (the tape's Shape, always fully known) answers TensorFlow's shape algebra too.
for _name in SHAPE_ALGEBRA:
    setattr(Shape, _name, _on_tensor_shape(_name))
