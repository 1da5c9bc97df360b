"""``Shape``: what ``Tensor.shape`` returns, a tuple of ints that also reads as TensorFlow's
``TensorShape`` (``as_list()``, ``rank``, ``== [2, 3]``), so code of either kind takes it."""

from __future__ import annotations

import math


class Shape(tuple):
    """A tuple of ints with TensorFlow's ``TensorShape`` methods.

    >>> s = Shape((2, 3))
    >>> s == (2, 3), s == [2, 3], s.as_list(), s.rank, s.num_elements(), (s[1:] + [4]).as_list()
    (True, True, [2, 3], 2, 6, [3, 4])
    """

    __slots__ = ()

    def as_list(self) -> list:
        return list(self)

    @property
    def rank(self) -> int:
        return len(self)

    @property
    def ndims(self) -> int:
        return len(self)

    @property
    def dims(self) -> list:
        return list(self)

    def num_elements(self) -> int:
        return math.prod(self)

    def is_fully_defined(self) -> bool:
        return True  # every dimension of a gradkit value is known

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return type(self)(item) if isinstance(key, slice) else item

    def __add__(self, other):
        # TensorFlow code writes ``x.shape[:-1] + [units]``.
        return type(self)(tuple(self) + tuple(other)) if isinstance(other, (tuple, list)) else NotImplemented

    def __radd__(self, other):
        return type(self)(tuple(other) + tuple(self)) if isinstance(other, (tuple, list)) else NotImplemented

    def __eq__(self, other):
        # TensorFlow compares a shape with a list of its dimensions too.
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = tuple.__hash__
