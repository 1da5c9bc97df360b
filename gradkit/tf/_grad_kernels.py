"""TensorFlow's gradient kernels for ``sqrt``, ``rsqrt`` and ``reciprocal`` (0 where the
upstream gradient is 0), ``pow`` (below) and ``reduce_max``/``reduce_min`` (below).

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


@jax.custom_jvp
def _unless_zero_upstream(upstream, product):
    """``product`` (of ``upstream`` and a factor), but 0 where ``upstream`` is 0; its derivative is
    the product's, as ``_times_unless_zero``'s."""
    return jnp.where(upstream == 0, jnp.zeros_like(product), product)


_unless_zero_upstream.defjvps(
    lambda d_upstream, answer, upstream, product: jnp.zeros_like(answer),
    lambda d_product, answer, upstream, product: d_product,
)


def with_tf_gradient_kernel(fn, kernel=None):
    """``fn`` (elementwise) whose gradient is TensorFlow's kernel's: its upstream times
    ``fn``'s derivative, 0 where the upstream is 0. ``kernel(upstream, y)``, given, computes that
    product from the output ``y`` in TensorFlow's order, where forming the derivative alone first
    would overflow in half precision."""

    @jax.custom_vjp
    def op(x):
        return fn(x)

    def fwd(x):
        return fn(x), x

    def bwd(x, upstream):
        y, pull = jax.vjp(fn, x)
        if kernel is not None:
            return (_unless_zero_upstream(upstream, kernel(upstream, y)),)
        (factor,) = pull(jnp.ones_like(y))  # the elementwise derivative, in jax's convention
        return (_times_unless_zero(upstream, factor),)

    op.defvjp(fwd, bwd)
    op.__name__ = op.__qualname__ = getattr(fn, "__name__", "op")
    return op


# -- pow ------------------------------------------------------------------------------------
# TensorFlow's _PowGrad: upstream * y * x ** (y - 1) for x, and upstream * z * log(x) for y
# with log(x) taken as 0 where x has no real logarithm (x <= 0; x == 0 for a complex x).
# jax's rule gives NaN for y's gradient at x < 0. (Plain products: unlike SqrtGrad, a zero
# upstream times an infinite factor is NaN here in TensorFlow too.)


def _power(x, y):
    out = jnp.power(x, y)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        # 0 to a power of positive real part is 0 (TensorFlow's); jax's exp(y log 0) is NaN.
        out = jnp.where((x == 0) & (jnp.real(y) > 0), jnp.zeros_like(out), out)
    return out


@jax.custom_vjp
def _pow(x, y):
    return _power(x, y)


def _pow_fwd(x, y):
    return _power(x, y), (x, y)


def _pow_bwd(residuals, upstream):
    x, y = residuals
    # _pow again, not jnp.power (nor a saved output): a gradient of this gradient then follows
    # TensorFlow's rule as well, as TensorFlow differentiates its own gradient graph.
    grad_x = upstream * y * _pow(x, y - 1)
    has_log = x != 0 if jnp.issubdtype(x.dtype, jnp.complexfloating) else x > 0
    log_x = jnp.where(has_log, jnp.log(jnp.where(has_log, x, jnp.ones_like(x))), jnp.zeros_like(x))
    grad_y = upstream * _pow(x, y) * log_x
    return grad_x, grad_y


_pow.defvjp(_pow_fwd, _pow_bwd)


def tf_pow(x, y):
    """``x ** y`` (broadcast) whose gradients are TensorFlow's; integer powers have none to mend."""
    if x.dtype != y.dtype or not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.power(x, y)
    x, y = jnp.broadcast_arrays(x, y)  # the kernel's operands share a shape; jax sums the broadcast back
    return _pow(x, y)


# -- reduce_max / reduce_min -------------------------------------------------------------------
# TensorFlow's _MaxGrad/_MinGrad: the entries equal to the result share its upstream gradient
# equally, indicators / count * upstream, which is jax's rule too. Where the result is NaN no
# entry equals it and 0 / 0 makes every entry's gradient NaN; jax's rule gives 0 there once
# compiled. Written with plain ops (no custom rule), so forward mode and the batch-Jacobian
# proofs see through it.


def with_tf_extreme_gradient(reduce):
    """``reduce(x, axis, keepdims)`` (a max or a min) whose gradient is TensorFlow's."""

    def op(x, axis, keepdims):
        y = reduce(x, axis, keepdims)
        if not jnp.issubdtype(x.dtype, jnp.floating):
            return y
        is_nan = jnp.isnan(y)
        # NaN where the result is NaN and 0 elsewhere, as a constant: the sum's path then adds a
        # NaN to every entry's gradient there, and exactly 0 elsewhere (a cotangent times 0).
        poison = jax.lax.stop_gradient(jnp.where(is_nan, jnp.nan, 0.0).astype(y.dtype))
        return jnp.where(is_nan, y + jnp.sum(x, axis=axis, keepdims=keepdims) * poison, y)

    op.__name__ = op.__qualname__ = getattr(reduce, "__name__", "op")
    return op


def _rsqrt_kernel(upstream, y):
    # TensorFlow's RsqrtGrad, -0.5 * (dy * y) * (y * y) (in jax's convention for complex numbers,
    # without TensorFlow's conjugates). In float16, rsqrt(x) / x alone overflows for x below about
    # 4e-4, though the gradient of a moderate upstream does not.
    return (-0.5 * (upstream * y)) * (y * y)


tf_rsqrt = with_tf_gradient_kernel(jax.lax.rsqrt, _rsqrt_kernel)
