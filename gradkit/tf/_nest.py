"""``tf.nest``: TensorFlow's structure utilities.

Lists, tuples (namedtuples too) and dicts (OrderedDicts too) are structure; everything else,
tensors, Variables, a Variable's slice, a ``tf.TensorShape``, None and any other object, is a leaf. A dict's values
are taken in sorted key order, as TensorFlow takes them (whatever order the dict was built in),
and a rebuilt dict keeps the order of the one it copies.

>>> import gradkit.tf as tf
>>> a = [tf.Variable(1.0), {"b": tf.Variable(2.0)}]
>>> [float(x) for x in flatten(map_structure(lambda v: v * 2, a))]
[2.0, 4.0]
>>> import collections
>>> flatten(collections.OrderedDict(b=1, a=2))
[2, 1]
"""

from __future__ import annotations

from collections.abc import Mapping, MappingView

from gradkit import _errors
from gradkit._tape.shape import Shape


def is_nested(seq) -> bool:
    # A shape (tf.TensorShape, a tensor's .shape) is a tuple here but one value to TensorFlow.
    return isinstance(seq, (list, tuple, Mapping, MappingView)) and not isinstance(seq, Shape)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _same_namedtuple_type(a, b) -> bool:
    """TensorFlow's rule: two namedtuple classes of one name and the same fields are one type
    (a class defined again, in a function called twice)."""
    return (
        _is_namedtuple(a)
        and _is_namedtuple(b)
        and type(a).__name__ == type(b).__name__
        and tuple(type(a)._fields) == tuple(type(b)._fields)
    )


def _children(structure) -> list:
    if isinstance(structure, Mapping):
        return [structure[k] for k in _sorted_keys(structure)]
    return list(structure)


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError as e:
        raise _errors.GradkitTypeError(
            f"tf.nest sorts a dict's keys, as TensorFlow does, but these do not sort: {list(d)!r:.80}. "
            "Use keys of one comparable type (all str, or all int)."
        ) from e


def flatten(structure, expand_composites=False):
    """The leaves of ``structure``, depth first, a dict's in sorted key order; a leaf alone gives
    ``[leaf]``."""
    if not is_nested(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def _rebuilt(structure, children: list):
    """A structure of ``structure``'s type holding ``children`` (given in flatten order); a dict
    view comes back as a list, as it cannot be rebuilt."""
    if isinstance(structure, MappingView):
        return list(children)
    if isinstance(structure, Mapping):
        by_key = dict(zip(_sorted_keys(structure), children))
        items = [(k, by_key[k]) for k in structure]
        if type(structure) is dict:
            return dict(items)
        try:
            return type(structure)(items)
        except TypeError:  # a defaultdict takes its factory first
            rebuilt = type(structure)(getattr(structure, "default_factory", None))
            rebuilt.update(items)
            return rebuilt
    if _is_namedtuple(structure):
        return type(structure)(*children)
    return type(structure)(children)


def _pack(structure, leaves, position: int):
    if not is_nested(structure):
        return leaves[position], position + 1
    children = []
    for child in _children(structure):
        packed, position = _pack(child, leaves, position)
        children.append(packed)
    return _rebuilt(structure, children), position


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """``flat_sequence`` poured into the shape of ``structure`` (the inverse of ``flatten``)."""
    leaves = list(flat_sequence)
    count = len(flatten(structure))
    if count != len(leaves):
        raise _errors.GradkitValueError(
            f"tf.nest.pack_sequence_as: the structure holds {count} leaves but flat_sequence has {len(leaves)}; "
            "TensorFlow requires as many."
        )
    return _pack(structure, leaves, 0)[0]


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raise unless both nest the same way: a ValueError where the nesting or the number of
    entries differs, and with ``check_types`` a TypeError where a sequence's type does (a list
    against a tuple), as TensorFlow does. Dicts must have the same keys."""
    _compare(nest1, nest2, bool(check_types), nest1, nest2)


def _compare(a, b, check_types: bool, whole1, whole2) -> None:
    if is_nested(a) != is_nested(b):
        raise _errors.GradkitValueError(
            f"The two structures don't have the same nested structure: {whole1!r:.200} and {whole2!r:.200} "
            f"(one has a sequence where the other has the leaf {(b if is_nested(a) else a)!r:.60})."
        )
    if not is_nested(a):
        return
    if (
        check_types
        and type(a) is not type(b)
        and not (isinstance(a, Mapping) and isinstance(b, Mapping))
        and not _same_namedtuple_type(a, b)
    ):
        raise _errors.GradkitTypeError(
            f"The two structures don't have the same sequence type: {type(a).__name__} and {type(b).__name__} "
            f"in {whole1!r:.200} and {whole2!r:.200}. Pass check_types=False to compare the nesting alone."
        )
    if isinstance(a, Mapping) != isinstance(b, Mapping) or (isinstance(a, Mapping) and set(a) != set(b)):
        raise _errors.GradkitValueError(
            f"The two structures don't have the same nested structure: {whole1!r:.200} and {whole2!r:.200} "
            "(their dicts' keys differ)."
        )
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise _errors.GradkitValueError(
            f"The two structures don't have the same nested structure: {whole1!r:.200} and {whole2!r:.200} "
            f"(a sequence of {len(ca)} entries against one of {len(cb)})."
        )
    for x, y in zip(ca, cb):
        _compare(x, y, check_types, whole1, whole2)


def map_structure(func, *structure, check_types=True, expand_composites=False, **kwargs):
    """``func`` applied to the leaves of the structures, in the shape of the first."""
    if kwargs:
        # TensorFlow names the two keywords it takes with a ValueError, rather than Python's TypeError.
        raise _errors.GradkitValueError(
            f"tf.nest.map_structure got the keyword argument(s) {sorted(kwargs)}: the only keywords it takes are "
            "check_types and expand_composites, as in TensorFlow."
        )
    if not structure:
        raise _errors.GradkitValueError("tf.nest.map_structure takes at least one structure.")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    columns = zip(*(flatten(s) for s in structure))
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in columns])
