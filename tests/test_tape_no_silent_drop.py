"""No jax call may silently drop a recorded tensor's gradient; NumPy may take the value."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
from gradkit._errors import RecordingError

PLAIN_JAX_CALLS = {
    "jnp.sin": jnp.sin,
    "jnp.asarray": jnp.asarray,
    "jnp.array": jnp.array,
    "jax.jit": jax.jit(lambda a: a * 2),
    "jax.tree.map": lambda a: jax.tree.map(lambda x: x, a),
}


@pytest.mark.parametrize("call", PLAIN_JAX_CALLS.values(), ids=PLAIN_JAX_CALLS.keys())
def test_plain_jax_on_a_recorded_tensor_raises_naming_gk_numpy(call):
    v = gk.Variable(2.0)
    with gk.GradientTape():
        y = v * 3.0
        with pytest.raises(RecordingError, match=r"^\[gradkit\].*gk\.numpy.*gk\.lift"):
            call(y)
    assert float(v.numpy()) == 2.0


def test_numpy_may_take_the_value_and_jax_may_after_the_tape():
    v = gk.Variable(2.0)
    with gk.GradientTape():
        y = v * 3.0
        assert np.asarray(y) == 6.0  # leaving the tape through NumPy is explicit, as in TensorFlow
    assert float(jnp.asarray(y)) == 6.0  # no tape records any more: an ordinary value


def test_jax_array_operator_with_a_recorded_tensor_is_recorded():
    v = gk.Variable(2.0)
    with gk.GradientTape() as tape:
        y = jnp.asarray(5.0) * (v * v)
    assert float(tape.gradient(y, v)) == 20.0  # d(5 v^2)/dv = 10 v
