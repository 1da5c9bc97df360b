"""More of ``keras.ops.linalg``: ``eig`` (``tf.linalg.eig``: complex eigenvalues and unit
eigenvectors of a general square matrix) and ``jvp`` (forward-mode derivatives, through
``tf.autodiff.ForwardAccumulator`` as on Keras' TensorFlow backend).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> y, dy = ops.jvp(ops.sin, (tf.constant(0.0),), (tf.constant(2.0),))
>>> float(y), float(dy)
(0.0, 2.0)
"""

from __future__ import annotations

import jax

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from ... import _autodiff, _linalg_eig
from ..._convert import wrap
from .dispatch import cast, keras_op, tensor

NAMES = "eig jvp"


@keras_op
def eig(x):
    """``keras.ops.eig(x)``: ``(eigenvalues, eigenvectors)`` of each square matrix in ``x`` (shape
    ``(..., M, M)``), complex64 from float32; the order and phases LAPACK's (see ``tf.linalg.eig``)."""
    x = tensor(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.eig takes square matrices (shape (..., M, M)), but got shape {tuple(x.shape)} (Keras "
            "raises ValueError)."
        )
    return _linalg_eig.eig(x)


def _leaf(v):
    return isinstance(v, (Tensor, Variable)) or v is None


def jvp(fun, primals, tangents, has_aux=False):
    """``keras.ops.jvp(fun, primals, tangents, has_aux=False)``: ``(fun(*primals), J @ tangents)``, the
    Jacobian-vector product of ``fun`` at ``primals`` along ``tangents`` (one per primal, cast to its
    dtype); with ``has_aux``, ``fun`` returns ``(output, aux)`` and ``aux`` comes back third."""
    if not callable(fun):
        raise _errors.GradkitTypeError(f"tf.keras.ops.jvp takes a callable fun, but got {fun!r}.")
    if not isinstance(primals, (tuple, list)):
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.jvp takes primals as a tuple or list of fun's arguments, but got {type(primals).__name__}. "
            "Wrap a single argument: (x,)."
        )
    p_leaves, p_tree = jax.tree_util.tree_flatten(primals, is_leaf=_leaf)
    t_leaves, _ = jax.tree_util.tree_flatten(tangents, is_leaf=_leaf)
    if len(p_leaves) != len(t_leaves):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.jvp got {len(p_leaves)} primal(s) but {len(t_leaves)} tangent(s). Pass one tangent per "
            "primal, in the same structure."
        )
    p_leaves = [wrap(tensor(p)) for p in p_leaves]
    t_leaves = [cast(t, p.dtype) for t, p in zip(t_leaves, p_leaves)]
    primals = jax.tree_util.tree_unflatten(p_tree, p_leaves)
    with _autodiff.ForwardAccumulator(p_leaves, t_leaves) as acc:
        out = fun(*primals)
        if has_aux:
            out, aux = out
        tangents_out = acc.jvp(out)
    return (out, tangents_out, aux) if has_aux else (out, tangents_out)
