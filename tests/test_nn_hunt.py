"""gradkit.nn against hand-written JAX: Dense, BatchNorm (training and inference), Module.

The oracle of every gradient is the same model written as a pure function of the arrays,
with BatchNorm's moving statistics threaded by hand.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, count_compiles

import gradkit as gk
from gradkit import _errors, nn

X = jnp.array([[1.0, 2.0, -1.0], [3.0, -1.0, 0.5], [0.5, 0.5, 2.0], [-2.0, 1.0, 1.0]])


def pure_model(kernel, bias, gamma, beta, mm, mv, x, *, momentum, eps, training):
    """Dense(tanh) then BatchNorm, with the moving statistics threaded: (out, (mm, mv))."""
    h = jnp.tanh(x @ kernel + bias[None, :])
    if training:
        mean, var = h.mean(0), h.var(0)
        mm = mm * momentum + mean * (1 - momentum)
        mv = mv * momentum + var * (1 - momentum)
    else:
        mean, var = mm, mv
    return (h - mean[None, :]) / jnp.sqrt(var + eps)[None, :] * gamma[None, :] + beta[None, :], (mm, mv)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, activation="tanh")
        self.bn = nn.BatchNorm(momentum=0.9, epsilon=1e-3)
        self.again = [self.dense, {"bn": self.bn}]  # reached twice: listed once

    def __call__(self, x, training):
        return self.bn(self.dense(x), training=training)


def _values(m):
    return [m.dense.kernel.value, m.dense.bias.value, m.bn.gamma.value, m.bn.beta.value]


def test_module_collects_each_variable_once_in_attribute_order():
    nn.set_seed(1)
    m = Model()
    m(X, training=False)
    names = [v.name.split("/")[1] for v in m.variables]
    assert names == ["kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance"]
    assert [v.name.split("/")[1] for v in m.trainable_variables] == ["kernel", "bias", "gamma", "beta"]
    assert len(m.submodules) == 2


def test_training_step_gradient_and_moving_statistics_match_pure_jax():
    nn.set_seed(2)
    m = Model()
    m(X, training=False)  # build
    mm0, mv0 = m.bn.moving_mean.value, m.bn.moving_variance.value
    weights = jnp.arange(8.0).reshape(4, 2)

    def loss(x):
        return jnp.sum(m(x, training=True) * weights)

    def pure_loss(k, b, g, be, x):
        out, stats = pure_model(k, b, g, be, mm0, mv0, x, momentum=0.9, eps=1e-3, training=True)
        return jnp.sum(out * weights), stats

    grads, state = gk.grad(loss, argnums=0, wrt=list(m.trainable_variables), return_state=True)(X)
    want, (mm, mv) = jax.grad(pure_loss, argnums=(4, 0, 1, 2, 3), has_aux=True)(*_values(m), X)
    assert_close(grads, (want[0], list(want[1:])), rtol=1e-4, atol=1e-5)
    assert_close((state[m.bn.moving_mean], state[m.bn.moving_variance]), (mm, mv))
    # No transform changed a live Variable.
    assert_close((m.bn.moving_mean.value, m.bn.moving_variance.value), (mm0, mv0))


def test_jitted_training_then_inference_matches_pure_jax_and_compiles_once():
    nn.set_seed(3)
    m = Model()
    step = gk.jit(lambda x: m(x, training=True))
    step(X)  # builds the layers inside the trace and updates the moving statistics once
    vals = _values(m)
    _, (mm, mv) = pure_model(*vals, jnp.zeros(2), jnp.ones(2), X, momentum=0.9, eps=1e-3, training=True)
    for i in range(1, 4):
        x = X * (i + 1.0)
        assert count_compiles(lambda x=x: step(x)) == 0  # new values, same shapes: no recompilation
        _, (mm, mv) = pure_model(*vals, mm, mv, x, momentum=0.9, eps=1e-3, training=True)
    assert_close((m.bn.moving_mean.value, m.bn.moving_variance.value), (mm, mv), rtol=1e-5)
    out = m(X, training=False)
    want, _ = pure_model(*vals, mm, mv, X, momentum=0.9, eps=1e-3, training=False)
    assert_close(out, want, rtol=1e-4, atol=1e-5)


def test_layer_given_a_python_list_is_a_clear_error():
    layer = nn.Dense(2)
    with pytest.raises(_errors.GradkitTypeError, match=r"^\[gradkit\] Dense '.*' takes an array .* got list"):
        layer([[1.0, 2.0]])
    assert not layer.built and layer.variables == ()


@pytest.mark.parametrize("make", [lambda: nn.Dense(2), lambda: nn.BatchNorm()], ids=["dense", "batchnorm"])
def test_layer_given_a_scalar_is_a_clear_error(make):
    layer = make()
    with pytest.raises(_errors.GradkitValueError, match=r"^\[gradkit\] .* needs inputs with a last \(feature\) axis"):
        layer(jnp.float32(1.0))
    assert layer.variables == ()


def test_layer_takes_numpy_arrays_and_variables():
    nn.set_seed(4)
    layer = nn.Dense(2)
    x = np.asarray(X)
    out = layer(x)
    assert_close(out, X @ layer.kernel.value + layer.bias.value[None, :])
    xv = gk.Variable(X)
    assert_close(layer(xv), out)
