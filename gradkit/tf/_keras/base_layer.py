"""``tf.keras.layers.Layer``: Keras 3's base class for layers (and models), on gradkit.nn's Layer.

A subclass writes ``__init__`` (calling ``super().__init__(**kwargs)``), optionally
``build(input_shape)``, run once before the first call, and ``call(inputs, ...)``. Weights
made by ``add_weight`` belong to the layer; sublayers are found in its attributes (also
inside lists, tuples and dicts). The variables properties are lists in Keras 3's order: the
layer's own trainable weights, then its own non-trainable ones (each in creation order),
then each sublayer's, in the order they were assigned. As in Keras 3 with TensorFlow, a
``tf.Variable`` stored as an attribute is not one of the layer's weights: make weights with
``add_weight``.

``training=`` follows Keras' rule: the value passed to a call, else the value of the
enclosing layer call (so ``model(x, training=True)`` reaches the Dropout and
BatchNormalization layers inside it), else the default in ``call``'s signature; a layer
whose ``call`` does not take ``training`` is called without it.

>>> import gradkit.tf as tf
>>> class Linear(tf.keras.layers.Layer):
...     def __init__(self, units=2, **kwargs):
...         super().__init__(**kwargs)
...         self.units = units
...     def build(self, input_shape):
...         self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones")
...         self.b = self.add_weight(shape=(1, self.units), initializer="zeros", name="b")
...     def call(self, inputs):
...         return tf.matmul(inputs, self.w) + self.b
>>> layer = Linear()
>>> layer(tf.ones([1, 3])).numpy().tolist(), [tuple(v.shape) for v in layer.trainable_weights]
([[3.0, 3.0]], [(3, 2), (1, 2)])
"""

from __future__ import annotations

import functools
import inspect
import numbers
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors, nn
from gradkit._core.variable import Variable as _CoreVariable
from gradkit._tape.tensor import Tensor
from gradkit.nn.module import Module as _NnModule

from .. import _graph_kind
from .._checkpoint import deferred, watched_containers
from .._convert import TensorShape, convert, wrap
from . import dtype_policies, functional, initializers, layer_config, layer_regularization, masking
from . import input_spec as _input_spec
from . import stateless as _stateless
from .keras_variable import KerasVariable
from .layer_losses import LayerLosses
from .layer_weight import LayerWeight

_NO_TRAINING = object()  # a call() without a `training` parameter

# What a layer tracks as its own weight when an attribute holds it, as Keras 3 tracks its Variables.
_TRACKED_VARIABLES = (KerasVariable, LayerWeight)


class _CallContext(threading.local):
    """The ``training`` value shared by the layer calls nested in one outermost call (Keras'
    call context: a nested call's value is seen by the calls after it, too)."""

    def __init__(self):
        self.depth = 0
        self.training = None
        # The layers being called or built, outermost first: Keras 3's name scopes, whose names
        # prefix the path of a weight made inside them ('sequential/dense/kernel').
        self.scopes = []


def _enter_scope(layer) -> bool:
    """Open ``layer``'s name scope unless it is the innermost already (Keras' deduplication);
    whether it was opened (and is to be closed)."""
    scopes = _context.scopes
    if scopes and scopes[-1] is layer:
        return False
    scopes.append(layer)
    return True


def _keras_path(layer, own: str) -> str:
    """Keras 3's path of a weight of ``layer`` made now, named ``own`` (``'layer/name'``): the names
    of the scopes it is made inside, outermost first, before it. A sublayer whose name already
    holds its parent's (``'mha/query'``) is not prefixed by that parent again."""
    scopes = _context.scopes
    if scopes and scopes[-1] is layer:
        scopes = scopes[:-1]
    names = [scope.name for scope in scopes]
    while names and own.startswith(names[-1] + "/"):
        names.pop()
    return "/".join([*names, own])


_context = _CallContext()


def nested_values(value):
    """``value`` and, for a list, tuple or dict, the values nested in it, depth first, in
    order: where Keras finds the layers (and metrics) an attribute holds."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from nested_values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from nested_values(item)
    else:
        yield value


def _training_default(call):
    try:
        parameter = inspect.signature(call).parameters.get("training")
    except (TypeError, ValueError):
        return _NO_TRAINING
    if parameter is None:
        return _NO_TRAINING
    return None if parameter.default is inspect.Parameter.empty else parameter.default


def _signature(call):
    try:
        return None if call is None else inspect.signature(call)
    except (TypeError, ValueError):
        return None


def _takes_parameter(call, name: str) -> bool:
    try:
        return name in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False


def _first_input(call):
    """The name of ``call``'s inputs parameter (the one after ``self``)."""
    try:
        parameters = list(inspect.signature(call).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return parameters[0].name if parameters and parameters[0].kind in kinds else None


def _marks_built(build):
    """Keras sets ``built`` once ``build`` returns, also when it is called directly."""

    @functools.wraps(build)
    def build_and_mark(self, *args, **kwargs):
        opened = _enter_scope(self)
        try:
            out = build(self, *args, **kwargs)
        finally:
            if opened:
                _context.scopes.pop()
        if args and "_keras_build_shape" not in self.__dict__:  # built directly: get_build_config's shape
            self.__dict__["_keras_build_shape"] = args[0]
        self.built = True
        deferred.built(self)  # checkpoint values restored before the layer had these weights
        return out

    build_and_mark._keras_marks_built = True
    return build_and_mark


def _is_number_literal(x) -> bool:
    if isinstance(x, (list, tuple)):
        return all(_is_number_literal(e) for e in x)
    return isinstance(x, numbers.Number)


def _as_input(x):
    """Arrays, Variables and number literals become tensors; lists, tuples and dicts of them
    stay structures (a layer with several inputs), as in Keras."""
    if isinstance(x, (Tensor, jax.Array, np.ndarray, np.generic, _CoreVariable)) or _is_number_literal(x):
        return convert(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_as_input(e) for e in x)
    if isinstance(x, dict):
        return {k: _as_input(v) for k, v in x.items()}
    return x


def _autocast(x):
    """Keras' ``DTypePolicy.convert_input``: each floating tensor, array or Variable of another
    dtype (float16, bfloat16, float64) in the call's arguments cast to the layer's compute dtype,
    float32; integer and boolean ones, and other values, as they are."""
    if isinstance(x, (Tensor, jax.Array, np.ndarray, np.generic, _CoreVariable)):
        dtype = x.dtype
        if jnp.issubdtype(dtype, jnp.floating) and dtype != np.float32:
            return convert(x, "float32")
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_autocast(e) for e in x)
    if isinstance(x, dict):
        return {k: _autocast(v) for k, v in x.items()}
    return x


def _in_dtype(x, dtype):
    if isinstance(x, Tensor):
        return convert(x, dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_in_dtype(e, dtype) for e in x)
    if isinstance(x, dict):
        return {k: _in_dtype(v, dtype) for k, v in x.items()}
    return x


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _flat(e)]
    if isinstance(x, dict):
        return [leaf for e in x.values() for leaf in _flat(e)]
    return [x]


def _check_positional(layer, args) -> None:
    """Keras' rule: after the inputs, only tensors (or None) are passed positionally, so
    ``layer(x, True)`` raises instead of binding True to whatever call() takes second."""
    for arg in _flat(list(args)):
        if arg is not None and not isinstance(arg, (Tensor, jax.Array, np.ndarray, np.generic, _CoreVariable)):
            raise _errors.GradkitValueError(
                f"{type(layer).__name__} '{layer.name}' got {arg!r} ({type(arg).__name__}) as a positional argument "
                "after its inputs; as in Keras, only input tensors may be passed positionally. Pass it as a keyword "
                "argument, e.g. layer(x, training=True)."
            )


def _input_shape(x):
    if isinstance(x, (list, tuple)):
        return [_input_shape(e) for e in x]
    if isinstance(x, dict):
        return {k: _input_shape(v) for k, v in x.items()}
    shape = getattr(x, "shape", None)
    return None if shape is None else TensorShape(tuple(shape))


def _plain_shapes(shape):
    """A shape as a tuple of ints and Nones; a list or dict of shapes as a list or dict of them.
    (A shape read back from JSON is a list of sizes.)"""
    if isinstance(shape, list) and not all(d is None or isinstance(d, numbers.Integral) for d in shape):
        return [_plain_shapes(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _plain_shapes(s) for k, s in shape.items()}
    return tuple(None if d is None else int(d) for d in shape)


def _recorded_shape(shape):
    """The input shape a layer records as built for (its ``get_build_config``, ``summary``'s
    output shape): as Keras records it, with the batch size None when layers run on zeros for
    inputs whose batch size is unknown (a model built from ``tf.keras.Input`` or ``build((None, ...))``)."""
    if not functional.batch_size_unknown():
        return shape
    if isinstance(shape, list):
        return [_recorded_shape(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _recorded_shape(s) for k, s in shape.items()}
    if type(shape) is TensorShape and shape.rank:  # a recorded shape, not a tensor's own
        return TensorShape((None, *tuple(shape)[1:]))
    return shape


def _more_shapes(layer, args, kwargs) -> dict | None:
    """Keras 3 builds a layer whose ``build`` takes ``<name>_shape`` for each tensor argument of
    ``call`` (``build(self, a_shape, b_shape)`` for ``call(self, a, b)``) with those shapes by
    keyword, and one whose ``build`` takes no named argument (``build(self)``) with none: ``{}``;
    None for the usual ``build(self, input_shape)``."""
    try:
        wanted = [
            p.name
            for p in inspect.signature(layer.build).parameters.values()
            if p.kind
            in (
                inspect.Parameter.POSITIONAL_ONLY,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY,
            )
        ]
        if not wanted:
            return {}
        if len(wanted) < 2 or not all(name.endswith("_shape") for name in wanted):
            return None
        bound = inspect.signature(layer.call).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return None
    shapes = {f"{name}_shape": _input_shape(value) for name, value in bound.items() if f"{name}_shape" in wanted}
    return shapes if len(shapes) == len(wanted) else None


def _refuse_unsupported(what: str, given: dict) -> None:
    """Keras options gradkit.tf does not implement raise rather than being ignored."""
    if given:
        raise _errors.GradkitTypeError(
            f"{what} got {', '.join(f'{k}={v!r}' for k, v in given.items())}, which gradkit.tf does not "
            "implement (ignoring it would change the results). Leave it out."
        )


def keras_input_shape(what: str, kwargs: dict):
    """Pop Keras 3's ``input_shape=``/``input_dim=`` from a layer's keyword arguments, warning as
    Keras does: only a Sequential whose first layer it is reads it (to build at once)."""
    input_dim = kwargs.pop("input_dim", None)
    input_shape = (input_dim,) if input_dim is not None else kwargs.pop("input_shape", None)
    refused = {k: kwargs.pop(k) for k in ("batch_input_shape", "batch_size") if k in kwargs}
    if refused:  # Keras 3's Layer does not take these either (ValueError)
        raise _errors.GradkitValueError(
            f"{what} got {', '.join(f'{k}={v!r}' for k, v in refused.items())}, which a Keras 3 layer does not "
            "take. Pass input_shape= (without the batch axis) to the first layer of a Sequential, or start it "
            "with tf.keras.Input(shape=...)."
        )
    if input_shape is None:
        return None
    if isinstance(input_shape, (int, np.integer)):
        input_shape = (input_shape,)
    warnings.warn(  # Keras' own warning, word for word
        "Do not pass an `input_shape`/`input_dim` argument to a layer. When using Sequential models, prefer "
        "using an `Input(shape)` object as the first layer in the model instead.",
        stacklevel=3,
    )
    return tuple(None if d is None else int(d) for d in input_shape)


class Layer(LayerLosses, nn.Layer):
    """``tf.keras.layers.Layer(trainable=True, name=None, dtype=None)``: subclass it and write
    ``build(input_shape)`` and ``call(inputs, ...)``; see the module docstring."""

    _keras_training = _NO_TRAINING
    _keras_first_input = None
    _keras_call_takes_mask = False
    _keras_call_signature = None
    _keras_masking = False  # Keras' layers that set supports_masking (marked in masking.py)
    # Keras' preprocessing layers (its DataLayer): in a graph (a tf.function, a tf.data pipeline,
    # a functional model's symbolic call) every input is first converted to the compute dtype.
    _keras_data_layer = False

    def __setattr__(self, name, value):
        if "_keras_sublayers" in self.__dict__ and not name.startswith(("_keras_", "_module_")):
            new = [item for item in nested_values(value) if isinstance(item, _NnModule) and item is not self]
            if new:
                # Keras' tracking order: the layers put in held lists since, then these.
                self._track_layers(self._layers_held())
                self._track_layers(new)
                # A layer this attribute held stays tracked, as in Keras (its weights too).
                previous = self.__dict__.get(name)
                if previous is not None:
                    replaced = self.__dict__.setdefault("_keras_replaced", [])
                    replaced += [item for item in nested_values(previous) if isinstance(item, _NnModule)]
        if not name.startswith("_") and any(isinstance(item, _TRACKED_VARIABLES) for item in nested_values(value)):
            self._track_attribute_variables()  # one appended to a list since, first
            self._track_keras_variables(value)
        if not deferred.waiting():
            super().__setattr__(name, value)
            return
        # A checkpoint restored into this layer waits for Variables it does not have yet: one given to
        # it after its build (``layer.counter = tf.Variable(0)``, in a list or dict too) takes its value.
        super().__setattr__(name, watched_containers.watched(self, value))
        if self.__dict__.get("built"):
            deferred.built(self)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Wrap the build this class defines, or, for gradkit.tf's layers on gradkit.nn
        # (Dense(_KerasLayer, nn.Dense)), the gradkit.nn layer's; never set one on a class
        # that would hide a later class's build in a subclass's MRO.
        definer = next(c for c in cls.__mro__ if "build" in c.__dict__)
        if definer is cls or not (issubclass(definer, Layer) or definer is nn.Layer):
            if not getattr(cls.build, "_keras_marks_built", False):
                cls.build = _marks_built(cls.build)
        call = getattr(cls, "call", None)
        cls._keras_training = _NO_TRAINING if call is None else _training_default(call)
        cls._keras_first_input = None if call is None else _first_input(call)
        cls._keras_call_takes_mask = call is not None and _takes_parameter(call, "mask")
        cls._keras_call_signature = _signature(call)

    def __new__(cls, *args, **kwargs):
        # The arguments __init__ is given, for Keras' automatic get_config: kept only when they are
        # plain Python values (the only ones it takes), so a layer keeps no array it was given alive.
        layer = super().__new__(cls)
        plain = layer_config.plain(list(args)) and layer_config.plain(kwargs)
        layer.__dict__["_keras_init_args"] = (args, kwargs) if plain else None
        return layer

    def __init__(self, *args, trainable=True, dtype=None, autocast=True, activity_regularizer=None, **kwargs):
        what = f"{type(self).__name__}"
        if isinstance(dtype, dict) and dtype.get("class_name") == "DTypePolicy":
            dtype = (dtype.get("config") or {}).get("name")  # a config's policy, as Keras reads it back
        if dtype is not None and getattr(dtype, "name", dtype) not in ("float32", np.float32):
            _refuse_unsupported(what, {"dtype": dtype})
        self.__dict__["_keras_activity_regularizer"] = layer_regularization.regularizers.get(activity_regularizer)
        self.__dict__["_keras_autocast"] = bool(autocast)
        input_shape = keras_input_shape(what, kwargs)
        self.__dict__["_keras_own"] = []  # the weights add_weight made, in creation order
        try:
            super().__init__(*args, **kwargs)
        except TypeError as e:
            if "unexpected keyword argument" not in str(e) or isinstance(e, _errors.GradkitError):
                raise
            raise _errors.GradkitValueError(  # ValueError, as Keras raises for unknown keyword arguments
                f"{what} got an argument it does not take ({e}). A tf.keras.layers.Layer takes trainable=, "
                "name= and dtype='float32'; check the argument names."
            ) from None
        self.__dict__["_keras_sublayers"] = self._layers_held()  # in Keras' tracking order
        if not trainable:
            self.trainable = False
        if input_shape is not None:
            self.__dict__["_keras_input_shape"] = input_shape  # read by a Sequential it comes first in

    def __repr__(self) -> str:
        # Also for a layer whose __init__ has not finished (an error message may show it).
        name, built = getattr(self, "name", None), getattr(self, "built", False)
        return f"<{type(self).__name__} name={name}, built={built}>"

    @property
    def metrics(self) -> list:
        """Keras': the metrics the layer and its sublayers hold as attributes (a layer that
        updates a metric in ``call``, such as the subclassing guide's ``LogisticEndpoint``)."""
        from .training import _attribute_metrics

        out = _attribute_metrics(self)
        for layer in self._keras_flatten_layers():
            out += _attribute_metrics(layer)
        return out

    @property
    def metrics_variables(self) -> list:
        """Keras': the state Variables of each of ``metrics``, in order."""
        return [v for metric in self.metrics for v in metric.variables]

    @property
    def activity_regularizer(self):
        """Keras': the regularizer of the layer's outputs (see ``layer_regularization``), or None."""
        return self.__dict__.get("_keras_activity_regularizer")

    @activity_regularizer.setter
    def activity_regularizer(self, value) -> None:
        self.__dict__["_keras_activity_regularizer"] = layer_regularization.regularizers.get(value)

    # Keras 3's dtype policy, by name: gradkit.tf's layers keep their weights and compute in
    # float32 (an InputLayer declares the dtype of its input).
    @property
    def dtype(self) -> str:
        return self.__dict__.get("_keras_dtype", "float32")

    @dtype.setter
    def dtype(self, value) -> None:
        self.__dict__["_keras_dtype"] = value

    @property
    def compute_dtype(self) -> str:
        return self.dtype

    @property
    def dtype_policy(self):
        """Keras': the layer's ``DTypePolicy`` (named by its ``dtype``)."""
        return dtype_policies.DTypePolicy(np.dtype(self.dtype).name if not isinstance(self.dtype, str) else self.dtype)

    @property
    def input_dtype(self) -> str:
        """Keras': the dtype floating inputs are cast to when ``autocast`` is on."""
        return self.compute_dtype

    @property
    def autocast(self) -> bool:
        """Keras': whether floating inputs of another dtype are cast to ``compute_dtype`` (float32)
        when the layer is called (``autocast=False`` keeps them)."""
        return self.__dict__.get("_keras_autocast", True)

    @property
    def variable_dtype(self) -> str:
        return self.dtype

    # -- building and calling -------------------------------------------------------------
    # No build() or call() here: in gradkit.tf's own layers (Dense(Layer, nn.Dense)) this class
    # comes before the gradkit.nn layer in the MRO and must not hide its build and call.

    def __call__(self, *args, **kwargs):
        first = type(self)._keras_first_input
        if not args and first in kwargs:  # layer(x=...), as Keras takes it
            args = (kwargs.pop(first),)
        if not args:
            raise _errors.GradkitTypeError(
                f"{type(self).__name__} '{self.name}' takes its inputs as the first positional argument, "
                f"but got only {sorted(kwargs)}. Call it as layer(x, ...)."
            )
        spec = self.__dict__.get("input_spec")
        if spec is not None and not functional.running_symbolically():
            # Keras checks the first argument against the layer's input_spec before anything else (a
            # functional call on its symbolic shapes, where an unknown size fits any).
            _input_spec.check(spec, args[0], self.name)
        plain = len(args) == 1 and not kwargs and isinstance(args[0], (Tensor, np.ndarray, jax.Array))
        if not plain and functional.is_symbolic((args, kwargs)):  # Keras' functional API: record the call
            return functional.record_call(self, args, kwargs)
        _check_positional(self, args[1:])
        args = (_as_input(args[0]), *args[1:])
        if type(self)._keras_data_layer:
            if _graph_kind.like_graph() or functional.running_symbolically():
                args = (_in_dtype(args[0], self.compute_dtype), *args[1:])
        elif self.__dict__.get("_keras_autocast", True):
            args, kwargs = _autocast(args), _autocast(kwargs)
        outermost = _context.depth == 0
        if outermost:
            self._keras_clear_losses()  # Keras 3: each outermost call collects its own add_loss terms
        _context.depth += 1
        opened = _enter_scope(self)
        try:
            default = type(self)._keras_training
            if "training" in kwargs:
                training = kwargs["training"]
            elif _context.training is not None:
                training = _context.training
            else:
                training = None if default is _NO_TRAINING else default
            _context.training = training  # seen by the layer calls after this one, as in Keras
            if default is _NO_TRAINING:
                kwargs.pop("training", None)
            elif training is not None:
                kwargs.setdefault("training", training)
            if not self.built:
                self._build_in_call(_input_shape(args[0]), _more_shapes(self, args, kwargs))
            elif "_keras_build_shape" not in self.__dict__:
                # Built when made (no weights), yet Keras builds most such layers at their first
                # call and records that call's shape (their build_config in a Sequential's config).
                self.__dict__["_keras_build_shape"] = _recorded_shape(_input_shape(args[0]))
            call = getattr(self, "call", None)
            if call is None:
                raise _errors.GradkitTypeError(
                    f"{type(self).__name__} '{self.name}' has no call() method. A tf.keras.layers.Layer subclass "
                    "writes call(self, inputs, ...) with the layer's computation."
                )
            # Keras masks: the input's mask becomes mask= of a call that takes one and is given one
            # tensor argument; with more (an RNN given initial_state=), each fills its <name>_mask=.
            previous_mask = masking.masks_of(args[0])
            if kwargs.get("mask") is not None:
                previous_mask = kwargs["mask"]
            else:
                filled = masking.masks_for_call(type(self)._keras_call_signature, self, args, kwargs)
                kwargs.update(filled)
                previous_mask = filled.get("mask", previous_mask)
            outputs = wrap(call(*args, **kwargs))
            if type(self).compute_mask is not Layer.compute_mask or masking.any_mask(previous_mask):
                masking.attach_output_masks(self, args[0], outputs, previous_mask)
            if self.activity_regularizer is not None:
                self.add_loss(layer_regularization.activity_losses(self.activity_regularizer, outputs))
            return outputs
        finally:
            if opened:
                _context.scopes.pop()
            _context.depth -= 1
            if outermost:
                _context.training = None

    # -- weights ---------------------------------------------------------------------------

    def add_metric(self, *args, **kwargs):
        """Keras 3's: deprecated, and it raises."""
        raise _errors.GradkitNotImplementedError(
            "Layer `add_metric()` method is deprecated (Keras 3 raises too). Add your metric in "
            "`Model.compile(metrics=[...])`, or create metric trackers in __init__() or build() when subclassing the "
            "layer or model, then call `metric.update_state()` whenever necessary."
        )

    def stateless_call(self, trainable_variables, non_trainable_variables, *args, return_losses=False, **kwargs):
        """Keras 3's ``call`` with the weights given as values (``trainable_variables`` and
        ``non_trainable_variables``, 1:1 with the layer's): ``(outputs, non_trainable_values)``, and
        the losses too with ``return_losses=True``. The layer's Variables are left as they were; a
        gradient flows to the values given."""
        return _stateless.stateless_call(
            self, trainable_variables, non_trainable_variables, args, kwargs, return_losses=return_losses
        )

    def add_weight(
        self,
        *args,
        shape=None,
        initializer=None,
        dtype=None,
        trainable=True,
        autocast=True,
        regularizer=None,
        constraint=None,
        aggregation="none",
        overwrite_with_gradient=False,
        name=None,
    ):
        """Keras 3's ``add_weight(shape=None, initializer=None, dtype=None, trainable=True, ...,
        name=None)`` (shape, initializer and dtype may come positionally). The initializer
        defaults to 'glorot_uniform' for a float weight and 'zeros' for another. gradkit.nn's
        ``add_weight(name, shape, initializer, trainable, dtype)`` (a name first) works too."""
        if args and isinstance(args[0], str):
            return self._add_weight_named(*args, shape=shape, initializer=initializer, trainable=trainable, dtype=dtype)
        what = f"{type(self).__name__} '{self.name}' add_weight"
        if name is not None and (not isinstance(name, str) or "/" in name):
            raise _errors.GradkitValueError(
                f"Argument `name` must be a string and cannot contain character `/`. Received: name={name} ({what}, "
                "as Keras refuses it: a weight's path joins the layer names with '/'). Pass a name without '/'."
            )
        if len(args) > 3:
            raise _errors.GradkitTypeError(
                f"{what} takes at most 3 positional arguments (shape, initializer, dtype), as in Keras 3, but got "
                f"{len(args)}. Pass the others by keyword."
            )
        for position, (key, given) in enumerate((("shape", shape), ("initializer", initializer), ("dtype", dtype))):
            if position < len(args):
                if given is not None:
                    raise _errors.GradkitTypeError(
                        f"{what} got {key} both positionally and as a keyword; pass it once."
                    )
        shape, initializer, dtype = (*args, *(shape, initializer, dtype)[len(args) :])
        if overwrite_with_gradient:
            _refuse_unsupported(what, {"overwrite_with_gradient": overwrite_with_gradient})
        regularizer, constraint = layer_regularization.weight_options(regularizer, constraint)
        dtype = np.dtype("float32" if dtype is None else getattr(dtype, "name", dtype))
        if initializer is None:
            initializer = "glorot_uniform" if np.issubdtype(dtype, np.floating) else "zeros"
        shape = () if shape is None else tuple(int(d) for d in shape)
        init = initializers.as_nn_initializer(initializer, f"{what} initializer")
        value = init(None, shape, dtype)
        variable = self._make_variable(value, "variable" if name is None else name, trainable)
        layer_regularization.attach(variable, regularizer, constraint)
        return variable

    def _add_weight_named(self, name, *positional, shape=None, initializer=None, trainable=True, dtype=None):
        # gradkit.nn's calling convention add_weight(name, shape, initializer, trainable, dtype),
        # used by the layers gradkit.tf builds on gradkit.nn.
        given = {"shape": shape, "initializer": initializer, "trainable": trainable, "dtype": dtype}
        given.update(zip(("shape", "initializer", "trainable", "dtype"), positional))
        what = f"{type(self).__name__} '{self.name}' {name}"
        init = initializers.as_nn_initializer(given["initializer"] or "zeros", what)
        shape = () if given["shape"] is None else tuple(given["shape"])
        return nn.Layer.add_weight(
            self, name, shape, init, trainable=given["trainable"], dtype=given["dtype"] or "float32"
        )

    def _weight_scope(self) -> str:
        """The scope Keras puts between the layer's name and a weight's (``'lstm_cell/'`` for an
        LSTM's, whose weights Keras makes in its cell): part of the weight's name and path."""
        return ""

    def _make_variable(self, value, name, trainable):
        # A checkpoint restored before the layer was built gives the weight its initial value.
        value = deferred.initial_value(self, name, value)
        own = f"{self.name}/{self._weight_scope()}{name}"
        self._track_attribute_variables()  # a tf.keras.Variable appended to a list before this weight
        variable = LayerWeight(value, name=own, trainable=trainable)
        variable.__dict__["_keras_path"] = _keras_path(self, own)
        if not self.trainable:  # a frozen layer's new weights are frozen too (Keras' _track_variable)
            variable.trainable = False
        self.__dict__.setdefault("_keras_own", []).append(variable)
        deferred.bind_weight(self, variable)
        return variable

    def _keras_layers(self) -> list:
        """The direct sublayers, in Keras' order: as each was tracked, when it was set as an
        attribute or put in a list, tuple or dict one holds (one added to a held list or dict is
        tracked at the next attribute set, or here, after those set before it). One an attribute
        set again held stays, as in Keras; one taken out of a list or dict drops out."""
        present = self._layers_held()
        tracked = self.__dict__.get("_keras_sublayers")
        if tracked is None:  # before Layer.__init__
            return present
        self._track_layers(present)
        held = {id(layer) for layer in present + self.__dict__.get("_keras_replaced", [])}
        tracked[:] = [layer for layer in tracked if id(layer) in held]
        return list(tracked)

    def _track_layers(self, layers) -> None:
        tracked = self.__dict__["_keras_sublayers"]
        ids = {id(layer) for layer in tracked}
        tracked.extend(layer for layer in layers if id(layer) not in ids)

    def _layers_held(self) -> list:
        """The direct sublayers the attributes hold (inside lists, tuples and dicts too), in the
        order the attributes were first set."""
        found, seen = [], {id(self)}
        for key, value in vars(self).items():
            if key.startswith(("_keras_", "_module_")):
                continue
            for item in nested_values(value):
                if isinstance(item, _NnModule) and id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)
        return found

    def _track_keras_variables(self, value) -> None:
        """A ``tf.keras.Variable`` or another layer's weight set as an attribute (in a list, tuple
        or dict too) is one of the layer's own weights, as Keras 3 tracks it: after those made
        before it, trained by ``fit`` and saved with the layer (a weight tied to another layer's
        is saved under both). A plain ``tf.Variable`` is not, as in Keras."""
        own = self.__dict__.get("_keras_own")
        if own is None:  # before Layer.__init__
            return
        for item in nested_values(value):
            if isinstance(item, _TRACKED_VARIABLES) and all(item is not v for v in own):
                if not self.trainable:  # a frozen layer freezes what it tracks (Keras' _track_variable)
                    item.trainable = False
                own.append(item)

    def _track_attribute_variables(self) -> None:
        """Track the ``tf.keras.Variable`` attributes not yet tracked: ones appended to a list or
        put in a dict after it was set (Keras' tracked containers see them as they come)."""
        if "_keras_own" in self.__dict__:
            for key, value in list(vars(self).items()):
                if not key.startswith("_"):
                    self._track_keras_variables(value)

    def _own_weights(self) -> list:
        """The weights ``add_weight`` made and the ``tf.keras.Variable`` attributes, in the order
        they were made or set, Keras' order: those made trainable, then the others."""
        self._track_attribute_variables()
        own = self.__dict__.get("_keras_own", [])
        return [v for v in own if v._trainable] + [v for v in own if not v._trainable]

    def _build_in_call(self, shape, shapes=None) -> None:
        self.__dict__["_keras_building_in_call"] = True
        try:
            # model.summary() reports the output shape for it
            self.__dict__["_keras_build_shape"] = _recorded_shape(shape)
            if shapes is not None:
                self.build(**shapes)
            else:
                self.build(shape)
        finally:
            self.__dict__["_keras_building_in_call"] = False
        self.built = True

    def build_symbolically(self, args, kwargs) -> None:
        """Called on KerasTensors (the functional API), a layer whose ``build`` is the user's own is
        built for their shapes, None for an unknown size, as Keras builds it (a build that sizes a
        weight by an axis sees None there, not the sizes gradkit probes the call at)."""
        build = getattr(type(self), "build", None)
        if self.built or build is None or getattr(build, "__module__", "").startswith("gradkit."):
            return
        self._build_in_call(_input_shape(args[0]), _more_shapes(self, args, kwargs))

    @property
    def trainable(self) -> bool:
        """Keras' flag. Setting it sets it on every sublayer and on each weight made trainable, as
        Keras 3 does: ``False`` lists them as non-trainable (``apply_gradients(zip(grads,
        layer.trainable_variables))`` skips them), and a tape still watches them, as in Keras."""
        return self.__dict__.get("_keras_trainable", True)

    @trainable.setter
    def trainable(self, value) -> None:
        value = bool(value)
        self.__dict__["_keras_trainable"] = value
        for v in self.__dict__.get("_keras_own", []):
            if v._trainable:
                v.trainable = value
        for layer in self._keras_layers():
            if isinstance(layer, Layer):
                layer.trainable = value

    @property
    def weights(self) -> list:
        found, seen = [], set()
        for v in self._own_weights():
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        for layer in self._keras_layers():
            for v in layer.weights if isinstance(layer, Layer) else layer.variables:  # a gradkit.nn layer or tf.Module
                if id(v) not in seen:
                    seen.add(id(v))
                    found.append(v)
        return found

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [v for v in self.weights if v.trainable]

    @property
    def non_trainable_weights(self) -> list:
        if not self.trainable:
            return self.weights
        return [v for v in self.weights if not v.trainable]

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def _collect(self):
        layers, queue = [], self._keras_layers()
        while queue:
            layer = queue.pop(0)
            if all(layer is not seen for seen in layers):
                layers.append(layer)
                queue += layer._keras_layers() if isinstance(layer, Layer) else list(layer.submodules)
        return self.weights, layers

    def add_variable(
        self,
        shape,
        initializer,
        dtype=None,
        trainable=True,
        autocast=True,
        regularizer=None,
        constraint=None,
        name=None,
    ):
        """Keras 3's ``add_variable``: ``add_weight`` with ``shape`` and ``initializer`` required."""
        return self.add_weight(
            shape=shape,
            initializer=initializer,
            dtype=dtype,
            trainable=trainable,
            autocast=autocast,
            regularizer=regularizer,
            constraint=constraint,
            name=name,
        )

    def save_own_variables(self, store) -> None:
        """Keras' hook for a weights file: this layer's own weights into ``store`` under "0", "1",
        ... A layer overriding it (calling ``super()``) saves more state of its own there."""
        from .weights_h5 import own_variables

        for i, v in enumerate(own_variables(self)):
            store[str(i)] = np.asarray(v.numpy())

    def load_own_variables(self, store) -> None:
        """Keras' hook for a weights file: this layer's own weights from ``store`` ("0", "1", ...)."""
        from .weights_h5 import own_variables

        variables = own_variables(self)
        if len(store) != len(variables):
            raise _errors.GradkitValueError(
                f"Layer '{self.name}' expected {len(variables)} variables, but received {len(store)} variables during "
                f"loading. Expected: {[v.name for v in variables]}"
            )
        values = [np.asarray(store[str(i)]) for i in range(len(variables))]
        for i, (v, value) in enumerate(zip(variables, values)):
            if tuple(value.shape) != tuple(v.shape):
                raise _errors.GradkitValueError(
                    f"Layer '{self.name}': the stored value {i} has shape {tuple(value.shape)}, but {v.name!r} has "
                    f"shape {tuple(v.shape)}."
                )
        for v, value in zip(variables, values):
            deferred.write(v, value.astype(v.dtype, copy=False))

    def get_weights(self) -> list:
        """The weights' values as NumPy arrays, in ``weights`` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights) -> None:
        """Assign ``weights`` (arrays in ``layer.weights`` order, e.g. another model's
        ``get_weights()``); every shape is checked before any weight is written."""
        params, weights = self.weights, list(weights)
        if len(weights) != len(params):
            raise _errors.GradkitValueError(
                f"{type(self).__name__} '{self.name}'.set_weights got {len(weights)} arrays, but the layer has "
                f"{len(params)} weights of shapes {[tuple(v.shape) for v in params]}. Pass one array per weight, "
                "in layer.weights order (build the layer first by calling it once)."
            )
        values = [
            convert(np.asarray(w) if not isinstance(w, (Tensor, _CoreVariable)) else w, v.dtype)
            for v, w in zip(params, weights)
        ]
        for i, (v, w) in enumerate(zip(params, values)):
            if tuple(w.shape) != tuple(v.shape):
                raise _errors.GradkitValueError(
                    f"{type(self).__name__} '{self.name}'.set_weights: array {i} has shape {tuple(w.shape)}, but "
                    f"weight {v.name} has shape {tuple(v.shape)}. Pass arrays in layer.weights order."
                )
        for v, w in zip(params, values):
            v.assign(w)

    def count_params(self) -> int:
        if not self.built:
            raise _errors.GradkitValueError(
                f"You tried to call `count_params` on layer '{self.name}', but the layer isn't built. You can build "
                "it manually via: `layer.build(input_shape)` (Keras raises ValueError too)."
            )
        return int(sum(np.prod(v.shape, dtype=np.int64) for v in self.weights))

    # -- configs and shapes (layer_config) -------------------------------------------------

    def get_config(self) -> dict:
        """Keras 3's config: ``name``, ``trainable``, ``dtype`` (and, for gradkit.tf's own layers,
        their arguments as Keras writes them; see ``layer_config``)."""
        return layer_config.get_config(self, Layer)

    @classmethod
    def from_config(cls, config):
        """A new layer (unbuilt, with fresh weights) from ``get_config()``'s dict."""
        return layer_config.from_config(cls, config)

    def get_build_config(self):
        """Keras': ``{"input_shape": shape}`` of the call (or ``build``) that built the layer (a list
        or dict of shapes for a list or dict of inputs); None while it is not built.
        ``serialize_keras_object`` writes it beside the config."""
        shape = self.__dict__.get("_keras_build_shape")
        if not self.built or shape is None:
            return None
        try:
            return {"input_shape": _plain_shapes(shape)}
        except TypeError:  # a tuple of several inputs' shapes: nothing Keras' one-shape config holds
            return None

    def build_from_config(self, config) -> None:
        """Keras': build the layer for ``get_build_config()``'s shape (or shapes), so that its
        weights exist (to ``set_weights``) before any call."""
        shape = (config or {}).get("input_shape")
        if shape is None:
            return
        shape = _plain_shapes(shape)
        if not self.built:
            self.__dict__["_keras_build_shape"] = shape
            self.build(shape)
        elif "_keras_build_shape" not in self.__dict__:  # built when made (no weights): only the shape to keep
            self.__dict__["_keras_build_shape"] = shape

    # -- masks (masking.py) ----------------------------------------------------------------

    @property
    def supports_masking(self) -> bool:
        """Keras': whether the layer passes a mask on (``compute_mask``): set for Keras' layers
        that do, true for a layer that defines ``compute_mask``, or as assigned."""
        explicit = self.__dict__.get("_keras_supports_masking")
        if explicit is not None:
            return explicit
        return type(self)._keras_masking or type(self).compute_mask is not Layer.compute_mask

    @supports_masking.setter
    def supports_masking(self, value) -> None:
        self.__dict__["_keras_supports_masking"] = bool(value)

    @property
    def input(self):
        """Keras 3's ``layer.input``: the Keras tensor(s) of the layer's first call in a functional model."""
        return functional.first_call_tensors(self, "input")

    @property
    def output(self):
        """Keras 3's ``layer.output``: the Keras tensor(s) its first call in a functional model made."""
        return functional.first_call_tensors(self, "output")

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of the output (Keras' default: the input's)."""
        return previous_mask

    def compute_output_shape(self, input_shape):
        """The output shape for inputs of ``input_shape`` (None: any size). gradkit.tf's own layers
        compute it; a subclass that writes ``call`` writes this too, as in Keras."""
        defines_call = next((c for c in type(self).__mro__ if "call" in vars(c)), None)
        if defines_call is None or not defines_call.__module__.startswith(("gradkit.tf._keras", "gradkit.nn")):
            raise NotImplementedError(
                f"[gradkit] Layer {type(self).__name__} does not have a `compute_output_shape` method implemented. "
                "Should implement `def compute_output_shape(self, input_shape)`, as Keras asks."
            )
        if not self.built:
            # Keras computes it without building the layer: a copy of it is built and traced here.
            try:
                copy = type(self).from_config(self.get_config())
                sizes = tuple(None if d is None else int(d) for d in input_shape)
                copy(Tensor.concrete(jax.numpy.zeros(functional.probe_shape(sizes, functional.PROBES[0]), np.float32)))
            except Exception:
                raise _errors.GradkitValueError(
                    f"{type(self).__name__} '{self.name}'.compute_output_shape: gradkit.tf finds it by tracing the "
                    "built layer's call, and this layer is not built yet. Call it once (or "
                    "layer.build(input_shape)) first."
                ) from None
            return layer_config.traced_output_shape(copy, input_shape)
        return layer_config.traced_output_shape(self, input_shape)
