"""Strict settings for the whole suite, as equinox and optax run theirs."""

import os

# The suite compiles hundreds of small programs and runs each a few times, so XLA's CPU
# backend is told to spend little time optimizing the machine code it emits (about a third of
# the compile time; the XLA programs are the same, results agree to rounding). Set XLA_FLAGS
# yourself (even to "") to run with other flags: `XLA_FLAGS= python -m pytest` uses XLA's defaults.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false")

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
