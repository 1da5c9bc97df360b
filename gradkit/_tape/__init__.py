"""The tape: eager-looking recording, compiled replay, TensorFlow's GradientTape API."""

from .._core import captures as _captures
from .._core import frames as _frames
from . import capture as _capture
from . import record as _record
from . import tensor as _tensor  # noqa: F401  (defines Tensor before anything records)

# The core's assignments, stop_gradient and custom_gradient call frames.apply; from here
# on, tensors a tape records are recorded there too.
_frames.set_apply(_record.apply)
# A compiled function closing over a tensor a tape records takes it as an input (_core/captures.py).
_captures.set_hooks(isolate=_capture.outside_sessions, argument=_capture.argument, capturable=_record.capturable_now)
