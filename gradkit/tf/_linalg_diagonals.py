"""``tf.linalg.diag``, ``diag_part`` and ``set_diag``: the diagonals of (batched) matrices.

``k`` is one diagonal's offset (above the main diagonal for ``k > 0``) or a band
``k=(lower, upper)``. A band is stacked as TensorFlow stacks it: shape ``[..., upper - lower + 1,
max_diag_len]``, the ``upper`` diagonal first, each padded to the longest one's length;
``align`` says on which side the padding goes, its first word for the diagonals on and above
the main one, its second for those below (``"RIGHT_LEFT"``: superdiagonals padded on the left,
subdiagonals on the right). The entries are read and written through fixed index tables, so
gradients reach exactly the entries that a diagonal holds, as TensorFlow's do (padding gets none).

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(9.0), [3, 3])
>>> tf.linalg.diag_part(x, k=(0, 1), padding_value=-1.0).numpy().tolist()
[[-1.0, 1.0, 5.0], [0.0, 4.0, 8.0]]
>>> tf.linalg.set_diag(tf.zeros([2, 3]), [1.0, 2.0], k=1).numpy().tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import _linalg_checks as _checks
from ._convert import call, check_python_value, convert, convert_like, known_value
from ._variables import Variable

ALIGNS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")


def _diagonal_range(k, align, what: str) -> tuple[int, int]:
    """``k`` as ``(lower, upper)`` (equal for one diagonal), checked as TensorFlow checks it."""
    if align not in ALIGNS:
        raise _errors.GradkitValueError(
            f"tf.linalg.{what}: align={align!r}; TensorFlow takes one of {', '.join(ALIGNS)} "
            "(the default is 'RIGHT_LEFT')."
        )
    k = np.asarray(getattr(k, "numpy", lambda: k)())
    if not np.issubdtype(k.dtype, np.integer):
        raise _errors.GradkitTypeError(
            f"tf.linalg.{what}: k={k.tolist()} of dtype {k.dtype}; TensorFlow takes int32 offsets: an int or a "
            "band (lower, upper) of two ints."
        )
    if k.ndim > 1 or k.size not in (1, 2):
        raise _errors.GradkitValueError(
            f"tf.linalg.{what}: k={k.tolist()}; TensorFlow takes one diagonal's offset (an int) or a band "
            "(lower, upper) of two ints."
        )
    lower, upper = int(k.flat[0]), int(k.flat[-1])
    if lower > upper:
        raise _errors.GradkitValueError(
            f"tf.linalg.{what}: k=({lower}, {upper}) has its lower diagonal above its upper one; TensorFlow "
            f"needs lower <= upper: write k=({upper}, {lower})."
        )
    return lower, upper


def _check_in_matrix(shape, lower: int, upper: int, what: str, arg: str = "input") -> None:
    """TensorFlow's bounds: a (batch of) matrices, each of ``k`` with ``-M < k < N`` (or ``k == 0``)."""
    if len(shape) < 2:
        raise _errors.InvalidArgumentValueError(
            f"tf.linalg.{what}: {arg} of shape {shape}; TensorFlow needs a (batch of) matrices [..., M, N]."
        )
    rows, cols = shape[-2:]
    for k in (lower, upper):
        if k != 0 and not -rows < k < cols:
            raise _errors.GradkitValueError(
                f"tf.linalg.{what}: {arg} of shape {shape} has no diagonal k={k}; TensorFlow needs -M < k < N "
                f"(here {-rows} < k < {cols})."
            )


def _max_length(rows: int, cols: int, lower: int, upper: int) -> int:
    return max(min(rows + min(upper, 0), cols - max(lower, 0)), 0)


def _layout(rows, cols, lower, upper, align, max_len):
    """For each diagonal slot (``upper`` first) and position in it: the entry ``(row, col)`` it
    holds and whether it holds one (False: padding), as fixed NumPy index tables."""
    d = upper - np.arange(upper - lower + 1)[:, None]
    length = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    right = np.where(d >= 0, align.startswith("RIGHT"), align.endswith("RIGHT"))
    n = np.arange(max_len)[None, :] - np.where(right, max_len - length, 0)
    holds = (n >= 0) & (n < length)
    return np.where(holds, n + np.maximum(-d, 0), 0), np.where(holds, n + np.maximum(d, 0), 0), holds


def _write_table(rows, cols, lower, upper, align, max_len):
    """For each matrix entry: whether the band holds it, and its slot and position in the band."""
    i, j = np.arange(rows)[:, None], np.arange(cols)[None, :]
    d = j - i
    held = (d >= lower) & (d <= upper)
    length = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    right = np.where(d >= 0, align.startswith("RIGHT"), align.endswith("RIGHT"))
    n = np.minimum(i, j) + np.where(right, max_len - length, 0)
    return held, np.where(held, upper - d, 0), np.where(held, n, 0)


def _diag_part(x, lower, upper, align, padding_value):
    rows, cols = x.shape[-2:]
    row, col, holds = _layout(rows, cols, lower, upper, align, _max_length(rows, cols, lower, upper))
    taken = x[..., row, col]
    out = jnp.where(jnp.broadcast_to(holds, taken.shape), taken, jnp.asarray(padding_value, x.dtype))
    return out[..., 0, :] if lower == upper else out


def _set_diag(x, d, lower, upper, align):
    rows, cols = x.shape[-2:]
    if lower == upper:
        d = d[..., None, :]
    held, slot, n = _write_table(rows, cols, lower, upper, align, d.shape[-1])
    if d.shape[-1] == 0:
        # Empty diagonals write nothing; one padding entry gives the gather an index to read, and
        # keeps the result reading ``d``, so its gradient is an empty zero tensor (not None), as TensorFlow's.
        d = jnp.pad(d, [(0, 0)] * (d.ndim - 1) + [(0, 1)])
    return jnp.where(jnp.broadcast_to(held, x.shape), d[..., slot, n], x)


def _diag(d, lower, upper, align, rows, cols, padding_value):
    batch = d.shape[:-1] if lower == upper else d.shape[:-2]
    return _set_diag(jnp.full((*batch, rows, cols), padding_value, d.dtype), d, lower, upper, align)


def _diag_traced_padding(d, padding_value, lower, upper, align, rows, cols):
    # TensorFlow's MatrixDiag gives padding_value no gradient.
    return _diag(d, lower, upper, align, rows, cols, jax.lax.stop_gradient(padding_value).astype(d.dtype))


def _diag_part_traced_padding(x, padding_value, lower, upper, align):
    return _diag_part(x, lower, upper, align, jax.lax.stop_gradient(padding_value).astype(x.dtype))


def _scalar(value, what: str, dtype):
    """``padding_value`` as a Python scalar, or (a tensor whose value is traced: in ``tf.function``)
    as a scalar tensor, an operand of the op."""
    if np.dtype(dtype) == np.bool_ and isinstance(value, (int, float)):
        value = bool(value)  # TensorFlow's diag takes the default 0 (any number) for a bool matrix as bool
    # A Python float for an integer matrix is refused, as TensorFlow refuses it (a cast would
    # truncate 1.5 to 1 silently); NumPy numbers and tensors are cast, as there.
    check_python_value(value, dtype, f"tf.linalg.{what}'s padding_value")
    if isinstance(value, (Tensor, Variable)) and known_value(value) is None:
        if len(value.shape) != 0:
            raise _errors.GradkitValueError(
                f"tf.linalg.{what}: padding_value of shape {tuple(value.shape)}; TensorFlow needs a scalar."
            )
        return convert(value)
    value = np.asarray(getattr(value, "numpy", lambda: value)())
    if value.ndim != 0:
        raise _errors.GradkitValueError(
            f"tf.linalg.{what}: padding_value of shape {value.shape}; TensorFlow needs a scalar."
        )
    return value.item()


def _check_diagonal_rank(d, lower, upper, what):
    shape = tuple(d.shape)
    if len(shape) < (1 if lower == upper else 2) or (lower != upper and shape[-2] != upper - lower + 1):
        needs = "[..., max_diag_len]" if lower == upper else f"[..., {upper - lower + 1}, max_diag_len]"
        raise _errors.GradkitValueError(
            f"tf.linalg.{what}: diagonal of shape {shape} for k=({lower}, {upper}); TensorFlow needs {needs}, "
            "one row per diagonal of the band."
        )


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """``tf.linalg.diag``: a (batched) matrix with ``diagonal`` on its ``k``-th diagonal (or band)
    and ``padding_value`` elsewhere; square unless ``num_rows``/``num_cols`` say otherwise."""
    d = convert(diagonal)
    lower, upper = _diagonal_range(k, align, "diag")
    _check_diagonal_rank(d, lower, upper, "diag")
    n = d.shape[-1]
    min_rows, min_cols = n - min(upper, 0), n + max(lower, 0)
    rows, cols = int(num_rows), int(num_cols)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise _errors.InvalidArgumentValueError(
            f"tf.linalg.diag: a diagonal of length {n} at k=({lower}, {upper}) does not fit a {rows}x{cols} matrix: "
            f"it needs num_rows={min_rows} or num_cols={min_cols} (and at least that many of each), as in TensorFlow."
        )
    padding = _scalar(padding_value, "diag", d.dtype)
    if isinstance(padding, Tensor):
        return call(_diag_traced_padding, d, padding, lower=lower, upper=upper, align=align, rows=rows, cols=cols)
    return call(_diag, d, lower=lower, upper=upper, align=align, rows=rows, cols=cols, padding_value=padding)


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """``tf.linalg.diag_part``: the ``k``-th diagonal (or the band ``k=(lower, upper)``, padded with
    ``padding_value``) of each (batched) matrix."""
    x = convert(input)
    lower, upper = _diagonal_range(k, align, "diag_part")
    _check_in_matrix(tuple(x.shape), lower, upper, "diag_part")
    padding = _scalar(padding_value, "diag_part", x.dtype)
    if isinstance(padding, Tensor):
        return call(_diag_part_traced_padding, x, padding, lower=lower, upper=upper, align=align)
    return call(_diag_part, x, lower=lower, upper=upper, align=align, padding_value=padding)


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``tf.linalg.set_diag``: ``input`` with its ``k``-th diagonal (or the band ``k=(lower, upper)``)
    replaced by ``diagonal``, shaped as ``diag_part``'s result (the batch dimensions are not broadcast)."""
    x, d = convert_like(input, diagonal, what="tf.linalg.set_diag")
    _checks.check_same_dtype("set_diag", x, d, "input", "diagonal")
    lower, upper = _diagonal_range(k, align, "set_diag")
    shape = tuple(x.shape)
    _check_in_matrix(shape, lower, upper, "set_diag")
    length = _max_length(*shape[-2:], lower, upper)
    want = shape[:-2] + ((length,) if lower == upper else (upper - lower + 1, length))
    if tuple(d.shape) != want:
        raise _errors.GradkitValueError(
            f"tf.linalg.set_diag: diagonal of shape {tuple(d.shape)} for input of shape {shape} and "
            f"k=({lower}, {upper}); TensorFlow needs shape {want} (the batch dimensions are not broadcast)."
        )
    return call(_set_diag, x, d, lower=lower, upper=upper, align=align)
