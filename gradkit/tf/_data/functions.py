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
"""

from __future__ import annotations

import contextlib

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import SHAPE_DECLARATIONS

from .._convert import convert
from .._function import TensorSpec
from .._graph_helpers import tapes_paused
from .chunks import Chunk
from .structure import DatasetSpec, Structure, as_component, to_public

unrecorded = tapes_paused  # a pipeline is input: no tape records its functions


def call(func, element, eager: bool = True):
    """``func`` on one element (already gk.Tensors), with TensorFlow's argument unpacking;
    ``eager``: computed at once, also where a ``tf.function`` iterating the dataset is traced."""
    with unrecorded(), jax.ensure_compile_time_eval() if eager else contextlib.nullcontext():
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
    return _first_element_spec(func, dataset, what)


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


def _first_element_spec(func, dataset, what: str):
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
    out = result_chunk(call_on_row(func, chunk.structure, next(chunk.rows())), what)
    specs = [
        DatasetSpec(a[0].element_spec) if a.dtype == object else TensorSpec((None,) * (a.ndim - 1), a.dtype)
        for a in out.arrays
    ]
    return out.structure, specs


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
