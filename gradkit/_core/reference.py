"""``x.ref()``: a hashable handle that compares by identity (TensorFlow's ``Reference``).

A Variable's ``==`` compares values elementwise, like an array, so ``v.ref() in refs`` needs a
key that stands for the object itself: two references are equal exactly when they wrap the
same object, whatever the values.
"""

from __future__ import annotations


class Reference:
    """A hashable reference to a Variable or tensor; ``deref()`` gives the object back."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        """The object this reference wraps."""
        return self._wrapped

    def __eq__(self, other) -> bool:
        return isinstance(other, Reference) and other._wrapped is self._wrapped

    def __hash__(self) -> int:
        return id(self._wrapped)

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._wrapped!r}>"
