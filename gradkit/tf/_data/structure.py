"""The nesting of a tf.data element, and its components as NumPy arrays.

An element nests as in TensorFlow's own tf.data nest: tuples (namedtuples too) and dicts are
structure, a dict's values taken in the order of its sorted keys (and given back in its own key
order); anything else, a list included, is one component, so
``from_tensor_slices([[1, 2], [3, 4]])`` slices one 2x2 tensor, as in TensorFlow.

Inside a pipeline a component is a NumPy array in the dtype gradkit gives it (int64 and float64
are int32 and float32 unless ``jax_enable_x64`` is on, as ``tf.constant`` makes them), so
slicing, batching and shuffling stay NumPy operations; a component becomes a ``gk.Tensor``
only where it leaves the pipeline (iteration, the functions given to ``map``, ``filter``, ...).
A dataset as a component (``window``'s elements) is held in an object array.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from .._convert import convert
from .._function import TensorSpec

_LEAF, _SEQUENCE, _DICT = 0, 1, 2


class Structure:
    """Where an element's components sit: a leaf, a tuple (or namedtuple) or a dict of structures."""

    __slots__ = ("kind", "cls", "keys", "children", "count")

    def __init__(self, kind: int, cls=None, keys=(), children=()):
        self.kind, self.cls, self.keys, self.children = kind, cls, tuple(keys), tuple(children)
        self.count = 1 if kind == _LEAF else sum(c.count for c in self.children)

    @classmethod
    def split(cls, value) -> tuple[Structure, list]:
        """``value``'s structure and its components, in TensorFlow's flattening order."""
        leaves: list = []
        return cls._of(value, leaves), leaves

    @classmethod
    def _of(cls, value, leaves: list) -> Structure:
        if isinstance(value, tuple):
            return cls(_SEQUENCE, type(value), (), [cls._of(v, leaves) for v in value])
        if isinstance(value, dict):
            keys = list(value)
            return cls(_DICT, type(value), keys, [cls._of(value[k], leaves) for k in _sorted(keys)])
        leaves.append(value)
        return LEAF

    @classmethod
    def tuple_of(cls, structures) -> Structure:
        """The structure of a tuple of elements of these structures (``zip``, ``enumerate``)."""
        return cls(_SEQUENCE, tuple, (), structures)

    def nest(self, structures: list) -> Structure:
        """This structure with its leaves replaced, in order, by ``structures``."""
        it = iter(structures)
        return self._nest(it)

    def _nest(self, it) -> Structure:
        if self.kind == _LEAF:
            return next(it)
        return Structure(self.kind, self.cls, self.keys, [c._nest(it) for c in self.children])

    def flatten(self, value, what: str) -> list:
        """The components of ``value``, which must have this structure (TensorFlow's
        ``flatten_up_to``: a leaf here takes any value there)."""
        out: list = []
        self._flatten(value, out, what)
        return out

    def _flatten(self, value, out: list, what: str) -> None:
        if self.kind == _LEAF:
            out.append(value)
            return
        if self.kind == _SEQUENCE:
            if not isinstance(value, tuple) or len(value) != len(self.children):
                raise _errors.GradkitTypeError(
                    f"{what}: {_short(value)} does not have the structure {self.describe()}."
                )
            for child, v in zip(self.children, value):
                child._flatten(v, out, what)
            return
        if not isinstance(value, dict) or set(value) != set(self.keys):
            raise _errors.GradkitTypeError(f"{what}: {_short(value)} does not have the structure {self.describe()}.")
        for child, key in zip(self.children, _sorted(self.keys)):
            child._flatten(value[key], out, what)

    def pack(self, leaves):
        """The element whose components, in flattening order, are ``leaves``."""
        it = iter(leaves)
        return self._pack(it)

    def _pack(self, it):
        if self.kind == _LEAF:
            return next(it)
        values = [c._pack(it) for c in self.children]
        if self.kind == _SEQUENCE:
            return tuple(values) if self.cls is tuple else self.cls(*values)
        by_key = dict(zip(_sorted(self.keys), values))
        pairs = [(k, by_key[k]) for k in self.keys]
        try:
            return self.cls(pairs)
        except TypeError:  # a dict subclass that cannot be built from pairs (a defaultdict)
            return dict(pairs)

    def describe(self) -> str:
        return str(self.pack(["*"] * self.count))

    def _identity(self) -> tuple:
        """What makes two structures the same, as TensorFlow's nest compares them: a dict by its
        set of keys (its components are in sorted-key order), whatever its key order or dict class;
        a tuple by its class (a namedtuple is not a tuple)."""
        if self.kind == _DICT:
            return (self.kind, tuple(_sorted(self.keys)), self.children)
        return (self.kind, self.cls, self.children)

    def __eq__(self, other):
        if not isinstance(other, Structure):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity())


LEAF = Structure(_LEAF)


def _sorted(keys):
    try:
        return sorted(keys)
    except TypeError as error:
        raise _errors.GradkitTypeError(
            f"tf.data got a dict with keys {list(keys)!r}, which cannot be sorted: TensorFlow orders a dict's "
            "values by its sorted keys. Use keys of one type (strings)."
        ) from error


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def canonical(dtype) -> np.dtype:
    """The dtype a gk.Tensor of ``dtype`` has (int64 is int32 unless jax_enable_x64 is on)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dtype)))


def as_component(value, what: str) -> np.ndarray:
    """``value`` (a tensor, a Variable, a NumPy or JAX array, a Python number or list) as a
    NumPy array of gradkit's dtype for it, sharing no memory with ``value``; Python numbers
    and lists take TensorFlow's default dtypes (int32, float32), as ``tf.constant`` gives them."""
    from .dataset import Dataset

    if isinstance(value, Dataset):
        holder = np.empty((), object)
        holder[()] = value
        return holder
    if value is None:
        raise _errors.GradkitTypeError(
            f"{what} holds None: a tf.data element's components are tensors. Leave None out of the structure."
        )
    if isinstance(value, (Tensor, Variable)):
        try:
            array = np.asarray(value.numpy())
        except _TRACED as error:
            raise _traced_value_error(what) from error
    elif isinstance(value, (np.ndarray, np.generic, jax.Array)):
        array = np.asarray(value)
    elif isinstance(value, (str, bytes)) or _holds_text(value):
        array = np.asarray(value)
    else:
        try:
            array = np.asarray(convert(value))
        except _errors.GradkitError:
            raise
        except _TRACED as error:  # a list of tensors the function computes
            raise _traced_value_error(what) from error
        except (TypeError, ValueError) as error:
            raise _errors.GradkitValueError(
                f"{what} holds {_short(value)}, which is not a tensor: a Python list must be rectangular and "
                "hold numbers, as TensorFlow converts it. Pass a NumPy array or a tensor."
            ) from error
    if array.dtype.kind in "OSUV":
        raise _errors.GradkitTypeError(
            f"{what} holds {array.dtype} values ({_short(value)}): gradkit's tensors hold numbers and booleans, "
            "not strings or Python objects. Encode strings as numbers first (a vocabulary lookup, "
            "tf.keras.utils.to_categorical), or keep them out of the pipeline."
        )
    return np.array(array, dtype=canonical(array.dtype))


_TRACED = (_errors.TracedValueNeededError, jax.errors.TracerArrayConversionError)


def _traced_value_error(what: str) -> Exception:
    return _errors.GradkitTypeError(
        f"{what} holds a value traced by a tf.function (it reads the function's arguments, a Variable or a "
        "random draw inside it): a dataset iterated inside a tf.function runs its pipeline while the "
        "function is traced, and its elements must be known then. Iterate the dataset outside the "
        "tf.function and pass each batch in (for x, y in dataset: train_step(x, y))."
    )


def _holds_text(value) -> bool:
    """Whether a (nested) Python list holds strings, which gradkit refuses as such."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return isinstance(value, (str, bytes))


def to_public(component):
    """One component of one element as the pipeline gives it out: a gk.Tensor (a dataset as it is)."""
    if isinstance(component, np.ndarray) and component.dtype == object:
        return component[()]
    if not isinstance(component, (np.ndarray, np.generic)):
        return component  # a dataset taken out of an object array
    with jax.ensure_compile_time_eval():  # a constant, also where a tf.function iterating the dataset is traced
        return Tensor.concrete(jnp.asarray(component))


def to_numpy(component):
    """One component as ``as_numpy_iterator`` gives it: a NumPy array (a scalar as a NumPy scalar),
    a copy, so writing into it leaves the dataset alone."""
    if isinstance(component, np.ndarray):
        return component[()] if component.ndim == 0 else component.copy()
    return component


# -- specs ---------------------------------------------------------------------------------------


class DatasetSpec:
    """``tf.data.DatasetSpec``: the spec of a component that is itself a dataset (``window``'s)."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec
        self.shape = tuple(dataset_shape)

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r}, TensorShape({list(self.shape)}))"

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and (self.element_spec, self.shape) == (other.element_spec, other.shape)

    def __hash__(self):
        return hash(self.shape)


def spec_of(component) -> TensorSpec | DatasetSpec:
    """The spec of one element's component (an array without the batch axis)."""
    if isinstance(component, np.ndarray) and component.dtype == object:
        return DatasetSpec(component[()].element_spec)
    return TensorSpec(np.shape(component), component.dtype)


def specs_of_chunk_arrays(arrays) -> list:
    """The specs of the components of a chunk (arrays with a leading element axis)."""
    return [
        DatasetSpec(a.flat[0].element_spec) if a.dtype == object and a.size else TensorSpec(a.shape[1:], a.dtype)
        for a in arrays
    ]


def batched(spec, size):
    """``spec`` with a batch axis of ``size`` (None: unknown) in front."""
    if isinstance(spec, DatasetSpec):
        raise _errors.GradkitTypeError(
            "tf.data cannot batch a dataset of datasets (window's elements): turn each window into tensors first, "
            "e.g. ds.window(n).flat_map(lambda w: w.batch(n))."
        )
    return TensorSpec(None if spec.shape is None else (size, *spec.shape), spec.dtype)


def unbatched(spec):
    return TensorSpec(None if spec.shape is None else tuple(spec.shape)[1:], spec.dtype)


def shape_text(shape) -> str:
    return "<unknown>" if shape is None else str(tuple(shape))


def most_specific_compatible(a, b):
    """TensorFlow's most specific spec both ``a`` and ``b`` fit, or None where there is none
    (another dtype or kind); dimensions that differ are unknown."""
    if isinstance(a, DatasetSpec) or isinstance(b, DatasetSpec):
        return a if a == b else None
    if a.dtype != b.dtype:
        return None
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return TensorSpec(None, a.dtype)
    return TensorSpec(tuple(d if d == e else None for d, e in zip(a.shape, b.shape)), a.dtype)
