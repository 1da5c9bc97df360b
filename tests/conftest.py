"""Strict settings for the whole suite, as equinox and optax run theirs."""

import jax
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(autouse=True)
def _fresh_recording_state():
    """Each test starts with no frames or tapes left over from a failed one."""
    from gradkit._core import frames

    frames._local.stack.clear()
    yield
    frames._local.stack.clear()
