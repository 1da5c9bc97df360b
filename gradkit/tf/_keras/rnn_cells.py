"""``tf.keras.layers.SimpleRNNCell``, ``LSTMCell``, ``GRUCell`` and ``StackedRNNCells``: Keras 3's
recurrent cells, one time step each, on the step functions of ``recurrent_layers.py``.

A cell is called as ``cell(inputs, states)`` with ``inputs`` ``(batch, features)`` and
``states`` a list of ``(batch, units)`` tensors (LSTM: ``[h, c]``), and returns
``(output, new_states)``, as in Keras; a one-state cell called with a single tensor gives back a
single tensor. A call is one recorded op. The weights are the recurrent layers' (``kernel``,
``recurrent_kernel``, ``bias``, gates in Keras' order), so a cell takes a Keras cell's
``get_weights()``. With ``dropout`` / ``recurrent_dropout`` a training call applies the masks the
cell keeps until ``reset_dropout_mask()`` / ``reset_recurrent_dropout_mask()``, as Keras' cells
do (see ``rnn_cell_dropout``). ``StackedRNNCells(cells)`` runs its cells one after the other within a step
(each cell's output is the next one's input); its states are one entry per cell.
``tf.keras.layers.RNN`` (``rnn_layer.py``) runs a cell over a sequence.

>>> import gradkit.tf as tf
>>> cell = tf.keras.layers.LSTMCell(3, name="lstm_cell")
>>> h, (h2, c) = cell(tf.ones([2, 4]), [tf.zeros([2, 3]), tf.zeros([2, 3])])
>>> h.shape, cell.state_size, [w.name for w in cell.weights]
((2, 3), [3, 3], ['lstm_cell/kernel:0', 'lstm_cell/recurrent_kernel:0', 'lstm_cell/bias:0'])
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor
from gradkit.nn.layer import Layer, unique_name

from .. import _array, _name_scope
from .._convert import convert, wrap
from . import (
    base_layer,
    keras_random,
    layer_args,
    layer_config,
    layer_regularization,
    recurrent_layers,
    rnn_cell_dropout,
    rnn_dropout,
)
from .keras_object_serialization import deserialize_keras_object, serialize_keras_object
from .layers import _KerasLayer


def stack_step(x, states, params, masks, specs):
    """One time step of built-in cells one after the other: ``(output, new states per cell)``.

    ``params`` holds each cell's ``(kernel, recurrent_kernel, bias)``, ``specs`` each cell's
    ``(kind, activation, recurrent_activation, reset_after)``, ``states`` each cell's states and
    ``masks`` each cell's dropout masks ``(input masks, state masks)`` (see ``rnn_dropout``)."""
    new_states = []
    for (kernel, recurrent_kernel, bias), spec, s, (input_masks, state_masks) in zip(params, specs, states, masks):
        kind, activation, recurrent_activation, reset_after = spec
        gates = kernel.shape[-1] // recurrent_kernel.shape[0]
        x_proj = rnn_dropout.project(x, kernel, input_masks, gates)
        step = recurrent_layers._STEPS[kind]
        s, x = step(
            tuple(s), x_proj, recurrent_kernel, bias, activation, recurrent_activation, reset_after, state_masks
        )
        new_states.append(s)
    return x, tuple(new_states)


_stack_step_op = lift(stack_step)


def _nested(states) -> bool:
    return isinstance(states, (list, tuple))


class _Cell(rnn_cell_dropout.DropoutRNNCell, _KerasLayer, Layer):
    """The shared part of SimpleRNNCell, LSTMCell and GRUCell."""

    kind = ""
    gates = 1
    n_states = 1
    default_name = ""

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = f"tf.keras.layers.{type(self).__name__}"
        dropout = rnn_dropout.clamped_rate(dropout, "dropout", what)
        recurrent_dropout = rnn_dropout.clamped_rate(recurrent_dropout, "recurrent_dropout", what)
        # GRU's and LSTM's two ways of computing the gates give the same results; with
        # implementation 1 (forced by recurrent_dropout, as in Keras) a cell keeps one mask per gate.
        implementation = 1 if recurrent_dropout != 0.0 else kwargs.pop("implementation", 2)
        kwargs.pop("implementation", None)
        if kwargs.pop("activity_regularizer", None) is not None:
            raise _errors.GradkitNotImplementedError(
                f"{what} got activity_regularizer=, which gradkit.tf does not implement for a cell: Keras adds a "
                "penalty for each output at each time step, repeated for the state outputs. Leave it out and put "
                "activity_regularizer= on the recurrent layer (tf.keras.layers.LSTM, ...) or add the penalty with "
                "add_loss."
            )
        shape_args = layer_args.base_options(what, kwargs)
        layer_args.check_initializers(
            what,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
        )
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise _errors.GradkitValueError(f"{what}: units={units!r}; Keras takes a positive int here.")
        super().__init__(
            name=name if name is not None else unique_name(self.default_name), trainable=trainable, **shape_args
        )
        self.units = units
        self.activation = recurrent_layers._activation(activation, what)
        self.recurrent_activation = recurrent_layers._activation(recurrent_activation, what)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        layer_regularization.keep_options(
            self,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
        )
        self.dropout = dropout
        self.recurrent_dropout = recurrent_dropout
        self.implementation = implementation
        if implementation == 1 and self.gates > 1:
            self.dropout_mask_count = self.gates  # Keras' attribute, set only where a mask is per gate
        self.seed = seed
        keras_random.own_generator(self, seed)
        self.kernel = self.recurrent_kernel = self.bias = None

    # The recurrent layers' config form of the activations, bias shape and bias initializer
    # (GRUCell's and LSTMCell's are GRU's and LSTM's).
    _keras_config_values = recurrent_layers._RNN._keras_config_values
    _bias_shape = recurrent_layers._RNN._bias_shape
    _bias_initializer = recurrent_layers._RNN._bias_initializer

    def _what(self) -> str:
        return f"tf.keras.layers.{type(self).__name__} '{self.name}'"

    @property
    def state_size(self):
        """Keras': ``units``, or ``[units, units]`` for LSTMCell."""
        return [self.units] * self.n_states if self.n_states > 1 else self.units

    @property
    def output_size(self) -> int:
        return self.units

    def build(self, input_shape) -> None:
        layer_args.check_rank(input_shape, 2, "(batch, features)", self._what())
        width = self.gates * self.units
        self.kernel = self.add_weight("kernel", (input_shape[-1], width), self.kernel_initializer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, width), self.recurrent_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), self._bias_initializer())
        layer_regularization.attach_to_weights(self, "kernel", "recurrent_kernel", "bias")

    def get_initial_state(self, batch_size=None) -> list:
        """Keras 3's zero states: a list of ``(batch_size, units)`` zeros (LSTMCell: ``[h, c]``)."""
        zeros = Tensor.concrete(jnp.zeros((int(batch_size), self.units), jnp.float32))
        return [zeros] * self.n_states

    def _spec(self) -> tuple:
        return (self.kind, self.activation, self.recurrent_activation, getattr(self, "reset_after", False))

    def _params(self) -> tuple:
        return (self.kernel.value, self.recurrent_kernel.value, None if self.bias is None else self.bias.value)

    def check_states(self, states, batch) -> list:
        """The states as a list of float32 tensors, checked against the cell's state sizes."""
        states = [wrap(convert(s)) for s in (states if _nested(states) else [states])]
        if len(states) != self.n_states or any(tuple(s.shape) != (batch, self.units) for s in states):
            raise _errors.GradkitValueError(
                f"{self._what()} got states of shapes {[tuple(s.shape) for s in states]}; it takes a list of "
                f"{self.n_states} state(s) of shape {(batch, self.units)} (batch, units), as Keras does."
            )
        return [_array.cast(s, "float32") if s.dtype != jnp.float32 else s for s in states]

    def check_inputs(self, inputs):
        """``inputs`` as floats (integers in float32, as in Keras), or an error where they are not
        ``(batch, features)`` of the width the cell was built for."""
        layer_args.check_rank(inputs.shape, 2, "(batch, features)", self._what())
        if inputs.shape[-1] != self.kernel.shape[0]:
            raise _errors.GradkitValueError(
                f"{self._what()} was built for {self.kernel.shape[0]} features (last axis), but got shape "
                f"{tuple(inputs.shape)}. Pass {self.kernel.shape[0]} features, or use a new cell."
            )
        return layer_args.float_input(inputs)

    def call(self, inputs, states, training=False):
        inputs = self.check_inputs(inputs)
        checked = self.check_states(states, inputs.shape[0])
        masks = rnn_cell_dropout.call_masks(self, tuple(inputs.shape), training)
        output, (new_states,) = _stack_step_op(inputs, [checked], [self._params()], [masks], specs=(self._spec(),))
        new_states = list(new_states)
        return output, new_states if _nested(states) or self.n_states > 1 else new_states[0]


class SimpleRNNCell(_Cell):
    """``tf.keras.layers.SimpleRNNCell(units, activation='tanh', use_bias=True,
    kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
    bias_initializer='zeros')``: ``h = activation(x @ kernel + h_prev @ recurrent_kernel + bias)``."""

    kind = "simple_rnn"
    default_name = "simple_rnn_cell"

    def __init__(self, units, activation="tanh", **kwargs):
        if "recurrent_activation" in kwargs:
            raise _errors.GradkitValueError(
                "tf.keras.layers.SimpleRNNCell got recurrent_activation=, which it does not take (as in Keras): it "
                "has one activation. Leave it out."
            )
        super().__init__(units, activation=activation, **kwargs)


class GRUCell(_Cell):
    """``tf.keras.layers.GRUCell(units, activation='tanh', recurrent_activation='sigmoid', ...,
    reset_after=True)``: one step of Keras 3's GRU (bias ``(2, 3 * units)`` with ``reset_after``)."""

    kind = "gru"
    gates = 3
    default_name = "gru_cell"

    def __init__(self, units, reset_after=True, **kwargs):
        self.reset_after = bool(reset_after)
        super().__init__(units, **kwargs)

    _bias_shape = recurrent_layers.GRU._bias_shape


class LSTMCell(_Cell):
    """``tf.keras.layers.LSTMCell(units, activation='tanh', recurrent_activation='sigmoid', ...,
    unit_forget_bias=True)``: one step of Keras 3's LSTM; states ``[h, c]``."""

    kind = "lstm"
    gates = 4
    n_states = 2
    default_name = "lstm_cell"

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        self.unit_forget_bias = bool(unit_forget_bias)
        super().__init__(units, **kwargs)

    _bias_initializer = recurrent_layers.LSTM._bias_initializer


def _output_size(cell) -> int:
    """Keras': the cell's ``output_size``, else its (first) state size."""
    size = getattr(cell, "output_size", None)
    if size is not None:
        return size
    state_size = cell.state_size
    return state_size[0] if isinstance(state_size, (list, tuple)) else state_size


def check_cell(cell, what: str) -> None:
    """Keras' test of a cell: it has a ``call`` method and a ``state_size``."""
    for attribute, wanted in (("call", "a call(inputs, states) method"), ("state_size", "a state_size attribute")):
        if attribute not in dir(cell):
            raise _errors.GradkitValueError(
                f"{what} got the cell {cell!r}, which has no {attribute}; a cell needs {wanted} (an int, or a list "
                "of ints, one per state), as in Keras. Write a tf.keras.layers.Layer subclass with both, or use "
                "tf.keras.layers.SimpleRNNCell, LSTMCell or GRUCell."
            )


def builtin(cell) -> bool:
    """Whether ``cell`` is gradkit.tf's own cell (or a stack of them) as it is, whose steps run in
    one ``lax.scan``; a subclass that writes its own ``call`` runs step by step."""
    if isinstance(cell, StackedRNNCells):
        return type(cell).call is StackedRNNCells.call and all(builtin(c) for c in cell.cells)
    return isinstance(cell, _Cell) and type(cell).call is _Cell.call


def stack_masks(cells, batch: int, training) -> list:
    """Each built-in cell's dropout masks for a call on a batch of ``batch`` (see
    ``rnn_cell_dropout``): a cell's inputs are the previous cell's outputs."""
    return [rnn_cell_dropout.call_masks(cell, (batch, cell.kernel.shape[0]), training) for cell in cells]


def reset_dropout_masks(cell) -> None:
    """Keras' RNN layer at the end of a call: the masks ``cell`` (each cell of a stack) keeps are
    reset, so the next call draws new ones."""
    if isinstance(cell, StackedRNNCells):
        for inner in cell.cells:
            reset_dropout_masks(inner)
    elif isinstance(cell, rnn_cell_dropout.DropoutRNNCell):
        cell.reset_dropout_mask()
        cell.reset_recurrent_dropout_mask()


class StackedRNNCells(_KerasLayer, Layer):
    """``tf.keras.layers.StackedRNNCells(cells)``: the cells run one after the other within a
    step; ``state_size`` is one entry per cell, ``output_size`` the last cell's.

    >>> import gradkit.tf as tf
    >>> stack = tf.keras.layers.StackedRNNCells([tf.keras.layers.SimpleRNNCell(4), tf.keras.layers.GRUCell(2)])
    >>> out, states = stack(tf.ones([3, 5]), stack.get_initial_state(3))
    >>> out.shape, stack.state_size, [len(s) for s in states]
    ((3, 2), [4, 2], [1, 1])
    """

    def __init__(self, cells, name=None, trainable=True, **kwargs):
        what = "tf.keras.layers.StackedRNNCells"
        shape_args = layer_args.base_options(what, kwargs)
        cells = list(cells)
        for cell in cells:
            check_cell(cell, what)
        super().__init__(
            name=name if name is not None else unique_name("stacked_rnn_cells"), trainable=trainable, **shape_args
        )
        self.cells = cells

    @property
    def state_size(self) -> list:
        return [c.state_size for c in self.cells]

    @property
    def output_size(self) -> int:
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None) -> list:
        states = []
        for cell in self.cells:
            if hasattr(cell, "get_initial_state"):
                states.append(cell.get_initial_state(batch_size=batch_size))
            else:
                sizes = cell.state_size if isinstance(cell.state_size, (list, tuple)) else [cell.state_size]
                zeros = [Tensor.concrete(jnp.zeros((int(batch_size), d), jnp.float32)) for d in sizes]
                states.append(zeros if isinstance(cell.state_size, (list, tuple)) else zeros[0])
        return states

    def build(self, input_shape) -> None:
        # The cells' weights are named under the stack's, as Keras' paths are ('stacked_rnn_cells/gru_cell/...').
        with _name_scope.name_scope(self.name):
            for cell in self.cells:
                if isinstance(cell, Layer) and not cell.built:
                    cell.build(tuple(input_shape))
                    cell.built = True
                input_shape = (tuple(input_shape)[0], _output_size(cell))

    def call(self, inputs, states, training=False):
        if not _nested(states) or len(states) != len(self.cells):
            raise _errors.GradkitValueError(
                f"tf.keras.layers.StackedRNNCells '{self.name}' got {len(states) if _nested(states) else 1} "
                f"state entries for its {len(self.cells)} cells; it takes one entry per cell (a list of that cell's "
                "states), as Keras does: stack.get_initial_state(batch_size) gives them."
            )
        if builtin(self):
            inputs = self.cells[0].check_inputs(inputs)
            checked = [cell.check_states(s, inputs.shape[0]) for cell, s in zip(self.cells, states)]
            params = [cell._params() for cell in self.cells]
            masks = stack_masks(self.cells, inputs.shape[0], training)
            specs = tuple(cell._spec() for cell in self.cells)
            output, new = _stack_step_op(inputs, checked, params, masks, specs=specs)
            new_states = [list(n) if _nested(s) else n[0] for n, s in zip(new, states)]
            return output, new_states
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            as_list = list(cell_states) if _nested(cell_states) else [cell_states]
            # A Keras layer's call that takes no `training` is called without it (Layer.__call__).
            kwargs = {"training": training} if isinstance(cell, base_layer.Layer) else {}
            inputs, cell_states_out = cell(inputs, as_list, **kwargs)
            cell_states_out = list(cell_states_out) if _nested(cell_states_out) else [cell_states_out]
            new_states.append(
                cell_states_out[0] if len(cell_states_out) == 1 and not _nested(cell_states) else cell_states_out
            )
        return inputs, new_states

    def get_config(self) -> dict:
        config = super().get_config()
        return {**config, "cells": [serialize_keras_object(cell) for cell in self.cells]}  # with build_config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["cells"] = [deserialize_keras_object(c) for c in config["cells"]]
        return layer_config.from_config(cls, config)


_CELL_TAIL = (
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "dropout",
    "recurrent_dropout",
)
_CELL_INITIALIZERS = ("kernel_initializer", "recurrent_initializer", "bias_initializer")
layer_config.BUILTIN.update(
    SimpleRNNCell=("units", "activation", "use_bias", *_CELL_INITIALIZERS, *_CELL_TAIL, "seed"),
    LSTMCell=(
        "units",
        "activation",
        "recurrent_activation",
        "use_bias",
        "unit_forget_bias",
        *_CELL_INITIALIZERS,
        *_CELL_TAIL,
        "seed",
    ),
    GRUCell=(
        "units",
        "activation",
        "recurrent_activation",
        "use_bias",
        *_CELL_INITIALIZERS,
        *_CELL_TAIL,
        "reset_after",
        "seed",
    ),
)
