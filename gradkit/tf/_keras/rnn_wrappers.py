"""``tf.keras.layers.Bidirectional`` and ``TimeDistributed``: Keras 3's layer wrappers.

``Bidirectional(layer, merge_mode='concat', backward_layer=None)`` runs a recurrent layer
forwards and a copy of it backwards (made from its config, with ``go_backwards=True``, named
``forward_<name>`` and ``backward_<name>`` as Keras names them, fresh weights each) and merges
the two outputs by ``merge_mode``: 'concat' (the last axis), 'sum', 'mul', 'ave', or None (the
two outputs as a list). With ``return_sequences`` the backward output is flipped back to the
forward time order, and both layers give zeros at masked steps (Keras sets their
``zero_output_for_mask`` to ``return_sequences``). With ``return_state`` the call returns the
output, then the forward states, then the backward ones; ``initial_state`` is split in two
halves the same way.

``TimeDistributed(layer)`` applies ``layer`` to every time step (axis 1) of its input, as
Keras does: one call of ``layer.call`` per step, so a layer with batch statistics sees each
step on its own.

>>> import gradkit.tf as tf
>>> gru = tf.keras.layers.GRU(3, return_sequences=True, name="gru")
>>> bi = tf.keras.layers.Bidirectional(gru, merge_mode="sum")
>>> bi(tf.ones([2, 4, 5])).shape, [layer.name for layer in (bi.forward_layer, bi.backward_layer)]
((2, 4, 3), ['forward_gru', 'backward_gru'])
>>> tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))(tf.ones([2, 4, 5])).shape
(2, 4, 2)
"""

from __future__ import annotations

import inspect

import gradkit.numpy as gnp
from gradkit import _errors
from gradkit.nn.layer import unique_name

from .. import _name_scope
from .._convert import wrap
from . import base_layer, layer_args, layer_config, masking
from .keras_object_serialization import deserialize_keras_object, serialize_keras_object
from .layer_wrapper import Wrapper
from .layers import _KerasLayer

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy(layer, **changes):
    """A fresh copy of ``layer`` from its config, as Keras makes one (built, with new weights,
    where ``layer`` was built: its build_config comes along)."""
    serialized = serialize_keras_object(layer)
    serialized["config"].update(changes)
    try:
        return deserialize_keras_object(serialized, custom_objects={type(layer).__name__: type(layer)})
    except (_errors.GradkitTypeError, _errors.GradkitValueError) as error:  # a class it cannot locate, a bad config
        raise _errors.GradkitTypeError(
            f"tf.keras.layers.Bidirectional makes its forward and backward layers from the config of "
            f"{type(layer).__name__} '{layer.name}', as Keras does, and could not remake it: {error} Keras fails "
            "here too for a class it cannot find by name (such as a cell written in your code). Wrap "
            "tf.keras.layers.SimpleRNNCell, LSTMCell or GRUCell, or run two RNN layers yourself (one with "
            "go_backwards=True) and merge their outputs."
        ) from None


def _takes(call, name: str) -> bool:
    """Whether ``call`` has a parameter ``name`` (Keras passes ``mask`` only to a call that takes it)."""
    try:
        return name in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False


def _without_prefix(name: str, prefix: str) -> str:
    return name[len(prefix) :] if name.startswith(prefix) else name


def _check_layer(layer, arg: str, what: str) -> None:
    if not isinstance(layer, base_layer.Layer):
        raise _errors.GradkitValueError(
            f"{what} takes a tf.keras.layers.Layer instance as {arg}, as Keras does, but got {layer!r}. Pass a "
            "layer, e.g. tf.keras.layers.LSTM(units)."
        )


class Bidirectional(_KerasLayer, base_layer.Layer):
    """``tf.keras.layers.Bidirectional(layer, merge_mode='concat', weights=None,
    backward_layer=None)``; see the module docstring."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, name=None, **kwargs):
        what = "tf.keras.layers.Bidirectional"
        layer_args.refuse_unimplemented(
            what,
            "layer, merge_mode, backward_layer, name and trainable (set weights with set_weights)",
            weights=weights,
        )
        _check_layer(layer, "layer", what)
        if backward_layer is not None:
            _check_layer(backward_layer, "backward_layer", what)
        if merge_mode not in _MERGE_MODES:
            raise _errors.GradkitValueError(
                f"{what}: merge_mode={merge_mode!r}; Keras takes one of 'sum', 'mul', 'ave', 'concat' or None."
            )
        for attribute in ("go_backwards", "return_sequences", "return_state"):
            if not hasattr(layer, attribute):
                raise _errors.GradkitTypeError(
                    f"{what} wraps a recurrent layer (one with {attribute}), such as tf.keras.layers.LSTM or RNN, "
                    f"but got {type(layer).__name__}."
                )
        trainable = kwargs.pop("trainable", True)
        shape_args = layer_args.base_options(what, kwargs)
        super().__init__(
            name=name if name is not None else unique_name("bidirectional"), trainable=trainable, **shape_args
        )
        self.forward_layer = _copy(layer, name=f"forward_{_without_prefix(layer.name, 'forward_')}")
        if backward_layer is None:
            backward_layer = _copy(
                layer, go_backwards=True, name=f"backward_{_without_prefix(layer.name, 'backward_')}"
            )
        self.backward_layer = backward_layer
        self._verify(what)
        for sub in (self.forward_layer, self.backward_layer):
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = sub.return_sequences  # as Keras sets it
        self.merge_mode = merge_mode
        self.stateful = bool(getattr(layer, "stateful", False))
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state

    def _verify(self, what: str) -> None:
        forward, backward = self.forward_layer, self.backward_layer
        if forward.go_backwards == backward.go_backwards:
            raise _errors.GradkitValueError(
                f"{what}: the forward and backward layers have the same go_backwards ({forward.go_backwards}); Keras "
                "requires them to differ. Make the backward layer with go_backwards=True."
            )
        for attribute in ("return_sequences", "return_state"):
            if getattr(forward, attribute) != getattr(backward, attribute):
                raise _errors.GradkitValueError(
                    f"{what}: the forward layer has {attribute}={getattr(forward, attribute)} but the backward layer "
                    f"{getattr(backward, attribute)}; Keras requires them equal."
                )

    def build(self, sequences_shape, initial_state_shape=None) -> None:
        # The two layers' weights are named under this one's ('bidirectional/forward_gru/...').
        with _name_scope.name_scope(self.name):
            for layer in (self.forward_layer, self.backward_layer):
                if not layer.built:
                    layer.build(sequences_shape)
                    layer.built = True

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        output_shape = self.forward_layer.compute_output_shape(sequences_shape)
        state_shape = ()
        if self.return_state:
            output_shape, state_shape = output_shape[0], tuple(output_shape[1:])
        if self.merge_mode == "concat":
            output_shape = (*tuple(output_shape)[:-1], output_shape[-1] * 2)
        elif self.merge_mode is None:
            output_shape = [tuple(output_shape), tuple(output_shape)]
        if self.return_state:
            head = tuple(output_shape) if self.merge_mode is None else (tuple(output_shape),)
            return head + state_shape + state_shape
        return tuple(output_shape)

    def compute_mask(self, inputs, mask=None):
        return masking.recurrent_output_mask(self, mask)

    def reset_state(self) -> None:
        """Keras': both layers' states back to zeros; only for a stateful layer."""
        if not self.stateful:
            raise _errors.GradkitAttributeError(
                f"{self.name}.reset_state(): the layer must be stateful, as in Keras; wrap a layer made with "
                "stateful=True."
            )
        for layer in (self.forward_layer, self.backward_layer):
            layer.reset_state()

    reset_states = reset_state  # Keras' older name

    @property
    def states(self):
        """Keras': the forward layer's states, then the backward layer's (None unless stateful and built)."""
        if not (getattr(self.forward_layer, "states", None) and getattr(self.backward_layer, "states", None)):
            return None
        return (*self.forward_layer.states, *self.backward_layer.states)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs = {"training": training}
        if mask is not None and _takes(self.forward_layer.call, "mask"):
            kwargs["mask"] = mask
        forward_state = backward_state = None
        if initial_state is not None:
            initial_state = list(initial_state)
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **kwargs)
        states = ()
        if self.return_state:
            states = (*y[1:], *y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = gnp.flip(y_rev, axis=1)
        if self.merge_mode == "concat":
            output = gnp.concatenate([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            return [*output, *states] if self.merge_mode is None else [wrap(output), *states]
        return output if self.merge_mode is None else wrap(output)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            merge_mode=self.merge_mode,
            layer=serialize_keras_object(self.forward_layer),  # with their build_configs, as Keras writes them
            backward_layer=serialize_keras_object(self.backward_layer),
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config["layer"])
        if config.get("backward_layer") is not None:
            config["backward_layer"] = deserialize_keras_object(config["backward_layer"])
        return layer_config.from_config(cls, config)


class TimeDistributed(_KerasLayer, Wrapper):
    """``tf.keras.layers.TimeDistributed(layer)``: ``layer`` applied to each time step (axis 1)
    of a ``(batch, timesteps, ...)`` input; see the module docstring."""

    def __init__(self, layer, name=None, trainable=True, **kwargs):
        what = "tf.keras.layers.TimeDistributed"
        _check_layer(layer, "layer", what)
        shape_args = layer_args.base_options(what, kwargs)
        super().__init__(
            layer, name=name if name is not None else unique_name("time_distributed"), trainable=trainable, **shape_args
        )

    def _child_shape(self, input_shape) -> tuple:
        shape = tuple(input_shape)
        if len(shape) < 3:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.TimeDistributed '{self.name}' takes inputs of rank 3 or more ((batch, timesteps, "
                f"...)), as Keras does, but got shape {shape}."
            )
        return (shape[0], *shape[2:])

    def build(self, input_shape) -> None:
        # The wrapped layer's weights are named under this one's ('time_distributed/dense/kernel').
        if not self.layer.built:
            with _name_scope.name_scope(self.name):
                self.layer.build(self._child_shape(input_shape))
                self.layer.built = True

    def compute_output_shape(self, input_shape):
        child = tuple(self.layer.compute_output_shape(self._child_shape(input_shape)))
        return (child[0], tuple(input_shape)[1], *child[1:])

    def call(self, inputs, training=None, mask=None):
        self._child_shape(inputs.shape)
        if mask is not None and (len(mask.shape) < 2 or tuple(mask.shape[:2]) != tuple(inputs.shape[:2])):
            raise _errors.GradkitValueError(
                f"tf.keras.layers.TimeDistributed '{self.name}': the mask has shape {tuple(mask.shape)}, which does "
                f"not start with the input's (batch, timesteps) {tuple(inputs.shape[:2])}, as Keras requires."
            )
        call = self.layer.call
        kwargs = {}
        if type(self.layer)._keras_training is not base_layer._NO_TRAINING:
            kwargs["training"] = training
        takes_mask = _takes(call, "mask")
        outputs = []
        for t in range(inputs.shape[1]):
            step_kwargs = dict(kwargs, mask=mask[:, t]) if takes_mask and mask is not None else kwargs
            outputs.append(wrap(call(inputs[:, t], **step_kwargs)))
        return gnp.stack(outputs, axis=1)

    def get_config(self) -> dict:
        # As Keras: the inner layer with its build_config, so one made from the config is built.
        return {**super().get_config(), "layer": serialize_keras_object(self.layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config["layer"])
        return layer_config.from_config(cls, config)
