"""The programs ``gradkit tour`` runs: TensorFlow code, its functional form, its oracle.

Each TensorFlow program is a function of the module ``tf`` it runs under, so the same text
runs under real TensorFlow (the ``TensorFlow`` column was recorded that way, with
TensorFlow 2.21, and ``tests/test_tour.py`` re-checks it where TensorFlow is installed),
under ``gradkit.tf`` with ``track_assignments=False`` (which must reproduce TensorFlow),
and under ``gradkit.tf`` as it is (exact). The pure-JAX rewrite is the oracle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One seed program.

    Attributes:
      name: what the row shows.
      tensorflow: what TensorFlow 2.21 returns for ``tf_program`` (recorded, not computed).
      tf_program: ``tf_program(tf, **tape_kwargs)``: the TensorFlow text, returning the gradient.
      functional: the same program with gradkit's functional API (``gk.grad``).
      oracle: the same gradient from a pure-JAX rewrite.
    """

    name: str
    tensorflow: Any
    tf_program: Callable[..., Any]
    functional: Callable[[], Any]
    oracle: Callable[[], Any]


# -- seed 000: c.assign(a + b) ------------------------------------------------------------


def seed000_scalar(tf, **tape):
    a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
    with tf.GradientTape(**tape) as t:
        c.assign(a + b)
        loss = tf.reduce_mean(c**2)
    return t.gradient(loss, b)


def _seed000_scalar_functional():
    import gradkit as gk

    a, b, c = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0)

    def loss():
        c.assign(a + b)
        return jnp.mean(c**2)

    return gk.grad(loss, wrt=b)()


LIST = ([1.0, 4.0], [2.0, 9.0], [3.0, 0.0], 0.01)
NESTED = ([[1.0, 2.0], [5.0], 7.0], [[3.0, 4.0], [6.0], 8.0], [[1.0, 1.0], [1.0], 1.0], 0.5)


def seed000_list(tf, **tape):
    a, b, c = ([tf.Variable(v) for v in values] for values in LIST[:3])
    x = tf.Variable(LIST[3])
    with tf.GradientTape(**tape) as t:
        c_ = tf.nest.map_structure(lambda _a, _b: (1 - x) * _a + x * _b, a, b)
        tf.nest.map_structure(lambda v, y: v.assign(y), c, c_)
        loss = tf.norm(c)
    return t.gradient(loss, x)


def seed000_nested(tf, **tape):
    a, b, c = ([tf.Variable(v) for v in values] for values in NESTED[:3])
    x = tf.Variable(NESTED[3])
    with tf.GradientTape(**tape) as t:
        c_ = tf.nest.map_structure(lambda _a, _b: (1 - x) * _a + x * _b, a, b)
        tf.nest.map_structure(lambda v, y: v.assign(y), c, c_)
        loss = tf.norm(tf.nest.map_structure(lambda e: tf.norm(e), c))
    return t.gradient(loss, x)


def _mix(a, b, x):
    return [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]


def _norm(c):
    return jnp.linalg.norm(jnp.stack(c))


def _norm_of_norms(c):
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(ci) for ci in c]))


def _f32(structures):
    """Each of ``structures`` (lists of numbers and lists) as a list of float32 arrays."""
    return [[np.asarray(v, np.float32) for v in values] for values in structures]


def _seed000_structured_functional(values, loss_of):
    import gradkit as gk

    a, b, c = ([gk.Variable(np.asarray(v, np.float32)) for v in vals] for vals in values[:3])
    x = gk.Variable(values[3])

    def loss():
        for target, value in zip(c, _mix(a, b, x)):
            target.assign(value)
        return loss_of([ci.value for ci in c])

    return gk.grad(loss, wrt=x)()


# -- seed 002: x[:2, :2].assign(patch) ----------------------------------------------------

X0 = [[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]]
PATCH0 = [[0.0, 1.0], [2.0, 3.0]]


def seed002_slice(tf, **tape):
    x = tf.Variable(X0)
    patch = tf.Variable(PATCH0)
    with tf.GradientTape(**tape) as g:
        g.watch(patch)
        x[:2, :2].assign(patch)
        y = tf.tensordot(x, tf.transpose(x), axes=1)
        o = tf.reduce_mean(y)
    return g.gradient(o, patch)


def _seed002_functional():
    import gradkit as gk

    x, patch = gk.Variable(X0), gk.Variable(PATCH0)

    def objective():
        x[:2, :2].assign(patch)
        return jnp.mean(jnp.tensordot(x, x.T, axes=1))

    return gk.grad(objective, wrt=patch)()


def _seed002_oracle():
    def objective(patch):
        x = jnp.array(X0).at[:2, :2].set(patch)
        return jnp.mean(jnp.tensordot(x, x.T, axes=1))

    return jax.grad(objective)(jnp.array(PATCH0))


# -- an assignment that reads its own variable --------------------------------------------


def self_assign(tf, **tape):
    c = tf.Variable(3.0)
    with tf.GradientTape(**tape) as t:
        c.assign(c * 2)
        loss = c**2
    return t.gradient(loss, c)


def _self_assign_functional():
    import gradkit as gk

    c = gk.Variable(3.0)

    def loss():
        c.assign(c * 2)
        return c**2

    return gk.grad(loss, wrt=c)()


# -- MAML: an inner SGD step by assign_sub, then the meta-loss ----------------------------

MAML_X = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.2], [1.5, 0.1]], np.float32)
MAML_Y = np.array([1.0, -2.0, 0.5, 0.3], np.float32)
MAML_W0 = np.array([0.3, -0.2], np.float32)


def maml(tf, **tape):
    w = tf.Variable(MAML_W0)

    def mse(rows):
        return tf.reduce_mean((tf.linalg.matvec(tf.constant(MAML_X[rows]), w) - MAML_Y[rows]) ** 2)

    with tf.GradientTape(**tape) as outer:
        with tf.GradientTape(**tape) as inner:
            inner_loss = mse(slice(0, 2))
        g = inner.gradient(inner_loss, w)
        w.assign_sub(0.05 * g)
        meta = mse(slice(2, 4))
    return outer.gradient(meta, w)


def _mse(w, rows):
    return jnp.mean((MAML_X[rows] @ w - MAML_Y[rows]) ** 2)


def _maml_functional():
    import gradkit as gk

    w = gk.Variable(MAML_W0)

    def meta_loss():
        g = gk.grad(lambda: _mse(w.value, slice(0, 2)), wrt=w)()
        w.assign_sub(0.05 * g)
        return _mse(w.value, slice(2, 4))

    return gk.grad(meta_loss, wrt=w)()


def _maml_oracle():
    def meta_loss(w):
        return _mse(w - 0.05 * jax.grad(_mse)(w, slice(0, 2)), slice(2, 4))

    return jax.grad(meta_loss)(jnp.asarray(MAML_W0))


# -- seed 001: a second derivative, where TensorFlow is right -----------------------------


def second_derivative(tf, **tape):
    x = tf.Variable(1.0)
    with tf.GradientTape(**tape) as t2:
        with tf.GradientTape(**tape) as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    return t2.gradient(dy_dx, x)


def _second_derivative_functional():
    import gradkit as gk

    x = gk.Variable(1.0)
    return gk.hessian(lambda: x * x * x, wrt=x)()


SCENARIOS = [
    Scenario(
        "000 c.assign(a+b): dloss/db",
        None,
        seed000_scalar,
        _seed000_scalar_functional,
        lambda: jax.grad(lambda a, b: jnp.mean((a + b) ** 2), argnums=1)(1.0, 2.0),
    ),
    Scenario(
        "000 list c_i.assign(mix): dloss/dx",
        None,
        seed000_list,
        lambda: _seed000_structured_functional(LIST, _norm),
        lambda: jax.grad(lambda x: _norm(_mix(*_f32(LIST[:2]), x)))(LIST[3]),
    ),
    Scenario(
        "000 nested shapes: dloss/dx",
        None,
        seed000_nested,
        lambda: _seed000_structured_functional(NESTED, _norm_of_norms),
        lambda: jax.grad(lambda x: _norm_of_norms(_mix(*_f32(NESTED[:2]), x)))(NESTED[3]),
    ),
    Scenario("002 x[:2,:2].assign(patch): do/dpatch", None, seed002_slice, _seed002_functional, _seed002_oracle),
    # TensorFlow cuts at the assignment and sums over the reads after it: 2 * (2 * 3).
    Scenario(
        "c.assign(c*2); c**2: dloss/dc",
        12.0,
        self_assign,
        _self_assign_functional,
        lambda: jax.grad(lambda c: (2 * c) ** 2)(3.0),
    ),
    # TensorFlow stops at w.assign_sub: the meta-loss gradient at the adapted w (first order).
    Scenario(
        "MAML w.assign_sub(lr*g): dmeta/dw",
        [0.422051, -0.160178],
        maml,
        _maml_functional,
        _maml_oracle,
    ),
    Scenario(
        "001 nested tapes: d2(x^3)/dx2",
        6.0,
        second_derivative,
        _second_derivative_functional,
        lambda: jax.grad(jax.grad(lambda x: x**3))(1.0),
    ),
]
