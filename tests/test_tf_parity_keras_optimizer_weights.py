"""Keras 3's optimizer weights API against real Keras: ``set_weights``, ``save_own_variables``/
``load_own_variables``, ``add_optimizer_variables`` in an optimizer of your own, and the
optimizer's Variables (``iterations``, slots) behaving as tensors under Python operators."""

import warnings

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

GRADIENTS = ([1.0, -1.0], 0.3)


def _variables(tf):
    return tf.Variable([1.0, 2.0]), tf.Variable(0.5)


def _step(tf, optimizer, w, b):
    optimizer.apply_gradients([(tf.constant(GRADIENTS[0]), w), (tf.constant(GRADIENTS[1]), b)])


def _values(optimizer):
    return [np.asarray(v.numpy()).astype(np.float64) for v in optimizer.variables]


def p_operators_on_iterations_and_slots(tf):
    w, b = _variables(tf)
    optimizer = tf.keras.optimizers.Adam(0.1)
    _step(tf, optimizer, w, b)
    _step(tf, optimizer, w, b)
    iterations = optimizer.iterations
    slot = optimizer.variables[2]
    return [
        (iterations + 1).numpy(),
        (iterations % 2).numpy(),
        (iterations * 3 > 5).numpy(),
        (-iterations).numpy(),
        (slot * 2.0).numpy(),
        (slot + slot).numpy(),
    ]


def _momentum_class(tf):
    class TwoSlots(tf.keras.optimizers.Optimizer):
        def __init__(self, **kwargs):
            super().__init__(learning_rate=0.1, name="two_slots", **kwargs)

        def build(self, var_list):
            super().build(var_list)
            self.m, self.n = self.add_optimizer_variables(var_list, ["m", "n"], initializer=["zeros", "ones"])
            self.single = self.add_optimizer_variables(var_list, "single")

        def update_step(self, gradient, variable, learning_rate):
            i = self._get_variable_index(variable)
            self.assign(self.m[i], 0.9 * self.m[i] + gradient)
            self.assign(self.n[i], 0.5 * self.n[i])
            self.assign_add(self.single[i], gradient)
            self.assign_sub(variable, learning_rate * self.m[i] * self.n[i])

    return TwoSlots


def p_add_optimizer_variables(tf):
    w, b = _variables(tf)
    optimizer = _momentum_class(tf)(clipnorm=1.0)
    for _ in range(3):
        _step(tf, optimizer, w, b)
    return [w, b, _values(optimizer), [tuple(v.shape) for v in optimizer.variables]]


def p_add_optimizer_variables_refuses_mismatched_initializers(tf):
    w, b = _variables(tf)
    return tf.keras.optimizers.SGD().add_optimizer_variables([w, b], ["m", "n"], initializer=["zeros"])


def p_set_weights_then_a_step(tf):
    w, b = _variables(tf)
    optimizer = tf.keras.optimizers.Adam(0.1)
    optimizer.build([w, b])
    optimizer.set_weights(
        [
            np.full(tuple(v.shape), k + 0.5 if k else 5, np.dtype(getattr(v.dtype, "name", v.dtype)))
            for k, v in enumerate(optimizer.variables)
        ]
    )
    _step(tf, optimizer, w, b)
    return [w, b, _values(optimizer)]


def p_set_weights_refuses_an_unbuilt_optimizer(tf):
    return tf.keras.optimizers.SGD().set_weights([np.array(1)])


def p_set_weights_refuses_a_wrong_shape(tf):
    w, b = _variables(tf)
    optimizer = tf.keras.optimizers.SGD(momentum=0.9)
    optimizer.build([w, b])
    return optimizer.set_weights([np.array(1), np.array(0.1, "float32"), np.ones(3, "float32")])


def p_save_and_load_own_variables(tf):
    w, b = _variables(tf)
    optimizer = tf.keras.optimizers.RMSprop(0.1, momentum=0.5, centered=True)
    for _ in range(2):
        _step(tf, optimizer, w, b)
    store = {}
    optimizer.save_own_variables(store)
    loaded = tf.keras.optimizers.RMSprop(0.1, momentum=0.5, centered=True)
    loaded.build([w, b])
    loaded.load_own_variables(store)
    _step(tf, optimizer, w, b)
    before = [w.numpy(), b.numpy()]
    _step(tf, loaded, w, b)
    return [sorted(store, key=int), _values(loaded), before, w, b]


@pytest.mark.parametrize("library", ["tf", "gk"])
def test_load_own_variables_with_another_count_warns_and_loads_nothing(library):
    tf = {"tf": tf_real, "gk": gtf}[library]
    w, b = _variables(tf)
    optimizer = tf.keras.optimizers.Adam(0.1)
    optimizer.build([w, b])
    before = _values(optimizer)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer.load_own_variables({"0": np.array(3), "1": np.array(0.5, "float32")})
    assert any("Skipping variable loading" in str(w.message) for w in caught)
    for value, old in zip(_values(optimizer), before):
        np.testing.assert_array_equal(value, old)


def test_a_refused_set_weights_leaves_every_variable_unchanged():
    # Keras assigns the Variables before the wrong one; gradkit checks every shape first.
    w, b = _variables(gtf)
    optimizer = gtf.keras.optimizers.SGD(momentum=0.9)
    optimizer.build([w, b])
    before = _values(optimizer)
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape \(2,\).*\(3,\).*no variable was set"):
        optimizer.set_weights([np.array(7), np.array(0.5, "float32"), np.ones(3, "float32")])
    for value, old in zip(_values(optimizer), before):
        np.testing.assert_array_equal(value, old)


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
