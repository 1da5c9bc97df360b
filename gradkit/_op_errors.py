"""TensorFlow's exception classes (``tf.errors``): ``OpError`` and its subclasses, with their codes.

They live here, below every layer, rather than in ``gradkit.tf``, so that gradkit's own error
classes (``_errors.py``) can derive from them: an op that refuses an input TensorFlow would reject
with ``InvalidArgumentError`` raises a ``[gradkit]`` error that ``except
tf.errors.InvalidArgumentError:`` catches too. Nothing here imports JAX or TensorFlow.

The constructors are TensorFlow's: ``OpError(node_def, op, message, error_code, *args)`` and
``InvalidArgumentError(node_def, op, message, *args)``; ``str(error)`` is the message.

>>> error = InvalidArgumentError(None, None, "x must be positive")
>>> error.message, error.op, error.node_def, error.error_code == INVALID_ARGUMENT, str(error)
('x must be positive', None, None, True, 'x must be positive')
"""

from __future__ import annotations

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """The base class of TensorFlow's runtime errors: ``OpError(node_def, op, message, error_code)``.

    gradkit's own errors that also derive from an ``OpError`` class are built from a message
    alone; for them ``op`` and ``node_def`` are None and ``message`` is the text, as for an
    ``OpError`` raised by an eager TensorFlow op.
    """

    # Defaults for subclasses that do not run this constructor (gradkit's [gradkit] errors).
    _node_def = None
    _op = None
    _error_code = UNKNOWN
    _payloads = None

    def __init__(self, node_def, op, message, error_code, *args):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code
        self._payloads = args[0] if args else None

    @property
    def message(self) -> str:
        """The error message that describes the error."""
        return self.__dict__.get("_message", self.args[0] if self.args else "")

    @property
    def op(self):
        """The operation that failed: always None in gradkit, as in eager TensorFlow."""
        return self._op

    @property
    def node_def(self):
        """The graph node of the failed operation: always None in gradkit (it has no graph)."""
        return self._node_def

    @property
    def error_code(self) -> int:
        """The integer error code, one of the constants of ``tf.errors``."""
        return self._error_code

    @property
    def experimental_payloads(self) -> dict:
        """A dictionary of details about the error (empty unless given to the constructor)."""
        return dict(self._payloads or {})

    def __str__(self) -> str:
        return str(self.message)

    def __reduce__(self):
        # Rebuilt without calling a constructor: subclasses take different arguments.
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls, args, state):
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


def _error_class(name: str, code: int, doc: str) -> type:
    """One of TensorFlow's ``OpError`` subclasses: the constructor without the code."""

    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "_error_code": code, "__module__": __name__})


CancelledError = _error_class("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _error_class("UnknownError", UNKNOWN, "An error of unknown kind.")
InvalidArgumentError = _error_class(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument (a failed assertion too)."
)
DeadlineExceededError = _error_class("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _error_class("NotFoundError", NOT_FOUND, "A requested entity (a file, ...) was not found.")
AlreadyExistsError = _error_class("AlreadyExistsError", ALREADY_EXISTS, "An entity to create already exists.")
PermissionDeniedError = _error_class("PermissionDeniedError", PERMISSION_DENIED, "The caller may not do this.")
UnauthenticatedError = _error_class("UnauthenticatedError", UNAUTHENTICATED, "The request has no valid credentials.")
ResourceExhaustedError = _error_class("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource ran out (memory).")
FailedPreconditionError = _error_class(
    "FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state this operation needs."
)
AbortedError = _error_class("AbortedError", ABORTED, "An operation was aborted (a concurrent action).")
OutOfRangeError = _error_class("OutOfRangeError", OUT_OF_RANGE, "An operation went past the valid range (input end).")
UnimplementedError = _error_class("UnimplementedError", UNIMPLEMENTED, "An operation is not implemented.")
InternalError = _error_class("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _error_class("UnavailableError", UNAVAILABLE, "A service is unavailable for now.")
DataLossError = _error_class("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")


class OperatorNotAllowedInGraphError(TypeError):
    """An operation not allowed where a function is traced (a traced tensor used as a Python bool)."""
