"""Keras' functional API: ``x = tf.keras.Input(shape)``, layers called on symbolic tensors,
``tf.keras.Model(inputs, outputs)``.

``tf.keras.Input`` gives a ``KerasTensor``: a shape (``None`` where any size fits) and a dtype,
no value. A layer called on one is built for it and gives new ``KerasTensor``s, recording the
call (a *node*: the layer, its arguments); Python operators on them (``x + y``, ``x[:, 0]``,
``2 * x``) are recorded the same way. ``tf.keras.Model(inputs, outputs)`` keeps the nodes that
lead from ``inputs`` to ``outputs``; calling the model on tensors calls each layer of each node
in the order they were made, on the values of its arguments, so every layer behaves as when it
is called by hand (``training``, masks, losses). As in Keras 3, a TensorFlow function cannot
take a ``KerasTensor``: wrap it in a ``tf.keras.layers.Lambda``.

An output's shape is found by running the layer on zeros twice, with every unknown size set to 2
and then to 3: a size that changes with them is unknown (``None``) in the result.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import threading

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor
from gradkit.nn.layer import unique_name

from .. import _probe_writes
from . import input_standardization

_counter = itertools.count()  # nodes are numbered as they are made: a topological order
_symbolic = threading.local()  # .runs: the symbolic runs under way in this thread (see symbolic_run)


@contextlib.contextmanager
def symbolic_run(unknown_batch: bool):
    """Layers run on zeros only to find shapes or make weights (``record_call``, a model's
    ``build``), for inputs whose batch size is unknown or not."""
    runs = _symbolic.__dict__.setdefault("runs", [])
    runs.append(unknown_batch)
    _probe_writes.open_run()  # what the layers assign is put back when the outermost run ends
    try:
        yield
    finally:
        runs.pop()
        _probe_writes.close_run()


def running_symbolically() -> bool:
    """Whether layers are being run on zeros (see ``symbolic_run``): a layer with state (a
    stateful RNN) must then leave it as it is, as Keras' symbolic calls do."""
    return bool(getattr(_symbolic, "runs", None))


def batch_size_unknown() -> bool:
    """Whether the innermost symbolic run is for inputs of unknown batch size."""
    runs = getattr(_symbolic, "runs", None)
    return bool(runs) and runs[-1]


class KerasTensor:
    """A symbolic tensor of Keras' functional API (see the module docstring)."""

    __array_priority__ = 2000  # `np_array + x` records the operator instead of converting x

    def __init__(self, shape, dtype, node=None, index=0, name=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = np.dtype(dtype).name
        self.name = name or f"keras_tensor_{next(_counter)}"
        self._node = node  # the node that made it (None: an Input's)
        self._index = index

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse=False, ragged=False, name={self.name}>"

    def __array__(self, *args, **kwargs):
        raise _not_a_value(self)

    def __bool__(self):
        raise _errors.GradkitTypeError(
            f"A KerasTensor ({self.name}) has no value, so it is neither True nor False: Python control flow on it "
            "cannot be recorded. Compute it inside a layer's call() instead."
        )

    def __iter__(self):
        raise _errors.GradkitTypeError(f"A KerasTensor ({self.name}) cannot be iterated: index it (x[:, 0]) instead.")

    def __int__(self):
        raise _not_a_number(self, "int")

    def __float__(self):
        raise _not_a_number(self, "float")

    def __jax_array__(self):
        raise _not_a_value(self)


def _not_a_number(t, kind: str) -> Exception:
    return _errors.GradkitValueError(
        f"A KerasTensor ({t.name}, shape {t.shape}) is symbolic: a placeholder for a shape and a dtype, with no "
        f"value, so {kind}() cannot make a number of it, as in Keras. Compute with it inside a layer's call(), or "
        "use a shape it knows (x.shape[-1])."
    )


def _not_a_value(t) -> Exception:
    # Keras raises a ValueError; a TypeError too, as it is an input no op can take.
    return _errors.OpInputError(
        f"A KerasTensor ({t.name}, shape {t.shape}) cannot be used as input to a TensorFlow function: it is a "
        "symbolic input of Keras' functional API, with no value yet. Wrap the computation in a layer, e.g. "
        "tf.keras.layers.Lambda(lambda x: tf.reduce_sum(x, axis=-1))(x), as Keras 3 asks."
    )


def _operator(fn, reflected=False):
    def method(self, other):
        args = (other, self) if reflected else (self, other)
        return record_call(_OperatorCall(fn), args, {})

    return method


for _name, _fn in [
    ("add", operator.add),
    ("sub", operator.sub),
    ("mul", operator.mul),
    ("truediv", operator.truediv),
    ("floordiv", operator.floordiv),
    ("mod", operator.mod),
    ("pow", operator.pow),
    ("matmul", operator.matmul),
    ("lt", operator.lt),
    ("le", operator.le),
    ("gt", operator.gt),
    ("ge", operator.ge),
]:
    setattr(KerasTensor, f"__{_name}__", _operator(_fn))
    if _name not in ("lt", "le", "gt", "ge"):
        setattr(KerasTensor, f"__r{_name}__", _operator(_fn, reflected=True))


def _keras_op_operator(name: str, reflected=False):
    """An operator Keras 3 maps to a ``keras.ops`` function (``a != b`` is ``ops.not_equal``,
    ``a & b`` is ``ops.logical_and``, whatever the dtype): that op's call, recorded as Keras
    records it."""

    def method(self, *others):
        from .ops import numpy_elementwise  # imported here: the ops record their calls through this module

        args = (*others, self) if reflected else (self, *others)
        return getattr(numpy_elementwise, name)(*args)

    return method


for _name, _op in [("ne", "not_equal"), ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")]:
    setattr(KerasTensor, f"__{_name}__", _keras_op_operator(_op))
    if _name != "ne":
        setattr(KerasTensor, f"__r{_name}__", _keras_op_operator(_op, reflected=True))
KerasTensor.__invert__ = _keras_op_operator("logical_not")


def _round(self, ndigits=None):
    from .ops import numpy_elementwise

    return numpy_elementwise.round(self, decimals=ndigits or 0)


KerasTensor.__round__ = _round
KerasTensor.__neg__ = lambda self: record_call(_OperatorCall(operator.neg), (self,), {})
KerasTensor.__abs__ = lambda self: record_call(_OperatorCall(operator.abs), (self,), {})
KerasTensor.__getitem__ = lambda self, key: record_call(_OperatorCall(operator.getitem), (self, key), {})


# Keras' operation classes for the Python operators on KerasTensors (``x + y`` is ``ops.Add``).
_OPERATOR_CLASSES = {
    operator.add: "Add",
    operator.sub: "Subtract",
    operator.mul: "Multiply",
    operator.truediv: "TrueDivide",
    operator.floordiv: "FloorDivide",
    operator.mod: "Mod",
    operator.pow: "Power",
    operator.matmul: "Matmul",
    operator.lt: "Less",
    operator.le: "LessEqual",
    operator.gt: "Greater",
    operator.ge: "GreaterEqual",
    operator.neg: "Negative",
    operator.abs: "Absolute",
    operator.getitem: "GetItem",
}


class _OperatorCall:
    """A Python operator applied to tensors: a node of its own, named as Keras names the
    operation it records (``add``, ``get_item_1``: Keras' class in snake case, numbered with
    the layers' names, so the names of layers made later are Keras' too)."""

    def __init__(self, fn, name=None):
        from .layer_names import keras_snake

        self.fn = fn
        self.class_name = _OPERATOR_CLASSES.get(fn, fn.__name__.strip("_").title())
        # A name given (a model made from its config) takes no number from the layers' names.
        self.name = unique_name(keras_snake(self.class_name)) if name is None else name

    def __call__(self, *args, **kwargs):
        if is_symbolic((args, kwargs)):
            # Called on KerasTensors (clone_model replays the graph on new inputs): a node of its own.
            return record_call(self, args, kwargs)
        return self.fn(*args, **kwargs)


class Node:
    """One recorded call: ``layer(*args, **kwargs)`` whose tensors include KerasTensors."""

    def __init__(self, layer, args, kwargs):
        self.layer, self.args, self.kwargs = layer, args, kwargs
        self.order = next(_counter)
        self.outputs = None  # the KerasTensors it gave, in its output structure

    def inputs(self) -> list:
        return [t for t in _leaves((self.args, self.kwargs)) if isinstance(t, KerasTensor)]


def first_call_tensors(layer, which: str):
    """Keras 3's ``layer.input`` / ``layer.output``: the KerasTensors of the layer's first call on
    Keras tensors (one tensor alone, several as a list)."""
    nodes = layer.__dict__.get("_keras_inbound_nodes")
    owner = layer.__dict__.get("_keras_sequential")
    if not nodes and owner is not None and owner() is not None and owner().make_symbolic_tensors():
        # A layer of a Sequential with a declared input: Keras 3 runs that model as a functional
        # one, so its layers have an input and an output from the start.
        nodes = layer.__dict__.get("_keras_inbound_nodes")
    if not nodes:
        raise _errors.GradkitAttributeError(
            f"The layer {layer.name} has never been called on Keras tensors (tf.keras.Input and what layers made "
            f"of them) and thus has no defined {which}. Build a functional model, tf.keras.Model(inputs, outputs), "
            f"and read {which} of its layers."
        )
    node = nodes[0]
    values = node.inputs() if which == "input" else _leaves(node.outputs)
    return values[0] if len(values) == 1 else values


def _leaves(structure) -> list:
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda x: isinstance(x, (KerasTensor, Tensor)) or x is None)


def is_symbolic(structure) -> bool:
    """Whether ``structure`` (arguments of a call) holds a KerasTensor."""
    if isinstance(structure, KerasTensor):
        return True
    if isinstance(structure, (list, tuple)):
        return any(is_symbolic(x) for x in structure)
    if isinstance(structure, dict):
        return any(is_symbolic(x) for x in structure.values())
    return False


def _substitute(structure, values: dict):
    """``structure`` with each KerasTensor replaced by its value; a dict keeps its keys' order
    (Keras returns a dict output as the model was given it; jax's tree_map would sort it)."""
    if isinstance(structure, KerasTensor):
        return values[id(structure)]
    if type(structure) is dict:
        return {key: _substitute(value, values) for key, value in structure.items()}
    if type(structure) in (list, tuple):
        return type(structure)(_substitute(value, values) for value in structure)
    return jax.tree_util.tree_map(
        lambda x: values[id(x)] if isinstance(x, KerasTensor) else x,
        structure,
        is_leaf=lambda x: isinstance(x, (KerasTensor, Tensor)) or x is None,
    )


# gradkit has no symbolic shapes: a layer called on KerasTensors runs on zeros twice, each None
# dimension at two sizes, and an output dimension that differs between the runs is None. The
# batch axis takes small sizes (cheap); the others larger ones, past common kernel, pool and
# crop sizes, so that a pooled or strided axis (13 -> 6, 17 -> 8) is seen to vary.
PROBES = ((2, 13), (3, 17))
# A layer that needs an unknown axis of a size divisible by something (Reshape((-1, 8)) on
# (None, 4) features, a split in two) fails at 13 or 17: its call is run again at these sizes,
# divisible by 2, 3, 4, 6, 8, 12 and 24.
DIVISIBLE_PROBES = ((2, 24), (3, 48))
# A None batch combined with a tensor of a fixed batch (ops.add(inputs, constant),
# ops.segment_sum(inputs, ids)): Keras takes None to be that size. The call runs again with the
# batch at each leading size of its other arguments, then at 1 (which broadcasts against any
# size; an output's first axis still of size 1 there is None).
BROADCAST_PROBES = ((1, 13), (1, 17))


def _matched_size_probes(symbolic) -> list:
    """For a None axis that must meet another input's fixed size (``Add()([x, y])``, ``x`` of
    shape ``(None, None, 4)``, ``y`` ``(None, 3, 4)``): probes at each such size. Both runs then
    see one size there, so the output's shape comes from ``compute_output_shape`` where the layer
    can give it (see ``record_call``)."""
    sizes = sorted({d for t in symbolic for d in t.shape[1:] if isinstance(d, int) and d > 1})
    return [((2, n), (3, n)) for n in sizes]


def _declared_shapes(layer, symbolic, runs):
    """The layer's own ``compute_output_shape`` for its KerasTensor inputs, where it gives one
    shape of the runs' rank (None where the layer cannot say)."""
    if not isinstance(runs[0], Tensor):  # one output only
        return None
    shapes = [tuple(t.shape) for t in symbolic]
    try:
        shape = layer.compute_output_shape(shapes if len(shapes) > 1 else shapes[0])
    except Exception:  # noqa: BLE001  (a layer that cannot say: the probed shape stands)
        return None
    if not isinstance(shape, (tuple, list)) or len(shape) != len(runs[0].shape):
        return None
    return tuple(None if d is None else int(d) for d in shape)


def _batch_size_probes(args, kwargs) -> list:
    sizes = []
    for x in _leaves((args, kwargs)):
        shape = getattr(x, "shape", None) if not isinstance(x, KerasTensor) else None
        if shape is not None and len(shape) and isinstance(shape[0], int) and shape[0] not in sizes:
            sizes.append(shape[0])
    return [((n, 13), (n, 17)) for n in sizes]


def probe_shape(shape, probe) -> tuple:
    """``shape`` with each None dimension at ``probe``'s size (batch first, then the others)."""
    batch, other = probe
    return tuple((batch if i == 0 else other) if d is None else d for i, d in enumerate(shape))


def _example(t: KerasTensor, probe):
    return Tensor.concrete(jax.numpy.zeros(probe_shape(t.shape, probe), t.dtype))


def record_call(layer, args, kwargs):
    """``layer(*args, **kwargs)`` on KerasTensors: the layer is built (run on zeros), the call
    recorded as a node, and KerasTensors of the outputs' shapes returned."""
    from .._convert import wrap

    symbolic = [t for t in _leaves((args, kwargs)) if isinstance(t, KerasTensor)]
    if args and hasattr(layer, "build_symbolically"):
        layer.build_symbolically(args, kwargs)

    def run_at(probes):
        runs = []
        with symbolic_run(unknown_batch=any(not t.shape or t.shape[0] is None for t in symbolic)):
            for probe in probes:
                examples = {id(t): _example(t, probe) for t in symbolic}
                runs.append(wrap(layer(*_substitute(args, examples), **_substitute(kwargs, examples))))
        return runs

    probes = PROBES
    try:
        runs = run_at(probes)
    except (ValueError, TypeError, IndexError) as error:
        fallbacks = []
        if any(d is None for t in symbolic for d in t.shape[1:]):
            fallbacks += [DIVISIBLE_PROBES, *_matched_size_probes(symbolic)]
        if any(t.shape and t.shape[0] is None for t in symbolic):
            fallbacks += [*_batch_size_probes(args, kwargs), BROADCAST_PROBES]
        for probes in fallbacks:
            try:
                runs = run_at(probes)
                break
            except Exception:
                continue
        else:
            raise error from None
    node = Node(layer, args, kwargs)
    if hasattr(layer, "__dict__"):  # a layer (not an operator): its calls, for layer.input/output
        layer.__dict__.setdefault("_keras_inbound_nodes", []).append(node)
    flat_two, treedef = jax.tree_util.tree_flatten(runs[0], is_leaf=lambda x: isinstance(x, Tensor) or x is None)
    flat_three = jax.tree_util.tree_leaves(runs[1], is_leaf=lambda x: isinstance(x, Tensor) or x is None)
    matched = probes not in (PROBES, DIVISIBLE_PROBES, BROADCAST_PROBES) and probes[0][1] == probes[1][1]
    declared = _declared_shapes(layer, symbolic, runs) if matched else None
    symbolic = []
    for i, (a, b) in enumerate(zip(flat_two, flat_three)):
        if not isinstance(a, Tensor):
            symbolic.append(a)
            continue
        shape = tuple(d if d == e else None for d, e in zip(a.shape, b.shape))
        if declared is not None:
            shape = (shape[0], *declared[1:])
        if probes is BROADCAST_PROBES and shape[:1] == (1,):
            shape = (None, *shape[1:])
        symbolic.append(KerasTensor(shape, a.dtype, node, i))
    node.outputs = jax.tree_util.tree_unflatten(treedef, symbolic)
    # A layer whose symbolic outputs Keras nests otherwise than its eager ones (the same leaves,
    # in the same order, so a model's run maps its values alike) says how.
    symbolic_structure = getattr(layer, "_symbolic_structure", None)
    if symbolic_structure is not None:
        node.outputs = symbolic_structure(node.outputs)
    return node.outputs


class Graph:
    """The nodes leading from a model's inputs to its outputs, in the order they were made."""

    def __init__(self, inputs, outputs):
        self.inputs, self.outputs = inputs, outputs
        flat_inputs = _leaves(inputs)
        if not flat_inputs or not all(isinstance(t, KerasTensor) and t._node is None for t in flat_inputs):
            raise _errors.GradkitValueError(
                "tf.keras.Model(inputs, outputs): inputs must be tf.keras.Input(...) tensors (or a list or dict of "
                f"them), but got {inputs!r}."
            )
        if not all(isinstance(t, KerasTensor) for t in _leaves(outputs)):
            raise _errors.GradkitValueError(
                "tf.keras.Model(inputs, outputs): outputs must be KerasTensors computed from the inputs by layers "
                f"(or a list or dict of them), but got {outputs!r}."
            )
        known = {id(t) for t in flat_inputs}
        nodes: dict[int, Node] = {}
        stack = [t for t in _leaves(outputs) if isinstance(t, KerasTensor)]
        while stack:
            t = stack.pop()
            if t._node is None:
                if id(t) not in known:
                    raise _errors.GradkitValueError(
                        f"Graph disconnected: cannot find the input {t.name} (shape {t.shape}) among the model's "
                        "inputs; the outputs depend on it. Pass every tf.keras.Input the outputs use as inputs."
                    )
                continue
            if id(t._node) not in nodes:
                nodes[id(t._node)] = t._node
                stack.extend(t._node.inputs())
        self.nodes = sorted(nodes.values(), key=lambda n: n.order)

    def run(self, values, model_name: str = "functional", training=None):
        """The outputs' values for the inputs' ``values`` (the inputs' structure). A ``training``
        other than None replaces the one each layer was called with when the graph was built
        (Keras 3's ``operation_fn``): ``layer(x, training=False)`` trains under ``fit``."""
        known: dict[int, object] = {}
        flat_inputs = _leaves(self.inputs)
        # A dict's leaves come in its sorted keys' order (as Keras' tree.flatten gives them), not
        # the order the dict was written in: the names must follow the same order.
        names = sorted(self.inputs) if isinstance(self.inputs, dict) else [t.name for t in flat_inputs]
        given = input_standardization.by_position(values, names, takes_dict=isinstance(self.inputs, dict))
        if len(given) != len(flat_inputs):
            raise _errors.GradkitValueError(
                f"The functional model expects {len(flat_inputs)} input(s), but it received {len(given)} input "
                "tensors. Pass them in the structure of the model's inputs."
            )
        for index, (t, v, name) in enumerate(zip(flat_inputs, given, names)):
            known[id(t)] = input_standardization.adjust_rank(v, t.shape, name)
            input_standardization.check_compatible(known[id(t)], t.shape, index, t.name, model_name)
        from . import masking
        from .base_layer import _NO_TRAINING

        for node in self.nodes:
            args, kwargs = _substitute(node.args, known), _substitute(node.kwargs, known)
            if training is not None and getattr(type(node.layer), "_keras_training", _NO_TRAINING) is not _NO_TRAINING:
                kwargs = {**kwargs, "training": training}
            # Keras' functional model hands each layer the masks its graph recorded, so a layer
            # that takes the masks off its inputs (MultiHeadAttention) leaves them for the other
            # layers reading those inputs (a residual Add).
            inputs = jax.tree_util.tree_leaves((args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))
            masks = [(x, masking.get_keras_mask(x)) for x in inputs if isinstance(x, Tensor)]
            out = node.layer(*args, **kwargs)
            for x, mask in masks:
                if mask is not None and masking.get_keras_mask(x) is None:
                    masking.set_keras_mask(x, mask)
            flat_symbolic = jax.tree_util.tree_leaves(
                node.outputs, is_leaf=lambda x: isinstance(x, KerasTensor) or x is None
            )
            flat_values = jax.tree_util.tree_leaves(out, is_leaf=lambda x: isinstance(x, Tensor) or x is None)
            for s, v in zip(flat_symbolic, flat_values):
                if isinstance(s, KerasTensor):
                    known[id(s)] = v
        return _substitute(self.outputs, known)

    def replay(self, new_inputs, layer_for, call):
        """The outputs of this graph rebuilt on the KerasTensors ``new_inputs`` (the inputs'
        structure): each node's layer replaced by ``layer_for(layer)`` (operators kept) and
        called by ``call(layer, *args, **kwargs)``, in the order the nodes were made (Keras'
        ``_run_through_graph``, which ``clone_model`` uses)."""
        known: dict[int, object] = {}
        for t, new in zip(_leaves(self.inputs), _leaves(new_inputs)):
            known[id(t)] = new
        for node in self.nodes:
            layer = node.layer if isinstance(node.layer, _OperatorCall) else layer_for(node.layer)
            out = call(layer, *_substitute(node.args, known), **_substitute(node.kwargs, known))
            flat_old = jax.tree_util.tree_leaves(
                node.outputs, is_leaf=lambda x: isinstance(x, KerasTensor) or x is None
            )
            flat_new = jax.tree_util.tree_leaves(out, is_leaf=lambda x: isinstance(x, KerasTensor) or x is None)
            if len(flat_new) != len(flat_old):
                raise _errors.GradkitValueError(
                    f"The layer that replaces '{getattr(node.layer, 'name', node.layer)}' gives {len(flat_new)} "
                    f"output(s) where the model's layer gave {len(flat_old)}; a replacement must give outputs of the "
                    "same structure."
                )
            for old, new in zip(flat_old, flat_new):
                if isinstance(old, KerasTensor):
                    known[id(old)] = new
        return _substitute(self.outputs, known)

    def layers(self) -> list:
        """The layers (Input layers included) in Keras' order (see ``operations``)."""
        return [op for op in self.operations() if not isinstance(op, _OperatorCall)]

    def operations(self) -> list:
        """The layers and operators (Input layers included) in Keras' order: by depth
        (the longest path to an output), deepest first, ties in the order a depth-first walk
        from the outputs first meets them."""
        first_seen: dict[int, int] = {}
        by_id: dict[int, object] = {}
        done: set[int] = set()

        def operation(t):
            return t._node.layer if t._node is not None else getattr(t, "_keras_input_layer", None)

        def walk(t):
            op = operation(t)
            if op is not None and id(op) not in first_seen:
                first_seen[id(op)] = len(first_seen)
                by_id[id(op)] = op
            node = t._node
            if node is None or id(node) in done:
                return
            for u in node.inputs():
                walk(u)
            done.add(id(node))

        for t in _leaves(self.outputs):
            walk(t)
        node_depth = {id(n): 0 for n in self.nodes}
        op_depth: dict[int, int] = {}
        for node in reversed(self.nodes):  # consumers before the nodes they read
            depth = max(node_depth[id(node)], op_depth.get(id(node.layer), 0))
            op_depth[id(node.layer)] = depth
            for u in node.inputs():
                if u._node is not None:
                    node_depth[id(u._node)] = max(node_depth[id(u._node)], depth + 1)
                else:
                    op = operation(u)
                    if op is not None:
                        op_depth[id(op)] = max(op_depth.get(id(op), 0), depth + 1)
        # As Keras' map_graph: an input no output uses is kept (a loss or metric may use it), at
        # depth 0 ahead of the others there, in the order of the inputs.
        unused = [op for op in map(operation, _leaves(self.inputs)) if op is not None and id(op) not in first_seen]
        for rank, op in enumerate(unused, start=-len(unused)):
            first_seen[id(op)] = rank
            by_id[id(op)] = op
        order = sorted(first_seen, key=lambda k: (-op_depth.get(k, 0), first_seen[k]))
        return [by_id[k] for k in order]

    def inbound(self, operation) -> list:
        """Keras' "Connected to" entries of ``operation``: for each of its calls in this graph,
        each KerasTensor argument as ``(producer, node_index, tensor_index)``, where
        ``node_index`` counts the producer's calls (Input layers: 0)."""
        calls: dict[int, list] = {}
        for node in self.nodes:
            calls.setdefault(id(node.layer), []).append(node)
        found = []
        for node in calls.get(id(operation), []):
            for t in node.inputs():
                if t._node is None:
                    found.append((getattr(t, "_keras_input_layer", None), 0, 0))
                    continue
                producer = t._node.layer
                found.append((producer, calls[id(producer)].index(t._node), t._index))
        return found

    def sequential_like(self) -> bool:
        """Keras' test for leaving out the "Connected to" column: a chain, each call reading
        one tensor, no layer called twice, one call per depth."""
        seen: set[int] = set()
        for node in self.nodes:
            if len(node.inputs()) > 1 or id(node.layer) in seen:
                return False
            seen.add(id(node.layer))
        consumers: dict[int, int] = {}
        for node in self.nodes:
            for t in node.inputs():
                consumers[id(t)] = consumers.get(id(t), 0) + 1
        return all(count == 1 for count in consumers.values()) and len(_leaves(self.inputs)) == 1

    def output_shape_of(self, layer):
        """The shape(s) of ``layer``'s outputs at its first node, or None."""
        for node in self.nodes:
            if node.layer is layer:
                shapes = [t.shape for t in _leaves(node.outputs) if isinstance(t, KerasTensor)]
                return shapes[0] if len(shapes) == 1 else shapes
        return None
