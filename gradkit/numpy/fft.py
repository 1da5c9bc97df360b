"""``gradkit.numpy.fft``: ``jax.numpy.fft``, recorded when a tape watches."""

import jax.numpy.fft as _fft

from gradkit._tape.lift import lift_namespace as _lift_namespace

_lift_namespace(_fft, globals())
