"""Keras 3's standardization of a model's inputs (``Functional._standardize_inputs``): the values
given to a functional model, or to a Sequential that has an input declaration, are matched to the
model's ``tf.keras.Input``\\ s before any layer sees them.

- a dict for a model whose inputs are not a dict is read by the inputs' names;
- a one-element list of an array for a model of one input is that array;
- an input whose rank is one more than its ``Input``'s, with a last axis of size 1, loses that
  axis; one less, where the ``Input``'s last axis is 1, gains it; any other rank is refused, so
  that an unbatched dataset (``fit`` on rows of shape ``(5,)`` for ``Input((5,))``) is an error,
  not a model trained on single examples.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from .. import _array


def by_position(values, names: list[str], takes_dict: bool) -> list:
    """The values for the inputs named ``names``, in order (``takes_dict``: the model's inputs
    are a dict, whose keys are ``names``)."""
    if isinstance(values, dict):
        missing = [n for n in names if n not in values]
        if missing:
            raise _errors.GradkitValueError(
                f"The model's inputs are named {names}, but the dict given has the keys {sorted(values)}: "
                f"{missing} missing. Key the inputs by the names of their tf.keras.Input(name=...)"
                + ("." if takes_dict else ", or pass them as a list in the order of the model's inputs.")
            )
        return [values[n] for n in names]
    if isinstance(values, (list, tuple)):
        if takes_dict and len(names) > 1:
            # Keras refuses a sequence for a dict of inputs: which value is which input would be a
            # guess (gradkit would have matched them to the sorted names).
            raise _errors.GradkitValueError(
                f"The structure of `inputs` doesn't match the expected structure: the model's inputs are a dict "
                f"with the keys {names}, but got a {type(values).__name__} of {len(values)} values (Keras refuses "
                "it too). Pass a dict by input name: {" + ", ".join(f"{n!r}: ..." for n in names) + "}."
            )
        return list(values)
    return [values]


def one_input(values, name: str):
    """The value for a model of one input named ``name``: ``values``, a one-element list of an
    array or tensor (Keras takes it, with a warning), or a dict that holds ``name``."""
    if isinstance(values, dict):
        return by_position(values, [name], takes_dict=False)[0]
    if isinstance(values, (list, tuple)) and len(values) == 1 and hasattr(values[0], "shape"):
        return values[0]
    return values


def adjust_rank(value, expected_shape: tuple, name: str):
    """``value`` for an ``Input`` of batch shape ``expected_shape``: as it is, or with a trailing
    axis of size 1 dropped or added (Keras' ``_adjust_input_rank``)."""
    if value is None or expected_shape is None:
        return value
    shape = tuple(value.shape if hasattr(value, "shape") else np.shape(value))
    rank, expected = len(shape), len(expected_shape)
    if rank == expected:
        return value
    if rank == expected + 1 and shape[-1] == 1:
        return _array.squeeze(value, axis=-1)
    if rank == expected - 1 and expected_shape[-1] == 1:
        return _array.expand_dims(value, -1)
    raise _errors.GradkitValueError(
        f"Invalid input shape for input '{name}': the model expects shape {_shown(expected_shape)}, but the input "
        f"has shape {shape} (rank {rank} for rank {expected}). "
        + (
            "Batch the data first (dataset.batch(32), or x[None] for one example)."
            if rank == expected - 1
            else "Reshape the input to the model's Input shape."
        )
    )


def check_compatible(value, expected_shape: tuple, index: int, name: str, model_name: str) -> None:
    """Raise Keras' error where ``value`` (rank adjusted) differs from the ``Input``'s declared
    sizes past the batch axis: a functional model's input spec, so that inputs passed in the
    wrong order are refused rather than computed with."""
    if value is None or expected_shape is None:
        return
    shape = tuple(value.shape if hasattr(value, "shape") else np.shape(value))
    if len(shape) == len(expected_shape) and all(
        want is None or got is None or want == got for got, want in zip(shape[1:], expected_shape[1:])
    ):
        return
    expected = _shown((None, *expected_shape[1:]))
    raise _errors.GradkitValueError(
        f"Input {index} with name '{name}' of layer '{model_name}' is incompatible with the layer: expected "
        f"shape={expected}, found shape={shape}. Pass the inputs in the order of the model's inputs (or as a dict "
        "keyed by their names), each of its Input's shape."
    )


def _shown(shape: tuple) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
