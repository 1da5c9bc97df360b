"""Where datasets start: ``from_tensor_slices``, ``from_tensors``, ``range``, ``from_generator``.

``from_tensor_slices`` and ``from_tensors`` copy their tensors when made, as TensorFlow makes
them constants (a later write into a NumPy input does not reach the dataset). A generator's
elements are converted to the declared dtypes as TensorFlow converts them (NumPy's cast) and
checked against the declared shapes when they are read, each pass calling the generator afresh.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from .. import _dtypes
from .._function import TensorSpec
from .chunks import Chunk, concat, mismatch
from .dataset import Dataset, int_arg
from .structure import _TRACED, LEAF, Structure, as_component, canonical, most_specific_compatible

_RANGE_BLOCK = 1 << 16  # elements of a range made at a time


class TensorSlices(Dataset):
    def __init__(self, tensors):
        super().__init__()
        structure, leaves = Structure.split(tensors)
        if not leaves:
            raise _errors.GradkitValueError(
                "Invalid `element`: tf.data.Dataset.from_tensor_slices got an empty structure; pass at least one tensor."
            )
        arrays = [as_component(leaf, "tf.data.Dataset.from_tensor_slices") for leaf in leaves]
        for array in arrays:
            if array.ndim == 0:
                raise _errors.GradkitValueError(
                    "Unbatching a tensor is only supported for rank >= 1: tf.data.Dataset.from_tensor_slices got a "
                    "scalar. It slices each tensor along its first axis; use from_tensors for a single element."
                )
        sizes = sorted({a.shape[0] for a in arrays})
        if len(sizes) > 1:
            raise _errors.GradkitValueError(
                f"Dimensions {sizes[0]} and {sizes[1]} are not compatible: tf.data.Dataset.from_tensor_slices needs "
                "every tensor to have the same first dimension (one slice of each per element)."
            )
        self._chunk = Chunk(structure, arrays)

    def _chunks(self):
        if len(self._chunk):
            yield self._chunk

    def _compute_spec(self):
        return self._chunk.structure, [TensorSpec(a.shape[1:], a.dtype) for a in self._chunk.arrays]

    def _cardinality(self) -> int:
        return len(self._chunk)


class Tensors(Dataset):
    def __init__(self, tensors):
        super().__init__()
        structure, leaves = Structure.split(tensors)
        if not leaves:
            raise _errors.GradkitValueError(
                "Invalid `element`: tf.data.Dataset.from_tensors got an empty structure; pass at least one tensor."
            )
        components = [as_component(leaf, "tf.data.Dataset.from_tensors") for leaf in leaves]
        self._chunk = Chunk.of_element(structure, components)

    def _chunks(self):
        yield self._chunk

    def _compute_spec(self):
        return self._chunk.structure, [TensorSpec(a.shape[1:], a.dtype) for a in self._chunk.arrays]

    def _cardinality(self) -> int:
        return 1


class Range(Dataset):
    def __init__(self, *args, output_type=_dtypes.int64, name=None, **kwargs):
        super().__init__()
        if "dtype" in kwargs:
            raise _errors.GradkitTypeError(
                "tf.data.Dataset.range takes output_type=, not dtype=: TensorFlow 2.21 ignores dtype= and gives "
                "int64 elements. Pass output_type=tf.int32 (or leave it out for int64)."
            )
        if kwargs:
            raise _errors.GradkitTypeError(
                f"tf.data.Dataset.range got unknown keyword arguments {sorted(kwargs)}; it takes (start, stop, step) "
                "positionally and output_type=, name=."
            )
        if not 1 <= len(args) <= 3:
            raise _errors.GradkitValueError(
                f"Invalid `args`. The length of `args` should be between 1 and 3 but was {len(args)}: "
                "tf.data.Dataset.range(stop) or range(start, stop[, step])."
            )
        names = ("stop",) if len(args) == 1 else ("start", "stop", "step")
        values = []
        for argument, value in zip(names, args):
            try:
                values.append(int_arg(value, "tf.data.Dataset.range"))
            except _TRACED as error:
                raise _errors.TracedValueNeededError(
                    f"tf.data.Dataset.range got {argument} as a tensor traced by a tf.function (one computed from "
                    "the function's arguments): gradkit makes a dataset's elements when the dataset is made, so "
                    "their number must be known while the function is traced. Build the dataset outside the "
                    f"tf.function and pass it in (or iterate it outside), or pass {argument} as a Python int (a "
                    "Python argument of the function, for which tf.function traces anew)."
                ) from error
        start, stop, step = (0, values[0], 1) if len(values) == 1 else (*values, 1)[:3]
        if step == 0:
            raise _errors.GradkitInvalidArgumentError("step must be a non-zero integer: tf.data.Dataset.range got 0.")
        self._range = range(start, stop, step)
        self._dtype = canonical(output_type)

    def _chunks(self):
        r = self._range
        for first in range(0, len(r), _RANGE_BLOCK):
            index = np.arange(first, min(first + _RANGE_BLOCK, len(r)), dtype=np.int64)
            yield Chunk(LEAF, [(r.start + r.step * index).astype(self._dtype)])

    def _compute_spec(self):
        return LEAF, [TensorSpec((), self._dtype)]

    def _cardinality(self) -> int:
        return len(self._range)


def _declared_dtype(value, what: str) -> np.dtype:
    try:
        return np.dtype(_dtypes.as_dtype(value))
    except (TypeError, ValueError, KeyError) as error:
        raise _errors.GradkitTypeError(
            f"{what} got {value!r} where a dtype goes (tf.int64, tf.float32, ...): cannot convert it to a DType."
        ) from error


def _declared_shape(value, what: str):
    if value is None:
        return None
    try:
        dims = list(value)
    except TypeError as error:
        raise _errors.GradkitTypeError(
            f"{what} got {value!r} where a shape goes: pass a list of sizes (None for an unknown one) or None."
        ) from error
    return tuple(None if d is None or int(d) == -1 else int(d) for d in dims)


def _signature(output_types, output_shapes, output_signature):
    """``(structure, [declared NumPy dtype], [declared shape or None])`` from from_generator's arguments."""
    what = "tf.data.Dataset.from_generator"
    if output_signature is not None:
        if output_types is not None:
            raise _errors.GradkitTypeError(
                "The `output_types` argument can not be used together with the `output_signature` argument: "
                "pass output_signature alone."
            )
        if output_shapes is not None:
            raise _errors.GradkitTypeError(
                "The `output_shapes` argument can not be used together with the `output_signature` argument: "
                "give the shapes in output_signature's tf.TensorSpecs."
            )
        structure, specs = Structure.split(output_signature)
        for spec in specs:
            if not isinstance(spec, TensorSpec):
                raise _errors.GradkitTypeError(
                    f"`output_signature` must contain objects that are subclass of `tf.TypeSpec` but found "
                    f"{type(spec)} which is not: pass tf.TensorSpec(shape, dtype) for each component."
                )
        shapes = [None if s.shape is None else tuple(s.shape) for s in specs]
        return structure, [np.dtype(s.dtype) for s in specs], shapes
    if output_types is None:
        raise _errors.GradkitTypeError(
            "To specify the output signature you need to provide either the `output_signature` argument or the "
            "`output_types` argument: e.g. output_signature=tf.TensorSpec(shape=(None,), dtype=tf.float32)."
        )
    structure, types = Structure.split(output_types)
    dtypes = [_declared_dtype(t, what) for t in types]
    if output_shapes is None:
        return structure, dtypes, [None] * len(dtypes)
    shapes = structure.flatten(output_shapes, f"{what}'s output_shapes (the structure of output_types)")
    return structure, dtypes, [_declared_shape(s, what) for s in shapes]


def _generator_arg(value):
    """An ``args`` entry as the generator gets it: a NumPy value (a string as bytes), as TensorFlow passes it."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    array = as_component(value, "tf.data.Dataset.from_generator's args")
    return array[()] if array.ndim == 0 else array


class Generated(Dataset):
    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        super().__init__()
        if not callable(generator):
            raise _errors.GradkitTypeError(
                f"`generator` must be a Python callable: tf.data.Dataset.from_generator got a "
                f"{type(generator).__name__}. Pass the generator function (lambda: iter(...)), not a generator."
            )
        self._generator = generator
        self._structure, self._dtypes, self._shapes = _signature(output_types, output_shapes, output_signature)
        self._args = () if args is None else tuple(_generator_arg(a) for a in args)

    def _chunks(self):
        for value in self._generator(*self._args):
            yield Chunk.of_element(self._structure, self._components(value))

    def _components(self, value) -> list:
        try:
            leaves = self._structure.flatten(value, "from_generator")
        except _errors.GradkitTypeError:
            raise _errors.InvalidArgumentTypeError(
                f"`generator` yielded an element that did not match the expected structure. The expected structure "
                f"was {self._structure.pack([f'tf.{d.name}' for d in self._dtypes])}, but the yielded element was "
                f"{value!r}. Yield tuples (not lists) for a tuple signature, dicts with the same keys for a dict."
            ) from None
        out = []
        for leaf, dtype, shape in zip(leaves, self._dtypes, self._shapes):
            if isinstance(leaf, (Tensor, Variable)):
                leaf = leaf.numpy()
            try:
                array = np.asarray(leaf, dtype=dtype)
            except (TypeError, ValueError, OverflowError) as error:
                raise _errors.InvalidArgumentTypeError(
                    f"`generator` yielded an element that could not be converted to the expected type. The expected "
                    f"type was {dtype.name}, but the yielded element was {leaf!r}."
                ) from error
            if shape is not None and (
                array.ndim != len(shape) or any(d is not None and d != s for d, s in zip(shape, array.shape))
            ):
                raise _errors.InvalidArgumentTypeError(
                    f"`generator` yielded an element of shape {array.shape} where an element of shape "
                    f"{tuple(shape)} was expected (None: any size)."
                )
            out.append(np.array(array, dtype=canonical(dtype)))
        return out

    def _compute_spec(self):
        return self._structure, [TensorSpec(s, canonical(d)) for d, s in zip(self._dtypes, self._shapes)]


class FromList(Dataset):
    """``tf.data.experimental.from_list``: one element per item of a list, each of one structure;
    the spec is the most specific one they all fit (sizes that differ are unknown)."""

    def __init__(self, elements):
        super().__init__()
        what = "tf.data.experimental.from_list"
        if not isinstance(elements, (list, tuple)) or not elements:
            raise _errors.GradkitValueError(
                f"Invalid `elements`. `elements` should not be empty ({what} got {elements!r:.60}). If you want an "
                "empty dataset, use `tf.data.Dataset.range(0)`."
            )
        chunks, specs = [], None
        for index, element in enumerate(elements):
            structure, leaves = Structure.split(element)
            components = [as_component(leaf, what) for leaf in leaves]
            if chunks and structure != chunks[0].structure:
                raise _errors.GradkitValueError(
                    f"The two structures don't have the same nested structure ({what}): element 0 is "
                    f"{chunks[0].structure.describe()} and element {index} is {structure.describe()}. Give every "
                    "element the same structure."
                )
            mine = [TensorSpec(c.shape, c.dtype) for c in components]
            if specs is not None:
                specs = [most_specific_compatible(a, b) for a, b in zip(specs, mine)]
                if None in specs:
                    raise _errors.GradkitTypeError(
                        f"{what}: element {index}'s dtypes {[str(s.dtype) for s in mine]} differ from the earlier "
                        "elements'; give every component one dtype (cast them first)."
                    )
            else:
                specs = mine
            chunks.append(Chunk.of_element(chunks[0].structure if chunks else structure, components))
        self._parts, self._specs = chunks, specs

    def _chunks(self):
        if mismatch(self._parts) is None:
            yield concat(self._parts, "tf.data.experimental.from_list")
        else:  # elements of different shapes: a chunk each
            yield from self._parts

    def _compute_spec(self):
        return self._parts[0].structure, self._specs

    def _cardinality(self) -> int:
        return len(self._parts)
