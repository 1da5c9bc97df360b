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
    return _ForwardAccumulator(primals, tangents)
