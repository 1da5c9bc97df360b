"""The tape: eager-looking recording, compiled replay, TensorFlow's GradientTape API."""

from .._core import frames as _frames
from . import record as _record
from . import tensor as _tensor  # noqa: F401  (defines Tensor before anything records)

# The core's assignments, stop_gradient and custom_gradient call frames.apply; from here
# on, tensors a tape records are recorded there too.
_frames.set_apply(_record.apply)
