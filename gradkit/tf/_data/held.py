"""A ``tf.function`` that returns a dataset (``tf.function(lambda: tf.data.Dataset.range(3))()``).

TensorFlow returns the dataset. A gradkit dataset is a Python recipe, not an array a compiled
program can return, so the function's trace holds each dataset it returns as a pytree node with
no leaves, the dataset its static part: the compiled program returns nothing for it, and the call
gives back the dataset the trace built. That is TensorFlow's result for a dataset made from
values known when the function is traced (Python numbers, NumPy arrays, constants); a later call
that does not retrace gives the same dataset, a recipe iterated afresh each time. A dataset made
from the function's tensor arguments cannot be built while tracing, as its elements must be known
then; gradkit raises a clear error for that (build the dataset outside the function).
"""

from __future__ import annotations

import jax

_returned = False  # whether any tf.function has returned a dataset (release has nothing to do before)


class _Held:
    """A dataset among a tf.function's results, as a pytree node with no leaves."""

    __slots__ = ("dataset",)

    def __init__(self, dataset):
        self.dataset = dataset


jax.tree_util.register_pytree_node(_Held, lambda held: ((), held.dataset), lambda dataset, _: _Held(dataset))


def hold(out):
    """``out`` (what a traced function returned) with each dataset in it held as a ``_Held``
    (``out`` itself where it holds none)."""
    global _returned
    from .dataset import Dataset

    def is_leaf(x) -> bool:
        return isinstance(x, Dataset) or _is_tensor(x)

    if not any(isinstance(x, Dataset) for x in jax.tree_util.tree_leaves(out, is_leaf=is_leaf)):
        return out
    _returned = True
    return jax.tree_util.tree_map(lambda x: _Held(x) if isinstance(x, Dataset) else x, out, is_leaf=is_leaf)


def release(out):
    """``out`` (what the compiled function returned) with each held dataset given back (``out``
    itself where it holds none). Dicts come back with sorted keys, as from the compiled call: the
    caller puts its key order back after."""
    if not _returned:
        return out

    def is_leaf(x) -> bool:
        return isinstance(x, _Held) or _is_tensor(x)

    if not any(isinstance(x, _Held) for x in jax.tree_util.tree_leaves(out, is_leaf=is_leaf)):
        return out
    return jax.tree_util.tree_map(lambda x: x.dataset if isinstance(x, _Held) else x, out, is_leaf=is_leaf)


def _is_tensor(x) -> bool:
    from gradkit._core.variable import Variable
    from gradkit._tape.tensor import Tensor

    return isinstance(x, (Tensor, Variable))
