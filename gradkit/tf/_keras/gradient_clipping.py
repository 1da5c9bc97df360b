"""Keras optimizers' ``clipnorm``, ``clipvalue`` and ``global_clipnorm``, as Keras 3 computes them.

Each is differentiable everywhere a training step is (an outer tape differentiates through
the clipping): the norms' square roots have derivative 0, not infinity, at an all-zero
gradient, where Keras' forward values are kept.
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors

from .optimizer_rules import tf_maximum, tf_minimum

CLIP_OPTIONS = ("clipnorm", "clipvalue", "global_clipnorm")


def check_clip_options(cls_name: str, options: dict) -> None:
    """Keras allows one clipping option at a time."""
    given = {k: options[k] for k in CLIP_OPTIONS if options.get(k) is not None}
    if len(given) > 1:
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.{cls_name} got {', '.join(f'{k}={v!r}' for k, v in given.items())}, but "
            "Keras allows only one of clipnorm, clipvalue and global_clipnorm. Keep one of them, or clip the "
            "gradients yourself (tf.clip_by_norm, tf.clip_by_global_norm) before apply_gradients."
        )


def active_clip(clipnorm, clipvalue, global_clipnorm):
    """The clipping a step applies, as Keras picks it (a value that is not > 0 is off): a
    ``(kind, limit)`` pair or None."""
    for kind, limit in (("clipnorm", clipnorm), ("global_clipnorm", global_clipnorm), ("clipvalue", clipvalue)):
        if limit and limit > 0:
            return kind, float(limit)
    return None


def _safe_sqrt(x):
    positive = x > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1)), x)


def _clip_by_norm(g, clipnorm):
    # Keras' two-tap where: the norm of an all-zero gradient is 0 with derivative 0.
    l2norm = _safe_sqrt(jnp.sum(g * g, keepdims=True))
    return (g * clipnorm) / tf_maximum(l2norm, clipnorm)


def _clip_by_global_norm(grads, clipnorm):
    norm = _safe_sqrt(jnp.sum(jnp.stack([jnp.sum(g * g) for g in grads])))
    inverse = jnp.where(norm > 0, 1.0 / jnp.where(norm > 0, norm, 1), jnp.inf)
    # Keras' formula, kept for its rounding: clipnorm * (1 / clipnorm) need not be exactly 1.
    # (norm - norm) makes the scale NaN for a non-finite norm, as in Keras.
    scale = clipnorm * tf_minimum(inverse, 1.0 / clipnorm) + (norm - norm)
    return [g * scale for g in grads]


def clip_gradients(grads, clip):
    """``grads`` clipped as ``clip`` (from ``active_clip``) says."""
    if clip is None:
        return grads
    kind, limit = clip
    if kind == "clipnorm":
        return [_clip_by_norm(g, limit) for g in grads]
    if kind == "global_clipnorm":
        return _clip_by_global_norm(grads, limit)
    # TensorFlow's clip_by_value passes the gradient at the bounds too (jnp.clip halves it there).
    return [jnp.where(g < -limit, -limit, jnp.where(g > limit, limit, g)) for g in grads]
