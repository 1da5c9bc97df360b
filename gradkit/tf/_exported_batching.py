"""A loaded SavedModel program that ``vmap`` can take: mapped one example at a time.

A function ``tf.saved_model.load`` gives back calls a deserialized ``jax.export`` program,
which jax cannot vectorise ("Batching rule for 'call_exported' not implemented"). Yet
``tape.jacobian`` / ``batch_jacobian`` and ``tf.vectorized_map`` vectorise what they
differentiate or map, and TensorFlow computes them through a loaded function. Here the
program runs in a loop over the mapped axis instead (``jax.custom_batching.sequential_vmap``),
and its pullback likewise, at every order of differentiation the program was saved with.
"""

from __future__ import annotations

from collections.abc import Callable

import jax


def looped_when_batched(fn: Callable) -> Callable:
    """``fn`` (of arrays, calling an exported program), differentiable in reverse mode as ``fn``
    is, whose ``vmap`` (and its derivatives' ``vmap``) loops over the mapped axis."""
    looped = jax.custom_batching.sequential_vmap(fn)

    @jax.custom_vjp
    def program(*args):
        return looped(*args)

    # The residuals are the arguments: the pullback runs the program's own VJP from them (XLA
    # merges that forward pass with the one already computed inside a compiled program). Keeping
    # jax.vjp's residuals instead would need a forward rule that reverse mode cannot transpose,
    # and the second order would be lost.
    def forward(*args):
        return program(*args), args

    def backward(args, cotangent):
        return looped_when_batched(_pullback(fn))(args, cotangent)

    program.defvjp(forward, backward)
    return program


def _pullback(fn: Callable) -> Callable:
    def pull(args, cotangent):
        return jax.vjp(fn, *args)[1](cotangent)

    return pull
