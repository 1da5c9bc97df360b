"""What differs between the jax versions gradkit supports, in one place.

Names: jax 0.10 exports ``DebugInfo``, ``DropVar``, ``get_opaque_trace_state``, ``jaxprs_in_params``
and ``InconclusiveDimensionOperation`` from ``jax.extend.core`` (and deprecates them in
``jax.core``); jax 0.6 to 0.9 export them from ``jax.core`` only. jax 0.10.1 also exports
``InconclusiveDimensionOperation`` from ``jax.errors``. Importing from whichever module has
them keeps one code path and no deprecation warning on either side of the move.

Constants: ``array_const``. Evaluating an equation of a traced program: ``bind_params``.
"""

from __future__ import annotations

import jax
import jax.errors
import jax.extend.core as _extend_core
import numpy as np

if hasattr(_extend_core, "get_opaque_trace_state"):
    from jax.extend.core import DebugInfo, DropVar, get_opaque_trace_state, jaxprs_in_params
else:
    from jax.core import DebugInfo, DropVar, get_opaque_trace_state, jaxprs_in_params

# What jax raises when a relation between symbolic dimensions is not known (jax.export).
if hasattr(jax.errors, "InconclusiveDimensionOperation"):
    InconclusiveDimensionOperation = jax.errors.InconclusiveDimensionOperation
elif hasattr(_extend_core, "InconclusiveDimensionOperation"):
    InconclusiveDimensionOperation = _extend_core.InconclusiveDimensionOperation
else:
    from jax.core import InconclusiveDimensionOperation

_ARRAYS = (jax.Array, np.ndarray, np.generic)


def array_const(c):
    """A constant of a traced program (``ClosedJaxpr.consts``) as an array.

    jax 0.8.0 to 0.9.1 hand a NumPy constant as a ``TypedNdArray``, a wrapper that is no
    ``np.ndarray`` (it subclasses one from jax 0.9.2): taken as it is, it would pass for a
    static, non-array argument (a new op for every new value) instead of an array input.
    """
    if isinstance(c, _ARRAYS) or not hasattr(c, "__array__"):
        return c
    return np.asarray(c)


def bind_params(eqn) -> tuple[tuple, dict]:
    """The functions and parameters ``eqn.primitive.bind`` takes to evaluate ``eqn`` (as
    ``jax.core.eval_jaxpr`` does): older jax versions' ``get_bind_params`` returns both, newer
    ones (0.10) only the parameters, which then carry the functions themselves."""
    bound = eqn.primitive.get_bind_params(eqn.params)
    return bound if isinstance(bound, tuple) else ((), bound)


__all__ = [
    "array_const",
    "bind_params",
    "DebugInfo",
    "DropVar",
    "InconclusiveDimensionOperation",
    "get_opaque_trace_state",
    "jaxprs_in_params",
]
