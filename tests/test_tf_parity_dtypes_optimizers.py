"""Keras optimizers on bfloat16/float16 Variables, with gradients of the Variable's dtype or float32.

Keras casts each (clipped) gradient and the learning rate to the Variable's dtype before the
update, so a low-precision Variable steps in its own dtype whatever its gradient's dtype (for
Adam on bfloat16 that step is 0: beta_2 rounds to 1). gradkit.tf computed the step in float32
when the gradient was float32. Oracle: TensorFlow 2.21 / Keras 3 (values and dtypes).
Nadam on bfloat16 is left out: Keras' step is NaN there (1 - u_product is 0 in bfloat16).
"""

import pytest
from test_tape_dtypes import run_both

pytest.importorskip("tensorflow")

OPTIMIZERS = {
    "SGD": {"momentum": 0.9},
    "Adam": {},
    "AdamW": {"weight_decay": 0.1},
    "RMSprop": {},
    "Adagrad": {},
    "Adamax": {},
    "Nadam": {},
}
CASES = [
    (cls, dtype, grad_dtype)
    for cls in OPTIMIZERS
    for dtype in ("bfloat16", "float16")
    for grad_dtype in ("float32", dtype)
    if not (cls == "Nadam" and dtype == "bfloat16")
]


@pytest.mark.parametrize("cls,dtype,grad_dtype", CASES, ids=["-".join(c) for c in CASES])
def test_a_step_of_a_low_precision_variable_is_keras(cls, dtype, grad_dtype):
    def program(tf):
        v = tf.Variable([1.0, -2.0, 0.3], dtype=getattr(tf, dtype))
        opt = getattr(tf.keras.optimizers, cls)(0.05, **OPTIMIZERS[cls])
        for g in ([0.3, -1.7, 0.01], [0.2, 0.5, -0.25]):
            opt.apply_gradients([(tf.constant(g, getattr(tf, grad_dtype)), v)])
        return [v.read_value(), v.dtype.name]

    out = run_both(program)
    assert out[1] == dtype


def test_clipping_then_the_cast_as_in_keras():
    def program(tf):
        v = tf.Variable([1.0, -2.0], dtype=tf.bfloat16)
        w = tf.Variable([0.5, 0.25], dtype=tf.float16)
        opt = tf.keras.optimizers.Adam(0.1, global_clipnorm=1.0)
        opt.apply_gradients([(tf.constant([3.0, -4.0]), v), (tf.constant([0.001, 2.0]), w)])
        return [v.read_value(), w.read_value()]

    run_both(program)
