"""The key order of the dicts a ``tf.function`` takes and returns.

TensorFlow packs a function's outputs back into the structure the Python function returned, so a
dict comes back with its keys in the order the function built it (``{"r": ..., "c": ...}``, a
Keras model's dict output), and the function sees a dict argument as the caller built it. jax's
pytrees sort a dict's keys; this module remembers the order and puts it back.
"""

from __future__ import annotations


def key_orders(structure):
    """A template of ``structure``'s dict key orders (None where it holds no dict)."""
    if type(structure) is dict:
        return {key: key_orders(value) for key, value in structure.items()}
    if type(structure) is list or isinstance(structure, tuple):  # a namedtuple too
        inner = [key_orders(value) for value in structure]
        return inner if any(t is not None for t in inner) else None
    return None


def frozen(template):
    """``template`` as a hashable value (equal templates, equal values)."""
    if isinstance(template, dict):
        return ("dict", tuple((key, frozen(value)) for key, value in template.items()))
    if isinstance(template, list):
        return ("seq", tuple(frozen(value) for value in template))
    return None


def in_order(template, structure):
    """``structure`` with its dicts' keys in ``template``'s order."""
    if template is None:
        return structure
    if isinstance(template, dict) and type(structure) is dict and set(template) == set(structure):
        return {key: in_order(template[key], structure[key]) for key in template}
    sequence = type(structure) is list or isinstance(structure, tuple)
    if isinstance(template, list) and sequence and len(template) == len(structure):
        values = [in_order(t, value) for t, value in zip(template, structure)]
        return structure._make(values) if hasattr(structure, "_fields") else type(structure)(values)
    return structure
