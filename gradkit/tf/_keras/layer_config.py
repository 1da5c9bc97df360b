"""Keras 3's layer configs: ``get_config()``, ``from_config(config)`` and ``compute_output_shape``.

gradkit.tf's own layers (Dense, the convolutions, pooling, recurrent and normalization layers,
MultiHeadAttention, ...) give Keras' configs, key for key: initializers as Keras serializes them, activations by name, the dtype policy, and the
options gradkit.tf does not implement at the values that mean "off" (``kernel_regularizer:
None``, ...); ``from_config`` takes those back. A layer subclass that does not write its own
``get_config`` gets Keras' automatic one: the arguments its ``__init__`` was given (with the
defaults), when they are plain Python values; else NotImplementedError, as in Keras. A Python
callable (a custom activation or initializer) stays in the config as the callable; a saved model
(``.keras``, ``to_json``) writes a function by its name, as Keras does, and loading finds it
through ``custom_objects`` or the registry (gradkit.tf does not serialize Python code).

>>> import gradkit.tf as tf
>>> config = tf.keras.layers.Dense(3, activation="relu", name="d").get_config()
>>> config["units"], config["activation"], config["kernel_initializer"]["class_name"]
(3, 'relu', 'GlorotUniform')
>>> tf.keras.layers.Dense.from_config(config).get_config() == config
True
"""

from __future__ import annotations

import inspect

import jax
import numpy as np

from gradkit import _errors
from gradkit.nn import activations as _nn_activations
from gradkit.nn import initializers as _nn_init

from . import activations as _activations
from . import initializers as _initializers

_LAYERS_MODULE = "keras.layers"

# Per gradkit.tf layer: its config entries in Keras' order, each an attribute of the layer, or
# (key, value) for an option gradkit.tf does not implement, at the value that means "off".
# The weights' regularizers and constraints: the layer's attributes, serialized.
_REGULARIZED_KEPT = ("kernel_regularizer", "bias_regularizer")
_CONSTRAINED_KEPT = ("kernel_constraint", "bias_constraint")
BUILTIN = {
    "Dense": (
        "units",
        "activation",
        "use_bias",
        "kernel_initializer",
        "bias_initializer",
        *_REGULARIZED_KEPT,
        *_CONSTRAINED_KEPT,
        ("quantization_config", None),
    ),
    "Dropout": ("rate", "seed", "noise_shape"),
    "Flatten": ("data_format",),
    "Reshape": ("target_shape",),
    "Activation": ("activation",),
    "ReLU": ("max_value", "negative_slope", "threshold"),
    "LeakyReLU": ("negative_slope",),
    "Softmax": ("axis",),
    "BatchNormalization": (
        "axis",
        "momentum",
        "epsilon",
        "center",
        "scale",
        "beta_initializer",
        "gamma_initializer",
        "moving_mean_initializer",
        "moving_variance_initializer",
        "beta_regularizer",
        "gamma_regularizer",
        "beta_constraint",
        "gamma_constraint",
        ("synchronized", False),
        ("renorm", False),
        ("renorm_clipping", None),
        ("renorm_momentum", 0.99),
    ),
    "LayerNormalization": (
        "axis",
        "epsilon",
        "center",
        "scale",
        ("rms_scaling", False),
        "beta_initializer",
        "gamma_initializer",
        "beta_regularizer",
        "gamma_regularizer",
        "beta_constraint",
        "gamma_constraint",
    ),
    "Embedding": (
        "input_dim",
        "output_dim",
        "embeddings_initializer",
        "embeddings_regularizer",
        "activity_regularizer",
        "embeddings_constraint",
        "mask_zero",
        ("quantization_config", None),
    ),
}

_CONV = (
    *("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups", "activation"),
    *("use_bias", "kernel_initializer", "bias_initializer", *_REGULARIZED_KEPT, "activity_regularizer"),
    *_CONSTRAINED_KEPT,
)
_CONV_TRANSPOSE = (
    *("filters", "kernel_size", "strides", "padding", "output_padding", "data_format", "dilation_rate"),
    *("activation", "use_bias", "kernel_initializer", "bias_initializer", *_REGULARIZED_KEPT, "activity_regularizer"),
    *_CONSTRAINED_KEPT,
)
_POOLING = ("pool_size", "padding", "strides", "data_format")
_RNN_HEAD = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "zero_output_for_mask")
_RNN_INITIALIZERS = ("kernel_initializer", "recurrent_initializer", "bias_initializer")
_RNN_TAIL = (
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "activity_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "dropout",
    "recurrent_dropout",
)
BUILTIN.update(
    {
        "Conv1D": _CONV,
        "Conv2D": _CONV,
        "Conv1DTranspose": _CONV_TRANSPOSE,
        "Conv2DTranspose": _CONV_TRANSPOSE,
        "MaxPooling2D": _POOLING,
        "AveragePooling2D": _POOLING,
        "GlobalAveragePooling2D": ("data_format", "keepdims"),
        # Keras' SimpleRNN takes seed= but leaves it out of its config.
        "SimpleRNN": (*_RNN_HEAD, "units", "activation", "use_bias", *_RNN_INITIALIZERS, *_RNN_TAIL),
        "LSTM": (
            *_RNN_HEAD,
            "units",
            "activation",
            "recurrent_activation",
            "use_bias",
            *_RNN_INITIALIZERS,
            "unit_forget_bias",
            *_RNN_TAIL,
            "seed",
        ),
        "GRU": (
            *_RNN_HEAD,
            "units",
            "activation",
            "recurrent_activation",
            "use_bias",
            *_RNN_INITIALIZERS,
            *_RNN_TAIL,
            "reset_after",
            "seed",
        ),
        "GroupQueryAttention": (
            "head_dim",
            "num_query_heads",
            "num_key_value_heads",
            "use_bias",
            "use_gate",
            "sliding_window",
            "dropout",
            "kernel_initializer",
            "bias_initializer",
            *_REGULARIZED_KEPT,
            ("activity_regularizer", None),
            *_CONSTRAINED_KEPT,
            "seed",
        ),
        "MultiHeadAttention": (
            "num_heads",
            "key_dim",
            "value_dim",
            "dropout",
            "use_bias",
            ("use_gate", False),
            "output_shape",
            "attention_axes",
            ("sliding_window", None),
            "kernel_initializer",
            "bias_initializer",
            *_REGULARIZED_KEPT,
            ("activity_regularizer", None),
            *_CONSTRAINED_KEPT,
            "seed",
        ),
    }
)

_POLICY = {"module": "keras", "class_name": "DTypePolicy", "registered_name": None}


def dtype_policy(name: str) -> dict:
    """Keras' serialized ``DTypePolicy`` of ``name``."""
    return {"module": _POLICY["module"], "class_name": "DTypePolicy", "config": {"name": name}, "registered_name": None}


def serialize_activation(fn):
    """A built-in activation's Keras name; any other callable as it is."""
    for name, known in _activations.BY_NAME.items():
        if known is fn and name not in ("swish", "hard_swish"):
            return name
    for name, known in _nn_activations._BY_NAME.items():
        if known is fn:
            return name
    name = getattr(fn, "__name__", None)
    return name if name in _activations.BY_NAME else fn  # tf.nn.relu is 'relu' to Keras too


def serialize_initializer(init):
    """An initializer as Keras writes it in a config: ``{'module', 'class_name', 'config', ...}``."""
    if isinstance(init, str) or (isinstance(init, type) and issubclass(init, _initializers.Initializer)):
        cls = _initializers.lookup(init) if isinstance(init, str) else init
        if cls is None:
            return init
        saved = _nn_init._seed.key
        try:  # made only to read its config: the global random sequence is left as it was
            init = cls()
        finally:
            _nn_init._seed.key = saved
    if isinstance(init, _initializers.Initializer):
        return {
            "module": "keras.initializers",
            "class_name": type(init).__name__,
            "config": init.get_config(),
            "registered_name": None,
        }
    return init


def _serialize(key: str, value):
    if key == "activation":
        return serialize_activation(value)
    if key.endswith("_initializer"):
        return serialize_initializer(value)
    if key.endswith("_regularizer"):
        from . import regularizers

        return regularizers.serialize(value)
    if key.endswith("_constraint"):
        from . import constraints

        return constraints.serialize(value)
    return value


def _builtin_entries(cls):
    """The config entries of the gradkit.tf layer ``cls`` is (or subclasses without a new ``__init__``)."""
    for klass in cls.__mro__:
        entries = BUILTIN.get(klass.__name__)
        if entries is not None and klass.__module__.startswith("gradkit.tf._keras"):
            return entries
        if "__init__" in vars(klass):
            return None
    return None


_PLAIN = (str, int, float, bool, type(None))


def plain(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    return isinstance(value, _PLAIN)


_NOT_PLAIN = (
    "[gradkit] {cls} was created by passing non-serializable argument values in __init__(), and therefore the "
    "object must override get_config() in order to be serializable, as in Keras: def get_config(self): "
    "config = super().get_config(); config.update({{...}}); return config."
)


def _auto_config(layer) -> dict:
    """Keras' automatic config: the arguments ``__init__`` was given, with its defaults."""
    given = layer.__dict__.get("_keras_init_args", ((), {}))
    if given is None:
        raise NotImplementedError(_NOT_PLAIN.format(cls=type(layer).__name__))
    args, kwargs = given
    signature = inspect.signature(type(layer).__init__)
    parameters = signature.parameters
    bound = signature.bind(layer, *args, **kwargs)
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments.pop(next(iter(parameters)))  # self
    for name, parameter in parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(arguments.pop(name, {}))
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL and arguments.pop(name, ()):
            raise NotImplementedError(
                f"[gradkit] {type(layer).__name__} was created with variadic positional arguments (*args), which "
                "Keras' automatic config does not take. Override get_config() (and from_config()) in the layer."
            )
    arguments.pop("name", None)
    if not plain(arguments):
        raise NotImplementedError(_NOT_PLAIN.format(cls=type(layer).__name__))
    config = {"name": layer.name}
    # Keras' test, word for word: an __init__ that takes `name` or `**kwargs` gets it back.
    kwargs_parameter = parameters.get("kwargs")
    takes_name = "name" in parameters or (
        kwargs_parameter is not None and kwargs_parameter.kind is inspect.Parameter.VAR_KEYWORD
    )
    if not takes_name:
        config.pop("name")
    config.update(arguments)
    return config


def get_config(layer, base_class) -> dict:
    """``layer.get_config()`` (``base_class`` is Keras' Layer: a subclass that overrides
    ``get_config`` and calls it gets the base keys only, as in Keras)."""
    if type(layer).__name__ == "InputLayer" and type(layer).__module__.startswith("gradkit.tf._keras"):
        return {
            "batch_shape": tuple(layer.batch_shape),
            "dtype": layer.dtype,
            "sparse": False,
            "ragged": False,
            "name": layer.name,
            "optional": False,
        }
    base = {"trainable": layer.trainable, "dtype": dtype_policy(layer.dtype)}
    if getattr(layer, "activity_regularizer", None) is not None:  # Keras' base config has it when set
        base["activity_regularizer"] = _serialize("activity_regularizer", layer.activity_regularizer)
    entries = _builtin_entries(type(layer))
    if entries is not None:
        config = {"name": layer.name, **base}
        # A layer whose attribute is not Keras' config form (a recurrent layer's activation
        # functions) gives that form in _keras_config_values().
        special = layer._keras_config_values() if hasattr(layer, "_keras_config_values") else {}
        for entry in entries:
            if isinstance(entry, tuple):
                key, value = entry
            elif entry in special:
                key, value = entry, special[entry]
            else:
                key, value = entry, _serialize(entry, getattr(layer, entry))
            config[key] = value
        return config
    if type(layer).get_config is not base_class.get_config:
        return {"name": layer.name, **base}
    return {**_auto_config(layer), **base}


def from_config(cls, config: dict):
    """``cls(**config)``: the dtype policy as its name, and the options gradkit.tf does not
    implement left out where they are off (a value that is not off reaches the layer, which refuses it)."""
    config = dict(config)
    dtype = config.get("dtype")
    if isinstance(dtype, dict):
        name = dtype.get("config", {}).get("name", "float32")
        if name == "float32":
            config.pop("dtype")  # gradkit.tf's layers compute in float32 only, the default
        else:
            config["dtype"] = name
    for entry in _builtin_entries(cls) or ():
        if isinstance(entry, tuple) and entry[0] in config and config[entry[0]] == entry[1]:
            config.pop(entry[0])
    return cls(**config)


def serialize_layer(layer) -> dict:
    """``keras.layers.serialize``: a layer of gradkit.tf's (or a subclass) as Keras writes it."""
    from .serialization_registry import get_registered_name

    cls = type(layer)
    built_in = cls.__module__.startswith("gradkit.tf._keras")
    module = _LAYERS_MODULE if built_in else cls.__module__
    registered = None if built_in else get_registered_name(cls)  # Keras': "package>Name", else the class name
    return {"module": module, "class_name": cls.__name__, "config": layer.get_config(), "registered_name": registered}


def deserialize_layer(config: dict, custom_objects=None):
    """``keras.layers.deserialize``: a layer made from ``serialize_layer``'s dict (a class of
    ``custom_objects``, of an enclosing ``custom_object_scope`` or registered with
    ``register_keras_serializable``, by its registered or class name, first; then gradkit.tf's layers)."""
    from . import api, layers  # the tf.keras.layers namespace, then the module it starts from
    from .serialization_registry import find

    name = config.get("class_name")
    if name in ("Functional", "Sequential") and str(config.get("module") or "").startswith("keras"):
        from . import model_config  # a model nested in a model

        return model_config.deserialize_model(config, custom_objects, compile=False)
    cls = (
        (custom_objects or {}).get(name)
        or find(name, config.get("registered_name"), custom_objects)
        or getattr(api.layers, str(name), None)
        or getattr(layers, str(name), None)
    )
    # Keras raises TypeError ("Could not locate class") for a class it does not know.
    if cls is None:
        raise _errors.GradkitTypeError(
            f"the config names the layer class {name!r}, which gradkit.tf.keras.layers does not have. Pass it in "
            f"custom_objects={{{name!r}: cls}}."
        )
    from .serialization_registry import functions_found

    return cls.from_config(functions_found(dict(config.get("config", {})), custom_objects))


# -- compute_output_shape ------------------------------------------------------------------------


def traced_output_shape(layer, input_shape) -> tuple:
    """The output shape of a built layer, found by tracing its call (``jax.eval_shape``) on inputs
    of that shape, with two sizes for each None dimension (``functional.PROBES``): one that
    differs is None."""
    from gradkit._core import frames
    from gradkit._core.functionalize import values_of
    from gradkit._tape.tensor import Tensor

    shape = tuple(input_shape)
    found = []
    from .functional import PROBES, probe_shape

    for probe in PROBES:
        spec = jax.ShapeDtypeStruct(probe_shape(tuple(None if d is None else int(d) for d in shape), probe), np.float32)
        with frames.Suspend():  # only shapes are read: the weights' values as constants, on purpose
            out = jax.eval_shape(lambda x: values_of(layer(Tensor.concrete(x))), spec)
        if not hasattr(out, "shape"):
            raise NotImplementedError(
                f"[gradkit] {type(layer).__name__}.compute_output_shape: the layer returns several outputs; "
                "call it on a tensor and read the shapes."
            )
        found.append(tuple(out.shape))
    first, second = found
    return tuple(d if d == e else None for d, e in zip(first, second))
