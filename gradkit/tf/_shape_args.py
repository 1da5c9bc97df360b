"""TensorFlow's checks on shape-like arguments that jax would not make.

``jnp.tile`` pads short multiples with ones, ``jnp.pad`` broadcasts one row of paddings to
every axis and reflects past an edge as often as needed, ``jnp.split`` takes sizes that do not
cover the axis, and ``jax.lax.slice`` clamps a negative begin. TensorFlow refuses each of them,
so gradkit.tf does too, instead of returning a tensor TensorFlow would never produce, with an
error that is both the ValueError TensorFlow raises where it traces and the InvalidArgumentError
its eager ops raise.
"""

from __future__ import annotations

from gradkit import _errors


def check_multiples(multiples: tuple, shape: tuple) -> None:
    """``tf.tile``'s multiples: one per axis, none negative."""
    if len(multiples) != len(shape) or any(m < 0 for m in multiples):
        raise _errors.InvalidArgumentValueError(
            f"tf.tile got multiples={list(multiples)} for a tensor of shape {list(shape)}: TensorFlow needs one "
            f"non-negative multiple per axis ({len(shape)}). Pass a list of {len(shape)} ints, with 1 for an "
            "axis to keep."
        )


def check_paddings(widths: tuple, shape: tuple, mode: str) -> None:
    """``tf.pad``'s paddings: one ``[before, after]`` row per axis, none negative; a mirror mode
    cannot reach past the edge it mirrors."""
    if len(widths) != len(shape) or any(len(row) != 2 for row in widths) or any(p < 0 for r in widths for p in r):
        raise _errors.InvalidArgumentValueError(
            f"tf.pad got paddings={[list(r) for r in widths]} for a tensor of shape {list(shape)}: TensorFlow "
            f"needs a [{len(shape)}, 2] list of non-negative [before, after] counts, one row per axis "
            "(jax would broadcast a single row). Write a row for each axis, [0, 0] where nothing is added."
        )
    if mode in ("reflect", "symmetric"):
        # REFLECT leaves out the edge it mirrors, so it can add at most size - 1 entries.
        limit = {"reflect": 1, "symmetric": 0}[mode]
        for axis, (row, size) in enumerate(zip(widths, shape)):
            if max(row) > size - limit:
                raise _errors.InvalidArgumentValueError(
                    f"tf.pad(mode={mode.upper()!r}) got paddings {list(row)} on axis {axis} of size {size}: "
                    f"TensorFlow mirrors at most {size - limit} entries on each side there. Pad in several "
                    "calls, or use mode='CONSTANT'."
                )


def check_split_sizes(sizes: list, size: int, axis: int, num=None) -> None:
    """``tf.split``'s sizes: they cover the axis exactly (one -1 takes what is left; a single size is
    the axis' own, as TensorFlow requires), one per output when ``num`` is given."""
    if num is not None and int(num) != len(sizes):
        raise _errors.InvalidArgumentValueError(
            f"tf.split got num={int(num)} with {len(sizes)} sizes {sizes}: TensorFlow needs one size per output. "
            "Leave num=None, or give as many sizes as outputs."
        )
    if len(sizes) == 1 and sizes[0] != size:
        raise _errors.InvalidArgumentValueError(
            f"tf.split got the single size {sizes} for axis {axis} of size {size}: with one output TensorFlow "
            f"needs its size to be the axis' own ({size}), -1 included. Pass [{size}], or more sizes."
        )
    unknown = sizes.count(-1)
    known = sum(s for s in sizes if s != -1)
    if unknown > 1 or any(s < -1 for s in sizes) or (known != size if not unknown else known > size):
        raise _errors.InvalidArgumentValueError(
            f"tf.split got sizes {sizes} for axis {axis} of size {size}: TensorFlow needs sizes that add up to "
            f"{size} (at most one -1, which takes the rest). Fix the sizes, or pass a number of equal parts."
        )


def check_unstack_num(num, size: int, axis: int) -> None:
    """``tf.unstack``'s ``num``, when given, is the axis' size."""
    if num is not None and int(num) != size:
        raise _errors.InvalidArgumentValueError(
            f"tf.unstack got num={int(num)} for axis {axis} of size {size}: TensorFlow requires them equal. "
            "Leave num=None, or unstack a slice of the axis."
        )


def check_slice(begin: tuple, size: tuple, shape: tuple) -> None:
    """``tf.slice``: ``begin`` in ``[0, dim]`` and ``begin + size`` within the axis (size -1: to the end)."""
    if len(begin) != len(shape) or len(size) != len(shape):
        raise _errors.InvalidArgumentValueError(
            f"tf.slice got begin={list(begin)} and size={list(size)} for a tensor of shape {list(shape)}: "
            f"TensorFlow needs one of each per axis ({len(shape)})."
        )
    for axis, (b, s, dim) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= dim or s < -1 or (s != -1 and b + s > dim):
            raise _errors.InvalidArgumentValueError(
                f"tf.slice got begin {b} and size {s} on axis {axis} of size {dim}: TensorFlow needs "
                f"0 <= begin <= {dim} and begin + size <= {dim} (size -1 reads to the end; jax would clamp). "
                "For an index from the end, use x[-n:] or begin = dim - n."
            )


def check_broadcasts(shape, to_shape, what: str, name: str, to_name: str) -> None:
    """Refuse an operand whose shape does not broadcast with another's, as TensorFlow does."""
    import jax.numpy as jnp

    try:
        jnp.broadcast_shapes(tuple(shape), tuple(to_shape))
    except ValueError:
        raise _errors.InvalidArgumentValueError(
            f"{what}: {name} of shape {tuple(shape)} does not broadcast to {to_name}'s shape {tuple(to_shape)}; "
            "TensorFlow refuses it too."
        ) from None


def check_reshape(shape: tuple, size: int) -> None:
    """``tf.reshape`` to a shape with a -1 and a 0, where jax would divide by zero inferring the
    -1 (other shapes that do not fit are refused by jax's reshape, with the input named)."""
    if -1 not in shape or 0 not in shape:
        return
    if size:
        raise _errors.InvalidArgumentValueError(
            f"tf.reshape cannot give a tensor of {size} values the shape {list(shape)}, which holds none; "
            "TensorFlow refuses it too. Fix the shape."
        )
    raise _errors.InvalidArgumentValueError(
        f"tf.reshape cannot infer the -1 in {list(shape)} for an empty tensor: with a 0 among the other sizes "
        "any size fits there. Write the size instead of -1."
    )


def check_split_count(count: int, size: int, axis: int) -> None:
    """``tf.split``'s number of equal parts: at least one, dividing the axis."""
    if count < 1 or size % count:
        raise _errors.InvalidArgumentValueError(
            f"tf.split got num_or_size_splits={count} for axis {axis} of size {size}: TensorFlow needs a number of "
            "equal parts that is at least 1 and divides the axis. Pass that, or a list of sizes."
        )


def check_range(start, limit, delta) -> None:
    """``tf.range``'s arguments: a non-zero step that moves ``start`` towards ``limit``."""
    if delta == 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.range got delta=0 (start={start}, limit={limit}): TensorFlow requires a non-zero step."
        )
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        need = "start <= limit" if delta > 0 else "start >= limit"
        raise _errors.InvalidArgumentValueError(
            f"tf.range got start={start}, limit={limit}, delta={delta}: TensorFlow requires {need} for a "
            f"{'positive' if delta > 0 else 'negative'} delta. Swap start and limit, or change delta's sign."
        )
