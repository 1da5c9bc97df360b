"""``gradkit.numpy``: all of ``jax.numpy``, recorded when a GradientTape watches.

Every public function of ``jax.numpy`` is lifted with ``gk.lift``: on plain arrays it is
the ``jax.numpy`` function itself; on tensors a tape records, it is one recorded op.
Submodules ``linalg`` and ``fft`` are lifted the same way.
"""

import jax.numpy as _jnp
import numpy as _np

from gradkit._tape.lift import lift_namespace as _lift_namespace

_lift_namespace(_jnp, globals())

from gradkit.numpy import fft as fft  # noqa: E402
from gradkit.numpy import linalg as linalg  # noqa: E402


def _static_shape(a) -> tuple:
    return tuple(int(d) for d in a.shape) if hasattr(a, "shape") else _jnp.shape(a)


# Structure, not values: Python ints as jax.numpy gives them, also for a recorded tensor (a
# recorded op would make them tensors, which gk.numpy.zeros(gk.numpy.shape(x)) cannot take).
def shape(a):
    """``jnp.shape``: the shape as a tuple of Python ints."""
    return _static_shape(a)


def ndim(a):
    """``jnp.ndim``: the number of axes, a Python int."""
    return len(_static_shape(a))


def size(a, axis=None):
    """``jnp.size``: the number of elements (along ``axis`` if given), a Python int."""
    found = _static_shape(a)
    if axis is None:
        return int(_np.prod(found, dtype=_np.int64))
    if isinstance(axis, (tuple, list)):
        return int(_np.prod([found[a] for a in axis], dtype=_np.int64))
    return found[axis]
