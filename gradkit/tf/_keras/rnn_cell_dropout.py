"""``dropout`` and ``recurrent_dropout`` in ``SimpleRNNCell``, ``GRUCell`` and ``LSTMCell``: the
masks a cell keeps from call to call (Keras 3's ``DropoutRNNCell``).

A training call of a cell with dropout draws its masks the first time (the inputs' mask shaped
like the inputs, the state's like the state ``h``; a GRUCell or LSTMCell with
``recurrent_dropout``, or built with ``implementation=1``, one mask per gate), and later calls
use the same masks, so a loop calling the cell at each step drops the same units at every
step, until ``reset_dropout_mask()`` / ``reset_recurrent_dropout_mask()``. A call whose inputs
(or states) have another shape than the kept mask's is refused: reset the masks first.
``tf.keras.layers.RNN`` uses the masks its cell keeps and resets them at the end of each call,
so each call of the layer (each batch) draws new ones. The masks are ``rnn_dropout``'s
(``tf.random``'s generator, not TensorFlow's draws), and Keras' rules on the rates apply
(see ``rnn_dropout``).

Inside a ``tf.function`` a cell keeps the masks drawn while tracing for the rest of that trace
only: every call of the cell within one run of the compiled function shares them, each run
draws new ones (as every draw in a ``tf.function`` does), and the masks kept by eager calls are
neither used inside the trace nor replaced by it, so no traced value outlives its trace. (Keras
3 keeps a mask drawn in a traced call on the cell itself, where the next trace or eager call
finds a tensor of a finished graph, and TensorFlow raises "out of scope".)

>>> import gradkit.tf as tf
>>> cell = tf.keras.layers.SimpleRNNCell(2, dropout=0.5)
>>> x, h = tf.ones([3, 4]), [tf.zeros([3, 2])]
>>> first, _ = cell(x, h, training=True)
>>> again, _ = cell(x, h, training=True)  # the mask the cell keeps
>>> bool((first == again).numpy().all()), cell.get_dropout_mask(x).shape
(True, (3, 4))
>>> cell.reset_dropout_mask()  # the next training call draws a new mask
"""

from __future__ import annotations

from gradkit import _errors
from gradkit._core import frames

from .. import _control
from . import keras_random, rnn_dropout

_RATES = ("dropout", "recurrent_dropout")
_RESETS = {"dropout": "reset_dropout_mask()", "recurrent_dropout": "reset_recurrent_dropout_mask()"}


def _context() -> str:
    return "eager" if _control.executing_eagerly() else "traced"


def _store(cell) -> dict:
    """``(rate name, context) -> (trace token, masks)``: what ``cell`` keeps."""
    return cell.__dict__.setdefault("_kept_dropout_masks", {})


def kept(cell, rate_name: str, shape: tuple):
    """The masks ``cell`` keeps for ``rate_name`` in this context, stacked on a first axis (one
    per gate, or one), drawn now if it keeps none."""
    store = _store(cell)
    context = _context()
    if context == "eager":
        # Masks of a trace that has ended are of no use: let them go.
        for name in _RATES:
            store.pop((name, "traced"), None)
    token = frames.trace_state()
    entry = store.get((rate_name, context))
    if entry is not None and entry[0] == token:
        masks = entry[1]
        if tuple(masks.shape[1:]) != tuple(shape):
            raise _errors.GradkitValueError(
                f"{cell._what()} keeps a {rate_name} mask of shape {tuple(masks.shape[1:])} from an earlier call, "
                f"but this call needs one of shape {tuple(shape)}; as in Keras, a cell keeps its masks until they "
                f"are reset. Call cell.{_RESETS[rate_name]} before a batch of another shape."
            )
        return masks
    count = getattr(cell, "dropout_mask_count", None) or 1
    masks = rnn_dropout.draw_masks(getattr(cell, rate_name), count, tuple(shape), keras_random.layer_seed(cell))
    store[(rate_name, context)] = (token, masks)
    return masks


def reset(cell, rate_name: str) -> None:
    """Keras' ``reset_dropout_mask`` / ``reset_recurrent_dropout_mask``: the next call that needs
    the mask draws a new one (inside a ``tf.function``: the masks of that trace)."""
    context = _context()
    _store(cell).pop((rate_name, context), None)
    if context == "eager":
        _store(cell).pop((rate_name, "traced"), None)


def call_masks(cell, input_shape: tuple, training) -> tuple:
    """The masks a call applies, ``(input masks, state masks)``, None where none applies; the
    inputs' mask first, as Keras draws them."""
    input_masks = state_masks = None
    if rnn_dropout.applies(cell, cell.dropout, training):
        input_masks = kept(cell, "dropout", tuple(input_shape))
    if rnn_dropout.applies(cell, cell.recurrent_dropout, training):
        state_masks = kept(cell, "recurrent_dropout", (input_shape[0], cell.units))
    return input_masks, state_masks


def _as_keras_returns(cell, masks):
    """Kept masks as Keras' ``get_dropout_mask`` returns them: one tensor, or a list of one mask
    per gate for a cell with ``dropout_mask_count``."""
    if getattr(cell, "dropout_mask_count", None) is None:
        return masks[0]
    return [masks[g] for g in range(masks.shape[0])]


class DropoutRNNCell:
    """Keras' ``DropoutRNNCell`` methods, for a cell with ``dropout``, ``recurrent_dropout``,
    ``seed``, ``units`` and ``kind`` (see ``rnn_dropout.applies``)."""

    def get_dropout_mask(self, step_input):
        """Keras': the inputs' dropout mask the cell keeps (drawn now, shaped like ``step_input``,
        if it keeps none); a list of one mask per gate with ``dropout_mask_count``; None without
        ``dropout``."""
        if self.dropout <= 0.0:
            return None
        return _as_keras_returns(self, kept(self, "dropout", tuple(step_input.shape)))

    def get_recurrent_dropout_mask(self, step_input):
        """Keras': the state's dropout mask the cell keeps (drawn now, shaped like ``step_input``,
        the state ``h``, if it keeps none); None without ``recurrent_dropout``."""
        if self.recurrent_dropout <= 0.0:
            return None
        return _as_keras_returns(self, kept(self, "recurrent_dropout", tuple(step_input.shape)))

    def reset_dropout_mask(self) -> None:
        """Keras': forget the inputs' kept mask; the next training call draws a new one."""
        reset(self, "dropout")

    def reset_recurrent_dropout_mask(self) -> None:
        """Keras': forget the state's kept mask; the next training call draws a new one."""
        reset(self, "recurrent_dropout")
