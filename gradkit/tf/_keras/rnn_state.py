"""``stateful=True`` in ``SimpleRNN``, ``GRU`` and ``LSTM``: the states a call ends with are the
states the next call starts from (Keras 3's semantics).

Each state lives in a non-trainable Variable of shape ``(batch, units)``, made when the layer is
built, so the batch size must be known then: pass ``batch_size=`` to ``tf.keras.Input`` (or
call the layer on a concrete batch first). As in Keras, the state Variables are not among the
layer's weights (``layer.states`` lists them), every call of the layer reads them when it is
given no ``initial_state`` and writes its final states back to them, also inside a
``tf.function`` (the states are read and written by the compiled step, which compiles once),
and ``reset_state()`` sets them back to zeros. Building the layer again resets them too.

One difference from TensorFlow, as with every assignment in gradkit: within one tape, a
second call's gradient flows through the state the first call left (TensorFlow's
``assign`` cuts that path). Across training steps, each step's tape starts from the states as
values, as in Keras.
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors

from .._variables import Variable
from . import functional


def build_states(layer, batch) -> None:
    """Make the layer's zero states for batches of ``batch`` (reset them if it has some)."""
    if layer.states is not None:
        reset(layer)
        return
    if batch is None or functional.batch_size_unknown():
        raise _errors.GradkitValueError(
            f"{layer._what()} is stateful, which needs a static batch size, but was built for a batch of unknown "
            "size. Pass batch_size= to tf.keras.Input (or batch_shape=), as Keras requires."
        )
    layer.states = [
        Variable(jnp.zeros((int(batch), layer.units), jnp.float32), trainable=False, name=f"{layer.name}/rnn_state")
        for _ in range(layer.n_states)
    ]


def current(layer, batch) -> list:
    """The states a call without ``initial_state`` starts from, after checking its batch size."""
    expected = layer.states[0].shape[0]
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
    return [v.read_value() for v in layer.states]


def keep(layer, final_states) -> None:
    """Write a call's final states back to the layer's state Variables, except while the layer
    runs on zeros to find its output shapes (Keras' symbolic calls change no state)."""
    if functional.running_symbolically():
        return
    for variable, value in zip(layer.states, final_states):
        variable.assign(value)


def reset(layer) -> None:
    """Keras' ``reset_state``: the state Variables back to zeros."""
    if layer.states is None:
        return
    for variable in layer.states:
        variable.assign(jnp.zeros(variable.shape, jnp.float32))
