"""``tf.keras.Model``: a Layer that holds layers, trained by a custom loop or by Keras' own.

Subclass it, make the layers in ``__init__`` and write ``call(self, x, training=False)``;
train it with ``tf.GradientTape`` over ``model.trainable_variables`` and
``optimizer.apply_gradients``, inside a ``tf.function`` if you like (it compiles once for
same-shaped steps), or with Keras' ``compile``/``fit``/``evaluate``/``predict`` on arrays
(``training.py``; override ``train_step`` to customize a step). ``tf.keras.Model(inputs,
outputs)`` makes a functional model (``Functional`` below, ``functional.py``). ``save_weights`` and
``load_weights`` read and write Keras' ``.weights.h5`` files (``weights_h5.py``); ``save("m.keras")``
and ``tf.keras.models.load_model`` write and read Keras 3's whole-model ``.keras`` archive
(``saving_archive.py``); a subclassed model needs ``get_config`` and ``register_keras_serializable``
to be loaded, as in Keras.

>>> import gradkit.tf as tf
>>> class MyModel(tf.keras.Model):
...     def __init__(self):
...         super().__init__()
...         self.flatten = tf.keras.layers.Flatten()
...         self.d1 = tf.keras.layers.Dense(4, activation="relu")
...         self.dropout = tf.keras.layers.Dropout(0.5)
...         self.d2 = tf.keras.layers.Dense(2)
...     def call(self, x, training=False):
...         return self.d2(self.dropout(self.d1(self.flatten(x)), training=training))
>>> model = MyModel()
>>> model(tf.ones([3, 2, 2])).shape, [tuple(v.shape) for v in model.trainable_variables]
((3, 2), [(4, 4), (4,), (4, 2), (2,)])
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .. import _distribute
from . import functional, layer_config, model_summary
from .base_layer import Layer
from .training import Trainer


def _keras_export_only(method: str):
    def refuse(self, *args, **kwargs):
        raise _errors.GradkitTypeError(
            f"tf.keras.Model.{method} is Keras' SavedModel export, which gradkit.tf does not implement. "
            "Save the whole model with model.save('model.keras') (Keras 3's archive), or its weights with "
            "model.save_weights('model.weights.h5')."
        )

    refuse.__name__ = method
    return refuse


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """``tf.keras.models.load_model``: the model in a Keras 3 ``.keras`` archive (``saving_archive.py``)."""
    from . import saving_archive

    return saving_archive.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def model_from_json(json_string, custom_objects=None):
    """``tf.keras.models.model_from_json``: the model ``model.to_json()`` (gradkit's or Keras')
    describes, built, with fresh weights (``model_json.py``)."""
    from . import model_json

    return model_json.model_from_json(json_string, custom_objects=custom_objects)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """``tf.keras.models.save_model``: ``model`` as a Keras 3 ``.keras`` archive (``saving_archive.py``)."""
    from . import saving_archive

    saving_archive.save_model(model, filepath, overwrite=overwrite, zipped=zipped, **kwargs)


class Model(Trainer, Layer):
    """``tf.keras.Model(name=None, trainable=True)`` for subclassing; see the module docstring."""

    def __new__(cls, *args, **kwargs):
        # tf.keras.Model(inputs, outputs) is Keras' functional model, as Keras returns one.
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            cls = Functional  # whose constructor says what is wrong with arguments that are not Keras tensors
        model = super().__new__(cls, *args, **kwargs)
        # A model belongs to the strategy whose scope it is made in, as Keras records it.
        model.__dict__["_distribute_strategy"] = _distribute.creating_strategy()
        return model

    @property
    def distribute_strategy(self):
        """The ``tf.distribute`` strategy the model was made under, else the current one."""
        return self.__dict__.get("_distribute_strategy") or _distribute.get_strategy()

    def __init__(self, *args, **kwargs):
        if _functional_arguments(args, kwargs):
            # A subclass given inputs and outputs (CustomModel(inputs, outputs), or
            # super().__init__(inputs=..., outputs=...) in its __init__): as Keras does, the model
            # becomes a functional one of its class, keeping its own methods (train_step, ...).
            self.__class__ = _functional_subclass(type(self))
            Functional.__init__(self, *args, **kwargs)
            return
        if args and args[0] is self:
            raise _errors.GradkitTypeError(
                f"{type(self).__name__}.__init__ called super().__init__(self, ...): super() already passes the "
                "model, so tf.keras.Model.__init__ got it twice (Keras: 'Layer.__init__() takes 1 positional "
                "argument but 2 were given'). Write super().__init__() (with name= or trainable= if needed)."
            )
        if args:
            raise _errors.GradkitTypeError(
                f"{type(self).__name__}.__init__ passed positional arguments {_short(args)} to "
                "tf.keras.Model.__init__, which takes only name= and trainable= for a subclass that writes "
                "call(); a functional model is made by tf.keras.Model(inputs, outputs) or "
                f"{type(self).__name__}(inputs, outputs) with Keras tensors from tf.keras.Input."
            )
        super().__init__(**kwargs)

    _keras_masking = True  # its layers attach their masks to its output themselves

    def compute_mask(self, inputs, previous_mask=None):
        """None: the masks of the model's outputs are those its layers attached."""
        return None

    @property
    def layers(self) -> list:
        """The model's direct sublayers, in the order they were assigned."""
        return self._keras_layers()

    def build(self, input_shape) -> None:
        """Make the weights by calling the model once on zeros of ``input_shape`` (a ``None``
        dimension taken as 1), with ``training=False``, as Keras builds a subclassed model."""
        # Sequential's get_config reports it: the shape given to build, else the first input's.
        if self.__dict__.get("_keras_building_in_call"):
            self.__dict__.setdefault("_keras_build_input_shape", tuple(input_shape))
            return  # the first call builds the layers as it runs
        self.__dict__["_keras_build_input_shape"] = tuple(input_shape)
        shape = tuple(1 if d is None else int(d) for d in input_shape)
        with functional.symbolic_run(unknown_batch=not input_shape or input_shape[0] is None):
            self(Tensor.concrete(jax.numpy.zeros(shape, np.float32)), training=False)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Keras': a functional model's config (``layers``, ``input_layers``, ``output_layers``) makes
        a functional model again (fresh weights; classes of your own from ``custom_objects`` or the
        registry); any other config gives the class's constructor arguments."""
        if {"layers", "input_layers", "output_layers"} <= set(config) and (
            cls is Model or issubclass(cls, Functional) or _functional_like(cls)
        ):
            from . import functional_config

            return functional_config.from_config(Functional if cls is Model else cls, dict(config), custom_objects)
        return super().from_config(config)

    def get_layer(self, name=None, index=None):
        """Keras': the sublayer called ``name``, or the one at ``index`` in ``layers``."""
        if index is not None and name is not None:
            raise _errors.GradkitValueError(
                f"Provide only a layer name or a layer index. Received: index={index}, name={name}."
            )
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise _errors.GradkitValueError(
                    f"Was asked to retrieve layer at index {index} but model only has {len(layers)} layers."
                )
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise _errors.GradkitValueError(
                f"No such layer: {name}. Existing layers are: {[layer.name for layer in layers]}."
            )
        raise _errors.GradkitValueError("Provide either a layer name or layer index at `get_layer`.")

    def summary(
        self,
        line_length=None,
        positions=None,
        print_fn=None,
        expand_nested=False,
        show_trainable=False,
        layer_range=None,
    ):
        """Keras' table of the model's layers and parameter totals (``model_summary.py``)."""
        model_summary.print_summary(self, line_length, positions, print_fn, expand_nested, show_trainable, layer_range)

    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Keras 3's ``save_weights``: the weights in a ``.weights.h5`` file, in Keras' layout (real
        Keras reads it), a compiled model's optimizer state too, as Keras writes it; needs h5py.
        See ``weights_h5.py``."""
        from . import weights_h5

        weights_h5.save_weights(self, filepath, overwrite, max_shard_size)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        """Keras 3's ``load_weights`` of a ``.weights.h5`` file (one real Keras wrote too), every
        weight checked before any is written; needs h5py."""
        from . import weights_h5

        weights_h5.load_weights(self, filepath, skip_mismatch, **kwargs)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Keras 3's ``model.save("model.keras")``: the whole model as a ``.keras`` archive (its config,
        weights and optimizer state); see ``saving_archive.py``."""
        save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def to_json(self, **kwargs):
        """Keras 3's ``to_json``: the model's config (``serialize_keras_object``) as a JSON string,
        ``kwargs`` passed to ``json.dumps``; ``tf.keras.models.model_from_json`` reads it
        (``model_json.py``)."""
        from . import model_json

        return model_json.to_json(self, **kwargs)

    export = _keras_export_only("export")


def _functional_arguments(args, kwargs) -> bool:
    """Whether a model's constructor got Keras' functional arguments: ``inputs`` and ``outputs``,
    by keyword or as the first two positional arguments made of Keras tensors."""
    if "inputs" in kwargs or "outputs" in kwargs:
        return True
    if len(args) < 2:
        return False
    leaves = jax.tree_util.tree_leaves(args[:2], is_leaf=lambda x: isinstance(x, functional.KerasTensor))
    return bool(leaves) and all(isinstance(x, functional.KerasTensor) for x in leaves)


def _short(args) -> str:
    text = repr(args)
    return text if len(text) <= 80 else text[:77] + "..."


_FUNCTIONAL_SUBCLASSES: dict = {}


def _functional_subclass(cls):
    """``cls`` (a subclass of tf.keras.Model) as a functional model, as Keras makes
    ``CustomModel(inputs, outputs)``: its own methods (``train_step``, ...) over ``Functional``'s
    graph. One class per ``cls``, named as ``cls``."""
    made = _FUNCTIONAL_SUBCLASSES.get(cls)
    if made is None:
        made = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
        made._keras_functional_of = cls
        _FUNCTIONAL_SUBCLASSES[cls] = made
    return made


class Functional(Model):
    """``tf.keras.Model(inputs, outputs, name=None, trainable=True)``: Keras' functional model,
    the layers recorded between ``inputs`` and ``outputs`` (``functional.py``), run in the order
    they were called."""

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True):
        Layer.__init__(self, name=name, trainable=trainable)
        graph = functional.Graph(inputs, outputs)
        self.__dict__["_keras_graph"] = graph
        # The layers in Keras' order; held as an attribute, so the weights are theirs, in that order.
        layers = graph.layers()
        names = [layer.name for layer in layers]
        for name in names:
            if names.count(name) > 1:
                # Keras refuses it too: a saved model's weights are kept by layer name.
                raise _errors.GradkitValueError(
                    f'The name "{name}" is used {names.count(name)} times in the model. All operation names should '
                    "be unique (Keras raises ValueError). Give the layers distinct names."
                )
        self._functional_layers = layers
        self.built = True

    @property
    def layers(self) -> list:
        return list(self._functional_layers)

    # Keras 3's names: ``input``/``output`` are the structures given to the constructor,
    # ``inputs``/``outputs`` always flat lists of them (a dict's by sorted key).
    @property
    def input(self):
        return self._keras_graph.inputs

    @property
    def output(self):
        return self._keras_graph.outputs

    @property
    def inputs(self) -> list:
        return functional._leaves(self._keras_graph.inputs)

    @property
    def outputs(self) -> list:
        return functional._leaves(self._keras_graph.outputs)

    def get_build_config(self):
        """Keras': ``{"input_shape": None}``, as a functional model is built by its inputs."""
        return {"input_shape": None}

    @property
    def input_shape(self):
        """The inputs' shapes (batch first, None where unknown): one tuple for one input, else a list."""
        return _one_or_list([tuple(t.shape) for t in self.inputs])

    @property
    def output_shape(self):
        """The outputs' shapes, as ``input_shape`` gives the inputs'."""
        return _one_or_list([tuple(t.shape) for t in self.outputs])

    @property
    def output_names(self):
        """Keras': the names of the output layers, in the order of the flattened outputs (a dict's
        by sorted key)."""
        # An output that is a model input (no node made it) is named after its InputLayer.
        return [t._keras_input_layer.name if t._node is None else t._node.layer.name for t in self.outputs]

    def call(self, inputs, training=None, mask=None):
        out = self._keras_graph.run(inputs, self.name, training)
        if isinstance(out, (list, tuple)) and len(out) == 1 and not functional.running_symbolically():
            # Keras' unpack_singleton: Model(x, [y]) called on data gives y's tensor (on KerasTensors,
            # the list).
            return out[0]
        return out

    def compute_output_shape(self, input_shape):
        """The outputs' shapes for inputs of ``input_shape``: traced for a model of one input and one
        output; for others, the shapes the graph was built with."""
        one = isinstance(self.output, functional.KerasTensor) and len(self.inputs) == 1
        if one and isinstance(input_shape, (tuple, list)) and not isinstance(input_shape[0], (tuple, list)):
            return layer_config.traced_output_shape(self, input_shape)
        return jax.tree_util.tree_map(
            lambda t: t.shape, self.output, is_leaf=lambda t: isinstance(t, functional.KerasTensor)
        )

    def get_config(self):
        """Keras 3's config of the graph: its layers, their calls, the inputs and outputs
        (``functional_config.py``); for a subclass whose constructor takes other arguments (one that
        builds its graph in ``__init__``), the base config its constructor takes, as Keras writes it."""
        from . import functional_config

        if not _functional_like(getattr(type(self), "_keras_functional_of", type(self))):
            return Layer.get_config(self)
        return functional_config.get_config(self)


def _functional_like(cls) -> bool:
    """Keras' test of a model class that a functional config can make: its constructor takes
    ``Functional``'s arguments, or any (``*args, **kwargs``, as ``tf.keras.Model``'s own)."""
    import inspect

    try:
        spec = inspect.getfullargspec(cls.__init__)
    except TypeError:
        return False
    if spec.args[1:] == inspect.getfullargspec(Functional.__init__).args[1:]:
        return True
    return spec.varargs is not None and spec.varkw is not None


def _one_or_list(shapes: list):
    return shapes[0] if len(shapes) == 1 else shapes
