"""The functions ``tf.saved_model.load`` gives back, with TensorFlow's types of them.

- ``LoadedFunction``: a saved ``tf.function`` (``loaded.f``): called as the original,
  ``input_signature`` where it had one, ``concrete_functions`` and ``get_concrete_function``.
- ``LoadedConcreteFunction``: one saved program (one traced type): called with its
  arguments, it has ``structured_input_signature``, ``structured_outputs``,
  ``output_shapes`` and ``output_dtypes`` as TensorFlow's restored ConcreteFunction.
- ``SignatureFunction``: ``loaded.signatures[key]``, called with keywords and returning a dict;
  its ``structured_input_signature`` is ``((), {keyword: TensorSpec})`` and its
  ``structured_outputs`` a dict of named TensorSpecs, as in TensorFlow.

The output specs come from the saved program itself (``jax.export``'s output shapes, a
dimension made symbolic at export being ``None``).
"""

from __future__ import annotations

from collections.abc import Mapping

import jax
import numpy as np

from gradkit._errors import GradkitValueError

from ._concrete_function import OutputSpecs
from ._function import TensorSpec

_GRAPH_ONLY = ("graph", "inputs", "outputs", "function_def", "captured_inputs", "variables", "trainable_variables")


def _is_spec(x) -> bool:
    return isinstance(x, TensorSpec)


def output_specs(exported):
    """The structure of what the saved program returns (its first output: the second holds the
    new values of the Variables it assigns), a ``TensorSpec`` per tensor."""
    out_tree = jax.tree_util.treedef_children(exported.out_tree)[0]
    avals = exported.out_avals[: out_tree.num_leaves]
    specs = [TensorSpec(tuple(d if isinstance(d, int) else None for d in a.shape), a.dtype) for a in avals]
    return jax.tree_util.tree_unflatten(out_tree, specs)


def input_signature(entry: dict, names: list | None = None):
    """The saved ``input_signature`` (each argument in its structure, TensorSpecs and Python
    values); a TensorSpec named by ``names`` (one per tensor), else by the name it was saved with."""
    from ._saved_model_objects import unflatten_argument

    saved = entry.get("names") or [None] * len(entry["specs"])
    names = names or saved
    leaves = iter(
        [TensorSpec(shape, np.dtype(dtype), name=name) for (shape, dtype), name in zip(entry["specs"], names)]
    )
    return tuple(unflatten_argument(s, leaves) for s in entry.get("structure") or [None] * len(entry["specs"]))


def _concrete_names(entry: dict) -> list:
    """TensorFlow's names of a restored ConcreteFunction's input specs: the name a spec was
    saved with, else its argument's name (``pair_0``, ``pair_1``, ... inside a nested one)."""
    from ._saved_model_objects import flatten_argument

    saved = iter(entry.get("names") or [None] * len(entry["specs"]))
    arguments = entry.get("arguments") or []
    out = []
    for position, structure in enumerate(entry.get("structure") or [None] * len(entry["specs"])):
        argument = arguments[position] if position < len(arguments) and arguments[position] else f"args_{position}"
        shape = _template(structure)
        count = len(flatten_argument(shape, structure, "", position))
        for i in range(count):
            own = next(saved)
            out.append(own or (argument if structure is None else f"{argument}_{i}"))
    return out


def _template(structure):
    """A value of ``structure`` (0 for each tensor), to count its leaves."""
    if structure is None:
        return 0
    kind = next(iter(structure))
    if kind == "static":
        return structure["static"]
    if kind == "dict":
        return {key: _template(sub) for key, sub in structure["dict"]}
    items = [_template(sub) for sub in structure[kind]]
    return items if kind == "list" else tuple(items)


def _with_python_values(entry: dict, args: tuple, kwargs: dict) -> list | None:
    """The positional arguments of a call of a concrete function given its tensors alone (as
    TensorFlow's is called): the Python values it was saved with filled in at their places. None
    for a call that gives every argument, or that this does not fit (the call says what is wrong)."""
    structure = entry.get("structure") or []
    names = entry.get("arguments") or [None] * len(structure)
    fixed = {i: s["static"] for i, s in enumerate(structure) if isinstance(s, dict) and "static" in s}
    if not fixed or len(args) + len(kwargs) >= len(structure) or any(k not in names for k in kwargs):
        return None
    tensors = [i for i in range(len(structure)) if i not in fixed]
    given = iter(args)
    full = []
    for i in range(len(structure)):
        if i in fixed:
            full.append(fixed[i])
        elif names[i] in kwargs:
            full.append(kwargs[names[i]])
        else:
            full.append(next(given, None))
    if len(args) > len(tensors) or any(v is None for i, v in enumerate(full) if i not in fixed):
        return None
    return full


class LoadedConcreteFunction(OutputSpecs):
    """One saved program of a loaded function, as TensorFlow's restored ConcreteFunction."""

    def __init__(self, name: str, run, entry: dict, outputs):
        self._name, self._run, self._entry, self._outputs = name, run, entry, outputs

    def __call__(self, *args, **kwargs):
        full = _with_python_values(self._entry, args, kwargs)
        return self._run(*args, **kwargs) if full is None else self._run(*full)

    @property
    def name(self) -> str:
        return self._name

    @property
    def structured_input_signature(self):
        """``(args, kwargs)`` of the saved type: TensorSpecs (named) and Python values."""
        return input_signature(self._entry, _concrete_names(self._entry)), {}

    @property
    def structured_outputs(self):
        """What a call returns, with a ``tf.TensorSpec`` for each tensor."""
        return self._outputs

    def _fits(self, args, kwargs) -> bool:
        from ._saved_model import _fitting_arguments

        return _fitting_arguments(self._entry, args, kwargs) is not None

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self._name} loaded from a SavedModel>"

    def __getattr__(self, name):
        if name in _GRAPH_ONLY:
            raise AttributeError(
                f"[gradkit] a loaded ConcreteFunction has no {name}: that is TensorFlow's graph, and a function "
                "gradkit loads is a compiled jax.export program. Use structured_input_signature, structured_outputs, "
                "output_shapes and output_dtypes, or call it."
            )
        raise AttributeError(f"[gradkit] a loaded ConcreteFunction has no attribute {name!r}.")


class SignatureFunction(LoadedConcreteFunction):
    """``loaded.signatures[key]``: keyword arguments, one per tensor, and a dict of outputs."""

    def __call__(self, *args, **kwargs):
        return self._run(*args, **kwargs)

    @property
    def structured_input_signature(self):
        keywords = self._entry.get("keywords") or self._entry.get("arguments") or []
        specs = [
            TensorSpec(shape, np.dtype(dtype), name=k) for (shape, dtype), k in zip(self._entry["specs"], keywords)
        ]
        return (), dict(zip(keywords, specs))

    @property
    def structured_outputs(self):
        outputs = self._outputs
        if not isinstance(outputs, Mapping):
            outputs = {f"output_{i}": s for i, s in enumerate(jax.tree_util.tree_leaves(outputs, is_leaf=_is_spec))}
        return {key: TensorSpec(spec.shape, spec.dtype, name=key) for key, spec in outputs.items()}


class LoadedFunction:
    """A saved ``tf.function``: a call runs the saved program its arguments fit."""

    def __init__(self, name: str, concrete: list, signature, call):
        self._name, self._concrete, self._signature, self._call = name, concrete, signature, call

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    @property
    def input_signature(self):
        """The ``input_signature`` it was saved with (None for one saved per traced type)."""
        return self._signature

    @property
    def concrete_functions(self) -> list:
        return list(self._concrete)

    def get_concrete_function(self, *args, **kwargs) -> LoadedConcreteFunction:
        """The saved program for these arguments (tensors or ``tf.TensorSpec``s), or the only one
        when it was saved with an ``input_signature`` and none are given."""
        if not args and not kwargs and self._signature is not None:
            return self._concrete[0]
        for concrete in self._concrete:
            if concrete._fits(args, kwargs):
                return concrete
        saved = "; ".join(repr(c.structured_input_signature[0]) for c in self._concrete) or "none"
        raise GradkitValueError(
            f"Could not find matching concrete function to call loaded from the SavedModel (TensorFlow's error): "
            f"{self._name}.get_concrete_function got {args!r}, {kwargs!r}, which fit none of the signatures it was "
            f"saved with: {saved}. Pass arguments (tensors or tf.TensorSpecs) of one of those."
        )

    def __repr__(self) -> str:
        return f"<gradkit.tf function {self._name} loaded from a SavedModel>"
