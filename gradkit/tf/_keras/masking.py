"""Keras masks: which timesteps of a padded sequence a layer should skip.

A layer that makes a mask (``Embedding(mask_zero=True)``, ``Masking``) attaches it to its
output; each later layer call takes it as its ``mask=`` argument when its ``call`` has one (an
LSTM skips those steps, ``GlobalAveragePooling1D`` averages over the rest, ``Softmax`` leaves
them out) and, when the layer supports masking, attaches ``compute_mask(inputs, mask)`` to its
own output; a layer that does not support masking drops it, with Keras' warning. A loss or a
metric wrapper given a prediction with a mask leaves the masked entries out of its mean.

Keras keeps the mask as the tensor's ``_keras_mask`` attribute; a gradkit tensor has a fixed
set of attributes, so the mask is kept beside it here (``get_keras_mask``), for as long as the
tensor lives. ``layer.compute_mask(inputs)`` gives it explicitly, as Keras' guide passes it.
"""

from __future__ import annotations

import warnings
import weakref

import jax
import numpy as np

from gradkit._tape.tensor import Tensor

# id(tensor) -> (a weak reference to it, its mask)
_masks: dict[int, tuple] = {}


def get_keras_mask(x):
    """The mask attached to ``x``, or None."""
    hit = _masks.get(id(x))
    return hit[1] if hit is not None and hit[0]() is x else None


def set_keras_mask(x, mask) -> None:
    """Attach ``mask`` to the tensor ``x`` (None removes it)."""
    key = id(x)
    if mask is None:
        _masks.pop(key, None)
        return
    try:
        ref = weakref.ref(x, lambda dead, key=key: _forget(key, dead))
    except TypeError:  # a value that takes no weak reference (a NumPy array) keeps no mask
        return
    _masks[key] = (ref, mask)


def _forget(key: int, dead) -> None:
    hit = _masks.get(key)
    if hit is not None and hit[0] is dead:
        del _masks[key]


def _leaves(x) -> list:
    return jax.tree_util.tree_leaves(x, is_leaf=lambda t: isinstance(t, Tensor) or t is None)


def masks_of(x):
    """The masks of ``x``'s tensors, in its structure (None where a tensor has none)."""
    if isinstance(x, (list, tuple)):
        return type(x)(masks_of(e) for e in x) if not hasattr(x, "_fields") else [masks_of(e) for e in x]
    if isinstance(x, dict):
        return {k: masks_of(v) for k, v in x.items()}
    return get_keras_mask(x)


def masks_for_call(signature, layer, args, kwargs) -> dict:
    """The mask arguments Keras fills for ``layer.call(*args, **kwargs)`` (its ``Layer.__call__``,
    step 6): ``mask=`` from the only tensor argument's masks, where the call takes ``mask`` and is
    not given one; with several tensor arguments, ``<name>_mask=`` from each one's, where the call
    takes that parameter. An RNN given ``initial_state=`` thus runs unmasked, as in Keras."""
    if signature is None:
        return {}
    try:
        bound = signature.bind(layer, *args, **kwargs)
    except TypeError:
        return {}  # the call itself says what is wrong
    arguments = dict(list(bound.arguments.items())[1:])
    tensors = {name: value for name, value in arguments.items() if _is_tensor_argument(value)}
    parameters = signature.parameters
    filled = {}
    if len(tensors) == 1:
        if "mask" in parameters and arguments.get("mask") is None:
            (value,) = tensors.values()
            masks = masks_of(value)
            if any_mask(masks):
                filled["mask"] = masks
    elif len(tensors) > 1:
        for name, value in tensors.items():
            key = f"{name}_mask"
            if key in parameters and arguments.get(key) is None:
                masks = masks_of(value)
                if any_mask(masks):
                    filled[key] = masks
    return filled


def _is_tensor(x) -> bool:
    from gradkit._core.variable import Variable

    from .functional import KerasTensor

    return isinstance(x, (Tensor, Variable, KerasTensor, jax.Array, np.ndarray))


def _is_tensor_argument(value) -> bool:
    """A tensor, or a non-empty nest of tensors (None allowed among them), as Keras counts them."""
    if _is_tensor(value):
        return True
    if isinstance(value, (list, tuple, dict)) and len(value) > 0:
        leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda t: _is_tensor(t) or t is None)
        return all(t is None or _is_tensor(t) for t in leaves)
    return False


def any_mask(masks) -> bool:
    if isinstance(masks, (list, tuple)):
        return any(any_mask(m) for m in masks)
    if isinstance(masks, dict):
        return any(any_mask(m) for m in masks.values())
    return masks is not None


def attach_output_masks(layer, inputs, outputs, previous_mask) -> None:
    """After ``layer``'s call: its ``compute_mask`` on the outputs that have none yet (a layer
    that supports masking), or Keras' warning that the mask is dropped."""
    if not getattr(layer, "supports_masking", False):
        if any_mask(previous_mask):
            warnings.warn(
                f"Layer '{layer.name}' (of type {type(layer).__name__}) was passed an input with a mask attached to "
                "it. However, this layer does not support masking and will therefore destroy the mask information. "
                "Downstream layers will not see the mask.",
                stacklevel=3,
            )
        return
    flat_outputs = [t for t in _leaves(outputs) if isinstance(t, Tensor)]
    if not flat_outputs or all(get_keras_mask(t) is not None for t in flat_outputs):
        return
    output_masks = layer.compute_mask(inputs, previous_mask)
    if output_masks is None:
        return
    for tensor, mask in zip(_leaves(outputs), _leaves(output_masks)):
        if isinstance(tensor, Tensor) and get_keras_mask(tensor) is None and mask is not None:
            set_keras_mask(tensor, mask)


def recurrent_output_mask(layer, mask):
    """Keras' recurrent layers' ``compute_mask``: the sequence output keeps the input's (time)
    mask; a last output, and each returned state, has none. Bidirectional without a merge mode
    returns two outputs, each with the mask."""
    if isinstance(mask, (list, tuple)):
        mask = mask[0] if mask else None
    output_mask = mask if layer.return_sequences else None
    if getattr(layer, "merge_mode", "concat") is None:
        output_mask = [output_mask, output_mask]
    elif layer.return_state:
        output_mask = [output_mask]
    if layer.return_state:
        return [*output_mask, None]  # the states: none (zip stops at the outputs there are)
    return output_mask


# Keras code reads and sets a tensor's mask as ``x._keras_mask`` (the masking guide prints
# ``masked_output._keras_mask``; Keras 2 layers set it): on gradkit's tensors, the table above.
Tensor._keras_mask = property(get_keras_mask, set_keras_mask)
