"""``Shape``: what ``Tensor.shape`` returns, a tuple of ints that also reads as TensorFlow's
``TensorShape`` (``as_list()``, ``rank``, ``== [2, 3]``), so code of either kind takes it."""

from __future__ import annotations

import math


class Shape(tuple):
    """A tuple of ints with TensorFlow's ``TensorShape`` methods.

    >>> s = Shape((2, 3))
    >>> s == (2, 3), s == [2, 3], s.as_list(), s.rank, s.num_elements()
    (True, True, [2, 3], 2, 6)
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

    def __eq__(self, other):
        # TensorFlow compares a shape with a list of its dimensions too.
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = tuple.__hash__
