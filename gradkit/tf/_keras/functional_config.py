"""A functional model's ``get_config()`` and ``from_config()``, in Keras 3's format.

The config lists the model's operations in Keras' order: each layer as Keras serializes it
(``module``, ``class_name``, ``config``, ``registered_name``, ``build_config``), with its
``name`` and its ``inbound_nodes``, the calls it makes in this model: their arguments, each
symbolic tensor written as ``{"class_name": "__keras_tensor__", "config": {"shape", "dtype",
"keras_history": [layer name, call index, output index]}}``. Python operators on symbolic
tensors (``x + y``, ``x[:, 0]``) are Keras' operations (``keras.src.ops.numpy``'s ``Add``,
``GetItem``). ``input_layers`` and ``output_layers`` give the inputs' and outputs' structures.

``from_config`` makes each layer again (gradkit.tf's, a nested model, or a class of your own
found in ``custom_objects`` or registered with ``register_keras_serializable``) and calls it
as recorded, so shared layers, several inputs and outputs and nested models come back; the
weights are new ones.
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import functional, keras_call_facts, layer_config

_OPS_MODULE = "keras.src.ops.numpy"
_OPERATORS_BY_CLASS = {name: fn for fn, name in functional._OPERATOR_CLASSES.items()}


def _is_model(layer) -> bool:
    from .model import Model

    return isinstance(layer, Model)


def _calls_by_operation(graph) -> dict:
    calls: dict = {}
    for node in graph.nodes:
        calls.setdefault(id(node.layer), []).append(node)
    return calls


def _leaves(structure) -> list:
    return jax.tree_util.tree_leaves(
        structure, is_leaf=lambda x: isinstance(x, (functional.KerasTensor, Tensor)) or x is None
    )


def _serialize_argument(value, history):
    """A call argument as Keras' ``serialize_keras_object`` writes it."""
    if isinstance(value, functional.KerasTensor):
        return {
            "class_name": "__keras_tensor__",
            "config": {"shape": tuple(value.shape), "dtype": value.dtype, "keras_history": history(value)},
        }
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_serialize_argument(v, history) for v in value]
    if isinstance(value, dict):
        return {k: _serialize_argument(v, history) for k, v in value.items()}
    if isinstance(value, slice):
        return {
            "class_name": "__slice__",
            "config": {"start": value.start, "stop": value.stop, "step": value.step},
        }
    if value is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(value, (np.generic, np.ndarray, Tensor, jax.Array)):
        array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        if array.ndim == 0:
            return array.item()
        kind = "__numpy__" if isinstance(value, np.ndarray) else "__tensor__"
        return {"class_name": kind, "config": {"value": array.tolist(), "dtype": array.dtype.name}}
    raise _errors.GradkitTypeError(
        f"A functional model's get_config cannot write the call argument {value!r} (type {type(value).__name__}): "
        "Keras' config holds tensors, numbers, strings, slices, arrays and lists or dicts of them. Pass the value "
        "to the layer's constructor (its config) instead of its call."
    )


def _build_config(layer, first_call) -> dict | None:
    """Keras' ``build_config``: the shapes of the call that built the layer."""
    from .model import Functional
    from .sequential import Sequential

    if isinstance(layer, Functional):
        return {"input_shape": None}
    if isinstance(layer, Sequential):
        shape = layer.__dict__.get("_keras_build_input_shape")
        return None if shape is None else {"input_shape": tuple(shape)}
    if first_call is None or not keras_call_facts.writes_build_config(layer):
        return None
    shapes = [
        jax.tree_util.tree_map(
            lambda t: tuple(t.shape) if isinstance(t, functional.KerasTensor) else None,
            a,
            is_leaf=lambda t: isinstance(t, functional.KerasTensor),
        )
        for a in first_call.args
        if functional.is_symbolic(a)
    ]
    if len(shapes) == 1:
        return {"input_shape": shapes[0]}
    import inspect

    try:
        names = [n for n in inspect.signature(layer.call).parameters if n not in ("self",)]
    except (TypeError, ValueError):
        names = [f"arg_{i}" for i in range(len(shapes))]
    return {"shapes_dict": {f"{name}_shape": shape for name, shape in zip(names, shapes)}}


# The parameters of tf.keras.ops functions that Keras' operations take in call() (tensors), not
# in __init__ (the operation's options, written in its config): ops.mean(x, axis=1) is
# Mean(axis=1) called on x; ops.not_equal(x, 0) is NotEqual() called on (x, 0).
_CALL_PARAMETERS = frozenset(
    ("x", "x1", "x2", "xs", "y", "a", "b", "inputs", "input", "condition", "indices", "values", "updates",
     "start_indices", "logits", "labels", "target", "output", "kernel", "elements", "arrays", "tensors")
)  # fmt: skip
# Keras' module of each family of tf.keras.ops (gradkit's files are named after them).
_OPS_MODULES = {"numpy": "keras.src.ops.numpy", "nn": "keras.src.ops.nn", "linalg": "keras.src.ops.linalg",
                "math": "keras.src.ops.math", "core": "keras.src.ops.core", "image": "keras.src.ops.image"}  # fmt: skip


def _split_op_call(operation, args, kwargs):
    """A recorded ``tf.keras.ops`` call as Keras' operation has it: (call arguments, options)."""
    import inspect

    if isinstance(operation, _KerasOperation):
        return list(args), dict(kwargs), dict(operation.options)
    signature = inspect.signature(operation.fn)
    bound = signature.bind(*args, **kwargs)
    call_args, options = [], {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
            call_args.extend(value)  # ops.einsum(subscripts, *operands): each operand an argument of its own
        elif name in _CALL_PARAMETERS or functional.is_symbolic(value):
            call_args.append(value)
        else:
            options[name] = value
    return call_args, {}, options


def _op_module(operation) -> str:
    module = getattr(operation.fn, "__module__", "")
    family = module.rsplit(".", 1)[-1].split("_")[0]
    return _OPS_MODULES.get(family, _OPS_MODULE)


def _operation_entry(operation, options=None) -> dict:
    if isinstance(operation, functional._OperatorCall) and options is not None:
        return {
            "module": _op_module(operation),
            "class_name": operation.class_name,
            "config": {"name": operation.name, **_serialize_argument(options, None)},
            "registered_name": operation.class_name,
        }
    if isinstance(operation, functional._OperatorCall):
        if operation.fn not in functional._OPERATOR_CLASSES:
            raise _errors.GradkitNotImplementedError(
                f"A functional model's get_config cannot write the operator {operation.fn!r}, which is not one of "
                "Keras' operations. Wrap it in a tf.keras.layers.Lambda or a layer of your own."
            )
        return {
            "module": _OPS_MODULE,
            "class_name": operation.class_name,
            "config": {"name": operation.name},
            "registered_name": operation.class_name,
        }
    if _is_model(operation):
        from . import model_config

        return model_config.serialize_model(operation)
    return layer_config.serialize_layer(operation)


def get_config(model) -> dict:
    """Keras 3's ``Functional.get_config()`` of ``model`` (see the module docstring)."""
    from .model import Functional

    graph = model._keras_graph
    calls = _calls_by_operation(graph)

    def history(t, for_output=False):
        if t._node is None:
            return [t._keras_input_layer.name, 0, 0]
        operation = t._node.layer
        index = calls[id(operation)].index(t._node)
        # Keras counts a functional model's own first node among its nodes here, not in the calls.
        if for_output and isinstance(operation, Functional):
            index += 1
        return [operation.name, index, t._index]

    layers = []
    for operation in graph.operations():
        nodes = []
        options = None
        for node in calls.get(id(operation), []):
            args, kwargs = node.args, node.kwargs
            if isinstance(operation, functional._OperatorCall) and operation.fn not in functional._OPERATOR_CLASSES:
                args, kwargs, options = _split_op_call(operation, args, kwargs)
            if not isinstance(operation, functional._OperatorCall):
                tensor_arguments = [a for a in (*node.args, *node.kwargs.values()) if functional.is_symbolic(a)]
                only = tensor_arguments[0] if len(tensor_arguments) == 1 else None
                kwargs = keras_call_facts.recorded_kwargs(operation, kwargs, len(tensor_arguments), only)
            nodes.append(
                {"args": _serialize_argument(list(args), history), "kwargs": _serialize_argument(kwargs, history)}
            )
        entry = _operation_entry(operation, options)
        if not isinstance(operation, functional._OperatorCall) and not _is_model(operation):
            first = calls.get(id(operation), [None])[0]
            build = _build_config(operation, first)
            if build is not None:
                entry["build_config"] = build
        entry["name"] = operation.name
        entry["inbound_nodes"] = nodes
        layers.append(entry)

    def structure(tensors):
        return jax.tree_util.tree_map(
            lambda t: history(t, for_output=True), tensors, is_leaf=lambda t: isinstance(t, functional.KerasTensor)
        )

    return {
        "name": model.name,
        "trainable": model.trainable,
        "layers": layers,
        "input_layers": structure(graph.inputs),
        "output_layers": structure(graph.outputs),
    }


# -- from_config ---------------------------------------------------------------------------------


class _Missing(Exception):
    """A call reads a tensor whose producing call is not made yet (it is tried again later)."""


def _deserialize_argument(value, outputs: dict):
    if isinstance(value, (list, tuple)):  # a tuple in Keras' in-memory config, a list once through JSON
        return [_deserialize_argument(v, outputs) for v in value]
    if not isinstance(value, dict):
        return value
    kind, inner = value.get("class_name"), value.get("config")
    if kind == "__keras_tensor__":
        name, node_index, tensor_index = inner["keras_history"]
        made = outputs.get(name, [])
        if node_index >= len(made):
            raise _Missing(name)
        return made[node_index][tensor_index]
    if kind == "__slice__":
        return slice(inner["start"], inner["stop"], inner["step"])
    if kind == "__ellipsis__":
        return Ellipsis
    if kind in ("__numpy__", "__tensor__"):
        return np.asarray(inner["value"], dtype=inner["dtype"])
    if kind is not None and "config" in value:
        raise _errors.GradkitNotImplementedError(
            f"A functional model's config passes the object {kind!r} to a layer call, which gradkit.tf does not "
            "read back. Pass it to the layer's constructor instead."
        )
    return {k: _deserialize_argument(v, outputs) for k, v in value.items()}


def _make_operation(entry: dict, custom_objects):
    class_name = entry.get("class_name")
    if entry.get("module") == _OPS_MODULE or (
        class_name in _OPERATORS_BY_CLASS and str(entry.get("module", "")).startswith("keras.src.ops")
    ):
        fn = _OPERATORS_BY_CLASS.get(class_name)
        if fn is not None:
            return functional._OperatorCall(fn, name=entry.get("config", {}).get("name", entry.get("name")))
    if str(entry.get("module", "")).startswith("keras.src.ops"):
        return _keras_operation(entry)
    if class_name in ("Functional", "Sequential") or "layers" in entry.get("config", {}):
        from . import model_config

        found = model_config.find_model_class(entry, custom_objects)
        if found is not None:
            return model_config.deserialize_model(entry, custom_objects, compile=False)
    return layer_config.deserialize_layer(entry, custom_objects)


class _KerasOperation(functional._OperatorCall):
    """A Keras operation of a config (``NotEqual``, the mask an ``Embedding(mask_zero=True)``
    makes; ``Mean(axis=1)``, ``ops.mean(x, axis=1)``): the ``tf.keras.ops`` function of its
    name, called with the operation's own arguments (its config) and the call's."""

    def __init__(self, fn, class_name: str, name: str, options: dict):
        self.fn, self.class_name, self.name, self.options = fn, class_name, name, options

    def __call__(self, *args, **kwargs):
        import inspect

        options = dict(self.options)
        parameters = list(inspect.signature(self.fn).parameters.values())
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
            # An option named before ``*operands`` (einsum's subscripts) goes first, by position.
            leading = []
            for p in parameters:
                if p.kind is inspect.Parameter.VAR_POSITIONAL or p.name not in options:
                    break
                leading.append(options.pop(p.name))
            args = (*leading, *args)
        return self.fn(*args, **options, **kwargs)


def _keras_operation(entry: dict):
    from gradkit.tf import keras  # the public namespaces (built after this module is imported)

    from .layer_names import keras_snake

    ops = keras.ops

    class_name = entry.get("class_name", "")
    config = dict(entry.get("config") or {})
    name = config.pop("name", entry.get("name"))
    snake = keras_snake(class_name)
    fn = None
    for namespace in (ops, getattr(ops, "nn", None), getattr(ops, "linalg", None), getattr(ops, "image", None)):
        fn = getattr(namespace, snake, None) if namespace is not None else None
        if callable(fn):
            break
    if not callable(fn):
        raise _errors.GradkitNotImplementedError(
            f"The functional model's config calls Keras' operation {class_name!r} ({entry.get('module')}), which "
            f"gradkit.tf does not have as tf.keras.ops.{snake}. Replace it in the model with a layer gradkit.tf has."
        )
    return _KerasOperation(fn, class_name, name, config)


def _call_kwargs(kwargs: dict) -> dict:
    # Keras' call context overrides a recorded `training` whenever the model is called with one,
    # and gradkit's layers find their masks themselves: neither is kept in the rebuilt call.
    kwargs = dict(kwargs)
    kwargs.pop("training", None)
    if kwargs.get("mask", 0) is None or (
        isinstance(kwargs.get("mask"), (list, tuple)) and all(m is None for m in kwargs["mask"])
    ):
        kwargs.pop("mask")
    return kwargs


def from_config(cls, config: dict, custom_objects=None):
    """A new functional model of class ``cls`` made from ``get_config()``'s dict (fresh weights)."""
    from .input_layer import InputLayer
    from .model import Functional

    for key in ("layers", "input_layers", "output_layers"):
        if key not in config:
            raise _errors.GradkitValueError(
                f"A functional model's config needs '{key}', but got the keys {sorted(config)}. Pass what "
                "model.get_config() returns for a tf.keras.Model(inputs, outputs)."
            )
    created: dict = {}
    outputs: dict = {}  # layer name -> the flat outputs of each of its calls made so far
    pending = []
    for entry in config["layers"]:
        operation = _make_operation(entry, custom_objects)
        name = entry.get("name", getattr(operation, "name", None))
        created[name] = operation
        if isinstance(operation, InputLayer):
            tensor = functional.KerasTensor(operation.batch_shape, operation.dtype, name=operation.name)
            tensor._keras_input_layer = operation
            outputs[name] = [[tensor]]
        else:
            outputs.setdefault(name, [])
        for node in entry.get("inbound_nodes", []):
            pending.append((name, node))
    # Calls run in the config's order; one whose inputs are not made yet waits for a later pass
    # (a layer shared at different depths), as Keras' from_config does.
    while pending:
        waiting = []
        progressed = False
        blocked: set = set()
        for name, node in pending:
            if name in blocked:
                waiting.append((name, node))
                continue
            if isinstance(node, list):
                raise _errors.GradkitNotImplementedError(
                    f"The config of layer {name!r} lists its calls in the legacy Keras 2 form; gradkit.tf reads "
                    "Keras 3's ({'args': ..., 'kwargs': ...}). Load the model in Keras 3 and save it again."
                )
            try:
                args = _deserialize_argument(node.get("args", []), outputs)
                kwargs = _deserialize_argument(node.get("kwargs", {}), outputs)
            except _Missing:
                blocked.add(name)  # a layer's calls run in their order
                waiting.append((name, node))
                continue
            operation = created[name]
            if isinstance(operation, functional._OperatorCall) and operation.fn is functional.operator.getitem:
                args = [args[0], tuple(args[1]) if isinstance(args[1], list) else args[1]]
            if isinstance(operation, functional._OperatorCall):
                result = functional.record_call(operation, tuple(args), dict(kwargs))  # keeps its saved name
            else:
                result = operation(*args, **_call_kwargs(kwargs))
            outputs[name].append(_leaves(result))
            progressed = True
        if not progressed:
            raise _errors.GradkitValueError(
                "Invalid Functional model configuration: the graph either has loops or disconnected nodes; these "
                f"calls read tensors never made: {sorted({name for name, _ in waiting})}."
            )
        pending = waiting

    def tensor(ref):
        name, node_index, tensor_index = ref
        if name not in created:
            raise _errors.GradkitValueError(
                f"The functional model's config names the layer {name!r} among its inputs or outputs, but lists no "
                "such layer."
            )
        if isinstance(created[name], Functional):
            node_index -= 1  # Keras counts a nested functional model's own node first
        return outputs[name][node_index][tensor_index]

    def structure(refs):
        if isinstance(refs, list) and len(refs) == 3 and isinstance(refs[0], str):
            return tensor(refs)
        if isinstance(refs, dict):
            return {k: structure(v) for k, v in refs.items()}
        return [structure(r) for r in refs]

    inputs = structure(config["input_layers"])
    model_outputs = structure(config["output_layers"])
    return cls(inputs=inputs, outputs=model_outputs, name=config.get("name"), trainable=config.get("trainable", True))
