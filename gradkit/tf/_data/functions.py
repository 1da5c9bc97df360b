"""Calling the functions a pipeline is given (``map``, ``filter``, ``flat_map``, ``reduce``...).

A function gets an element's components as gk.Tensors: a plain tuple's as its positional
arguments, anything else (a dict, a namedtuple, one tensor) as one argument, as TensorFlow
calls it. It runs eagerly with every tape paused: a pipeline feeds a model, and TensorFlow's
tapes do not see inside it either. What it returns may be tensors, Variables, NumPy arrays or
Python numbers, in tuples and dicts (a list is read as a tuple, as TensorFlow reads it).

Its result's ``element_spec`` is found by tracing it once with ``tf.function`` (as TensorFlow
traces it), unknown input dimensions traced with two sizes so that what they decide stays
unknown (an input of unknown rank leaves every output's shape unknown); a function that cannot be traced (Python control flow on a tensor's value, a
``numpy_function``) is run on the dataset's first element instead, the result's rank and
dtype known, its dimensions not.

A function is fixed when the step is built (``frozen``): TensorFlow traces it at ``map()``,
so the Python values it reads are those of that moment, and gradkit runs it later, element by
element. Its closure's values and the module globals it reads are taken then; a loop variable
rebound afterwards is not seen. The objects themselves are not copied, so a Variable (or a list
changed in place) is read as it is when the function runs, as TensorFlow reads a captured
Variable at run time. A name the function assigns itself (``nonlocal``, ``global``) stays live.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import types

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import SHAPE_DECLARATIONS

from .. import _graph_kind
from .._convert import convert
from .._function import TensorSpec
from .._graph_helpers import tapes_paused
from .chunks import Chunk
from .structure import DatasetSpec, Structure, as_component, spec_of, to_public

unrecorded = tapes_paused  # a pipeline is input: no tape records its functions


def frozen(func):
    """``func`` with the Python values it reads fixed now, as TensorFlow's trace at ``map()``
    fixes them (see the module docstring). A plain function is copied with snapshots of its
    closure cells and of its module globals; a ``functools.partial`` has its function frozen;
    other callables (bound methods, Keras layers, tf.functions) are returned as they are."""
    if type(func) is functools.partial:
        return functools.partial(frozen(func.func), *func.args, **func.keywords)
    if type(func) is not types.FunctionType:
        return func
    writes_globals, written_cells = _assigned_names(func.__code__)
    # A cell the function assigns (nonlocal) is state it keeps: a snapshot would hide its writes.
    closure = func.__closure__ and tuple(
        cell if name in written_cells else _cell_snapshot(cell)
        for name, cell in zip(func.__code__.co_freevars, func.__closure__)
    )
    # A shallow copy: names keep the objects they are bound to now (a loop variable at module level).
    module_globals = func.__globals__ if writes_globals else dict(func.__globals__)
    copy = types.FunctionType(func.__code__, module_globals, func.__name__, func.__defaults__, closure)
    copy.__kwdefaults__ = None if func.__kwdefaults__ is None else dict(func.__kwdefaults__)
    copy.__qualname__, copy.__module__, copy.__doc__ = func.__qualname__, func.__module__, func.__doc__
    copy.__dict__.update(func.__dict__)
    return copy


def _cell_snapshot(cell):
    try:
        return types.CellType(cell.cell_contents)
    except ValueError:  # an empty cell (a name the enclosing scope has not assigned yet) stays empty
        return types.CellType()


def _assigned_names(code) -> tuple[bool, set]:
    """Whether ``code`` (or a function defined in it) assigns a global, and the closure names it assigns."""
    writes_globals, cells = False, set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            writes_globals = True
        elif instruction.opname in ("STORE_DEREF", "DELETE_DEREF"):
            cells.add(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner_globals, inner_cells = _assigned_names(const)
            writes_globals, cells = writes_globals or inner_globals, cells | inner_cells
    return writes_globals, cells


def call(func, element, eager: bool = True):
    """``func`` on one element (already gk.Tensors), with TensorFlow's argument unpacking;
    ``eager``: computed at once, also where a ``tf.function`` iterating the dataset is traced."""
    with unrecorded(), _graph_kind.pipeline_function():
        with jax.ensure_compile_time_eval() if eager else contextlib.nullcontext():
            return func(*element) if type(element) is tuple else func(element)


def call_on_row(func, structure: Structure, row: list):
    return call(func, structure.pack([to_public(c) for c in row]))


def result_chunk(result, what: str) -> Chunk:
    """A function's result (one element) as a chunk of one."""
    if isinstance(result, list):
        result = tuple(result)
    structure, leaves = Structure.split(result)
    if not leaves:
        raise _errors.GradkitValueError(
            f"{what} returned {result!r}, which holds no tensor: an element needs at least one component. "
            "Return a tensor, or a tuple or dict of them."
        )
    return Chunk.of_element(structure, [as_component(leaf, f"what {what} returned") for leaf in leaves])


def output_spec(func, dataset, what: str):
    """``(structure, specs)`` of what ``func`` returns for ``dataset``'s elements."""
    structure, specs = dataset._structure_and_specs()
    if not any(isinstance(s, DatasetSpec) for s in specs):
        try:
            return _traced_spec(func, structure, specs)
        except Exception:  # noqa: BLE001  (any failure to trace: run it on an element instead)
            pass
    return _first_result_spec(func, dataset, what)


def result_spec(result: Chunk):
    """``(structure, specs)`` of one result (a chunk of one): its ranks and dtypes, dimensions unknown,
    which is what an untraced function's first result tells of the others."""
    specs = [
        DatasetSpec(a[0].element_spec) if a.dtype == object else TensorSpec((None,) * (a.ndim - 1), a.dtype)
        for a in result.arrays
    ]
    return result.structure, specs


def _traced_spec(func, structure: Structure, specs: list):
    from .._function import function

    found = {}
    declared: dict = {}  # id(tensor) -> the sizes its set_shape declared

    def flat_call(*components):
        result = call(func, structure.pack(list(components)), eager=False)
        if isinstance(result, list):
            result = tuple(result)
        found["structure"], leaves = Structure.split(result)
        if not leaves:
            raise ValueError("no component")
        found["declared"] = [declared.get(id(leaf)) for leaf in leaves]
        return tuple(convert(leaf) for leaf in leaves)

    outer, SHAPE_DECLARATIONS.found = getattr(SHAPE_DECLARATIONS, "found", None), declared
    try:
        with unrecorded():
            outputs = function(flat_call).get_concrete_function(*specs).structured_outputs
    finally:
        SHAPE_DECLARATIONS.found = outer
    # An input of unknown rank is traced as a vector: what it decides cannot be told apart from
    # what it does not, so every output's shape is unknown then.
    unknown_rank = any(s.shape is None for s in specs)
    out = []
    for spec, sizes in zip(outputs, found["declared"]):
        shape = None if unknown_rank else spec.shape
        if sizes is not None and (shape is None or len(shape) == len(sizes)):
            # set_shape's sizes, as TensorFlow's static shape has them; the traced ones elsewhere.
            shape = tuple(d if d is not None else (None if shape is None else shape[i]) for i, d in enumerate(sizes))
        out.append(TensorSpec(shape, spec.dtype))
    return found["structure"], out


def _first_result_spec(func, dataset, what: str):
    """``(structure, specs)`` from ``func``'s result for the first element: its ranks and dtypes,
    its dimensions unknown except where the function declared them with ``set_shape`` (TensorFlow's
    static shape for a ``py_function``'s result), checked against the result here."""
    chunks = dataset._chunks()
    try:
        chunk = next(chunks, None)
    finally:
        getattr(chunks, "close", lambda: None)()
    if chunk is None:
        raise _errors.GradkitValueError(
            f"{what}: gradkit could not trace the function to find what it returns (TensorFlow traces it with "
            "autograph), and the dataset is empty, so it cannot run it on an element either."
        )
    declared: dict = {}  # id(tensor) -> the sizes its set_shape declared
    outer, SHAPE_DECLARATIONS.found = getattr(SHAPE_DECLARATIONS, "found", None), declared
    try:
        result = call_on_row(func, chunk.structure, next(chunk.rows()))
    finally:
        SHAPE_DECLARATIONS.found = outer
    result = tuple(result) if isinstance(result, list) else result
    structure, specs = result_spec(result_chunk(result, what))
    for i, leaf in enumerate(Structure.split(result)[1]):
        sizes = declared.get(id(leaf))
        if sizes is not None:
            leaf.set_shape(sizes)  # the check set_shape skipped while its sizes were collected
            specs[i] = TensorSpec(tuple(sizes), specs[i].dtype)
    return structure, specs


def check_result(result: Chunk, structure: Structure, specs: list, index: int, what: str) -> None:
    """Raise where one function result (a chunk of one) does not fit the dataset's ``element_spec``:
    TensorFlow's trace gives every element one structure and dtype, but a function gradkit could
    not trace (a Python ``if`` on a tensor's value) may return another for a later element."""
    fits = result.structure == structure and all(_fits(array, spec) for array, spec in zip(result.arrays, specs))
    if not fits:
        got = result.structure.pack([spec_of(a[0]) for a in result.arrays])
        raise _errors.GradkitTypeError(
            f"{what} returned {got} for element {index}, which does not match the dataset's element_spec "
            f"{structure.pack(specs)}: TensorFlow traces the function once, so every element it returns has one "
            "structure and dtype (TensorFlow refuses this function when it traces it). Return the same structure "
            "and dtypes for every element: tf.cast the results to one dtype, and use tf.where or tf.cond rather "
            "than a Python if on a tensor's value."
        )


def _fits(array, spec) -> bool:
    if isinstance(spec, DatasetSpec):
        return array.dtype == object
    if array.dtype != spec.dtype:
        return False
    if spec.shape is None:
        return True
    shape = array.shape[1:]
    return len(shape) == len(spec.shape) and all(d is None or d == n for d, n in zip(spec.shape, shape))


def predicate_value(result) -> bool:
    """A ``filter`` predicate's result as a Python bool; a boolean scalar, as TensorFlow requires."""
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    array = as_component(result, "filter's predicate result")
    if array.dtype != np.bool_ or array.ndim != 0:
        raise _errors.GradkitValueError(
            "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its return type is "
            f"{TensorSpec(array.shape, array.dtype)}. Reduce it to one boolean (tf.reduce_all, a comparison)."
        )
    return bool(array)
