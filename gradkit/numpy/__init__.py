"""``gradkit.numpy``: all of ``jax.numpy``, recorded when a GradientTape watches.

Every public function of ``jax.numpy`` is lifted with ``gk.lift``: on plain arrays it is
the ``jax.numpy`` function itself; on tensors a tape records, it is one recorded op.
Submodules ``linalg`` and ``fft`` are lifted the same way.
"""

import jax.numpy as _jnp

from gradkit._tape.lift import lift_namespace as _lift_namespace

_lift_namespace(_jnp, globals())

from gradkit.numpy import fft as fft  # noqa: E402
from gradkit.numpy import linalg as linalg  # noqa: E402
