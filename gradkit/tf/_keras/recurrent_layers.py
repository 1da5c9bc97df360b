"""``tf.keras.layers.SimpleRNN``, ``GRU`` and ``LSTM``: Keras 3's recurrent layers, each call one
``jax.lax.scan`` recorded as one op, so a ``tf.function`` step compiles once and a tape
differentiates through the whole sequence.

The weights are Keras 3's: ``kernel`` ``(features, gates * units)``, ``recurrent_kernel``
``(units, gates * units)`` and ``bias`` with the gates in Keras' order (LSTM: input, forget,
cell, output; GRU: update, reset, candidate; GRU's bias is ``(2, 3 * units)`` with
``reset_after=True``: the input bias, then the recurrent one), so ``set_weights`` takes a Keras
layer's ``get_weights()``. A call takes ``initial_state=`` and ``mask=`` (``(batch, timesteps)``,
True at the steps to use): at a masked step the states stay as they were and the output is the
previous step's (zeros with ``zero_output_for_mask=True``), as in Keras.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.LSTM(5, return_sequences=True, return_state=True)
>>> out, h, c = layer(tf.ones([2, 3, 4]))
>>> out.shape, h.shape, [tuple(w.shape) for w in layer.weights]
((2, 3, 5), (2, 5), [(4, 20), (5, 20), (20,)])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor
from gradkit.nn.layer import Layer, unique_name

from .. import _array, _control
from .._convert import convert, wrap
from . import activations as _keras_activations
from . import (
    initializers,
    keras_random,
    layer_args,
    layer_config,
    layer_regularization,
    masking,
    rnn_dropout,
    rnn_state,
)
from .layers import _KerasLayer


def _hard_sigmoid(x):
    return jax.nn.relu6(x + 3.0) / 6.0  # Keras 3's hard_sigmoid


_ACTIVATIONS = {
    "tanh": jnp.tanh,
    "sigmoid": jax.nn.sigmoid,
    "relu": jax.nn.relu,
    "linear": lambda x: x,
    "hard_sigmoid": _hard_sigmoid,
    "elu": jax.nn.elu,
    "softplus": jax.nn.softplus,
    "softsign": jax.nn.soft_sign,
    "silu": jax.nn.silu,
    "swish": jax.nn.silu,
}


def _activation(name_or_fn, what: str):
    """An activation the scan calls on arrays: a Keras name, or a callable (a tf.nn or
    tf.keras.activations function, or your own over tf ops)."""
    if name_or_fn is None:
        return _ACTIVATIONS["linear"]
    if callable(name_or_fn):
        return name_or_fn
    if name_or_fn in _ACTIVATIONS:
        return _ACTIVATIONS[name_or_fn]
    if isinstance(name_or_fn, str) and name_or_fn in _keras_activations.BY_NAME:
        return _keras_activations.BY_NAME[name_or_fn]  # any other Keras activation ('gelu', 'softmax', ...)
    raise _errors.GradkitValueError(
        f"{what}: activation {name_or_fn!r} is not a Keras activation gradkit.tf has (Keras refuses it too); "
        f"use one of {sorted(_keras_activations.BY_NAME)} or pass a callable."
    )


def _activation_name(fn):
    """Keras' name of an activation ``_activation`` returned ('swish' is Keras' 'silu'); any
    other callable as ``layer_config`` serializes it."""
    for name, known in _ACTIVATIONS.items():
        if known is fn and name != "swish":
            return name
    return layer_config.serialize_activation(fn)


def _call(fn, x):
    out = fn(x)
    return _control._value(out) if isinstance(out, Tensor) else out


def _simple_rnn_step(h, x_proj, recurrent_kernel, bias, activation, recurrent_activation, reset_after, masks):
    z = x_proj + rnn_dropout.masked(h[0], masks, 0) @ recurrent_kernel
    h_new = _call(activation, z if bias is None else z + bias[None, :])
    return (h_new,), h_new


def _lstm_step(state, x_proj, recurrent_kernel, bias, activation, recurrent_activation, reset_after, masks):
    h, c = state
    z = x_proj + rnn_dropout.project(h, recurrent_kernel, masks, 4)
    if bias is not None:
        z = z + bias[None, :]
    zi, zf, zc, zo = jnp.split(z, 4, axis=-1)
    i, f, o = (_call(recurrent_activation, g) for g in (zi, zf, zo))
    c_new = f * c + i * _call(activation, zc)
    h_new = o * _call(activation, c_new)
    return (h_new, c_new), h_new


def _gru_step(state, x_proj, recurrent_kernel, bias, activation, recurrent_activation, reset_after, masks):
    h = state[0]
    input_bias, recurrent_bias = (None, None) if bias is None else (bias[0], bias[1]) if reset_after else (bias, None)
    if input_bias is not None:
        x_proj = x_proj + input_bias[None, :]
    x_z, x_r, x_h = jnp.split(x_proj, 3, axis=-1)
    units = h.shape[-1]
    if reset_after:
        inner = rnn_dropout.project(h, recurrent_kernel, masks, 3)
        if recurrent_bias is not None:
            inner = inner + recurrent_bias[None, :]
        r_z, r_r, r_h = jnp.split(inner, 3, axis=-1)
        z = _call(recurrent_activation, x_z + r_z)
        r = _call(recurrent_activation, x_r + r_r)
        candidate = _call(activation, x_h + r * r_h)
    else:
        gate_masks = masks if masks is None or masks.shape[0] == 1 else masks[:2]
        inner = rnn_dropout.project(h, recurrent_kernel[:, : 2 * units], gate_masks, 2)
        z = _call(recurrent_activation, x_z + inner[:, :units])
        r = _call(recurrent_activation, x_r + inner[:, units:])
        h_candidate = rnn_dropout.masked(h, masks, 2)
        candidate = _call(activation, x_h + (r * h_candidate) @ recurrent_kernel[:, 2 * units :])
    h_new = z * h + (1.0 - z) * candidate
    return (h_new,), h_new


_STEPS = {"simple_rnn": _simple_rnn_step, "lstm": _lstm_step, "gru": _gru_step}


def _run_rnn(
    inputs,
    states,
    kernel,
    recurrent_kernel,
    bias,
    mask,
    input_masks,
    state_masks,
    *,
    kind,
    activation,
    recurrent_activation,
    options,
):
    """The whole sequence as one ``lax.scan``: (outputs over time, final states). ``input_masks``
    and ``state_masks`` are the dropout masks (see ``rnn_dropout``), None without dropout."""
    go_backwards, reset_after, zero_output_for_mask = options
    step = _STEPS[kind]
    gates = kernel.shape[-1] // recurrent_kernel.shape[0]
    xs = jnp.swapaxes(inputs, 0, 1)  # time first
    if go_backwards:
        xs = xs[::-1]
    x_proj = rnn_dropout.project(xs, kernel, input_masks, gates)  # every step's input projection at once

    def body(carry, x_t):
        return step(carry, x_t, recurrent_kernel, bias, activation, recurrent_activation, reset_after, state_masks)

    if mask is None:
        final, outputs = jax.lax.scan(body, tuple(states), x_proj)
        return jnp.swapaxes(outputs, 0, 1), final
    # Keras' masked loop: at a masked step the states stay as they were and the output is the
    # previous step's output (zeros before the first step, or always with zero_output_for_mask).
    ms = jnp.swapaxes(mask, 0, 1)[:, :, None]  # (time, batch, 1)
    if go_backwards:
        ms = ms[::-1]

    def masked_body(carry, x_and_mask):
        states_t, previous = carry
        x_t, keep = x_and_mask
        new_states, out = body(states_t, x_t)
        out = jnp.where(keep, out, jnp.zeros_like(out) if zero_output_for_mask else previous)
        new_states = tuple(jnp.where(keep, new, old) for new, old in zip(new_states, states_t))
        return (new_states, out), out

    start = (tuple(states), jnp.zeros_like(states[0]))
    (final, _), outputs = jax.lax.scan(masked_body, start, (x_proj, ms))
    return jnp.swapaxes(outputs, 0, 1), final


_run_rnn_op = lift(_run_rnn)


class _RNN(_KerasLayer, Layer):
    """The shared part of SimpleRNN, GRU and LSTM: arguments, weights, the call."""

    kind = ""
    gates = 1
    n_states = 1
    default_name = ""
    takes_recurrent_activation = True
    keras_ignores_activity_regularizer = False

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
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = f"tf.keras.layers.{type(self).__name__}"
        if activity_regularizer is not None and self.keras_ignores_activity_regularizer:
            raise _errors.GradkitNotImplementedError(
                f"{what}(activity_regularizer={activity_regularizer!r}): Keras 3's SimpleRNN takes this argument but "
                "ignores it (no loss is added and its config says None); gradkit.tf refuses it rather than ignore it "
                "silently or differ from Keras. Add the penalty yourself: self.add_loss(regularizer(outputs)) in a "
                "layer around it, or use GRU/LSTM, which apply it."
            )
        dropout = rnn_dropout.clamped_rate(dropout, "dropout", what)
        recurrent_dropout = rnn_dropout.clamped_rate(recurrent_dropout, "recurrent_dropout", what)
        kwargs.pop("use_cudnn", None)  # a backend choice: the results are the same
        # GRU's and LSTM's two ways of computing the gates give the same results; they differ in
        # how many dropout masks a call draws (implementation 1: one per gate), as in Keras.
        implementation = kwargs.pop("implementation", 2)
        layer_args.base_options(what, kwargs)
        layer_args.check_initializers(
            what,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
        )
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise _errors.GradkitValueError(f"{what}: units={units!r}; Keras takes a positive int here.")
        super().__init__(
            name=name if name is not None else unique_name(self.default_name),
            trainable=trainable,
            activity_regularizer=activity_regularizer,
        )
        layer_regularization.keep_options(
            self,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
        )
        self.units = units
        self.activation = _activation(activation, what)
        self.recurrent_activation = _activation(recurrent_activation, what)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.unroll = bool(unroll)
        self.stateful = bool(stateful)
        self.states = None  # a stateful layer's state Variables, made when it is built (not weights, as in Keras)
        # Where a mask skips a step: its output is zeros (True) or the previous step's output (False).
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.dropout = dropout
        self.recurrent_dropout = recurrent_dropout
        self.implementation = 1 if recurrent_dropout != 0.0 else implementation
        self.seed = seed
        keras_random.own_generator(self, seed)
        self.kernel = self.recurrent_kernel = self.bias = None

    def _what(self) -> str:
        return f"tf.keras.layers.{type(self).__name__} '{self.name}'"

    def _keras_config_values(self) -> dict:
        """The activations by their Keras names (the layer keeps the functions its scan calls)."""
        return {
            "activation": _activation_name(self.activation),
            "recurrent_activation": _activation_name(self.recurrent_activation),
        }

    def compute_output_shape(self, sequences_shape):
        """Keras': ``(batch, timesteps, units)`` with ``return_sequences``, else ``(batch, units)``;
        with ``return_state``, followed by one ``(batch, units)`` per state."""
        batch, steps = tuple(sequences_shape)[0], tuple(sequences_shape)[1]
        output = (batch, steps, self.units) if self.return_sequences else (batch, self.units)
        return (output, *[(batch, self.units)] * self.n_states) if self.return_state else output

    def _bias_shape(self) -> tuple:
        return (self.gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def _weight_scope(self) -> str:
        # Keras makes the weights in the layer's cell: 'lstm/lstm_cell/kernel', which
        # exclude_from_weight_decay(var_names=...) and other name-keyed options match.
        return f"{self.kind}_cell/"

    def build(self, input_shape) -> None:
        layer_args.check_rank(input_shape, 3, "(batch, timesteps, features)", self._what())
        width = self.gates * self.units
        self.kernel = self.add_weight("kernel", (input_shape[-1], width), self.kernel_initializer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, width), self.recurrent_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), self._bias_initializer())
        layer_regularization.attach_to_weights(self, "kernel", "recurrent_kernel", "bias")
        if self.stateful:
            rnn_state.build_states(self, input_shape[0])

    @property
    def cell(self):
        """Keras 3's ``layer.cell``: the cell of the layer's options (``LSTMCell`` for an LSTM, ...)
        computing one step with the layer's own weights (``layer.cell.kernel is layer.kernel``)."""
        from . import rnn_cells

        cell = self.__dict__.get("_keras_cell")  # not an attribute Layer tracks: its weights are the layer's
        if cell is None:
            cls = {"simple_rnn": rnn_cells.SimpleRNNCell, "gru": rnn_cells.GRUCell, "lstm": rnn_cells.LSTMCell}[
                self.kind
            ]
            options = {"reset_after": self.reset_after} if self.kind == "gru" else {}
            if self.kind != "simple_rnn":
                options["recurrent_activation"] = self.recurrent_activation
            cell = cls(
                self.units,
                activation=self.activation,
                use_bias=self.use_bias,
                kernel_initializer=self.kernel_initializer,
                recurrent_initializer=self.recurrent_initializer,
                bias_initializer=self.bias_initializer,
                dropout=self.dropout,
                recurrent_dropout=self.recurrent_dropout,
                seed=self.seed,
                **options,
            )
            self.__dict__["_keras_cell"] = cell
        if self.kernel is not None and cell.kernel is not self.kernel:
            cell.kernel, cell.recurrent_kernel, cell.bias = self.kernel, self.recurrent_kernel, self.bias
            cell.built = True
        return cell

    def reset_state(self) -> None:
        """Keras': a stateful layer's states back to zeros (nothing for a layer without state)."""
        rnn_state.reset(self)

    reset_states = reset_state  # Keras' older name

    def get_initial_state(self, batch_size) -> list:
        """Keras 3's zero states: a list of ``(batch_size, units)`` zeros (LSTM: ``[h, c]``)."""
        if getattr(batch_size, "ndim", 0):
            raise _errors.GradkitTypeError(
                f"{self._what()}.get_initial_state takes the batch size (an int), as in Keras 3, but got a tensor "
                f"of shape {tuple(batch_size.shape)}. Pass x.shape[0] or tf.shape(x)[0]."
            )
        zeros = Tensor.concrete(jnp.zeros((int(batch_size), self.units), jnp.float32))
        return [zeros] * self.n_states

    def _initial_states(self, sequences, initial_state) -> list:
        batch = sequences.shape[0]
        if initial_state is None:
            zeros = Tensor.concrete(jnp.zeros((batch, self.units), jnp.float32))
            return [zeros] * self.n_states
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        states = [wrap(convert(s)) for s in states]  # Variables and arrays too, as Keras takes them
        if len(states) != self.n_states or any(tuple(s.shape) != (batch, self.units) for s in states):
            raise _errors.GradkitValueError(
                f"{self._what()} got initial_state of shapes {[tuple(s.shape) for s in states]}; it takes "
                f"{self.n_states} state(s) of shape {(batch, self.units)} (batch, units), as Keras does."
            )
        return [_array.cast(s, "float32") if s.dtype != jnp.float32 else s for s in states]

    def _mask(self, mask, shape):
        """A ``(batch, timesteps)`` mask as booleans (a number is True where it is not 0), as Keras takes it."""
        if mask is None:
            return None
        mask = convert(mask)
        if tuple(mask.shape) != tuple(shape[:2]):
            raise _errors.GradkitValueError(
                f"{self._what()} got a mask of shape {tuple(mask.shape)}; it takes one of shape {tuple(shape[:2])} "
                "(batch, timesteps), True at the steps to use, as Keras does."
            )
        return mask if mask.dtype == jnp.bool_ else _array.cast(mask, "bool")

    def compute_mask(self, inputs, mask=None):
        return masking.recurrent_output_mask(self, mask)

    def _dropout_masks(self, shape, training) -> tuple:
        """This call's dropout masks for the inputs and the state (None where none applies):
        drawn once per call, one per gate with Keras' implementation 1 (see ``rnn_dropout``)."""
        count = self.gates if self.implementation == 1 and self.kind != "simple_rnn" else 1
        batch, features = shape[0], shape[-1]
        input_masks = state_masks = None
        if rnn_dropout.applies(self, self.dropout, training):
            input_masks = rnn_dropout.draw_masks(self.dropout, count, (batch, features), keras_random.layer_seed(self))
        if rnn_dropout.applies(self, self.recurrent_dropout, training):
            state_masks = rnn_dropout.draw_masks(
                self.recurrent_dropout, count, (batch, self.units), keras_random.layer_seed(self)
            )
        return input_masks, state_masks

    def call(self, sequences, initial_state=None, mask=None, training=None):
        layer_args.check_rank(sequences.shape, 3, "(batch, timesteps, features)", self._what())
        sequences = layer_args.float_input(sequences)
        rnn_state.refuse_no_timesteps(sequences, self._what())
        if sequences.shape[-1] != self.kernel.shape[0]:
            raise _errors.GradkitValueError(
                f"{self._what()} was built for {self.kernel.shape[0]} features (last axis), but got shape "
                f"{tuple(sequences.shape)}. Pass {self.kernel.shape[0]} features, or use a new layer."
            )
        if initial_state is None and self.stateful:
            rnn_state.check_batch(self, sequences.shape[0])
            initial_state = rnn_state.current(self)
        states = self._initial_states(sequences, initial_state)
        mask = self._mask(mask, sequences.shape)
        bias = None if self.bias is None else self.bias.value
        input_masks, state_masks = self._dropout_masks(sequences.shape, training)
        outputs, final = _run_rnn_op(
            sequences,
            states,
            self.kernel.value,
            self.recurrent_kernel.value,
            bias,
            mask,
            input_masks,
            state_masks,
            kind=self.kind,
            activation=self.activation,
            recurrent_activation=self.recurrent_activation,
            options=(self.go_backwards, getattr(self, "reset_after", False), self.zero_output_for_mask),
        )
        if self.stateful:
            rnn_state.keep(self, final)
        if self.return_sequences:
            output = outputs
        else:  # Keras' last output: the last step's (masked) output, which is h only without a mask
            output = final[0] if mask is None else outputs[:, -1, :]
        return (output, *final) if self.return_state else output


class SimpleRNN(_RNN):
    """``tf.keras.layers.SimpleRNN(units, activation='tanh', use_bias=True,
    kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
    bias_initializer='zeros', return_sequences=False, return_state=False, go_backwards=False)``:
    ``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``."""

    keras_ignores_activity_regularizer = True

    kind = "simple_rnn"
    default_name = "simple_rnn"

    def __init__(self, units, activation="tanh", **kwargs):
        if "recurrent_activation" in kwargs:
            raise _errors.GradkitValueError(
                "tf.keras.layers.SimpleRNN got recurrent_activation=, which it does not take (as in Keras): it has "
                "one activation. Leave it out."
            )
        super().__init__(units, activation=activation, **kwargs)


class GRU(_RNN):
    """``tf.keras.layers.GRU(units, activation='tanh', recurrent_activation='sigmoid', ...,
    reset_after=True)``: Keras 3's GRU (update, reset and candidate gates); with
    ``reset_after=True`` (Keras' default) the reset gate multiplies the recurrent projection
    and the bias is ``(2, 3 * units)``."""

    kind = "gru"
    gates = 3
    default_name = "gru"

    def __init__(self, units, reset_after=True, **kwargs):
        self.reset_after = bool(reset_after)
        super().__init__(units, **kwargs)

    def _bias_shape(self) -> tuple:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)


class LSTM(_RNN):
    """``tf.keras.layers.LSTM(units, activation='tanh', recurrent_activation='sigmoid', ...,
    unit_forget_bias=True)``: Keras 3's LSTM; ``return_state=True`` returns
    ``(output, h, c)``, and ``initial_state=[h, c]``. With ``unit_forget_bias`` the forget
    gate's bias starts at 1, as in Keras."""

    kind = "lstm"
    gates = 4
    n_states = 2
    default_name = "lstm"

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        self.unit_forget_bias = bool(unit_forget_bias)
        super().__init__(units, **kwargs)

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base = initializers.get(self.bias_initializer) if isinstance(self.bias_initializer, (str, dict)) else None
        base = base if base is not None else self.bias_initializer
        units = self.units

        def forget_gate_ones(shape, dtype=None):
            parts = [base((units,), dtype), jnp.ones((units,), "float32"), base((2 * units,), dtype)]
            return jnp.concatenate([_control._value(p) if isinstance(p, Tensor) else jnp.asarray(p) for p in parts])

        return forget_gate_ones
