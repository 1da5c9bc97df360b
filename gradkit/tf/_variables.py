"""``tf.Variable``: a ``gk.Variable`` with TensorFlow's naming, shape type and eager results."""

from __future__ import annotations

import sys

import jax
import numpy as np

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.operators import ValueOperators
from gradkit._core.variable import Variable as _GkVariable
from gradkit._core.variable import VariableSlice as _GkVariableSlice
from gradkit._core.variable import check_not_list_index, read_index
from gradkit._tape.record import is_recorded
from gradkit._tape.tensor import Tensor, _boolean_mask_index, _check_indices, compare_any_shapes, device_name

from . import (
    _array,
    _distribute,
    _dtypes,
    _indexing,
    _math,
    _name_scope,
    _nondiff,
    _probe_writes,
    _random,
    _scatter,
    _variable_shape,
)
from ._convert import TensorShape, _has_tensor, check_python_value, convert, wrap
from ._variable_options import (
    VariableAggregationV2,
    VariableSynchronization,
    aggregation_option,
    synchronization_option,
)


def _wrapped(op):
    def method(self, *args):
        # TensorFlow takes Python lists as operands ([[1., 2.]] @ v); convert them here
        # (the tape's reflected operators would not).
        args = tuple(convert(a) if isinstance(a, (list, tuple)) else a for a in args)
        return wrap(op(self, *args))

    method.__name__ = op.__name__
    return method


def _computed_in_trace(initial_value, value) -> bool:
    """Whether an initial value made inside a ``tf.function`` trace was computed there: a traced
    value, or a tensor holding an integer or boolean scalar, which gradkit computes while tracing
    (a known loop counter, see ``tf.constant``)."""
    value = frames.concrete(value)
    if isinstance(value, jax.core.Tracer):
        return True
    return isinstance(initial_value, Tensor) and value.ndim == 0 and value.dtype.kind in "biu"


def own_read(value):
    """A Variable's read ``value`` as a new tensor: an identity op where a tape records it, so a
    gradient with respect to it is not that with respect to the Variable."""
    return _array.identity(value) if isinstance(value, Tensor) and is_recorded(value) else wrap(value)


class Variable(_GkVariable):
    """TensorFlow's ``tf.Variable(initial_value, trainable=True, name=None, dtype=None)``;
    ``shape=`` may declare a size that later assigns change (see ``_variable_shape``).

    ``.name`` reads like TensorFlow's (``'x:0'``), ``.shape`` is a tuple with
    ``as_list()``, and arithmetic on it gives ``gk.Tensor`` (``.numpy()`` works).

    >>> v = Variable([1.0, 2.0], name="v")
    >>> v.name, v.shape.as_list(), (v * 2).numpy().tolist()
    ('v:0', [2], [2.0, 4.0])
    """

    _aggregation = VariableAggregationV2.NONE
    _synchronization = VariableSynchronization.AUTO

    def __init__(
        self,
        initial_value=None,
        trainable=None,
        validate_shape=True,
        caching_device=None,
        name=None,
        variable_def=None,
        dtype=None,
        import_scope=None,
        constraint=None,
        synchronization=None,
        aggregation=None,
        shape=None,
        experimental_enable_variable_lifting=True,
    ):
        # Checked first, so that a refused option leaves no Variable made (and no initializer run).
        _variable_shape.refuse_variable_def(variable_def, initial_value)
        _variable_shape.check_caching_device(caching_device)
        self._aggregation = aggregation_option(aggregation, name)
        self._synchronization = synchronization_option(synchronization, name)
        if trainable is None:  # TensorFlow: an ON_READ Variable (a metric's) is not trained by default
            trainable = self._synchronization != VariableSynchronization.ON_READ
        if callable(initial_value):
            initial_value = initial_value()
        check_python_value(initial_value, dtype, "tf.Variable")
        _check_tensor_dtype(initial_value, dtype)
        with jax.ensure_compile_time_eval():
            value = convert(initial_value, dtype)
        if _random.unseeded() and _computed_in_trace(initial_value, value):
            # Made inside a tf.function traced without a runtime seed, its initial value may be lifted
            # out of the call (gk.jit), which may draw random numbers: trace again with a seed now,
            # before the Variable is stored where the next trace would find it.
            raise _random.NeedsSeed
        declared = _variable_shape.declared_shape(shape, tuple(value.shape), "tf.Variable")
        if constraint is not None and not callable(constraint):
            raise _errors.GradkitValueError(
                f"tf.Variable(constraint={constraint!r}): Argument `constraint` must be None or a callable, as in "
                "TensorFlow. Pass a projection such as tf.keras.constraints.NonNeg() or lambda w: tf.maximum(w, 0.0)."
            )
        # Inside tf.name_scope (or a tf.Module method under with_name_scope): 'scope/name:0'.
        name = _name_scope.variable_name("Variable" if name is None else str(name))
        super().__init__(value, name=name, trainable=True if trainable is None else trainable, dtype=dtype)
        self._constraint = constraint
        self._declared_shape = declared
        self._distribute_strategy = _distribute.creating_strategy()  # strategy.extended.variable_created_in_scope

    @property
    def constraint(self):
        """The projection Keras' optimizers apply to the Variable after each update (None: none)."""
        return self.__dict__.get("_constraint")

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def aggregation(self) -> VariableAggregationV2:
        """``aggregation=`` as given (``tf.VariableAggregation.NONE`` by default)."""
        return self._aggregation

    @property
    def synchronization(self) -> VariableSynchronization:
        """``synchronization=`` as given (``tf.VariableSynchronization.AUTO`` by default)."""
        return self._synchronization

    @property
    def shape(self) -> TensorShape:
        """The shape ``shape=`` declared (a None size an assign may change), else the value's."""
        declared = self.__dict__.get("_declared_shape")
        return TensorShape(self._shape) if declared is None else declared

    def get_shape(self) -> TensorShape:
        return self.shape

    def numpy(self):
        """The value as NumPy, as TensorFlow's: an array of its own (writable), and for a scalar
        Variable a NumPy scalar (``np.float32``), not a 0-d array."""
        out = np.array(frames.concrete(self.value))
        return out[()] if out.ndim == 0 else out

    @property
    def device(self) -> str:
        """The device holding the Variable, by TensorFlow's full name (``'/job:localhost/.../device:CPU:0'``)."""
        return device_name()

    def is_initialized(self, name=None):
        """True: a gradkit Variable always has its value (TensorFlow's eager Variables too)."""
        return Tensor.concrete(np.bool_(True))

    @property
    def initializer(self):
        """None, as TensorFlow's eager Variables have no initializer op."""
        return None

    def experimental_ref(self):
        """TensorFlow's older name of ``ref()``."""
        return self.ref()

    def __copy__(self):
        # TensorFlow's copy.copy of a Variable is the Variable itself (copy.deepcopy makes a new one).
        return self

    def read_value(self):
        """The current value as a tensor of its own, as TensorFlow's read op gives it: a gradient
        with respect to it counts only the paths through this read, not every use of the Variable."""
        return own_read(_GkVariable.value.fget(self))

    @property
    def value(self):
        """TensorFlow's ``v.value()``: the current value as a tensor. Read as ``v.value`` (gradkit's
        property) it is that tensor too, and calling it gives the same tensor."""
        if sys._getframe(1).f_globals.get("__name__", "").startswith("gradkit."):
            return _GkVariable.value.fget(self)  # gradkit's own code reads the value itself
        read = self.read_value()
        return _CallableRead._make(read._node, read._index) if isinstance(read, Tensor) else read

    # TensorFlow's assignment signatures; with read_value=False TensorFlow returns None.
    def assign(self, value, use_locking=False, name=None, read_value=True):
        value = _packed(value)
        _check_value_dtype(self, value, "assign")
        _probe_writes.note_write(self)
        declared = self.__dict__.get("_declared_shape")
        if declared is None:
            out = super().assign(value)
        else:
            out = self._assign_resizing(declared, value)
        return out if read_value else None

    def _assign_resizing(self, declared, value):
        """An assign to a Variable declared with a None size: the value may change that size."""
        got = _variable_shape.check_assignable(declared, value, self._label())
        _variable_shape.check_resizable_here(self._label(), self._shape, got)
        previous, self._shape = self._shape, got
        try:
            return super().assign(value)
        except BaseException:
            self._shape = previous  # a failed assign leaves the Variable as it was
            raise

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        delta = _in_own_dtype(self, _packed(delta))
        _check_value_dtype(self, delta, "assign_add")
        _check_delta_shape(self, delta, "assign_add")
        _probe_writes.note_write(self)
        out = super().assign_add(delta)
        return out if read_value else None

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        delta = _in_own_dtype(self, _packed(delta))
        _check_value_dtype(self, delta, "assign_sub")
        _check_delta_shape(self, delta, "assign_sub")
        _probe_writes.note_write(self)
        out = super().assign_sub(delta)
        return out if read_value else None

    # ``v += x`` would silently rebind ``v`` to a tensor and leave the Variable unchanged; TensorFlow
    # refuses these augmented assignments, and so does gradkit.tf. A Keras variable rebinds, as in Keras.
    _augmented_assignment_rebinds = False

    def __iadd__(self, other):
        return _in_place_refused(self, "+=", "variable.assign_add(value)", "+")

    def __isub__(self, other):
        return _in_place_refused(self, "-=", "variable.assign_sub(value)", "-")

    def __imul__(self, other):
        return _in_place_refused(self, "*=", "variable.assign(variable * value)", "*")

    def __itruediv__(self, other):
        return _in_place_refused(self, "/=", "variable.assign(variable / value)", "/")

    def __ipow__(self, other):
        return _in_place_refused(self, "**=", "variable.assign(variable ** value)", "**")

    def __iter__(self):
        """Its rows as tensors, as iterating a TensorFlow Variable gives (its value read once)."""
        return iter(self.read_value())

    def __getitem__(self, index):
        # As a tensor's index: a concrete boolean mask (v[v > 0]) selects its True entries, and an
        # int index outside its axis raises as in TensorFlow (jax would clamp v[5] to the last row).
        index = read_index(index)
        check_not_list_index(index)
        _check_indices(index, self._shape)  # a mask's shape too, before it is read as indices
        index = _boolean_mask_index(index)
        _check_indices(index, self._shape)
        return _VariableSlice(self, index)

    def scatter_nd_update(self, indices, updates, name=None):
        """``v[indices[i]] = updates[i]`` for each index tuple along ``indices``' last axis.

        As every assignment in gradkit, it does not cut gradients: ``updates`` and the
        entries not overwritten keep theirs.

        >>> v = Variable([1.0, 2.0, 3.0, 4.0])
        >>> v.scatter_nd_update([[1], [3]], [10.0, 30.0]).numpy().tolist()
        [1.0, 10.0, 3.0, 30.0]
        """
        return self.assign(_scatter._scatter(self.value, indices, updates, "assign", "Variable.scatter_nd_update"))

    def scatter_nd_add(self, indices, updates, name=None):
        """``v[indices[i]] += updates[i]`` (repeated indices add up)."""
        return self.assign(_scatter.tensor_scatter_nd_add(self.value, indices, updates))

    def scatter_nd_sub(self, indices, updates, name=None):
        """``v[indices[i]] -= updates[i]`` (repeated indices add up)."""
        return self.assign(_scatter.tensor_scatter_nd_sub(self.value, indices, updates))

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """``v[sparse_delta.indices] = sparse_delta.values`` along the first axis (a ``tf.IndexedSlices``)."""
        indices, values = _scatter.slices_of(sparse_delta, "scatter_update")
        return self.assign(_scatter.scatter_rows(self.value, indices, values, "assign"))

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        indices, values = _scatter.slices_of(sparse_delta, "scatter_add")
        return self.assign(_scatter.scatter_rows(self.value, indices, values, "add", "Variable.scatter_add"))

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        indices, values = _scatter.slices_of(sparse_delta, "scatter_sub")
        return self.assign(_scatter.scatter_rows(self.value, indices, -convert(values), "add", "Variable.scatter_sub"))

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        """``v[sparse_delta.indices] = maximum(v[...], sparse_delta.values)`` along the first axis."""
        indices, values = _scatter.slices_of(sparse_delta, "scatter_max")
        return self.assign(_scatter.scatter_rows(self.value, indices, values, "max", "Variable.scatter_max"))

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        """``v[sparse_delta.indices] = minimum(v[...], sparse_delta.values)`` along the first axis."""
        indices, values = _scatter.slices_of(sparse_delta, "scatter_min")
        return self.assign(_scatter.scatter_rows(self.value, indices, values, "min", "Variable.scatter_min"))

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        """``v[sparse_delta.indices] *= sparse_delta.values`` (a repeated row takes each value)."""
        indices, values = _scatter.slices_of(sparse_delta, "scatter_mul")
        return self.assign(_scatter.scatter_rows(self.value, indices, values, "multiply", "Variable.scatter_mul"))

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        """``v[sparse_delta.indices] /= sparse_delta.values`` (a repeated row takes each value)."""
        indices, values = _scatter.slices_of(sparse_delta, "scatter_div")
        return self.assign(_scatter.scatter_rows(self.value, indices, values, "divide", "Variable.scatter_div"))

    def scatter_nd_max(self, indices, updates, name=None):
        """``v[indices[i]] = maximum(v[indices[i]], updates[i])``."""
        return self.assign(_scatter.tensor_scatter_nd_max(self.value, indices, updates))

    def scatter_nd_min(self, indices, updates, name=None):
        """``v[indices[i]] = minimum(v[indices[i]], updates[i])``."""
        return self.assign(_scatter.tensor_scatter_nd_min(self.value, indices, updates))

    def batch_scatter_update(self, sparse_delta, use_locking=False, name=None):
        """For indices of shape ``batch + (n,)``: ``v[b..., indices[b..., j]] = values[b..., j]``,
        TensorFlow's batched row update along axis ``rank(indices) - 1``."""
        indices, values = _scatter.slices_of(sparse_delta, "batch_scatter_update")
        indices = convert(indices)
        if indices.ndim <= 1:
            return self.scatter_update(sparse_delta)
        grids = np.meshgrid(*[np.arange(n) for n in indices.shape], indexing="ij")[:-1]
        nd = _array.stack([*(convert(g, indices.dtype) for g in grids), indices], axis=-1)
        return self.scatter_nd_update(nd, values)

    def sparse_read(self, indices, name=None):
        """``tf.gather(v, indices)``: rows of the Variable."""
        return _array.gather(self, indices)

    def gather_nd(self, indices, name=None):
        """``tf.gather_nd(v, indices)``."""
        return _indexing.gather_nd(self, indices)

    def __repr__(self) -> str:
        try:
            value = self.numpy()
            shown = str(value) if np.ndim(value) == 0 else repr(value)  # numpy=6.0, as TensorFlow shows it
        except Exception:  # no value to show (a traced one left over, or none): say what it holds
            shown = getattr(self._value, "shown", None) or type(self._value).__name__
        return f"<tf.Variable '{self.name}' shape={tuple(self.shape)} dtype={self.dtype.name}, numpy={shown}>"


def _packed(value):
    """A list holding tensors (``[x, x * x, 1.0]``) as one tensor, as TensorFlow converts it (a pack op,
    differentiable); other values as they are."""
    return convert(value) if isinstance(value, (list, tuple)) and _has_tensor(value) else value


class _CallableRead(Tensor):
    """A Variable's read that ``v.value()`` calls: TensorFlow's ``value`` is a method, gradkit's a property."""

    __slots__ = ()

    def __call__(self):
        return Tensor._make(self._node, self._index)


def _in_place_refused(variable, operator: str, instead: str, binary: str):
    if variable._augmented_assignment_rebinds:
        return NotImplemented  # Python then computes ``variable <binary> value`` and rebinds the name
    raise _errors.GradkitRuntimeError(
        f"[gradkit] `variable {operator} value` with tf.Variable {variable.name!r} is not supported (as in "
        f"TensorFlow): it would rebind the name to a new tensor and leave the Variable unchanged. Use "
        f"`{instead}` to modify the Variable, or `out = variable {binary} value` for a new tensor."
    )


class _VariableSlice(_GkVariableSlice):
    """``v[index]``: reads as the tensor TensorFlow's ``v[index]`` is (``.numpy()``, ``.shape.as_list()``,
    sliced again), and its ``assign`` takes TensorFlow's ``name=`` (its only keyword there)."""

    __slots__ = ()

    def _tensor(self):
        value = self._read_value()
        return value if isinstance(value, Tensor) else wrap(value)

    @property
    def shape(self):
        return TensorShape(super().shape)

    def get_shape(self):
        return self.shape

    def __getitem__(self, index):
        return self._tensor()[index]

    # Shown, converted and iterated as the tensor it reads (TensorFlow's ``v[i]`` is one).
    def numpy(self):
        return self._tensor().numpy()

    def __iter__(self):
        return iter(self._tensor())

    def __repr__(self):
        return repr(self._tensor())

    def __str__(self):
        return str(self._tensor())

    def __format__(self, spec):
        return format(self._tensor(), spec)

    def __getattr__(self, name):
        # The rest of a tensor's API (numpy, ndim, ...) on the value read.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._tensor(), name)

    def assign(self, value, name=None):
        _check_value_dtype(self._var, value, "assign")
        _probe_writes.note_write(self._var)
        return super().assign(value)

    def assign_add(self, delta, name=None):
        _check_value_dtype(self._var, delta, "assign_add")
        _probe_writes.note_write(self._var)
        return super().assign_add(delta)

    def assign_sub(self, delta, name=None):
        _check_value_dtype(self._var, delta, "assign_sub")
        _probe_writes.note_write(self._var)
        return super().assign_sub(delta)


def _in_own_dtype(var, delta):
    """A float list or NumPy array added to a float Variable, in the Variable's dtype, as
    TensorFlow converts it (under jax_enable_x64 it would otherwise be float64 and widen the sum)."""
    if isinstance(delta, (list, tuple, np.ndarray, np.generic)) and np.dtype(var.dtype).kind in "fc":
        array = np.asarray(delta)
        if array.dtype.kind in "fiub":
            return array.astype(var.dtype)
    return delta


def _check_delta_shape(var, delta, method: str) -> None:
    """TensorFlow adds to a Variable only a delta of its own shape (no broadcasting)."""
    shape = tuple(delta.shape) if hasattr(delta, "shape") else np.shape(delta)
    if tuple(shape) != tuple(var.shape):
        raise _errors.InvalidArgumentValueError(
            f"Variable.{method} got a delta of shape {tuple(shape)} for Variable {var._label()} of shape "
            f"{tuple(var.shape)}; TensorFlow refuses that too ('Cannot update variable with shape ... using a Tensor "
            f"with shape ..., shapes must be equal'). Broadcast it first: v.{method}(tf.broadcast_to(delta, v.shape))."
        )


def _check_value_dtype(var, value, method: str) -> None:
    """A tensor (or Variable) assigned must have the Variable's dtype, as in TensorFlow, which
    converts Python and NumPy values but not tensors."""
    if isinstance(value, (Tensor, _GkVariable, _GkVariableSlice)) and np.dtype(value.dtype) != np.dtype(var.dtype):
        raise _errors.GradkitValueError(
            f"Variable.{method} got a tensor of dtype {np.dtype(value.dtype).name} for Variable {var._label()} of "
            f"dtype {np.dtype(var.dtype).name}; TensorFlow refuses that too. Cast it: "
            f"v.{method}(tf.cast(value, v.dtype))."
        )


# TensorFlow eager arithmetic on a Variable gives a tensor with .numpy(): wrap the results.
_OPERATORS = (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow matmul rmatmul "
    "and rand or ror xor rxor lt le gt ge eq ne neg pos abs invert"
).split()
# A slice (``v[1] * 2``) reads as a tensor too.
for _cls in (Variable, _VariableSlice):
    for _name in _OPERATORS:
        setattr(_cls, f"__{_name}__", _wrapped(getattr(ValueOperators, f"__{_name}__")))
    # TensorFlow's FloorDiv has no gradient: ``v // y`` gives None, as tf.math.floordiv does.
    _cls.__floordiv__ = lambda self, other: _nondiff.floordiv(self, other)
    _cls.__rfloordiv__ = lambda self, other: _nondiff.floordiv(other, self)
    _cls.__abs__ = lambda self: _math.abs(self)
    _cls.__eq__ = compare_any_shapes(_cls.__eq__, False)
    _cls.__ne__ = compare_any_shapes(_cls.__ne__, True)
Variable.__hash__ = _GkVariable.__hash__


def _check_tensor_dtype(initial_value, dtype) -> None:
    """TensorFlow converts a Python or NumPy initial value to ``dtype`` but refuses a tensor (or a
    Variable) of another dtype: the cast would be a silent truncation or rounding."""
    if dtype is None or not isinstance(initial_value, (Tensor, _GkVariable)):
        return
    want, got = _dtypes.as_dtype(dtype), _dtypes.as_dtype(np.dtype(initial_value.dtype))
    if want != got:
        raise _errors.GradkitValueError(
            f"Tensor conversion requested dtype {want.name} for Tensor with dtype {got.name}: tf.Variable(initial_value, "
            f"dtype={want.name}) was given a tensor of dtype {got.name}, which TensorFlow refuses too. Cast it first: "
            f"tf.Variable(tf.cast(initial_value, tf.{want.name}))."
        )
