"""The key order of the dicts a ``tf.function`` returns.

TensorFlow packs a function's outputs back into the structure the Python function returned, so a
dict comes back with its keys in the order the function built it (``{"r": ..., "c": ...}``, a
Keras model's dict output). jax's pytrees sort a dict's keys; this module remembers each trace's
order and puts it back.
"""

from __future__ import annotations


def key_orders(structure):
    """A template of ``structure``'s dict key orders (None where it holds no dict)."""
    if type(structure) is dict:
        return {key: key_orders(value) for key, value in structure.items()}
    if type(structure) in (list, tuple):
        inner = [key_orders(value) for value in structure]
        return inner if any(t is not None for t in inner) else None
    return None


def in_order(template, structure):
    """``structure`` with its dicts' keys in ``template``'s order."""
    if template is None:
        return structure
    if isinstance(template, dict) and type(structure) is dict and set(template) == set(structure):
        return {key: in_order(template[key], structure[key]) for key in template}
    if isinstance(template, list) and type(structure) in (list, tuple) and len(template) == len(structure):
        return type(structure)(in_order(t, value) for t, value in zip(template, structure))
    return structure
