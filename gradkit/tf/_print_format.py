"""How ``tf.print`` writes values: TensorFlow's summaries of tensors.

A tensor prints as nested brackets with its elements separated by spaces (``[[1 2]\\n [3 4]]``),
eliding the middle of any dimension longer than twice ``summarize`` (3 by default, -1: never)
with ``...``. A float prints in the fewest digits that read back as the same value among
``%.6g`` / ``%.9g`` for float32 (``%.15g`` / ``%.17g`` for float64), so ``3.0`` prints ``3``;
a bool as ``1`` or ``0``; a complex number as ``?``, as TensorFlow does. Python values print as Python prints them, with tensors inside lists,
tuples and dicts printed as above.

>>> import numpy as np
>>> summary(np.arange(20), 3)
'[0 1 2 ... 17 18 19]'
>>> summary(np.array([1.5, 2.25, 3.0], np.float32), 3)
'[1.5 2.25 3]'
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

# The printf precisions TensorFlow tries for a float, shortest first (FloatToBuffer, DoubleToBuffer);
# a float16 (and a bfloat16) prints as the float32 it widens to, in 9 digits.
_PRECISIONS = {np.dtype(np.float64): (15, 17), np.dtype(np.float16): (9, 9)}
_DEFAULT_PRECISIONS = (6, 9)
_BFLOAT16 = np.dtype(jnp.bfloat16)


def _scalar(x: np.generic) -> str:
    if isinstance(x, (np.bool_, bool)):
        return "1" if x else "0"
    if getattr(x, "dtype", None) == _BFLOAT16:
        return _float(x.astype(np.float32), (9, 9))  # widened to float32, as float16 is
    if isinstance(x, np.floating):
        return _float(x, _PRECISIONS.get(x.dtype, _DEFAULT_PRECISIONS))
    if isinstance(x, np.complexfloating):
        return "?"  # TensorFlow's summary does not print complex values
    return str(x)


def _float(x: np.floating, precisions) -> str:
    if not np.isfinite(x):
        return str(float(x))  # nan, inf, -inf
    short, long = precisions
    text = f"{float(x):.{short}g}"
    return text if x.dtype.type(text) == x else f"{float(x):.{long}g}"


def summary(value: np.ndarray, summarize) -> str:
    """``value`` as TensorFlow's tf.print shows a tensor; ``summarize`` elements at each end of
    each dimension (None: 3; -1: all)."""
    value = np.asarray(value)
    keep = 3 if summarize is None else int(summarize)
    return _nested(value, keep, 1)


def _nested(value: np.ndarray, keep: int, depth: int) -> str:
    if value.ndim == 0:
        return _scalar(value[()])
    n = value.shape[0]
    elide = 0 <= keep and 2 * keep < n
    rows = list(range(keep)) + [None] + list(range(n - keep, n)) if elide else list(range(n))
    parts = ["..." if i is None else _nested(value[i], keep, depth + 1) for i in rows]
    if value.ndim == 1:
        return "[" + " ".join(parts) + "]"
    return "[" + ("\n" * (value.ndim - 1) + " " * depth).join(parts) + "]"  # a blank line between blocks


def text(value, summarize, top: bool = True) -> str:
    """Any tf.print argument as text: arrays summarized, structures as Python writes them."""
    if isinstance(value, (np.ndarray, np.generic)):
        return summary(value, summarize)
    if isinstance(value, dict):
        # Keys sorted, as TensorFlow flattens a dict (tf.nest) to print it.
        return "{" + ", ".join(f"{k!r}: {text(value[k], summarize, False)}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(text(v, summarize, False) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(text(v, summarize, False) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    return str(value) if top or not isinstance(value, str) else repr(value)


def write(line: str, output_stream) -> None:
    """``line`` to ``output_stream``: a file object, or a ``'file://path'`` TensorFlow appends to."""
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        with open(output_stream[len("file://") :], "a") as f:
            f.write(line)
        return
    output_stream.write(line)
    output_stream.flush()
