"""``tf.case`` and ``tf.switch_case``: one of several branches, picked by predicates or an index.

As ``tf.cond`` does (``_control.py``): eagerly, and inside ``tf.function`` while the choice
is one Python can read, the picked branch is called alone, so a tape records what runs. A
traced choice makes them ``jax.lax.switch`` (the branches must then be pure: no Variable
assignment inside, no tape recording them there).

>>> import gradkit.tf as tf
>>> x = tf.constant(2.0)
>>> i = tf.constant(1)
>>> float(tf.switch_case(i, [lambda: x, lambda: x * 10.0])), float(tf.case([(x > 5.0, lambda: x)], lambda: -x))
(20.0, -2.0)
"""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from ._assertions import require
from ._control import _traced, _traced_arrays, _value, branch_assignments_refused, picked
from ._convert import wrap


def _switch(index, fns, what):
    """``jax.lax.switch`` over ``fns`` at a traced index (already within range)."""
    branches = [lambda fn=fn: _traced_arrays(fn(), what) for fn in fns]
    with branch_assignments_refused(f"tf.{what}"):
        return wrap(jax.lax.switch(index, branches))


def _branches(branch_fns):
    """TensorFlow's forms (a list of callables, of ``(int, callable)`` pairs, or a dict) as a list."""
    pairs = sorted(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if not pairs:
        raise _errors.GradkitValueError("tf.switch_case needs at least one branch in branch_fns, as TensorFlow does.")
    if builtins.all(callable(p) for p in pairs):
        return pairs
    keys = [p[0] if isinstance(p, (list, tuple)) and len(p) == 2 else None for p in pairs]
    if sorted(k for k in keys if isinstance(k, int)) != list(builtins.range(len(pairs))):
        raise _errors.GradkitValueError(
            f"tf.switch_case: branch_fns must be a list of callables, or (int, callable) pairs / a dict whose keys "
            f"are 0 .. {len(pairs) - 1}, as TensorFlow requires; got keys {keys}."
        )
    return [fn for _, fn in sorted(pairs, key=lambda p: p[0])]


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``tf.switch_case``: ``branch_fns[branch_index]()``; an index out of range calls ``default``
    (the last branch when ``default`` is None)."""
    if not isinstance(branch_index, (Tensor, jax.Array)):
        # TensorFlow checks this first, even when executing eagerly.
        raise _errors.GradkitTypeError(
            f"tf.switch_case takes branch_index as a tensor, as TensorFlow does (it raises TypeError for any "
            f"other value), but got {type(branch_index).__name__} {branch_index!r}. Pass an integer tensor: "
            f"tf.constant({branch_index!r}) for a number, v.read_value() for a Variable."
        )
    fns = _branches(branch_fns)
    index = _value(branch_index)
    if not jnp.issubdtype(jnp.asarray(index).dtype, jnp.integer) or jnp.ndim(index):
        raise _errors.GradkitTypeError(
            f"tf.switch_case takes a scalar integer branch_index, but got {branch_index!r}, as TensorFlow requires."
        )
    fallback = fns[-1] if default is None else default
    if not _traced(branch_index):
        i = builtins.int(np.asarray(index))
        every = [*fns, fallback] if default is not None else fns
        chosen = fns[i] if 0 <= i < len(fns) else fallback
        return picked(chosen, [fn for fn in every if fn is not chosen])
    every = [*fns, fallback]
    inside = (index >= 0) & (index < len(fns))
    return _switch(jnp.where(inside, index, len(fns)), every, "switch_case")


def _case_error(why: str):
    def make_error(ok, true_count):
        return _errors.GradkitInvalidArgumentError(
            f"tf.case: {why} ({int(true_count)} True) when the program ran, which TensorFlow refuses too. "
            "Make the predicates exclusive (or pass exclusive=False), or pass default=."
        )

    return make_error


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """``tf.case``: the function of the first pair whose predicate is True, else ``default``."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not builtins.all(isinstance(p, (list, tuple)) and len(p) == 2 and callable(p[1]) for p in pairs):
        raise _errors.GradkitTypeError(
            "tf.case takes pred_fn_pairs as a list of (predicate, callable) pairs, as TensorFlow requires."
        )
    if not pairs:
        return default()
    preds = [p for p, _ in pairs]
    fns = [fn for _, fn in pairs]
    for p in preds:
        if not isinstance(p, (Tensor, Variable, jax.Array)):
            raise _errors.GradkitTypeError(
                f"tf.case takes each predicate as a boolean tensor, as TensorFlow does (it raises TypeError "
                f"'pred must be a Tensor'), but got {type(p).__name__} {p!r}. Pass tf.constant({p!r}) or a "
                "comparison of tensors."
            )
    if not builtins.any(_traced(p) for p in preds):
        truth = [builtins.bool(np.asarray(_value(p))) for p in preds]
        # Without a default TensorFlow makes the last pair the default (run when its predicate is
        # True and no other is): exclusive=True counts only the other predicates.
        counted = builtins.sum(truth[:-1] if default is None else truth)
        if exclusive and counted > 1:
            raise _errors.GradkitInvalidArgumentError(
                f"tf.case with exclusive=True: more than 1 conditions ({counted}) evaluated as True, "
                "as TensorFlow refuses. Make the predicates exclusive, or pass exclusive=False (the first True wins)."
            )
        every = fns if default is None else [*fns, default]
        if builtins.any(truth):
            chosen = fns[truth.index(True)]
            return picked(chosen, [fn for fn in every if fn is not chosen])
        if default is None:
            raise _errors.GradkitInvalidArgumentError(
                "tf.case: none of the predicates is True and there is no default, which TensorFlow refuses. "
                "Pass default=, or make the last predicate True."
            )
        return picked(default, fns)
    stacked = jnp.stack([jnp.asarray(_value(p), bool).reshape(()) for p in preds] + [jnp.asarray(True)])
    # TensorFlow's run-time checks of a traced case: with exclusive=True at most one predicate is
    # True, and without a default at least one is.
    true_count = jnp.sum(stacked[:-1].astype(jnp.int32))
    if exclusive:
        counted = true_count if default is not None else jnp.sum(stacked[:-2].astype(jnp.int32))
        require(counted <= 1, _case_error("more than one predicate is True, with exclusive=True"), counted)
    if default is None:
        require(true_count >= 1, _case_error("none of the predicates is True and there is no default"), true_count)
    first = jnp.argmax(stacked)  # the first True; len(preds) when none is
    return _switch(first, [*fns, fns[-1] if default is None else default], "case")
