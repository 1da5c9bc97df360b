"""Keras' remembered logits: with TensorFlow's backend, ``sigmoid`` and ``softmax`` (the
activations, the layers using them and ``keras.ops``) keep their input on the tensor they
return, and Keras' cross-entropies of such a tensor compute from those logits instead of the
clipped probabilities, so a saturated output (a softmax of 1e-20) still has its loss (and a
gradient) where the clipped probabilities would give ``-log(1e-7)`` and none.

As in Keras, which activation made the probabilities is not kept: a softmax's output given to
``binary_crossentropy`` is taken as sigmoid logits, as Keras takes it.

Inside a ``tf.function`` Keras also takes the logits behind a raw TensorFlow ``Sigmoid`` or
``Softmax`` op (``tf.nn.sigmoid``, ``tf.nn.softmax`` on the last axis), but only for the
cross-entropy of that kind (``op_type``): gradkit.tf's ops remember theirs there.
"""

from __future__ import annotations

import warnings
import weakref

_LOGITS: dict[int, tuple] = {}  # id(output) -> (weak reference to output, its logits, op type or None)


def remember(output, logits, op_type=None):
    """``output``, marked as computed from ``logits`` by a sigmoid or softmax (a Keras one, or
    with ``op_type`` TensorFlow's ``"Sigmoid"``/``"Softmax"`` op inside a ``tf.function``); returned."""
    key = id(output)
    try:
        reference = weakref.ref(output)
    except TypeError:  # not a tensor gradkit made (no weak references): nothing is kept
        return output
    _LOGITS[key] = (reference, logits, op_type)
    weakref.finalize(output, _forget, key, reference)
    return output


def _forget(key: int, reference) -> None:
    entry = _LOGITS.get(key)
    if entry is not None and entry[0] is reference:
        del _LOGITS[key]


def carry(source, converted):
    """``converted`` marked as ``source`` is where it holds the same values (same shape and
    dtype), as Keras' ``convert_to_tensor`` and rank matching return such a tensor itself."""
    entry = _LOGITS.get(id(source))
    logits = logits_of(source, entry[2] if entry is not None else None)
    if (
        logits is not None
        and converted is not source
        and getattr(converted, "dtype", None) == source.dtype
        and tuple(getattr(converted, "shape", ())) == tuple(source.shape)
    ):
        remember(converted, logits, entry[2])
    return converted


def logits_of(output, op_type=None):
    """The logits ``output`` was computed from by a Keras sigmoid or softmax (or, inside a
    ``tf.function``, by TensorFlow's ``op_type`` op), else None."""
    entry = _LOGITS.get(id(output))
    if entry is None or entry[0]() is not output or entry[2] not in (None, op_type):
        return None
    return entry[1]


def prediction(output, from_logits: bool, loss: str):
    """Keras' ``_get_logits``: ``(output, from_logits)`` as its cross-entropy computes from them."""
    logits = logits_of(output, "Sigmoid" if loss == "binary_crossentropy" else "Softmax")
    if logits is None:
        return output, from_logits
    if from_logits:
        warnings.warn(
            f'"`{loss}` received `from_logits=True`, but the `output` argument was produced by a '
            f"{'Sigmoid' if loss == 'binary_crossentropy' else 'Softmax'} activation and thus does not "
            "represent logits. Was this intended?",
            stacklevel=3,
        )
    return logits, True
