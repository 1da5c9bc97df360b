"""What ``tf.saved_model.save`` keeps of an object besides its programs, and what ``load`` makes
of it again.

The saved object is a tree: the object's tracked attributes (Variables, submodules, lists, tuples
and dicts holding them) and its ``tf.function``s with an ``input_signature``, walked as
TensorFlow walks a ``tf.Module``. The tree is written as JSON, each Variable by its index into
the saved values; ``load`` rebuilds it with new Variables holding those values at the same places
(a Variable reached twice is one Variable twice, as it was), so ``loaded.w`` and ``loaded.sub.v``
exist, can be assigned, and are what the loaded functions read.

Nested ``input_signature``s (a tuple of ``TensorSpec``s as one argument) are kept as a JSON
description of their structure, so the loaded function takes and flattens the same structure.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

import jax

from gradkit._core.variable import Variable
from gradkit._errors import GradkitTypeError
from gradkit.nn.module import Module as _NnModule

from ._function import Function, TensorSpec
from ._random_generator import Generator


class Loaded:
    """An object ``tf.saved_model.load`` made: the saved object's Variables, submodules and
    functions as attributes, at the paths they had."""

    def __repr__(self) -> str:
        return f"<gradkit.tf loaded SavedModel with {sorted(k for k in vars(self) if not k.startswith('_'))}>"

    def __call__(self, *args, **kwargs):
        # Python looks __call__ up on the class: the saved object's own (a tf.Module's
        # ``__call__``, a Keras model's call) is an attribute of this instance.
        call = self.__dict__.get("__call__")
        if call is None:
            raise GradkitTypeError(
                "this loaded SavedModel object is not callable: the saved object had no __call__ tf.function with an "
                f"input_signature. Call one of its functions instead: {sorted(k for k in vars(self) if not k.startswith('_'))}."
            )
        return call(*args, **kwargs)

    @property
    def variables(self) -> tuple:
        """Every Variable restored under this object, each once, in the order of the saved tree."""
        return tuple(self.__dict__.get("_saved_variables", ()))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if v.trainable)


def own_functions(obj) -> list:
    """``(name, Function)`` per ``tf.function`` of ``obj`` that has an ``input_signature`` or has
    been traced (called): methods decorated in its class (bound to ``obj``) and ``tf.function``s
    stored on the instance (which TensorFlow saves too; an instance attribute hides a class one
    of the same name)."""
    found = {}
    for name, attr in inspect.getmembers(type(obj)):
        if isinstance(attr, Function):
            bound = getattr(obj, name)
            if _saveable(bound):
                found[name] = bound
    for name, attr in vars(obj).items() if hasattr(obj, "__dict__") else ():
        if isinstance(attr, Function) and _saveable(attr):
            found[name] = attr
    return sorted(found.items())


def _saveable(function) -> bool:
    return function.input_signature is not None or bool(traced_signatures(function))


class Fixed:
    """A Python value of a traced call (``training=False``): part of the function type TensorFlow
    saved a concrete function for, so a call of the loaded function must pass the same."""

    def __init__(self, value):
        self.value = value


def traced_signatures(function) -> list:
    """Per function type ``function`` was traced for without an ``input_signature`` (TensorFlow
    saves a concrete function for each): its arguments in parameter order, tensors as
    ``TensorSpec``s and Python values as ``Fixed``. Types holding a Python value JSON cannot
    write, and functions taking ``*args``, ``**kwargs`` or positional-only parameters, give none."""
    try:
        params = list(inspect.signature(function.python_function).parameters.values())
    except (TypeError, ValueError):
        return []
    simple = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind not in simple for p in params):
        return []
    found = []
    for python, specs in getattr(function._traces, "_types", ()):
        if python is None:
            continue
        treedef, kinds = python
        spec_iter = iter(specs)
        leaves = []
        for kind in kinds:
            if isinstance(kind, str):  # a tensor or a Variable
                shape, dtype = next(spec_iter)
                leaves.append(TensorSpec(shape, dtype))
            elif isinstance(kind.value, (bool, int, float, str)) or kind.value is None:
                leaves.append(Fixed(kind.value))
            else:
                break
        else:
            bound = jax.tree_util.tree_unflatten(treedef, leaves)
            if isinstance(bound, dict) and set(bound) <= {p.name for p in params}:
                found.append([bound.get(p.name, Fixed(p.default)) for p in params])
    return found


class Walk:
    """The tree of ``obj``'s tracked attributes: ``tree`` (JSON), ``variables`` (each once, in
    the order their indices in the tree give) and ``functions`` (``(file stem, Function)``)."""

    def __init__(self, obj):
        self.variables: list = []
        self.functions: list = []
        self._index: dict[int, int] = {}
        self._seen: set[int] = set()
        self.loaded_functions: list = []  # (path) of functions of a loaded SavedModel object met
        self.tree = self._module(obj, [])

    def index_of(self, var) -> int | None:
        return self._index.get(id(var))

    def _module(self, obj, path: list) -> dict:
        self._seen.add(id(obj))
        node: dict = {"kind": "module", "attrs": {}, "functions": {}}
        for name, function in own_functions(obj):
            stem = ".".join([*path, name])
            node["functions"][name] = stem
            self.functions.append((stem, function))
        attrs = vars(obj) if hasattr(obj, "__dict__") else {}
        if isinstance(obj, Loaded):
            # Its functions are saved programs (plain closures), not tf.functions to trace again.
            self.loaded_functions += [
                ".".join([*path, key])
                for key, value in attrs.items()
                if callable(value) and not isinstance(value, (Variable, Loaded)) or (key == "signatures" and value)
            ]
        for key in sorted(attrs):
            if key.startswith(("_module_", "__", "_saved_variables")) or isinstance(attrs[key], Function):
                continue
            child = self._value(attrs[key], [*path, key])
            if child is not None:
                node["attrs"][key] = child
        return node

    def _value(self, value, path: list) -> dict | None:
        if isinstance(value, Function):  # a tf.function held in a list or a dict, saved as TensorFlow saves it
            stem = ".".join(path)
            self.functions.append((stem, value))
            return {"kind": "function", "stem": stem}
        if isinstance(value, Variable):
            index = self._index.get(id(value))
            if index is None:
                index = self._index[id(value)] = len(self.variables)
                self.variables.append(value)
            return {"kind": "variable", "index": index}
        if isinstance(value, Generator):  # its state Variable, which its draws assign
            return {"kind": "generator", "state": self._value(value.state, [*path, "state"])}
        if isinstance(value, (_NnModule, Loaded)):
            return None if id(value) in self._seen else self._module(value, path)
        if isinstance(value, (list, tuple)):
            items = [self._value(item, [*path, str(i)]) for i, item in enumerate(value)]
            if all(item is None for item in items):
                return None
            return {"kind": "list" if isinstance(value, list) else "tuple", "items": items}
        if isinstance(value, dict):
            items = {}
            for key, item in value.items():
                child = self._value(item, [*path, str(key)]) if isinstance(key, str) else None
                if child is not None:
                    items[key] = child
            return {"kind": "dict", "items": items} if items else None
        return None


def rebuild(node: dict, variables: list, functions: dict, root: Loaded | None = None):
    """The object ``node`` describes, its Variables from ``variables`` (by index) and its
    functions from ``functions`` (by file stem)."""
    kind = node["kind"]
    if kind == "variable":
        return variables[node["index"]]
    if kind == "function":
        return functions[node["stem"]]
    if kind == "generator":
        return Generator._holding(rebuild(node["state"], variables, functions))
    if kind == "module":
        obj = root if root is not None else Loaded()
        for key, child in node["attrs"].items():
            setattr(obj, key, rebuild(child, variables, functions))
        for name, stem in node["functions"].items():
            setattr(obj, name, functions[stem])
        obj.__dict__["_saved_variables"] = [variables[i] for i in sorted(_indices(node))]
        return obj
    if kind in ("list", "tuple"):
        items = [None if child is None else rebuild(child, variables, functions) for child in node["items"]]
        return items if kind == "list" else tuple(items)
    return {key: rebuild(child, variables, functions) for key, child in node["items"].items()}


def _indices(node: dict) -> set:
    """The indices of the Variables under ``node``."""
    if node is None:
        return set()
    kind = node["kind"]
    if kind == "variable":
        return {node["index"]}
    if kind == "function":
        return set()
    if kind == "generator":
        return _indices(node["state"])
    if kind == "module":
        children = list(node["attrs"].values())
    elif kind == "dict":
        children = list(node["items"].values())
    else:
        children = node["items"]
    return set().union(set(), *(_indices(child) for child in children))


# -- nested input signatures ---------------------------------------------------------------------


def signature_structure(signature) -> list:
    """The JSON description of each argument of ``signature``: None for one ``TensorSpec``,
    ``{"tuple"|"list": [...]}`` or ``{"dict": [[key, ...], ...]}`` for a structure of them."""
    return [_structure(spec) for spec in signature]


def _structure(spec):
    if isinstance(spec, TensorSpec):
        return None
    if isinstance(spec, Fixed):
        return {"static": spec.value}
    if isinstance(spec, (list, tuple)):
        return {"list" if isinstance(spec, list) else "tuple": [_structure(s) for s in spec]}
    if isinstance(spec, Mapping):
        return {"dict": [[key, _structure(spec[key])] for key in sorted(spec)]}
    raise GradkitTypeError(
        f"saved_model.save: an input_signature holds {spec!r} ({type(spec).__name__}), which is not a "
        "tf.TensorSpec nor a list, tuple or dict of them. Describe each argument with tf.TensorSpec(shape, dtype)."
    )


def flat_specs(signature) -> list:
    """The ``TensorSpec``s of ``signature``, in ``signature_structure``'s order."""
    out: list = []
    for spec in signature:
        _leaves(spec, _structure(spec), out)
    return out


def _leaves(value, structure, out: list) -> None:
    if structure is None:
        out.append(value)
    elif "static" in structure:
        return
    elif "dict" in structure:
        for key, sub in structure["dict"]:
            _leaves(value[key], sub, out)
    else:
        for item, sub in zip(value, next(iter(structure.values()))):
            _leaves(item, sub, out)


def flatten_argument(value, structure, name: str, position: int) -> list:
    """The leaves of the argument ``value``, which must have ``structure`` (as the signature's)."""
    if structure is None:
        return [value]
    kind = next(iter(structure))
    if kind == "static":
        if not _same_python_value(value, structure["static"]):
            raise _structure_error(name, position, value, f"the Python value {structure['static']!r}")
        return []
    if kind == "dict":
        keys = [key for key, _ in structure["dict"]]
        if not isinstance(value, Mapping) or sorted(value) != keys:
            raise _structure_error(name, position, value, f"a dict with the keys {keys}")
        return [leaf for key, sub in structure["dict"] for leaf in flatten_argument(value[key], sub, name, position)]
    subs = structure[kind]
    if not isinstance(value, (list, tuple)) or len(value) != len(subs):
        raise _structure_error(name, position, value, f"a {kind} of {len(subs)}")
    return [leaf for item, sub in zip(value, subs) for leaf in flatten_argument(item, sub, name, position)]


def unflatten_argument(structure, leaves):
    """The argument of ``structure`` made from the iterator ``leaves``."""
    if structure is None:
        return next(leaves)
    if "static" in structure:
        return structure["static"]
    if "dict" in structure:
        return {key: unflatten_argument(sub, leaves) for key, sub in structure["dict"]}
    kind = next(iter(structure))
    items = [unflatten_argument(sub, leaves) for sub in structure[kind]]
    return items if kind == "list" else tuple(items)


def _same_python_value(value, saved) -> bool:
    return type(value) is type(saved) and value == saved or (value is None and saved is None)


def _structure_error(name: str, position: int, value, want: str) -> GradkitTypeError:
    return GradkitTypeError(
        f"the loaded function {name} got {type(value).__name__} as argument {position}, where its input_signature "
        f"has {want}. Pass the argument in the structure it was saved with."
    )
