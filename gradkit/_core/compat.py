"""Names jax moved between its public modules within the versions gradkit supports.

jax 0.10 exports ``DebugInfo``, ``DropVar``, ``get_opaque_trace_state``, ``jaxprs_in_params``
and ``InconclusiveDimensionOperation`` from ``jax.extend.core`` (and deprecates them in
``jax.core``); jax 0.6 to 0.9 export them from ``jax.core`` only. jax 0.10.1 also exports
``InconclusiveDimensionOperation`` from ``jax.errors``. Importing from whichever module has
them keeps one code path and no deprecation warning on either side of the move.
"""

from __future__ import annotations

import jax.errors
import jax.extend.core as _extend_core

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

__all__ = [
    "DebugInfo",
    "DropVar",
    "InconclusiveDimensionOperation",
    "get_opaque_trace_state",
    "jaxprs_in_params",
]
