"""``tf.config``'s device functions against real TensorFlow on this machine: the devices listed
(names and types, as TensorFlow names them), the settings scripts make before training, and the
refusal to hide a device JAX already uses."""

import jax
import pytest

import gradkit.tf as gtf


def test_cpu_devices_are_named_as_tensorflow_names_them():
    tf = pytest.importorskip("tensorflow")
    if jax.default_backend() != "cpu":
        pytest.skip("compares the CPU listing; an accelerator adds JAX's devices of its own")
    assert [tuple(d) for d in gtf.config.list_physical_devices()] == [
        (d.name, d.device_type) for d in tf.config.list_physical_devices()
    ]
    assert [tuple(d) for d in gtf.config.list_logical_devices("CPU")] == [
        (d.name, d.device_type) for d in tf.config.list_logical_devices("CPU")
    ]
    assert gtf.config.list_physical_devices("GPU") == [] == tf.config.list_physical_devices("GPU")
    assert gtf.config.experimental.list_physical_devices("cpu") == gtf.config.get_visible_devices("CPU")


def test_a_training_script_preamble_runs():
    gpus = gtf.config.list_physical_devices("GPU")
    for gpu in gpus:
        gtf.config.experimental.set_memory_growth(gpu, True)
        assert gtf.config.experimental.get_memory_growth(gpu)
    gtf.config.set_visible_devices(gpus, "GPU")
    gtf.config.set_soft_device_placement(False)
    assert not gtf.config.get_soft_device_placement()
    gtf.config.set_soft_device_placement(True)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.config\.experimental\.set_memory_growth got"):
        gtf.config.experimental.set_memory_growth("GPU:0", True)


def test_hiding_a_device_jax_uses_is_refused():
    gpus = gtf.config.list_physical_devices("GPU")
    if not gpus:
        gtf.config.set_visible_devices([], "GPU")  # nothing to hide: accepted, as on TensorFlow
        return
    with pytest.raises(RuntimeError, match="cannot hide a device"):
        gtf.config.set_visible_devices([], "GPU")
