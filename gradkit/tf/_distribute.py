"""``tf.distribute``: TensorFlow's strategies as one replica.

gradkit runs a program on one JAX device (``jax.jit`` places it there); a sharded program is
JAX's own business (``jax.sharding``). So every strategy here has one replica:
``strategy.run(fn, args)`` is ``fn(*args)``, ``reduce`` of a per-replica value is that value
(reduced along ``axis`` when given), ``experimental_distribute_dataset`` gives the dataset's own
batches, and ``num_replicas_in_sync`` is 1. Code written for ``MirroredStrategy`` (a loss scaled
with ``tf.nn.compute_average_loss(..., global_batch_size=...)``, ``fit`` under
``strategy.scope()``) therefore trains as TensorFlow's does on one device, with the same global
batch. Multi-worker and TPU strategies are refused.

>>> import gradkit.tf as tf
>>> strategy = tf.distribute.MirroredStrategy()
>>> with strategy.scope():
...     v = tf.Variable(2.0)
>>> per_replica = strategy.run(lambda x: x * v, args=(tf.constant([1.0, 2.0]),))
>>> strategy.num_replicas_in_sync, strategy.reduce("SUM", per_replica, axis=0).numpy()
(1, np.float32(6.0))
"""

from __future__ import annotations

import contextlib
import enum
import threading

from gradkit import _errors

from . import _math
from ._array import cast
from ._convert import convert
from ._distribute_extended import StrategyExtended
from ._graph_helpers import _check_device_spec


class ReduceOp(enum.Enum):
    """``tf.distribute.ReduceOp``: how per-replica values are combined."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        name = getattr(aggregation, "name", str(aggregation)).upper()
        return ReduceOp.MEAN if "MEAN" in name else ReduceOp.SUM


class _Context(threading.local):
    def __init__(self):
        self.strategies: list = []  # the strategies whose scope() is entered, innermost last
        self.in_replica: int = 0  # depth of strategy.run calls


_context = _Context()


class InputContext:
    """``tf.distribute.InputContext`` of the one input pipeline."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync:
            raise _errors.GradkitValueError(
                f"The `global_batch_size` {global_batch_size} is not divisible by `num_replicas_in_sync` "
                f"{self.num_replicas_in_sync}"
            )
        return global_batch_size // self.num_replicas_in_sync


class ReplicaContext:
    """``tf.distribute.ReplicaContext`` of the one replica."""

    def __init__(self, strategy):
        self.strategy = strategy
        self.num_replicas_in_sync = 1
        self.replica_id_in_sync_group = 0

    def all_reduce(self, reduce_op, value, options=None):
        return value  # one replica: its value is every replica's

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """``merge_fn(strategy, *args, **kwargs)`` in the cross-replica context, as TensorFlow runs it."""
        depth, _context.in_replica = _context.in_replica, 0
        try:
            return merge_fn(self.strategy, *args, **(kwargs or {}))
        finally:
            _context.in_replica = depth


def _reduce_op(reduce_op) -> ReduceOp:
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    if isinstance(reduce_op, str) and reduce_op.upper() in ("SUM", "MEAN"):
        return ReduceOp[reduce_op.upper()]
    raise _errors.GradkitValueError(
        f"tf.distribute got reduce_op={reduce_op!r}; use tf.distribute.ReduceOp.SUM or .MEAN (or 'SUM', 'MEAN')."
    )


class Strategy:
    """``tf.distribute.Strategy`` with one replica; see the module docstring."""

    def __init__(self, name="default"):
        self._name = name

    @property
    def num_replicas_in_sync(self) -> int:
        return 1

    @property
    def extended(self) -> StrategyExtended:
        """TensorFlow's lower-level API of the strategy (``update``, ``reduce_to``, devices)."""
        if "_extended" not in self.__dict__:
            self._extended = StrategyExtended(self, default=self is _DEFAULT)
        return self._extended

    @contextlib.contextmanager
    def scope(self):
        """Variables and models made inside belong to this strategy (one replica: as anywhere)."""
        current = _context.strategies[-1] if _context.strategies else None
        if current is not None and current is not self and current is not _DEFAULT and self is not _DEFAULT:
            raise _errors.GradkitRuntimeError(  # TensorFlow's RuntimeError
                f"Mixing different tf.distribute.Strategy objects: {self!r} is not {current!r}. Enter one "
                "strategy's scope at a time; leave the outer one first."
            )
        _context.strategies.append(self)
        try:
            yield self
        finally:
            _context.strategies.pop()

    def run(self, fn, args=(), kwargs=None, options=None):
        """``fn(*args, **kwargs)`` on the one replica, with this strategy current there
        (``tf.distribute.get_strategy()``), as TensorFlow's replica context has it."""
        _context.in_replica += 1
        _context.strategies.append(self)
        try:
            return fn(*args, **(kwargs or {}))
        finally:
            _context.strategies.pop()
            _context.in_replica -= 1

    def reduce(self, reduce_op, value, axis=None):
        """The replicas' ``value`` combined by ``reduce_op`` (the one replica's value), then reduced
        along ``axis`` when given, as TensorFlow's ``Strategy.reduce``: a MEAN is the sum divided by
        the count (integers give a float, by ``truediv``)."""
        op = _reduce_op(reduce_op)
        if _context.in_replica and self is not _DEFAULT:
            raise _errors.GradkitRuntimeError(
                "Method requires being in cross-replica context, use get_replica_context().merge_call() "
                "(strategy.reduce was called inside strategy.run, as TensorFlow refuses). Reduce the result "
                "strategy.run returns, or use tf.distribute.get_replica_context().all_reduce inside it."
            )
        if axis is None:
            return value
        total = _math.reduce_sum(value, axis=axis)
        if op is ReduceOp.SUM:
            return total
        shape = convert(value).shape
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        count = 1
        for a in axes:
            count *= int(shape[int(a)])
        return _math.truediv(total, cast(count, total.dtype))

    def experimental_distribute_dataset(self, dataset, options=None):
        """The dataset itself: its batches are the one replica's (the global batch)."""
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """``dataset_fn(InputContext())``: one input pipeline for the one replica."""
        return dataset_fn(InputContext())

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def experimental_local_results(self, value):
        return (value,)

    def gather(self, value, axis):
        return value  # the one replica's value is all of it

    def experimental_distribute_values_from_function(self, value_fn):
        return value_fn(ValueContext())

    def __repr__(self):
        return f"<gradkit.tf.distribute.{type(self).__name__} (one replica)>"


class ValueContext:
    """``tf.distribute.experimental.ValueContext`` of the one replica."""

    replica_id_in_sync_group = 0
    num_replicas_in_sync = 1


class MirroredStrategy(Strategy):
    """``tf.distribute.MirroredStrategy(devices=None, cross_device_ops=None)``, as one replica."""

    def __init__(self, devices=None, cross_device_ops=None):
        super().__init__("mirrored")
        self.devices = tuple(devices) if devices is not None else None


class OneDeviceStrategy(Strategy):
    """``tf.distribute.OneDeviceStrategy(device)``."""

    def __init__(self, device):
        _check_device_spec(str(device))  # TensorFlow's ValueError for a spec it cannot read
        super().__init__("one_device")
        self.device = device


def _refused(name: str):
    class Refused(Strategy):
        def __init__(self, *args, **kwargs):
            raise _errors.GradkitNotImplementedError(
                f"tf.distribute.{name} runs a program across several machines or TPU cores, which gradkit.tf "
                "does not do (JAX does: jax.sharding and jax.distributed). tf.distribute.MirroredStrategy() "
                "runs the same code as one replica."
            )

    Refused.__name__ = Refused.__qualname__ = name
    return Refused


MultiWorkerMirroredStrategy = _refused("MultiWorkerMirroredStrategy")
TPUStrategy = _refused("TPUStrategy")
ParameterServerStrategy = _refused("experimental.ParameterServerStrategy")

_DEFAULT = Strategy()


def get_strategy() -> Strategy:
    """The strategy whose ``scope()`` is entered, else the default one."""
    return _context.strategies[-1] if _context.strategies else _DEFAULT


def creating_strategy():
    """The strategy a Variable made now belongs to: the one whose scope is entered, else None."""
    return _context.strategies[-1] if has_strategy() else None


def has_strategy() -> bool:
    """Whether a strategy's ``scope()`` (other than the default one's) is entered."""
    return any(s is not _DEFAULT for s in _context.strategies)


def in_cross_replica_context() -> bool:
    """Inside a strategy's ``scope()`` but not inside its ``run``, as in TensorFlow."""
    return has_strategy() and not _context.in_replica


def get_replica_context():
    """The replica context (None in a cross-replica context, as in TensorFlow)."""
    return None if in_cross_replica_context() else ReplicaContext(get_strategy())


NAMES = (
    "ReduceOp InputContext ReplicaContext Strategy MirroredStrategy OneDeviceStrategy MultiWorkerMirroredStrategy "
    "TPUStrategy get_strategy has_strategy in_cross_replica_context get_replica_context"
)
