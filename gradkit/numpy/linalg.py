"""``gradkit.numpy.linalg``: ``jax.numpy.linalg``, recorded when a tape watches."""

import jax.numpy.linalg as _linalg

from gradkit._tape.lift import lift_namespace as _lift_namespace

_lift_namespace(_linalg, globals())
