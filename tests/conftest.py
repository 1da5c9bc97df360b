"""Strict settings for the whole suite, as equinox and optax run theirs."""

import os


def _accelerator_plugin_installed() -> bool:
    """True when JAX may run on a GPU or TPU here (its plugin package is installed)."""
    import importlib.metadata

    names = (d.metadata["Name"] or "" for d in importlib.metadata.distributions())
    return any(n.lower().startswith(("jax-cuda", "jax_cuda", "jax-rocm", "jax_rocm", "libtpu")) for n in names)


# The suite compiles thousands of small programs and runs each a few times, so XLA's CPU
# backend is told to spend little time on the machine code it emits: no LLVM optimization, and
# one piece of code generation per program instead of several in parallel (the two pytest
# workers already keep both cores busy). Together these take about three quarters off the compile
# time; the XLA programs are the same and results agree to rounding. These flags are for the
# CPU backend only (a GPU build crashes with them), so they are left out where a GPU/TPU
# plugin is installed, unless JAX_PLATFORMS=cpu. Set XLA_FLAGS yourself (even to "") to run
# with other flags: `XLA_FLAGS= python -m pytest` uses XLA's defaults.
def _cpu_xla_flags() -> str:
    import importlib.metadata

    flags = "--xla_backend_optimization_level=0"
    major_minor = tuple(int(p) for p in importlib.metadata.version("jaxlib").split(".")[:2])
    # jaxlib 0.12's XLA has no xla_cpu_use_fusion_emitters and aborts the process on a flag it
    # does not know; the XLA of jaxlib 0.6 to 0.11 knows both flags.
    if major_minor < (0, 12):
        flags += " --xla_cpu_use_fusion_emitters=false --xla_cpu_parallel_codegen_split_count=1"
    return flags


if os.environ.get("JAX_PLATFORMS", "").lower() == "cpu" or not _accelerator_plugin_installed():
    os.environ.setdefault("XLA_FLAGS", _cpu_xla_flags())

# TensorFlow, the parity tests' reference, runs channels-first and dilated convolutions on a CPU
# only with its oneDNN kernels, which it turns on by itself only on CPUs with AVX-512 (not on an
# AMD EPYC, say). Turned on here so the references exist on every CPU; set it yourself to override.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import jax  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(autouse=True)
def _fresh_recording_state():
    """Each test starts with no frames or tapes left over from a failed one."""
    from gradkit._core import frames

    frames._local.stack.clear()
    yield
    frames._local.stack.clear()


@pytest.fixture(autouse=True, scope="module")
def _compiled_programs_freed_after_each_module():
    """A test module's compiled programs are freed when it ends: the suite compiles thousands
    of small XLA programs, and a worker that kept all of them would grow to gigabytes and slow
    every later test."""
    yield
    import gc

    jax.clear_caches()
    gc.collect()
    # What survives a collection here (imported libraries, TensorFlow's and Keras' registries,
    # the test modules) lives to the end of the run: later collections need not scan it again.
    gc.freeze()
