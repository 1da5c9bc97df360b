"""``tf.nest``: structure utilities that treat Variables, tensors and None as leaves.

>>> import gradkit.tf as tf
>>> a = [tf.Variable(1.0), {"b": tf.Variable(2.0)}]
>>> [float(x) for x in flatten(map_structure(lambda v: v * 2, a))]
[2.0, 4.0]
"""

from __future__ import annotations

import jax

from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor


def _is_leaf(x) -> bool:
    return x is None or isinstance(x, (Variable, Tensor))


def map_structure(func, *structure, check_types=True, expand_composites=False):
    return jax.tree_util.tree_map(func, *structure, is_leaf=_is_leaf)


def flatten(structure, expand_composites=False):
    return jax.tree_util.tree_leaves(structure, is_leaf=_is_leaf)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    treedef = jax.tree_util.tree_structure(structure, is_leaf=_is_leaf)
    return jax.tree_util.tree_unflatten(treedef, list(flat_sequence))


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    s1 = jax.tree_util.tree_structure(nest1, is_leaf=_is_leaf)
    s2 = jax.tree_util.tree_structure(nest2, is_leaf=_is_leaf)
    if s1 != s2:
        raise ValueError(f"The two structures don't have the same nested structure: {s1} vs {s2}")


def is_nested(seq) -> bool:
    return isinstance(seq, (list, tuple, dict))
