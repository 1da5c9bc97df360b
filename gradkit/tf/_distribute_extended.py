"""``strategy.extended``: TensorFlow's ``StrategyExtended`` for a strategy of one replica.

Code written against the lower-level API (an optimizer's ``extended.update(var, fn)``, a loop's
``extended.reduce_to``, checks of ``extended.worker_devices`` or ``variable_created_in_scope``)
runs as TensorFlow runs it on one device: an update calls ``fn`` on the Variable itself, a
reduction of the one replica's value is that value, and the devices are the one JAX runs on.

>>> import gradkit.tf as tf
>>> strategy = tf.distribute.MirroredStrategy()
>>> with strategy.scope():
...     v = tf.Variable(1.0)
>>> _ = strategy.extended.update(v, lambda var, d: var.assign_add(d), args=(tf.constant(2.0),))
>>> float(v.numpy()), strategy.extended.variable_created_in_scope(v)
(3.0, True)
"""

from __future__ import annotations

import contextlib

from gradkit import _errors
from gradkit._tape.tensor import device_name


def _device_name() -> str:
    """The device JAX runs on, by TensorFlow's full name (``/job:localhost/.../device:CPU:0``)."""
    return device_name()


class StrategyExtended:
    """``strategy.extended`` of a one-replica strategy; see the module docstring."""

    experimental_require_static_shapes = False
    should_checkpoint = True
    should_save_summary = True
    experimental_between_graph = False

    def __init__(self, strategy, default: bool = False):
        self._strategy = strategy
        self._default = default

    def _in_multi_worker_mode(self) -> bool:
        return False

    def _devices(self, what: str) -> tuple:
        if self._default:
            raise _errors.GradkitRuntimeError(  # TensorFlow's RuntimeError
                f"{what}() method unsupported by default tf.distribute.Strategy. Enter a strategy's scope "
                "(tf.distribute.MirroredStrategy()) to ask for its devices."
            )
        return (_device_name(),)

    @property
    def worker_devices(self) -> tuple:
        return self._devices("worker_devices")

    @property
    def parameter_devices(self) -> tuple:
        return self._devices("parameter_devices")

    def non_slot_devices(self, var_list):
        return var_list if self._default else (_device_name(),)

    def variable_created_in_scope(self, v) -> bool:
        """Whether ``v`` was made inside this strategy's ``scope()`` (the default strategy:
        outside every strategy's scope), as TensorFlow answers."""
        owner = getattr(v, "__dict__", {}).get("_distribute_strategy")
        return owner is None if self._default else owner is self._strategy

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        """Variables made inside are placed with the given one: one device, so where they are."""
        from ._distribute import get_strategy

        if not self._default and get_strategy() is not self._strategy:
            raise _errors.GradkitRuntimeError(
                f'Need to be inside "with strategy.scope()" for {self._strategy!r} to call colocate_vars_with, '
                "as in TensorFlow."
            )
        yield

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """``fn(var, *args, **kwargs)``: the update of the one copy of ``var`` (with
        ``group=False``, each result as the tuple of the replicas' results, as TensorFlow gives it)."""
        return _grouped(fn(var, *args, **(kwargs or {})), group)

    def update_non_slot(self, colocate_with, fn, args=(), kwargs=None, group=True):
        return _grouped(fn(*args, **(kwargs or {})), group)

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        return self._strategy.run(fn, args=args, kwargs=kwargs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """The one replica's ``value`` (every reduction of one value is that value)."""
        from ._distribute import _reduce_op

        _reduce_op(reduce_op)
        return value

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce_to(reduce_op, value, destination) for value, destination in value_destination_pairs]

    def broadcast_to(self, tensor, destinations):
        return tensor

    def value_container(self, value):
        return value

    def read_var(self, v):
        from ._array import identity

        return identity(v)


def _grouped(result, group: bool):
    """``result`` as TensorFlow's ``update`` returns it: as it is, or per output the tuple of the
    replicas' values (here one) where ``group=False``."""
    if group:
        return result
    if isinstance(result, (list, tuple)):
        return type(result)((item,) for item in result)
    return (result,)
