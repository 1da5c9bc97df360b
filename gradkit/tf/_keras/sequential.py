"""``tf.keras.Sequential``: a Model that calls its layers one after another."""

from __future__ import annotations

import inspect

from gradkit import _errors

from . import functional, input_standardization, layer_config, model_config
from .input_layer import InputLayer
from .model import Model


def _takes_training(layer) -> bool:
    call = getattr(layer, "call", layer)
    try:
        return "training" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False


class _Owner:
    """A layer's reference to its Sequential (called: the model, or None), which no traversal of
    the layer's attributes (sublayers, weights, configs) takes for one of its parts. A copied
    model's layers refer to the copy; a pickled layer keeps none."""

    def __init__(self, model=None):
        self._model = model

    def __call__(self):
        return self._model

    def __reduce__(self):
        return (_Owner, ())

    def __deepcopy__(self, memo):
        model = self()
        return _Owner(memo.get(id(model)) if model is not None else None)


class Sequential(Model):
    """``tf.keras.Sequential(layers=None, trainable=True, name=None)``: ``model(x)`` calls each layer on the last output.

    ``training=`` reaches the layers that take it (Dropout, BatchNormalization). The
    variables properties are lists, as in Keras. As in Keras 3, a Sequential that starts with
    ``tf.keras.Input(shape)``, an ``InputLayer``, or a first layer given ``input_shape=``
    builds its weights at once (with a batch of 1); ``layers`` leaves the input out.

    >>> import gradkit.tf as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
    >>> model(tf.ones([2, 3])).shape, [tuple(v.shape) for v in model.trainable_variables]
    ((2, 1), [(3, 4), (4,), (4, 1), (1,)])
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._sequence = []
        self.__dict__["_keras_input_layer"] = None  # not a sublayer: it has no weights
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_build()

    @property
    def layers(self) -> list:
        return list(self._sequence)

    def add(self, layer, rebuild=True) -> None:
        if not isinstance(layer, Model):  # a nested Sequential is a layer; its own input is its own
            layer = getattr(layer, "_keras_input_layer", layer)  # tf.keras.Input(...) → its InputLayer
        if isinstance(layer, InputLayer):
            if self._keras_input_layer is not None or self._sequence:
                raise _errors.GradkitValueError(
                    f"Sequential '{self.name}' got an input declaration (tf.keras.Input / InputLayer) "
                    + ("after its layers" if self._sequence else "a second time")
                    + "; gradkit.tf takes one, as the first entry. Put it first, once."
                )
            self.__dict__["_keras_input_layer"] = layer
            return
        if not self._sequence and self._keras_input_layer is None:
            shape = getattr(layer, "_keras_input_shape", None)  # Keras' legacy input_shape= on the first layer
            if shape is not None:
                self.__dict__["_keras_input_layer"] = InputLayer(shape=shape)
        if any(other.name == layer.name for other in self._sequence):
            raise _errors.GradkitValueError(
                "All layers added to a Sequential model should have unique names. Name "
                f"'{layer.name}' is already the name of a layer in this model. Update the `name` argument to pass "
                "a unique name (Keras raises ValueError)."
            )
        self._sequence.append(layer)
        # So that layer.input / layer.output make this model's symbolic tensors when first read.
        layer.__dict__["_keras_sequential"] = _Owner(self)
        self.__dict__.pop("_keras_symbolic", None)  # its symbolic tensors are made again when asked for
        if rebuild:
            self._maybe_build()

    def pop(self, rebuild=True):
        self.__dict__.pop("_keras_symbolic", None)
        return self._sequence.pop()

    def build(self, input_shape) -> None:
        """Build the layers for ``input_shape``. As in Keras 3, a Sequential with no input
        declaration gets one (an ``InputLayer`` of that batch shape, first in its config), when
        built by this call or by its first call on data."""
        if self._keras_input_layer is None and self._sequence and isinstance(input_shape, (list, tuple)):
            self.__dict__["_keras_input_layer"] = InputLayer(batch_shape=tuple(input_shape))
        if self._keras_input_layer is not None and self._sequence and not self.built:
            # As Keras 3 builds it, as a functional model: each layer called on the symbolic
            # tensor in turn, so a build of your own sees None for an unknown size (the run on
            # zeros below would show it the size 1 it probes with).
            self._symbolic("outputs")
        super().build(input_shape)

    def _maybe_build(self) -> None:
        if self._keras_input_layer is not None and self._sequence:
            self.build(self._keras_input_layer.batch_shape)
        elif len(self._sequence) > 1 and isinstance(self._sequence[0], Model):
            # As Keras' _maybe_rebuild: a first layer that is a model with a declared input
            # (a data-augmentation Sequential) builds this one for that input's shape.
            shape = _known_input_shape(self._sequence[0])
            if shape is not None:
                self.build(shape)

    def get_config(self) -> dict:
        """Keras 3's config: each layer as Keras serializes it (an input declaration first), and
        ``build_input_shape`` once the model is built from a shape."""
        config = {"name": self.name, "trainable": self.trainable, "dtype": layer_config.dtype_policy(self.dtype)}
        inputs = [self._keras_input_layer] if self._keras_input_layer is not None else []
        shape = self.__dict__.get("_keras_build_input_shape")
        batch = shape[0] if shape else None
        config["layers"] = [model_config.serialize_sequential_layer(layer, batch) for layer in inputs + self._sequence]
        if shape is not None:
            config["build_input_shape"] = shape
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new Sequential (fresh weights) from ``get_config()``'s dict; layer classes of your own
        are found in ``custom_objects`` by name."""
        layers = [layer_config.deserialize_layer(c, custom_objects) for c in config.get("layers", [])]
        model = cls(layers=layers, name=config.get("name"), trainable=config.get("trainable", True))
        shape = config.get("build_input_shape")
        if not model.built and isinstance(shape, (list, tuple)) and shape:
            model.build(shape)
        return model

    @property
    def input_shape(self):
        """The declared input's batch shape (an Input, an InputLayer, ``input_shape=``, or the
        shape the model was built for)."""
        return tuple(self._declared_input("input_shape").batch_shape)

    @property
    def output_shape(self):
        """The last layer's output shape for ``input_shape``."""
        return self.compute_output_shape(self._declared_input("output_shape").batch_shape)

    # Keras 3 runs a Sequential with a declared input as a functional model; here its symbolic
    # tensors are made when first asked for: the input's KerasTensor and the layers called on it
    # in turn, which also gives each layer its `input` and `output` (Keras' feature-extraction
    # recipe: tf.keras.Model(model.inputs, [layer.output for layer in model.layers])).
    @property
    def inputs(self):
        return [self._symbolic("inputs")[0]]

    @property
    def outputs(self):
        return [self._symbolic("outputs")[1]]

    def _symbolic(self, what: str):
        found = self.__dict__.get("_keras_symbolic")
        if found is None:
            declared = self._keras_input_layer
            if declared is None or not self._sequence:
                raise self._no_symbolic_tensors(what)
            x = functional.KerasTensor(declared.batch_shape, declared.dtype, name=declared.name)
            x._keras_input_layer = declared
            y = x
            for layer in self._sequence:
                y = layer(y)
            found = self.__dict__["_keras_symbolic"] = (x, y)
        return found

    def make_symbolic_tensors(self) -> bool:
        """Make the symbolic tensors (and so each layer's input and output) if the model has a
        declared input; whether it has."""
        if self._keras_input_layer is None or not self._sequence:
            return False
        self._symbolic("outputs")
        return True

    def _no_symbolic_tensors(self, what: str) -> Exception:
        return _errors.GradkitAttributeError(
            f"Sequential model '{self.name}' has no {what} yet: it has no declared input (Keras raises too). Start "
            "it with tf.keras.Input(shape), or build it (model.build((None, ...))) or call it once, then ask again."
        )

    def _declared_input(self, what: str):
        if self._keras_input_layer is None:
            raise _errors.GradkitAttributeError(
                f"Sequential model '{self.name}' has no defined {what} yet: it has no input declaration and has not "
                "been built. Start it with tf.keras.Input(shape), or call or build it first, as Keras requires."
            )
        return self._keras_input_layer

    def compute_output_shape(self, input_shape):
        """Each layer's ``compute_output_shape`` in turn, as Keras chains them."""
        shape = tuple(input_shape)
        for layer in self._sequence:
            shape = tuple(layer.compute_output_shape(shape))
        return shape

    def call(self, inputs, training=None, mask=None):
        x = inputs
        declared = self._keras_input_layer
        if declared is not None:  # Keras 3 runs such a Sequential as a functional model
            x = input_standardization.one_input(x, declared.name)
            x = input_standardization.adjust_rank(x, tuple(declared.batch_shape), declared.name)
        for layer in self._sequence:
            x = layer(x, training=training) if training is not None and _takes_training(layer) else layer(x)
        return x


def _known_input_shape(model):
    """A model's declared input shape (batch first), or None where it declares none."""
    try:
        shape = model.input_shape
    except (AttributeError, ValueError, TypeError):
        return None
    if not isinstance(shape, tuple) or not all(d is None or isinstance(d, int) for d in shape):
        return None  # several inputs: Keras does not build from them either
    return shape
