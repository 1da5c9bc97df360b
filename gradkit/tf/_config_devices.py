"""``tf.config``'s devices: listing them, and the settings scripts make before they start.

Devices are JAX's (``jax.devices()``), named as TensorFlow names them: ``PhysicalDevice(name=
'/physical_device:GPU:0', device_type='GPU')``, ``LogicalDevice(name='/device:GPU:0', ...)``.
A script's ``tf.config.experimental.set_memory_growth(gpu, True)`` and ``set_visible_devices``
are taken, as the line before a training loop: memory growth is JAX's to manage
(``XLA_PYTHON_CLIENT_PREALLOCATE=false`` before JAX starts is its switch), and hiding a device
from JAX after it started is not possible, so only the devices already visible are accepted.

>>> import gradkit.tf as tf
>>> [d.device_type for d in tf.config.list_physical_devices("CPU")]
['CPU']
"""

from __future__ import annotations

import collections

import jax

from gradkit import _errors

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_soft_placement = {"on": True}
_memory_growth: dict = {}


def _devices():
    """JAX's devices by TensorFlow's type names, numbered per type."""
    out = []
    counts: dict = {}
    for device in jax.devices() if jax.default_backend() == "cpu" else [*jax.devices(), *jax.devices("cpu")]:
        kind = "CPU" if device.platform == "cpu" else "TPU" if device.platform == "tpu" else "GPU"
        index = counts.get(kind, 0)
        counts[kind] = index + 1
        out.append((kind, index))
    return out


def list_physical_devices(device_type=None):
    """``tf.config.list_physical_devices``: JAX's devices (of ``device_type``, e.g. ``'GPU'``)."""
    wanted = None if device_type is None else str(device_type).upper()
    return [PhysicalDevice(f"/physical_device:{k}:{i}", k) for k, i in _devices() if wanted in (None, k)]


def list_logical_devices(device_type=None):
    """``tf.config.list_logical_devices``: one per physical device."""
    wanted = None if device_type is None else str(device_type).upper()
    return [LogicalDevice(f"/device:{k}:{i}", k) for k, i in _devices() if wanted in (None, k)]


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """``tf.config.set_visible_devices``: accepted when it keeps every device of that type visible;
    JAX cannot hide a device once it has started (set ``CUDA_VISIBLE_DEVICES`` or
    ``JAX_PLATFORMS=cpu`` before starting Python)."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    kinds = {device_type.upper()} if device_type else {d.device_type for d in list_physical_devices()}
    for kind in kinds:
        visible = [d for d in list_physical_devices(kind)]
        if kind != "CPU" and set(visible) - set(devices):
            raise _errors.GradkitRuntimeError(
                f"tf.config.set_visible_devices would hide {sorted(d.name for d in set(visible) - set(devices))}, "
                "but JAX cannot hide a device after it has started. Set CUDA_VISIBLE_DEVICES (or JAX_PLATFORMS=cpu "
                "for none) before starting Python."
            )


def get_memory_growth(device):
    return _memory_growth.get(getattr(device, "name", device), False)


def set_memory_growth(device, enable):
    """``tf.config.experimental.set_memory_growth``: recorded (``get_memory_growth`` reads it back);
    JAX's memory use is set by ``XLA_PYTHON_CLIENT_PREALLOCATE`` / ``XLA_PYTHON_CLIENT_MEM_FRACTION``
    before it starts."""
    if not isinstance(device, PhysicalDevice):
        raise _errors.GradkitValueError(
            f"tf.config.experimental.set_memory_growth got {device!r}: pass a device from "
            "tf.config.list_physical_devices('GPU'), as in TensorFlow."
        )
    _memory_growth[device.name] = bool(enable)


def get_soft_device_placement():
    return _soft_placement["on"]


def set_soft_device_placement(enabled):
    """``tf.config.set_soft_device_placement``: recorded; JAX places every op it can run, so there is
    nothing to soften."""
    _soft_placement["on"] = bool(enabled)
