"""The steps that call a function per element: ``map``, ``filter``, ``flat_map``/``interleave``,
and ``reduce`` (how the functions are called: ``functions.py``).

``num_parallel_calls``, ``deterministic`` and the other threading arguments are accepted and
change nothing: the functions run one element at a time, in order, which is the order TensorFlow
gives with ``deterministic`` left at its default.

The functions are fixed when the step is built, as TensorFlow traces them then: the Python
values a function reads (its closure, the module globals it names) are those at the call of
``map``/``filter``/..., so ``[ds.filter(lambda x: x == c) for c in range(3)]`` keeps one class
in each dataset; Variables are still read when the function runs (``functions.frozen``).
``map`` checks each result against its ``element_spec`` (or, before that is traced, against
the first result): a function gradkit could not trace must still give every element one
structure and dtype, as TensorFlow's trace does.
"""

from __future__ import annotations

import os

import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import functions, ignoring
from .chunks import Cursor
from .dataset import Dataset, int_arg
from .options import AUTOTUNE
from .structure import DatasetSpec, Structure, as_component, most_specific_compatible, to_public


def _check_callable(func, what: str):
    if not callable(func):
        raise _errors.GradkitTypeError(
            f"tf.data.Dataset.{what} got a {type(func).__name__} where a function goes: pass a function of the "
            "element (its components as arguments for a tuple)."
        )
    return func


def _step_function(func, what: str):
    """A step's function, fixed now as TensorFlow's trace fixes it (``functions.frozen``)."""
    return functions.frozen(_check_callable(func, what))


class Map(Dataset):
    def __init__(self, dataset: Dataset, func):
        super().__init__(dataset)
        self._func = _step_function(func, "map")

    def _chunks(self):
        return _checked_elements(self, self._results(), "map")

    def _results(self):
        for chunk in self._inputs[0]._chunks():
            for row in chunk.rows():
                try:
                    with ignoring.not_skipping():
                        made = functions.call_on_row(self._func, chunk.structure, row)
                except ignoring.IGNORABLE:
                    if ignoring.skipping():  # an ignore_errors reads this step: the element is left out
                        continue
                    raise
                yield made

    def _compute_spec(self):
        return functions.output_spec(self._func, self._inputs[0], "tf.data.Dataset.map")

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()


def _checked_elements(dataset: Dataset, results, what: str):
    """The elements a step's function gave (``results``), each checked against the step's
    element_spec; until that is asked for (and traced), against the first result's structure,
    ranks and dtypes, which are what an untraceable function's spec holds."""
    expected = dataset._spec
    for index, made in enumerate(results):
        result = functions.result_chunk(made, f"{what}'s function")
        if expected is None:
            expected = functions.result_spec(result)
        functions.check_result(result, *expected, index, f"tf.data.Dataset.{what}'s function")
        yield result.as_structure(expected[0])


class Filter(Dataset):
    def __init__(self, dataset: Dataset, predicate):
        super().__init__(dataset)
        self._predicate = _step_function(predicate, "filter")

    def _chunks(self):
        predicate = self._predicate
        for chunk in self._inputs[0]._chunks():
            for i, row in enumerate(chunk.rows()):
                try:
                    with ignoring.not_skipping():
                        keep = functions.predicate_value(functions.call_on_row(predicate, chunk.structure, row))
                except ignoring.IGNORABLE:
                    if ignoring.skipping():  # an ignore_errors reads this step: the element is left out
                        continue
                    raise
                if keep:
                    yield chunk.slice(i, i + 1)

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()


class TakeWhile(Dataset):
    """``take_while``: the elements up to the first for which ``predicate`` gives False."""

    def __init__(self, dataset: Dataset, predicate):
        super().__init__(dataset)
        self._predicate = _step_function(predicate, "take_while")

    def _chunks(self):
        for chunk in self._inputs[0]._chunks():
            for i, row in enumerate(chunk.rows()):
                if not functions.predicate_value(functions.call_on_row(self._predicate, chunk.structure, row)):
                    if i:
                        yield chunk.slice(0, i)
                    return
            yield chunk

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()


class Unique(Dataset):
    """``unique``: each element the first time it comes; TensorFlow's rule: one int32 or int64
    component (string too, which gradkit.tf has not), of any shape."""

    def __init__(self, dataset: Dataset):
        super().__init__(dataset)
        structure, specs = dataset._structure_and_specs()
        for spec in specs:
            dtype = None if isinstance(spec, DatasetSpec) else np.dtype(spec.dtype)
            if dtype is None or dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
                raise _errors.GradkitTypeError(
                    f"`tf.data.Dataset.unique` does not support type {'dataset' if dtype is None else dtype.name} "
                    f"(element_spec {dataset.element_spec}) -- only `tf.int32` and `tf.int64` are supported "
                    "(integer scalars, or integer tensors of any shape; TensorFlow also takes `tf.string`, which "
                    "gradkit.tf has not). Cast first: "
                    "ds.map(lambda x: tf.cast(x, tf.int32)).unique()."
                )
        if len(specs) != 1:
            raise _errors.GradkitInvalidArgumentError(
                f"tf.data.Dataset.unique only supports inputs with a single component, but the elements are "
                f"{dataset.element_spec}. Map the elements to one tensor first (or unique each component's dataset)."
            )

    def _chunks(self):
        seen: set = set()
        for chunk in self._inputs[0]._chunks():
            for i, row in enumerate(chunk.rows()):
                value = np.asarray(row[0])
                key = (value.shape, value.tobytes())
                if key not in seen:
                    seen.add(key)
                    yield chunk.slice(i, i + 1)

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()


def _cores() -> int:
    """The CPU cores this process may run on (TensorFlow's schedulable CPUs)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _cycle_length(parallel_calls) -> int:
    """TensorFlow's cycle length for ``cycle_length=AUTOTUNE``, which its order depends on: the
    cores without ``num_parallel_calls``; with it, that many calls (at most the cores), or for
    ``num_parallel_calls=AUTOTUNE`` a third of the cores rounded up (so that each cycle element
    and the two TensorFlow prefetches for it have a core)."""
    if parallel_calls is None:
        return _cores()
    if parallel_calls == AUTOTUNE:
        return -(-_cores() // 3)
    return min(parallel_calls, _cores())


class Interleave(Dataset):
    """``interleave`` (and ``flat_map``: one dataset at a time, each to its end)."""

    def __init__(self, dataset: Dataset, func, cycle_length, block_length, what: str, num_parallel_calls=None):
        super().__init__(dataset)
        self._func = _step_function(func, what)
        self._what = what
        name = f"tf.data.Dataset.{what}"
        cycle = AUTOTUNE if cycle_length is None else int_arg(cycle_length, f"{name}(cycle_length)")
        block = 1 if block_length is None else int_arg(block_length, f"{name}(block_length)")
        calls = None if num_parallel_calls is None else int_arg(num_parallel_calls, f"{name}(num_parallel_calls)")
        if calls is not None and calls < 1 and calls != AUTOTUNE:
            raise _errors.GradkitInvalidArgumentError(
                f"{name} got num_parallel_calls={num_parallel_calls!r}: num_parallel_calls must be greater than "
                "zero (or tf.data.AUTOTUNE)."
            )
        self._late_error = None
        if cycle == AUTOTUNE:
            cycle = _cycle_length(calls)
        if cycle < 1 or block < 1:
            raise _errors.GradkitInvalidArgumentError(
                f"{name} got cycle_length={cycle_length!r}, block_length={block_length!r}: each must "
                "be positive (cycle_length may be tf.data.AUTOTUNE)."
            )
        if calls is not None and calls != AUTOTUNE and calls > cycle:
            error = _errors.GradkitInvalidArgumentError(
                f"{name}: if `cycle_length` is set to a fixed value, `num_parallel_calls` must be either "
                f"`tf.data.AUTOTUNE` or a value less than or equal to `cycle_length`. However, `num_parallel_calls` "
                f"is {calls} and `cycle_length` is {cycle} (TensorFlow's error; with cycle_length=AUTOTUNE it is "
                "this machine's cores). Pass num_parallel_calls=tf.data.AUTOTUNE, or a cycle_length at least as large."
            )
            if cycle_length is not None and cycle_length != AUTOTUNE:
                raise error
            self._late_error = error  # TensorFlow raises it when an iterator is made
        self._cycle, self._block = cycle, block

    def _dataset_of(self, structure, row) -> Dataset:
        made = functions.call_on_row(self._func, structure, row)
        if not isinstance(made, Dataset):
            raise _errors.GradkitTypeError(
                f"The `map_func` argument of tf.data.Dataset.{self._what} must return a `Dataset` object, but it "
                f"returned a {type(made).__name__}. Wrap tensors in one: tf.data.Dataset.from_tensors(x) (or "
                "from_tensor_slices to give their slices)."
            )
        return made

    def _input_datasets(self):
        for chunk in self._inputs[0]._chunks():
            for row in chunk.rows():
                yield self._dataset_of(chunk.structure, row)

    def _chunks(self):
        if self._late_error is not None:
            raise self._late_error
        inputs = self._input_datasets()
        slots: list = [None] * self._cycle
        index = block_index = open_count = 0
        end_of_input = False
        while not end_of_input or open_count:
            cursor = slots[index]
            if cursor is not None:
                chunk = cursor.next_up_to(self._block - block_index)
                if chunk is not None:
                    yield chunk
                    block_index += len(chunk)
                    if block_index < self._block:
                        continue
                else:
                    slots[index] = None
                    open_count -= 1
            elif not end_of_input:
                made = next(inputs, None)
                if made is None:
                    end_of_input = True
                else:
                    slots[index] = Cursor(made._chunks())
                    open_count += 1
                continue
            index, block_index = (index + 1) % self._cycle, 0

    def _compute_spec(self):
        """The element_spec of the datasets the function makes, from placeholder elements of the
        input's spec: unknown sizes 1, 2 and 3 filled with 0, 1 and 2, so that a dimension the
        input's size or value decides (``tf.fill([v], v)``, ``batch(v + 1)``) comes out unknown,
        as TensorFlow's shape inference leaves it; from the first element where that fails."""
        structure, specs = self._inputs[0]._structure_and_specs()
        try:
            made = [
                self._dataset_of(structure, _placeholders(specs, size, fill))._structure_and_specs()
                for size, fill in ((1, 0), (2, 1), (3, 2))
            ]
        except Exception:  # noqa: BLE001  (a function placeholders do not suit: use an element instead)
            made = None
        if (agreed := placeholder_specs_agreed(made)) is not None:
            return agreed
        for chunk in self._inputs[0]._chunks():
            return self._dataset_of(chunk.structure, next(chunk.rows()))._structure_and_specs()
        raise _errors.GradkitValueError(
            f"tf.data.Dataset.{self._what}: gradkit could not call the function on placeholder tensors to learn "
            "the element_spec of the datasets it makes, and the dataset is empty, so it has no element to call it on."
        )


def placeholder_specs_agreed(made):
    """The ``(structure, specs)`` that the results for three placeholder inputs (``made``, None
    where the function did not take them) agree on, each spec the most specific one compatible
    with all three; None where they disagree in structure or in a spec."""
    if made is None or any(m[0] != made[0][0] for m in made):
        return None
    merged = made[0][1]
    for other in made[1:]:
        merged = [None if a is None else most_specific_compatible(a, b) for a, b in zip(merged, other[1])]
    return None if None in merged else (made[0][0], merged)


def _placeholders(specs, size: int, fill: int) -> list:
    return [
        _placeholder_dataset(s, size, fill) if isinstance(s, DatasetSpec) else _placeholder(s, size, fill)
        for s in specs
    ]


def _placeholder(spec, size: int, fill: int):
    if spec.shape is None:
        raise ValueError("no placeholder for a tensor of unknown rank")
    return np.full(tuple(size if d is None else d for d in spec.shape), fill, spec.dtype)


def _placeholder_dataset(spec, size: int, fill: int) -> Dataset:
    """A dataset of ``size`` placeholder elements of ``spec``'s element spec (a ``window``'s
    component), so a function of windows is traced without an element (an empty input too)."""
    import jax

    def stacked(leaf):
        return np.stack([_placeholder(leaf, size, fill)] * size)

    elements = jax.tree_util.tree_map(stacked, spec.element_spec, is_leaf=lambda x: hasattr(x, "dtype"))
    return Dataset.from_tensor_slices(elements)


class Scan(Dataset):
    """``Dataset.scan``: ``scan_func(state, element)`` gives ``(new_state, output)``; the outputs are
    the elements, the state keeping its structure and dtypes (TypeError otherwise, as in TensorFlow)."""

    def __init__(self, dataset: Dataset, initial_state, scan_func):
        super().__init__(dataset)
        self._func = _step_function(scan_func, "scan")
        self._state_structure, leaves = Structure.split(initial_state)
        self._initial = [to_public(as_component(leaf, "tf.data.Dataset.scan's initial_state")) for leaf in leaves]

    def _step(self, state: list, element):
        result = functions.call(self._func, (self._state_structure.pack(state), element))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise _errors.GradkitTypeError(
                f"tf.data.Dataset.scan's scan_func returned {type(result).__name__}, where TensorFlow takes a pair "
                "(new_state, output_element). Return both: `return state + x, state`."
            )
        return _next_state(self._state_structure, state, result[0], "scan_func"), result[1]

    def _chunks(self):
        return _checked_elements(self, self._outputs(), "scan")

    def _outputs(self):
        state = list(self._initial)
        for element in self._inputs[0]._elements():
            state, output = self._step(state, element)
            yield output

    def _compute_spec(self):
        # What the first step returns, traced from the initial state as TensorFlow traces it.
        structure, specs = self._inputs[0]._structure_and_specs()
        is_tuple = type(structure.pack(specs)) is tuple

        def first_output(*components):
            return self._step(list(self._initial), tuple(components) if is_tuple else components[0])[1]

        return functions.output_spec(first_output, self._inputs[0], "tf.data.Dataset.scan")

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()


def _next_state(structure: Structure, state: list, new, what: str) -> list:
    """A function's new state, checked to keep the initial state's structure and dtypes."""
    if isinstance(new, list):
        new = tuple(new)
    new_structure, new_leaves = Structure.split(new)
    if new_structure != structure:
        raise _errors.GradkitTypeError(
            f"The structure of the new state must match the initial state: {what} returned "
            f"{new_structure.describe()} for a state of {structure.describe()}."
        )
    new_state = [
        leaf if isinstance(leaf, Tensor) else to_public(as_component(leaf, f"{what}'s result")) for leaf in new_leaves
    ]
    for want, got in zip(state, new_state):
        if got.dtype != want.dtype:
            raise _errors.GradkitTypeError(
                f"The element types for the new state must match the initial state. Expected {want.dtype} but got "
                f"{got.dtype}: cast the new state (tf.cast) or start from a value of that dtype."
            )
    return new_state


def reduce(dataset: Dataset, initial_state, reduce_func):
    """``Dataset.reduce``: ``reduce_func(state, element)`` over the elements, the state keeping its
    structure and dtypes (TypeError otherwise, as in TensorFlow)."""
    _check_callable(reduce_func, "reduce")
    structure, leaves = Structure.split(initial_state)
    state = [to_public(as_component(leaf, "tf.data.Dataset.reduce's initial_state")) for leaf in leaves]
    for element in dataset._elements():
        with functions.unrecorded():
            new = reduce_func(structure.pack(state), element)
        state = _next_state(structure, state, new, "reduce_func")
    return structure.pack(state)
