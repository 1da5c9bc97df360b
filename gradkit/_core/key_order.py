"""The key order of the dicts a user passes in and gets back.

jax's pytrees sort a dict's keys, but a user zips a tape's gradients with the dict of parameters
they came from (``zip(grads.values(), params.values())``), and TensorFlow packs a function's
outputs back into the structure the Python function returned (``{"r": ..., "c": ...}``, a Keras
model's dict output). This module remembers the order a structure was built in and puts it back.
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


def like(original, structure):
    """``structure`` (jax's rebuild of ``original``'s layout) with ``original``'s dict key orders."""
    return in_order(key_orders(original), structure)


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
