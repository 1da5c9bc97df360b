"""``tf.keras.layers.RNN(cell, return_sequences=False, return_state=False, go_backwards=False,
stateful=False, unroll=False, zero_output_for_mask=False)``: Keras 3's generic recurrent layer, a
cell run over a sequence.

With gradkit.tf's own cells (``SimpleRNNCell``, ``LSTMCell``, ``GRUCell`` or a
``StackedRNNCells`` of them, also passed as a list) the whole sequence is one ``lax.scan``
recorded as one op, as in ``recurrent_layers.py``. Any other cell (a Layer subclass with a
``state_size`` and ``call(inputs, states)`` returning ``(output, new_states)``, as Keras asks)
runs step by step in a Python loop: each step's ops are recorded on the tape, so gradients are
exact, and inside a ``tf.function`` the loop is unrolled into the compiled step. ``unroll`` is
accepted and changes nothing (the results are the same). A call takes ``initial_state=`` (a
list, one entry per state; for stacked cells one entry per cell) and ``mask=``
(``(batch, timesteps)``, True at the steps to use): at a masked step the states stay as they
were and the output is the previous step's (zeros with ``zero_output_for_mask=True``). With
``return_state=True`` the call returns ``[output, *final_states]``.

A training call applies the dropout masks of cells made with ``dropout`` /
``recurrent_dropout`` (the same at every step: those the cell keeps, drawn at the first step if
it keeps none) and resets them at the end, as Keras does, so each call draws new ones (see
``rnn_cell_dropout``). With ``stateful=True`` the states are kept in Variables from call to call
(``layer.states``, one list per cell for stacked cells; ``reset_state()``), which needs a static
batch size, as for the recurrent layers (see ``rnn_state``).

>>> import gradkit.tf as tf
>>> cells = [tf.keras.layers.LSTMCell(4, name="lstm_cell"), tf.keras.layers.GRUCell(2)]
>>> layer = tf.keras.layers.RNN(tf.keras.layers.StackedRNNCells(cells, name="stack"), return_state=True, name="rnn")
>>> out, lstm_states, gru_states = layer(tf.ones([3, 5, 6]))
>>> out.shape, [s.shape for s in lstm_states], layer.weights[0].name
((3, 2), [(3, 4), (3, 4)], 'rnn/stack/lstm_cell/kernel:0')
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import gradkit.numpy as gnp
from gradkit import _errors
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor
from gradkit.nn.layer import Layer, unique_name

from .. import _name_scope
from .._convert import convert, wrap
from . import base_layer, layer_args, layer_config, masking, recurrent_layers, rnn_cells, rnn_state
from .keras_object_serialization import deserialize_keras_object, serialize_keras_object
from .layers import _KerasLayer


def _run_cells(inputs, states, params, masks, mask, *, specs, go_backwards, zero_output_for_mask):
    """Built-in cells over the whole sequence as one ``lax.scan``: (outputs over time, final states).
    ``masks`` are each cell's dropout masks, the same at every step."""
    xs = jnp.swapaxes(inputs, 0, 1)  # time first
    if go_backwards:
        xs = xs[::-1]

    def body(carry, x_t):
        out, new = rnn_cells.stack_step(x_t, carry, params, masks, specs)
        return new, out

    states = tuple(tuple(s) for s in states)
    if mask is None:
        final, outputs = jax.lax.scan(body, states, xs)
        return jnp.swapaxes(outputs, 0, 1), final
    # Keras' masked loop: at a masked step the states stay as they were and the output is the
    # previous step's output (zeros before the first step, or always with zero_output_for_mask).
    ms = jnp.swapaxes(mask, 0, 1)[:, :, None]  # (time, batch, 1)
    if go_backwards:
        ms = ms[::-1]
    units = params[-1][1].shape[0]

    def masked_body(carry, x_and_mask):
        states_t, previous = carry
        x_t, keep = x_and_mask
        new, out = body(states_t, x_t)
        out = jnp.where(keep, out, jnp.zeros_like(out) if zero_output_for_mask else previous)
        new = jax.tree.map(lambda n, o: jnp.where(keep, n, o), new, states_t)
        return (new, out), out

    start = (states, jnp.zeros((inputs.shape[0], units), inputs.dtype))
    (final, _), outputs = jax.lax.scan(masked_body, start, (xs, ms))
    return jnp.swapaxes(outputs, 0, 1), final


_run_cells_op = lift(_run_cells)


def _listed(states) -> list:
    return list(states) if isinstance(states, (list, tuple)) else [states]


class RNN(_KerasLayer, Layer):
    """``tf.keras.layers.RNN(cell, return_sequences=False, return_state=False, go_backwards=False,
    stateful=False, unroll=False, zero_output_for_mask=False)``; see the module docstring."""

    def __init__(
        self,
        cell,
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
        what = "tf.keras.layers.RNN"
        shape_args = layer_args.base_options(what, kwargs)
        if isinstance(cell, (list, tuple)):
            cell = rnn_cells.StackedRNNCells(cell)
        rnn_cells.check_cell(cell, what)
        state_size = getattr(cell, "state_size", None)
        if not isinstance(state_size, (list, tuple, int)):
            raise _errors.GradkitValueError(
                f"{what}: the cell's state_size is {state_size!r}; Keras takes an int, or a list of ints (one per "
                "state tensor)."
            )
        super().__init__(name=name if name is not None else unique_name("rnn"), trainable=trainable, **shape_args)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.states = None  # a stateful layer's state Variables, made when it is built (not weights, as in Keras)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.state_size = [state_size] if isinstance(state_size, int) else list(state_size)

    def _what(self) -> str:
        return f"tf.keras.layers.RNN '{self.name}'"

    _mask = recurrent_layers._RNN._mask  # (batch, timesteps) booleans, as the recurrent layers take it

    def build(self, sequences_shape, initial_state_shape=None) -> None:
        shape = tuple(sequences_shape)
        if len(shape) < 3:
            raise _errors.GradkitValueError(
                f"{self._what()} takes inputs of rank 3 or more ((batch, timesteps, features...)), as Keras does, "
                f"but got shape {shape}."
            )
        # The cell's weights are named under the layer's, as Keras' paths are ('rnn/lstm_cell/kernel').
        if isinstance(self.cell, Layer) and not self.cell.built:
            with _name_scope.name_scope(self.name):
                self.cell.build((shape[0], *shape[2:]))
                self.cell.built = True
        if self.stateful:
            rnn_state.build_states(self, shape[0])

    def reset_state(self) -> None:
        """Keras': a stateful layer's states (each cell's, for stacked cells) back to zeros;
        nothing for a layer without state."""
        rnn_state.reset(self)

    reset_states = reset_state  # Keras' older name

    def get_initial_state(self, batch_size) -> list:
        """The cell's ``get_initial_state(batch_size)`` (as a list), else zeros of each state size."""
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is not None:
            return _listed(fn(batch_size=batch_size))
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in self.state_size):
            raise _errors.GradkitValueError(
                f"{self._what()}: the cell {type(self.cell).__name__} has state_size={self.state_size!r} and no "
                "get_initial_state; gradkit.tf makes zero states for a state_size of ints (one per state). Give the "
                "cell a get_initial_state(batch_size=None) method, or pass initial_state= to the call."
            )
        return [Tensor.concrete(jnp.zeros((int(batch_size), d), jnp.float32)) for d in self.state_size]

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, steps = tuple(sequences_shape)[:2]
        states = [(batch, s) if isinstance(s, int) else [(batch, d) for d in s] for s in self.state_size]
        size = rnn_cells._output_size(self.cell)
        output = (batch, steps, size) if self.return_sequences else (batch, size)
        return (output, *states) if self.return_state else output

    def _symbolic_structure(self, outputs):
        """On KerasTensors, Keras lays the final states out as ``compute_output_shape`` does:
        a stacked cell's states one tensor where its ``state_size`` is an int (called eagerly,
        it gives that cell's states as a list of one)."""
        if not (self.return_state and isinstance(self.cell, rnn_cells.StackedRNNCells)):
            return outputs
        output, *states = outputs
        return [
            output,
            *(
                s[0] if isinstance(size, int) and isinstance(s, list) and len(s) == 1 else s
                for s, size in zip(states, self.state_size)
            ),
        ]

    def compute_mask(self, inputs, mask=None):
        return masking.recurrent_output_mask(self, mask)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if len(sequences.shape) < 3:
            raise _errors.GradkitValueError(
                f"{self._what()} takes inputs of rank 3 or more ((batch, timesteps, features...)), as Keras does, "
                f"but got shape {tuple(sequences.shape)}."
            )
        sequences = layer_args.float_input(sequences)
        rnn_state.refuse_no_timesteps(sequences, self._what())
        batch = sequences.shape[0]
        if self.stateful:
            rnn_state.check_batch(self, batch)
        if initial_state is not None:
            states = _listed(initial_state)
        else:
            states = rnn_state.current(self) if self.stateful else self.get_initial_state(batch)
        mask = self._mask(mask, sequences.shape)
        try:
            if rnn_cells.builtin(self.cell):
                outputs, states = self._scan(sequences, states, mask, training)
            else:
                outputs, states = self._loop(sequences, states, mask, training)
        finally:
            rnn_cells.reset_dropout_masks(self.cell)  # as Keras: each call (each batch) draws new masks
        if self.stateful:
            rnn_state.keep(self, states)
        output = outputs if self.return_sequences else outputs[:, -1]
        return [output, *states] if self.return_state else output

    def _scan(self, sequences, states, mask, training):
        stacked = isinstance(self.cell, rnn_cells.StackedRNNCells)
        cells = self.cell.cells if stacked else [self.cell]
        per_cell = states if stacked else [states]
        if len(per_cell) != len(cells):
            raise _errors.GradkitValueError(
                f"{self._what()} got initial_state with {len(per_cell)} entries for {len(cells)} stacked cells; it "
                "takes one entry per cell (a list of that cell's states), as Keras does: "
                "layer.get_initial_state(batch_size) gives them."
            )
        checked = [cell.check_states(s, sequences.shape[0]) for cell, s in zip(cells, per_cell)]
        width = cells[0].kernel.shape[0]
        if sequences.shape[-1] != width or len(sequences.shape) != 3:
            raise _errors.GradkitValueError(
                f"{self._what()} was built for inputs (batch, timesteps, {width}), but got shape "
                f"{tuple(sequences.shape)}. Pass {width} features, or use a new layer."
            )
        outputs, final = _run_cells_op(
            sequences,
            checked,
            [cell._params() for cell in cells],
            rnn_cells.stack_masks(cells, sequences.shape[0], training),
            mask,
            specs=tuple(cell._spec() for cell in cells),
            go_backwards=self.go_backwards,
            zero_output_for_mask=self.zero_output_for_mask,
        )
        if not stacked:
            return outputs, list(final[0])
        # As Keras' StackedRNNCells: a cell whose states came as one tensor gives back one tensor.
        return outputs, [list(f) if isinstance(s, (list, tuple)) else f[0] for f, s in zip(final, per_cell)]

    def _loop(self, sequences, states, mask, training):
        """Any other cell, one ``cell(inputs, states)`` call per step, recorded on the tape."""
        states = [wrap(convert(s)) if not isinstance(s, (list, tuple)) else s for s in states]
        steps = range(sequences.shape[1] - 1, -1, -1) if self.go_backwards else range(sequences.shape[1])
        kwargs = {"training": training} if isinstance(self.cell, base_layer.Layer) else {}
        outputs, previous = [], None
        for t in steps:
            output, new_states = self.cell(sequences[:, t], states, **kwargs)
            new_states = _listed(new_states)
            if len(new_states) != len(states):
                raise _errors.GradkitValueError(
                    f"{self._what()}: the cell {type(self.cell).__name__} returned {len(new_states)} states for "
                    f"{len(states)} it was given; a cell's call returns (output, new_states) with one new state per "
                    "state, as Keras requires."
                )
            if mask is not None:
                keep = gnp.reshape(mask[:, t], (-1, 1))
                new_states = [_keep_where(keep, n, o) for n, o in zip(new_states, states)]
                fallback = gnp.zeros_like(output) if self.zero_output_for_mask or previous is None else previous
                output = gnp.where(_fit(keep, output), output, fallback)
            outputs.append(output)
            states, previous = new_states, output
        return wrap(gnp.stack(outputs, axis=1)), states

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            return_sequences=self.return_sequences,
            return_state=self.return_state,
            go_backwards=self.go_backwards,
            stateful=self.stateful,
            unroll=self.unroll,
            zero_output_for_mask=self.zero_output_for_mask,
            cell=serialize_keras_object(self.cell),  # with its build_config, as Keras writes it
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["cell"] = deserialize_keras_object(config["cell"])
        return layer_config.from_config(cls, config)


def _keep_where(keep, new, old):
    """``new`` where ``keep`` (batch, 1) is True, else ``old``; over a list of states too."""
    if isinstance(new, (list, tuple)):
        return [_keep_where(keep, n, o) for n, o in zip(new, old)]
    return gnp.where(_fit(keep, new), new, old)


def _fit(keep, x):
    """The (batch, 1) mask with one axis per axis of ``x`` (explicit rank: gradkit's strict mode)."""
    return gnp.reshape(keep, tuple(keep.shape) + (1,) * (len(x.shape) - 2))
