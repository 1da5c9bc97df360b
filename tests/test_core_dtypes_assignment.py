"""Assignments to and from bfloat16 follow the rule of the other floats (a cast within a kind).

NumPy's ``can_cast`` calls a cast from complex to bfloat16 "same_kind" (ml_dtypes registers
it), so a bfloat16 Variable took a complex value and dropped its imaginary part, where a
float16 one raises; and it calls bfloat16 to float16 not "same_kind", so a float16 Variable
refused a bfloat16 value it takes from float32. Oracles: the float16 Variable (gradkit's own
rule, same kind only), and TensorFlow, which refuses a Python complex for both dtypes.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

COMPLEX_VALUES = {
    "python_list": [1j, 2.0],
    "jax_array": jnp.asarray([1j, 2.0], jnp.complex64),
    "numpy_array": np.asarray([1j, 2.0], np.complex64),
}
HOW = {
    "assign": lambda v, x: v.assign(x),
    "assign_add": lambda v, x: v.assign_add(x),
    "slice_assign": lambda v, x: v[:].assign(x),
    "state": lambda v, x: gk.State({v: x}),
    "apply_updates": lambda v, x: gk.apply_updates(v, jnp.asarray(x)),
}


@pytest.mark.parametrize("how", sorted(HOW))
@pytest.mark.parametrize("value", sorted(COMPLEX_VALUES))
def test_a_complex_value_is_refused_by_bfloat16_as_by_float16(value, how):
    for dtype in (jnp.float16, jnp.bfloat16):
        v = gk.Variable(jnp.asarray([1.0, 2.0], dtype), name="v")
        with pytest.raises(
            gk.GradkitError, match=r"^\[gradkit\] cannot assign a value of dtype complex\d+ to Variable"
        ):
            HOW[how](v, COMPLEX_VALUES[value])
        assert v.dtype == dtype
        np.testing.assert_array_equal(np.asarray(v.numpy(), np.float32), [1.0, 2.0])


def test_gradkit_tf_bfloat16_variable_refuses_a_python_complex_as_tensorflow_does():
    tf = pytest.importorskip("tensorflow")
    for module in (tf, gtf):
        v = module.Variable([1.0, 2.0], dtype=module.bfloat16)
        with pytest.raises((TypeError, ValueError)):
            v.assign([1j, 2.0])
        np.testing.assert_array_equal(np.asarray(v.numpy(), np.float32), [1.0, 2.0])


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_real_values_still_assign_to_low_precision_variables(dtype):
    v = gk.Variable(jnp.asarray([1.0, 2.0], dtype), name="v")
    v.assign(jnp.asarray([3.0, 4.0]))  # float32 -> a narrower float: the same kind
    v.assign_add(np.asarray([1, 1]))  # int -> float
    v[:1].assign(jnp.asarray([0.5], jnp.bfloat16))  # bfloat16 -> float16 too: both floats
    v.assign_sub([True, False])
    assert v.dtype == dtype
    np.testing.assert_array_equal(np.asarray(v.numpy(), np.float32), [-0.5, 5.0])
