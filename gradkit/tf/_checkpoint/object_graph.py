"""The objects a checkpoint saves, found as TensorFlow finds them.

Starting from the checkpoint, each object's children are walked breadth first, and each object
is named by the first path that reaches it (so by its shortest one): ``model/dense/kernel``. The
children of an object are, as in TensorFlow's object graph:

- a ``Checkpoint``: the objects given to it (sorted by name), then ``save_counter``;
- a Keras layer or model: the weights its ``add_weight`` made, named as they were given
  (``kernel``, ``moving_mean``; a repeated name gets ``_1``, ``_2``), then its attributes that
  hold something trackable (a Sequential's or functional model's layers are ``layers``);
- a Keras optimizer, ``tf.Module``, metric or ``tf.random.Generator``: its attributes
  (``_iterations``, ``_learning_rate``);
- a list or tuple: its items by position; a dict: its values by key.

The optimizer's state for each Variable (its slots, moving average, gradient accumulator) is
saved with that Variable, as TensorFlow saves slot variables: under
``<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>``, so it is matched to the same Variable in
another program whatever order the optimizer made its state in. A Variable the checkpoint reaches
only through the optimizer (a checkpoint of the optimizer alone) is saved, with its state, at
``<optimizer>/_trainable_variables/<i>``, as Keras 3 on TensorFlow saves it.
"""

from __future__ import annotations

import collections

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit.nn.module import Module

from .._keras.base_layer import Layer as KerasLayer
from .._keras.metrics import Metric
from .._keras.optimizers import Optimizer
from .._random_generator import Generator
from .._saved_model_objects import Loaded

VALUE_SUFFIX = ".ATTRIBUTES/VARIABLE_VALUE"
SLOT_MARK = ".OPTIMIZER_SLOT"

# The optimizer's per-Variable state is not walked as attributes: it is saved with each Variable.
_OPTIMIZER_PRIVATE = frozenset({"_slots", "_averages", "_accumulators", "_no_decay", "_built", "_assigned"})
# gradkit's own names for a model's list of layers.
_LAYER_LISTS = {"_sequence": "layers", "_functional_layers": "layers"}
CONTAINERS = (list, tuple, dict)
TRAINED = "_trainable_variables"  # an optimizer's child: the Variables it keeps state for


def is_checkpoint(obj) -> bool:
    return hasattr(type(obj), "_checkpoint_children")


def is_trackable(obj) -> bool:
    """Whether a checkpoint saves ``obj`` or looks inside it."""
    if isinstance(obj, (Variable, Module, Optimizer, Metric, Generator, Loaded)) or is_checkpoint(obj):
        return True
    if isinstance(obj, (list, tuple)):
        return any(is_trackable(item) for item in obj)
    if isinstance(obj, dict):
        return any(is_trackable(item) for item in obj.values())
    return False


def weight_key(name: str, taken: dict) -> str:
    """The key of a Keras weight called ``name`` (as given to ``add_weight``) among ``taken``, the
    names its layer's earlier weights used (counted per name): ``kernel``, then ``kernel_1``."""
    count = taken.get(name, 0)
    taken[name] = count + 1
    return name if count == 0 else f"{name}_{count}"


def short_name(variable) -> str:
    """The name a Keras layer gave ``add_weight`` for ``variable`` (its Variable is named
    ``<layer>/<name>``, inside any name scope)."""
    return variable._name.rsplit("/", 1)[-1]


def keras_weights(layer) -> list:
    """(key, Variable) for the weights ``layer``'s ``add_weight`` made, in creation order."""
    taken: dict = {}
    return [(weight_key(short_name(v), taken), v) for v in layer.__dict__.get("_keras_own", ())]


def next_weight_key(layer, name: str) -> str:
    """The key the next weight ``layer`` makes under ``name`` gets."""
    taken: dict = {}
    for v in layer.__dict__.get("_keras_own", ()):
        weight_key(short_name(v), taken)
    return weight_key(name, taken)


def _attributes(obj, skip=frozenset()) -> list:
    out = []
    for name, value in vars(obj).items():
        if name in skip or name.startswith(("_keras_", "_module_", "__")):
            continue
        if is_trackable(value):
            out.append((name, value))
    return out


def children(obj) -> list:
    """``(name, child)`` for each trackable child of ``obj``, in order, names unique."""
    if isinstance(obj, Variable):
        return []
    if isinstance(obj, (list, tuple)):
        return [(str(i), item) for i, item in enumerate(obj) if is_trackable(item)]
    if isinstance(obj, dict):
        out = []
        for key, item in obj.items():
            if not is_trackable(item):
                continue
            if not isinstance(key, str):
                raise _errors.GradkitValueError(
                    f"A checkpoint cannot save a dict with the key {key!r} ({type(key).__name__}) holding "
                    f"{type(item).__name__}: a checkpoint names each object by its path, and TensorFlow refuses "
                    "dictionary keys that are not strings too. Use string keys for dicts of Variables, layers "
                    "or optimizers."
                )
            out.append((key, item))
        return out
    if is_checkpoint(obj):
        found = obj._checkpoint_children()
    elif isinstance(obj, KerasLayer):
        found = keras_weights(obj)
        own = {id(v) for _, v in found}
        found += [(_LAYER_LISTS.get(name, name), value) for name, value in _attributes(obj) if id(value) not in own]
    elif isinstance(obj, Optimizer):
        found = _attributes(obj, _OPTIMIZER_PRIVATE)
        trained = trained_variables(obj)
        if trained:  # Keras 3's list of them; the Graph gives these paths only where nothing else reaches them
            found.append((TRAINED, trained))
    elif isinstance(obj, Loaded):  # a tf.saved_model.load object: its attributes, at the saved paths
        found = _attributes(obj, frozenset({"_saved_variables"}))
    else:
        found = _attributes(obj)
    out, used = [], set()
    for name, child in found:
        unique, n = name, 0
        while unique in used:  # an attribute named as one of the layer's weights
            n += 1
            unique = f"{name}_{n}"
        used.add(unique)
        out.append((unique, child))
    return out


def child(obj, name: str):
    return next((c for n, c in children(obj) if n == name), None)


def follow(obj, names: tuple):
    """Follow ``names`` from ``obj``: ``(found, anchor, rest)``, ``found`` the object at the end
    (None where the path stops), ``anchor`` the last object reached that is not a list, tuple or
    dict, and ``rest`` the names left from it."""
    anchor, start = obj, 0
    for i, name in enumerate(names):
        nxt = child(obj, name)
        if nxt is None:
            return None, anchor, tuple(names[start:])
        obj = nxt
        if not isinstance(obj, CONTAINERS):
            anchor, start = obj, i + 1
    return obj, anchor, tuple(names[start:])


def optimizer_state(optimizer) -> list:
    """``(variable, slot name, state Variable)`` for the state ``optimizer`` keeps per Variable."""
    out = []
    for ref, slots, _ in list(optimizer._slots.values()):
        variable = ref()
        if variable is not None:
            out += [(variable, f"slot_{i}", slot) for i, slot in enumerate(slots)]
    for table, name in ((optimizer._averages, "average"), (optimizer._accumulators, "gradient_accumulator")):
        for ref, state in list(table.values()):
            variable = ref()
            if variable is not None:
                out.append((variable, name, state))
    return out


def trained_variables(optimizer) -> list:
    """The Variables ``optimizer`` keeps state for, in the order it made that state."""
    out, seen = [], set()
    for variable, _, _ in optimizer_state(optimizer):
        if id(variable) not in seen:
            seen.add(id(variable))
            out.append(variable)
    return out


def state_of(optimizer, variable, name: str):
    """The state Variable ``name`` that ``optimizer`` keeps for ``variable``, or None."""
    return next((s for v, n, s in optimizer_state(optimizer) if v is variable and n == name), None)


_MAX_PATHS = 8  # the other paths kept per object (a layer shared by many models)


class Graph:
    """The objects reachable from a checkpoint: ``variables``, ``(path, Variable)`` in the order
    found; ``slots``, ``(variable path, optimizer path, slot name, state Variable)``; ``paths``,
    the path of every object by ``id`` (the shortest); ``other_paths``, the other paths that
    reach it (an object reachable twice, ``Checkpoint(model=m, encoder=m.layers[0])``, is saved
    once and restored through any of them, as TensorFlow's object graph allows)."""

    def __init__(self, root):
        self.paths: dict = {id(root): ()}
        self.objects: list = [root]
        self.variables: list = []
        self.slots: list = []
        edges: list = []  # (parent id, name, child id) for every edge, in the order found
        queue = collections.deque([root])
        while queue:
            obj = queue.popleft()
            for name, item in children(obj):
                if name == TRAINED and isinstance(obj, Optimizer):
                    continue  # after the walk: _reach_trained_variables
                edges.append((id(obj), name, id(item)))
                if id(item) in self.paths:
                    continue
                path = (*self.paths[id(obj)], name)
                self.paths[id(item)] = path
                self.objects.append(item)
                if isinstance(item, Variable):
                    self.variables.append((path, item))
                else:
                    queue.append(item)
        self.other_paths = _other_paths(self.paths, edges)
        for obj in list(self.objects):
            if isinstance(obj, Optimizer):
                self._reach_trained_variables(obj)
        for obj in self.objects:
            if isinstance(obj, Optimizer):
                for variable, name, state in optimizer_state(obj):
                    var_path = self.paths.get(id(variable))
                    if var_path is not None and id(state) not in self.paths:
                        self.slots.append((var_path, self.paths[id(obj)], name, state))

    def _reach_trained_variables(self, optimizer) -> None:
        """The Variables ``optimizer`` keeps state for are also reached through it, as Keras 3's
        ``_trainable_variables`` list (``opt/_trainable_variables/0``): a checkpoint of the optimizer
        alone saves them and their state. One reached through the model keeps the model's path."""
        base = (*self.paths[id(optimizer)], TRAINED)
        for i, variable in enumerate(trained_variables(optimizer)):
            path = (*base, str(i))
            if id(variable) in self.paths:
                others = self.other_paths.setdefault(id(variable), [])
                if path != self.paths[id(variable)] and path not in others and len(others) < _MAX_PATHS:
                    others.append(path)
                continue
            self.paths[id(variable)] = path
            self.objects.append(variable)
            self.variables.append((path, variable))

    def all_variables(self) -> list:
        """Every Variable found, the optimizers' state included."""
        return [v for _, v in self.variables] + [s for *_, s in self.slots]


def _other_paths(paths: dict, edges: list) -> dict:
    """For each object reached by more than one path, its paths other than the shortest: every
    edge into it from every path of its parent (a parent's own other paths first found), at most
    ``_MAX_PATHS``."""
    every: dict = {child: [paths[child]] for _, _, child in edges}
    changed = True
    while changed:  # a parent's other paths may be found after its children's edges: repeat
        changed = False
        for parent, name, child in edges:
            found = every[child]
            for start in every.get(parent, [paths[parent]]):
                path = (*start, name)
                if len(found) <= _MAX_PATHS and path not in found:
                    found.append(path)
                    changed = True
    return {child: found[1:] for child, found in every.items() if len(found) > 1}


def escape(name: str) -> str:
    """TensorFlow's escaping of one name in a checkpoint key: ``.`` as ``..``, ``/`` as ``.S``."""
    return name.replace(".", "..").replace("/", ".S")


def path_key(path: tuple) -> str:
    return "/".join(escape(n) for n in path)


def variable_key(path: tuple) -> str:
    """TensorFlow's key of a Variable's value: ``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``."""
    return "/".join([*(escape(n) for n in path), VALUE_SUFFIX])


def slot_key(var_path: tuple, optimizer_path: tuple, name: str) -> str:
    """TensorFlow's key of an optimizer slot: ``<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>/...``."""
    return "/".join([path_key(var_path), SLOT_MARK, path_key(optimizer_path), escape(name), VALUE_SUFFIX])
