"""``tf.keras.losses.get``, ``serialize`` and ``deserialize``, as Keras 3 answers them: the loss
names Keras knows (its classes and functions by name, and ``bce``/``mse``/... for functions),
the dicts ``serialize`` writes, callables and classes as they are.

``get`` turns a class into an instance and refuses what it cannot interpret (ValueError, as
Keras). ``deserialize`` returns a string or class name it does not know unchanged, as Keras
does, and (as Keras 3 does) cannot deserialize the short aliases such as ``"mse"``.
"""

from __future__ import annotations

import inspect
import types

from gradkit import _errors

from . import losses as _losses
from . import losses_circle, losses_ctc, losses_gce, losses_overlap

_CLASSES = (
    "Loss LossFunctionWrapper KLDivergence Poisson BinaryCrossentropy BinaryFocalCrossentropy CategoricalCrossentropy "
    "CategoricalFocalCrossentropy SparseCategoricalCrossentropy MeanSquaredError MeanAbsoluteError "
    "MeanAbsolutePercentageError MeanSquaredLogarithmicError CosineSimilarity LogCosh Huber Hinge SquaredHinge "
    "CategoricalHinge"
).split()
_FUNCTIONS = (
    "kl_divergence poisson binary_crossentropy binary_focal_crossentropy categorical_crossentropy "
    "categorical_focal_crossentropy sparse_categorical_crossentropy mean_squared_error mean_absolute_error "
    "mean_absolute_percentage_error mean_squared_logarithmic_error cosine_similarity log_cosh huber hinge "
    "squared_hinge categorical_hinge"
).split()

# Keras' ALL_OBJECTS_DICT. The generalized cross-entropy is not in it (Keras cannot get it by name).
OBJECTS = {
    **{name: getattr(_losses, name) for name in _CLASSES + _FUNCTIONS},
    "Dice": losses_overlap.Dice,
    "Tversky": losses_overlap.Tversky,
    "Circle": losses_circle.Circle,
    "CTC": losses_ctc.CTC,
    "dice": losses_overlap.dice,
    "tversky": losses_overlap.tversky,
    "circle": losses_circle.circle,
    "ctc": losses_ctc.ctc,
}
ALIASES = {
    "bce": _losses.binary_crossentropy,
    "BCE": _losses.binary_crossentropy,
    "kld": _losses.kl_divergence,
    "KLD": _losses.kl_divergence,
    "mae": _losses.mean_absolute_error,
    "MAE": _losses.mean_absolute_error,
    "mse": _losses.mean_squared_error,
    "MSE": _losses.mean_squared_error,
    "mape": _losses.mean_absolute_percentage_error,
    "MAPE": _losses.mean_absolute_percentage_error,
    "msle": _losses.mean_squared_logarithmic_error,
    "MSLE": _losses.mean_squared_logarithmic_error,
}
_BUILT_IN = {id(obj) for obj in (*OBJECTS.values(), losses_gce.CategoricalGeneralizedCrossEntropy)}
_PLAIN = (str, int, float, bool, type(None))


def serialize(loss):
    """``tf.keras.losses.serialize``: a loss instance as ``{"module", "class_name", "config",
    "registered_name"}``, a function by its name, plain values as they are."""
    if isinstance(loss, _PLAIN):
        return loss
    if isinstance(loss, types.FunctionType):
        if loss.__name__ == "<lambda>":
            raise _errors.GradkitNotImplementedError(
                "tf.keras.losses.serialize got a lambda; Keras writes its bytecode (and warns that this is unsafe), "
                "which gradkit does not. Define the loss with def and serialize that function instead."
            )
        return {"module": "builtins", "class_name": "function", "config": loss.__name__, "registered_name": "function"}
    if isinstance(loss, _losses.Loss):
        cls = type(loss)
        built_in = id(cls) in _BUILT_IN
        module = "keras.losses" if built_in else cls.__module__
        return {
            "module": None if module == "__main__" else module,
            "class_name": cls.__name__,
            "config": loss.get_config(),
            "registered_name": None if built_in else cls.__name__,
        }
    raise _errors.GradkitTypeError(
        f"tf.keras.losses.serialize got {loss!r} of type {type(loss).__name__}, which is neither a loss nor a loss "
        "function. Pass a tf.keras.losses.Loss instance or a function fn(y_true, y_pred)."
    )


def _from_name(name, inner_config, custom_objects):
    if name in custom_objects:
        found = custom_objects[name]
    elif name in ALIASES:
        raise _errors.GradkitValueError(
            f"tf.keras.losses.deserialize got the alias {name!r}, which Keras 3 cannot deserialize (it raises "
            f"'Could not deserialize'). Pass the function's name, {ALIASES[name].__name__!r}, or use "
            f"tf.keras.losses.get({name!r})."
        )
    elif name in OBJECTS:
        found = OBJECTS[name]
    else:
        return name  # Keras returns a name it does not know unchanged.
    if inspect.isclass(found):
        return found.from_config(dict(inner_config or {}))
    return found


def deserialize(name, custom_objects=None):
    """``tf.keras.losses.deserialize``: the loss a name or ``serialize``'s dict describes (a class
    of ``custom_objects`` by its name first)."""
    custom_objects = dict(custom_objects or {})
    if isinstance(name, (list, tuple)):
        return [deserialize(item, custom_objects) for item in name]
    if isinstance(name, str):
        if name in custom_objects:
            return custom_objects[name]
        return _from_name(name, None, custom_objects)
    if not isinstance(name, dict):
        return name
    if "class_name" not in name:
        raise _errors.GradkitValueError(
            f"tf.keras.losses.deserialize got the dict {name!r} without 'class_name', as Keras refuses too. "
            "Pass what tf.keras.losses.serialize returns, e.g. {'class_name': 'Huber', 'config': {}}."
        )
    class_name, inner = name["class_name"], name.get("config")
    custom = class_name in custom_objects or name.get("registered_name") in custom_objects
    if custom:
        cls = custom_objects.get(class_name, custom_objects.get(name.get("registered_name")))
        return cls.from_config(dict(inner or {})) if inspect.isclass(cls) else cls
    if class_name == "function":
        key = inner if name.get("module") == "builtins" else name.get("registered_name")
        if isinstance(key, str) and key in custom_objects:
            return custom_objects[key]
        return _from_name(key, None, custom_objects)
    if name.get("module", "_") is None:
        raise _errors.GradkitTypeError(
            f"tf.keras.losses.deserialize cannot make the custom class {class_name!r} (Keras raises too). Pass it "
            f"in custom_objects={{{class_name!r}: cls}}."
        )
    return _from_name(class_name, inner, custom_objects)


def get(identifier):
    """``tf.keras.losses.get``: a loss function or instance from a name, a ``serialize`` dict, a
    class (instantiated with its defaults) or a callable; None stays None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        found = deserialize(identifier)
    elif isinstance(identifier, str):
        found = OBJECTS.get(identifier, ALIASES.get(identifier))
    else:
        found = identifier
    if callable(found):
        return found() if inspect.isclass(found) else found
    raise _errors.GradkitValueError(
        f"tf.keras.losses.get could not interpret the loss identifier {identifier!r} (Keras raises too: 'Could "
        "not interpret loss identifier'). Pass the name of a Keras loss ('mse', 'categorical_crossentropy', "
        "'Huber', ...), a dict from tf.keras.losses.serialize, or a loss instance, class or function."
    )
