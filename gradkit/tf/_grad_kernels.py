"""TensorFlow's gradient kernels for ``sqrt``, ``rsqrt`` and ``reciprocal``: 0 where the
upstream gradient is 0.

Their derivative is infinite at 0, so the chain rule's ``0 * inf`` is NaN, which is what jax
gives for ``tf.where(x > 0, tf.sqrt(x), 0.)`` at ``x = 0``. TensorFlow's ``SqrtGrad``,
``RsqrtGrad`` and ``ReciprocalGrad`` kernels give 0 for a zero upstream instead, so code
that guards these ops with ``tf.where`` trains in TensorFlow; gradkit.tf must give the same.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


@jax.custom_jvp
def _times_unless_zero(upstream, factor):
    """``upstream * factor``, but 0 where ``upstream`` is 0 (even where ``factor`` is infinite).

    Its derivatives are the product's, so a gradient of the gradient (a Hessian through
    nested tapes) and forward mode by transposing the gradient (which differentiates it with
    respect to a zero upstream) see the plain product rule.
    """
    product = upstream * factor
    return jnp.where(upstream == 0, jnp.zeros_like(product), product)


_times_unless_zero.defjvps(
    lambda d_upstream, _, upstream, factor: d_upstream * factor,
    lambda d_factor, _, upstream, factor: upstream * d_factor,
)


def with_tf_gradient_kernel(fn):
    """``fn`` (elementwise) whose gradient is TensorFlow's kernel's: its upstream times
    ``fn``'s derivative, 0 where the upstream is 0."""

    @jax.custom_vjp
    def op(x):
        return fn(x)

    def fwd(x):
        return fn(x), x

    def bwd(x, upstream):
        y, pull = jax.vjp(fn, x)
        (factor,) = pull(jnp.ones_like(y))  # the elementwise derivative, in jax's convention
        return (_times_unless_zero(upstream, factor),)

    op.defvjp(fwd, bwd)
    op.__name__ = op.__qualname__ = getattr(fn, "__name__", "op")
    return op
