"""``stateful=True`` in ``SimpleRNN``, ``GRU``, ``LSTM`` and ``RNN(cell)``: the states a call ends
with are the states the next call starts from (Keras 3's semantics).

Each state lives in a non-trainable Variable, made when the layer is built from the layer's
``get_initial_state(batch)`` (``(batch, units)`` zeros; for ``RNN(cell)`` the cell's initial
states, one list per cell for stacked cells), so the batch size must be known then: pass ``batch_size=`` to ``tf.keras.Input`` (or
call the layer on a concrete batch first). As in Keras, the state Variables are not among the
layer's weights (``layer.states`` lists them), every call of the layer reads them when it is
given no ``initial_state`` and writes its final states back to them, also inside a
``tf.function`` (the states are read and written by the compiled step, which compiles once),
and ``reset_state()`` sets them back to zeros (every cell's, for stacked cells, where Keras
3.15's ``reset_state`` raises AttributeError). Building the layer again resets them too.

One difference from TensorFlow, as with every assignment in gradkit: within one tape, a
second call's gradient flows through the state the first call left (TensorFlow's
``assign`` cuts that path). Across training steps, each step's tape starts from the states as
values, as in Keras.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._variables import Variable
from . import functional


def _flat(states) -> list:
    """The state tensors (or Variables) of a list nested one level per stacked cell, in order."""
    if isinstance(states, (list, tuple)):
        return [leaf for s in states for leaf in _flat(s)]
    return [states]


def _nested_map(fn, states):
    if isinstance(states, (list, tuple)):
        return [_nested_map(fn, s) for s in states]
    return fn(states)


def build_states(layer, batch) -> None:
    """Make the layer's state Variables for batches of ``batch``, holding its initial states
    (reset them to zeros if it has some)."""
    if layer.states is not None:
        reset(layer)
        return
    if batch is None or functional.batch_size_unknown():
        raise _errors.GradkitValueError(
            f"{layer._what()} is stateful, which needs a static batch size, but was built for a batch of unknown "
            "size. Pass batch_size= to tf.keras.Input (or batch_shape=), as Keras requires."
        )
    layer.states = _nested_map(
        lambda value: Variable(
            jnp.asarray(np.asarray(value), jnp.float32), trainable=False, name=f"{layer.name}/rnn_state"
        ),
        layer.get_initial_state(int(batch)),
    )


def check_batch(layer, batch) -> None:
    """Refuse a call whose batch size is not the one the states were made for, as Keras does."""
    expected = _flat(layer.states)[0].shape[0]
    if batch != expected:
        if functional.running_symbolically():
            raise _errors.GradkitValueError(
                f"{layer._what()} is stateful, which needs a static batch size, but its input has a batch of "
                "unknown size. Pass batch_size= to tf.keras.Input (or batch_shape=), as Keras requires."
            )
        raise _errors.GradkitValueError(
            f"{layer._what()} is stateful: the batch size of its input sequences must be the batch size of its "
            f"states (expected {expected}, got {batch}), as in Keras. Feed batches of {expected} (in fit, "
            "batch_size= and a number of examples divisible by it, shuffle=False), or call reset_state() after "
            "building a new layer for another batch size."
        )


def current(layer) -> list:
    """The states a call without ``initial_state`` starts from (nested as ``layer.states``)."""
    return _nested_map(lambda v: v.read_value(), layer.states)


def keep(layer, final_states) -> None:
    """Write a call's final states back to the layer's state Variables, except while the layer
    runs on zeros to find its output shapes (Keras' symbolic calls change no state)."""
    if functional.running_symbolically():
        return
    for variable, value in zip(_flat(layer.states), _flat(final_states)):
        variable.assign(value)


def reset(layer) -> None:
    """Keras' ``reset_state``: the state Variables back to zeros."""
    if layer.states is None:
        return
    for variable in _flat(layer.states):
        variable.assign(jnp.zeros(variable.shape, jnp.float32))


def refuse_no_timesteps(sequences, what: str) -> None:
    """A sequence of no timesteps has no last output: TensorFlow raises too (its first step's
    slice is out of bounds), where a scan over nothing would return the initial state."""
    if sequences.shape[1] == 0:
        raise _errors.InvalidArgumentValueError(
            f"{what} got a sequence of no timesteps (shape {tuple(sequences.shape)}); a recurrent layer needs at "
            "least one step to give an output, as in Keras on TensorFlow. Drop empty sequences first."
        )
