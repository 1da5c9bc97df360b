"""``tf.data.Options`` and tf.data's constants.

gradkit.tf runs a pipeline in the calling thread, element by element in order, so the options
TensorFlow uses to parallelize, fuse and shard a pipeline change nothing here; they are kept
(``options()`` gives back what ``with_options`` set), and a name TensorFlow's Options does not
have is refused as TensorFlow refuses it.
"""

from __future__ import annotations

import enum

from gradkit import _errors

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class AutoShardPolicy(enum.IntEnum):
    """``tf.data.experimental.AutoShardPolicy`` (read by distribution strategies, which
    gradkit.tf does not have: kept as an option only)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class _OptionGroup:
    """Options of one kind: each of TensorFlow's names, None until set."""

    _NAMES: tuple = ()

    def __init__(self):
        for name in self._NAMES:
            object.__setattr__(self, name, None)

    def __setattr__(self, name, value):
        if name not in self._NAMES:
            raise _errors.GradkitAttributeError(
                f"Cannot set the property {name} on {type(self).__name__}: TensorFlow's has only "
                f"{', '.join(self._NAMES)}."
            )
        object.__setattr__(self, name, value)

    def _merge(self, other) -> None:
        for name in self._NAMES:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _OptionGroup):
                mine._merge(theirs)
            elif theirs is not None:
                object.__setattr__(self, name, theirs)

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self._NAMES)

    __hash__ = None


class AutotuneOptions(_OptionGroup):
    _NAMES = ("autotune_algorithm", "cpu_budget", "enabled", "initial_parallelism", "min_parallelism", "ram_budget")


class DistributeOptions(_OptionGroup):
    _NAMES = ("auto_shard_policy", "num_devices")


class OptimizationOptions(_OptionGroup):
    _NAMES = (
        "apply_default_optimizations",
        "filter_fusion",
        "filter_parallelization",
        "inject_prefetch",
        "map_and_batch_fusion",
        "map_and_filter_fusion",
        "map_fusion",
        "map_parallelization",
        "noop_elimination",
        "parallel_batch",
        "seq_interleave_prefetch",
        "shuffle_and_repeat_fusion",
    )


class ThreadingOptions(_OptionGroup):
    _NAMES = ("max_intra_op_parallelism", "private_threadpool_size")


class ServiceOptions(_OptionGroup):
    _NAMES = ("pinned",)


class Options(_OptionGroup):
    """``tf.data.Options``: TensorFlow's names (``deterministic``,
    ``experimental_distribute.auto_shard_policy``, ``threading.private_threadpool_size``, ...),
    kept and merged as TensorFlow merges them; none changes how gradkit.tf runs a pipeline."""

    _NAMES = (
        "autotune",
        "dataset_name",
        "deterministic",
        "experimental_distribute",
        "experimental_external_state_policy",
        "experimental_optimization",
        "experimental_service",
        "experimental_slack",
        "experimental_symbolic_checkpoint",
        "experimental_threading",
        "experimental_warm_start",
        "framework_type",
        "threading",
    )

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "autotune", AutotuneOptions())
        object.__setattr__(self, "experimental_distribute", DistributeOptions())
        object.__setattr__(self, "experimental_optimization", OptimizationOptions())
        object.__setattr__(self, "experimental_service", ServiceOptions())
        threading = ThreadingOptions()
        object.__setattr__(self, "threading", threading)
        object.__setattr__(self, "experimental_threading", threading)  # TensorFlow's older name for it

    def __setattr__(self, name, value):
        # TensorFlow's older name for ``deterministic``: the same option.
        super().__setattr__("deterministic" if name == "experimental_deterministic" else name, value)

    @property
    def experimental_deterministic(self):
        """TensorFlow's older name for ``deterministic``."""
        return self.deterministic

    def merge(self, options) -> Options:
        """These options with those set in ``options`` taking their place."""
        if not isinstance(options, Options):
            raise _errors.GradkitTypeError(
                f"tf.data.Options.merge got a {type(options).__name__}: pass a tf.data.Options."
            )
        merged = Options()
        merged._merge(self)
        merged._merge(options)
        return merged

    def _merge(self, other) -> None:
        for name in self._NAMES:
            if name == "experimental_threading":
                continue  # the same object as threading
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _OptionGroup):
                mine._merge(theirs)
            elif theirs is not None:
                object.__setattr__(self, name, theirs)
