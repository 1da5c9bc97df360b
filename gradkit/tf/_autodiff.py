"""``tf.autodiff``: ``ForwardAccumulator`` (from the tape layer, imported when first used)."""

from __future__ import annotations

from gradkit._errors import GradkitError


def ForwardAccumulator(primals, tangents):  # noqa: N802  (TensorFlow's class name)
    """``tf.autodiff.ForwardAccumulator(primals, tangents)``: forward-mode JVPs (``.jvp(target)``)."""
    try:
        from gradkit._tape.forward import ForwardAccumulator as _ForwardAccumulator
    except ImportError:
        raise GradkitError(
            "ForwardAccumulator is not available in this gradkit build yet; use gk.jvp for forward mode."
        ) from None
    _check_tangent_dtypes(primals, tangents)
    return _ForwardAccumulator(primals, tangents)


def _check_tangent_dtypes(primals, tangents) -> None:
    """TensorFlow refuses a tangent whose dtype is not its primal's (``ValueError``);
    gradkit.tf does too, rather than casting it silently (a complex tangent for a real
    primal would lose its imaginary part). Python numbers and lists take the primal's."""
    import jax
    import numpy as np

    from gradkit._core.variable import Variable
    from gradkit._errors import GradkitValueError
    from gradkit._tape.tensor import Tensor

    def leaves(tree):
        return jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)) or x is None)

    p_leaves, t_leaves = leaves(primals), leaves(tangents)
    if len(p_leaves) != len(t_leaves):
        return  # the accumulator says what is wrong
    for k, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        p_dtype, t_dtype = getattr(p, "dtype", None), getattr(t, "dtype", None)
        if p_dtype is None or t_dtype is None or np.dtype(p_dtype) == np.dtype(t_dtype):
            continue
        if np.issubdtype(np.dtype(p_dtype), np.inexact):
            raise GradkitValueError(
                f"ForwardAccumulator got a tangent of dtype {np.dtype(t_dtype).name} for a primal of dtype "
                f"{np.dtype(p_dtype).name} (entry {k}); TensorFlow refuses a tangent of another dtype. Cast it "
                f"first: tf.cast(tangent, tf.{np.dtype(p_dtype).name})."
            )


def _symbolic(name: str, tape_form: str):
    def refuse(ys, xs, *args, **kwargs):
        from gradkit._errors import GradkitRuntimeError

        raise GradkitRuntimeError(
            f"tf.{name} differentiates a TensorFlow graph symbolically, and gradkit.tf builds no graph, inside "
            f"tf.function or out (eager TensorFlow raises RuntimeError here too). Record the computation on a tape "
            f"and ask it: {tape_form}."
        )

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``tf.{name}``: refused; see the error it raises."
    return refuse


gradients = _symbolic("gradients", "with tf.GradientTape() as tape: tape.watch(x); y = f(x)  then  tape.gradient(y, x)")
hessians = _symbolic(
    "hessians",
    "with tf.GradientTape() as outer: with tf.GradientTape() as inner: y = f(x); g = inner.gradient(y, x)  then  "
    "outer.jacobian(g, x)",
)
