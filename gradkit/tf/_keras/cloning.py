"""``tf.keras.models.clone_model``: a Sequential or functional model rebuilt from new layers
(fresh weights, the same configuration), as Keras 3 clones it.

Each layer is cloned by ``clone_function(layer)`` (by default
``layer.__class__.from_config(layer.get_config())``: the same layer, new weights); a layer
used at several places is cloned once, so sharing is kept. A Sequential gets its input
declaration again; a functional model is called again, node by node, on new ``tf.keras.Input``s
of the same shapes (or ``input_tensors``), each cloned layer called by
``call_function(layer, *args, **kwargs)``. With ``recursive=True`` an inner Sequential or
functional model is cloned the same way, layer by layer, instead of by ``clone_function``. A
compiled model's clone is compiled with the same loss, metrics and options, and a new
optimizer of the same configuration (no slots, no step count), as Keras' ``compile_from_config``
does. A subclassed model is cloned from its ``get_config``, so its class must implement it
(and ``from_config`` when its constructor's arguments are not that config).

To copy the weights too (a DQN's target network, say): ``clone.set_weights(model.get_weights())``.
"""

from __future__ import annotations

from gradkit import _errors

from . import functional
from .input_layer import Input
from .model import Functional, Model, _functional_like
from .sequential import Sequential


def _default_clone(layer):
    return layer.__class__.from_config(layer.get_config())


def _call(layer, *args, **kwargs):
    return layer(*args, **kwargs)


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs):
    """Keras 3's ``clone_model``: see the module docstring."""
    cache = kwargs.pop("cache", None)
    if kwargs:
        raise _errors.GradkitValueError(
            f"tf.keras.models.clone_model got unexpected keyword argument(s) {tuple(kwargs)}; it takes model, "
            "input_tensors, clone_function, call_function and recursive."
        )
    if not isinstance(model, Model):
        raise _errors.GradkitValueError(
            f"tf.keras.models.clone_model takes a tf.keras Model (Sequential or functional), but got "
            f"{type(model).__name__}. To copy a layer, use layer.__class__.from_config(layer.get_config())."
        )
    if clone_function is not None and not callable(clone_function):
        raise _errors.GradkitValueError(
            f"Expected `clone_function` argument to be a callable. Received: clone_function={clone_function!r}"
        )
    clone_layer = _wrapped(clone_function, call_function, recursive, {} if cache is None else cache)
    if isinstance(model, Sequential):
        if call_function is not None:
            raise _errors.GradkitValueError(
                "`call_function` argument is not supported with Sequential models: a Sequential's layers are not "
                "called when it is built (they are listed). Use call_function with functional models only, or "
                "change the layers with clone_function."
            )
        clone = _clone_sequential(model, clone_layer, input_tensors)
    elif isinstance(model, Functional) and (
        _default_get_config(model) or clone_function is not None or input_tensors is not None
    ):
        clone = _clone_functional(model, clone_layer, input_tensors, call_function or _call)
    else:
        if clone_function is not None or input_tensors is not None:
            raise _errors.GradkitValueError(
                "Arguments `clone_function` and `input_tensors` are only supported for Sequential models or "
                f"functional models, as in Keras; got a model of type '{type(model).__name__}'."
            )
        if call_function is not None:
            raise _errors.GradkitValueError(
                "Argument `call_function` is only supported for functional models, as in Keras; got a model of type "
                f"'{type(model).__name__}'."
            )
        # As Keras: serialized and deserialized whole, so the clone is built (build_config) and
        # compiled (compile_config) as the model is, its weights new.
        from .keras_object_serialization import deserialize_keras_object, serialize_keras_object

        return deserialize_keras_object(
            serialize_keras_object(model), custom_objects={type(model).__name__: type(model)}
        )
    _compile_like(model, clone)
    return clone


def _wrapped(clone_function, call_function, recursive: bool, cache: dict):
    """``clone_function`` (or the default) cloning each layer once, and inner models by
    ``clone_model`` when ``recursive``."""
    base = clone_function or _default_clone

    def clone_layer(layer):
        hit = cache.get(id(layer))
        if hit is not None:
            return hit[1]
        if recursive and isinstance(layer, Sequential):
            clone = clone_model(layer, clone_function=clone_function, recursive=True, cache=cache)
        elif recursive and isinstance(layer, Functional):
            clone = clone_model(
                layer, clone_function=clone_function, call_function=call_function, recursive=True, cache=cache
            )
        else:
            clone = base(layer)
        cache[id(layer)] = (layer, clone)  # the layer is kept too, so its id names no other object meanwhile
        return clone

    return clone_layer


def _clone_sequential(model, clone_layer, input_tensors):
    layers = [clone_layer(layer) for layer in model.layers]
    declared = model.__dict__.get("_keras_input_layer")
    if input_tensors is not None:
        tensors = list(input_tensors) if isinstance(input_tensors, (list, tuple)) else [input_tensors]
        if len(tensors) != 1:
            raise _errors.GradkitValueError("Argument `input_tensors` must contain a single tensor.")
        if not isinstance(tensors[0], functional.KerasTensor):
            raise _errors.GradkitValueError(
                f"Argument `input_tensors` must be a KerasTensor (tf.keras.Input(...)). Received invalid value: "
                f"input_tensors={input_tensors!r}"
            )
        layers = [tensors[0], *layers]
    elif declared is not None:
        layers = [Input(batch_shape=declared.batch_shape, dtype=declared.dtype, name=declared.name), *layers]
    return Sequential(layers, name=model.name, trainable=model.trainable)


def _clone_functional(model, clone_layer, input_tensors, call_function):
    graph = model._keras_graph
    if input_tensors is None:
        input_tensors = _map(
            lambda t: Input(batch_shape=t.shape, dtype=t.dtype, name=getattr(t, "_keras_input_layer", t).name),
            model.input,
        )
    else:
        given, expected = functional._leaves(input_tensors), model.inputs
        if not all(isinstance(t, functional.KerasTensor) for t in given):
            raise _errors.GradkitValueError(
                "All entries in `input_tensors` must be KerasTensors (tf.keras.Input(...)). Received invalid values: "
                f"input_tensors={input_tensors!r}"
            )
        if len(given) != len(expected):
            raise _errors.GradkitValueError(
                f"`input_tensors` must have the same structure as model.input: the model has {len(expected)} "
                f"input(s), input_tensors has {len(given)}."
            )
    outputs = graph.replay(input_tensors, clone_layer, call_function)
    # As Keras: a subclass made functional whose constructor takes Functional's arguments (its own
    # train_step, methods) is cloned as that class; any other as a plain functional model.
    own = getattr(type(model), "_keras_functional_of", None)
    if own is not None and _functional_like(own):
        return own(input_tensors, outputs, name=model.name)
    return Functional(input_tensors, outputs, name=model.name, trainable=model.trainable)


def _default_get_config(model) -> bool:
    """Whether the model's class keeps the functional ``get_config`` (a subclass that writes its own
    is cloned through its config, as Keras clones it)."""
    return type(model).get_config is Functional.get_config


def _map(fn, structure):
    if isinstance(structure, dict):
        return {k: _map(fn, v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(_map(fn, v) for v in structure)
    return fn(structure)


def _compile_like(model, clone) -> None:
    """Compile ``clone`` as ``model`` was, as Keras' ``compile_from_config`` does: the same
    arguments, with a new optimizer and new metric objects of the same configurations (Keras
    rebuilds them from their serialized configs, so nothing of their state is shared)."""
    state = model.__dict__.get("_keras_compile_state")
    if not model.compiled or state is None:
        return
    args = dict(state.given)
    args["optimizer"] = _fresh(args["optimizer"])
    args["metrics"] = _map_metrics(args["metrics"])
    args["weighted_metrics"] = _map_metrics(args["weighted_metrics"])
    clone.compile(**args)
    if clone.built and hasattr(clone.optimizer, "build"):
        clone.optimizer.build(clone.trainable_variables)  # so a weights file's optimizer state loads


def _fresh(obj):
    """A new object of ``obj``'s class and configuration (names and functions stay as they are)."""
    if isinstance(obj, (str, type(None))) or not hasattr(obj, "get_config") or not hasattr(obj, "from_config"):
        return obj
    return obj.__class__.from_config(obj.get_config())


def _map_metrics(metrics):
    if metrics is None:
        return None
    return _map(_fresh, metrics)
