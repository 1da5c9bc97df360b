"""Oracles for the core tests: pure-JAX rewrites of the imperative programs, and comparisons.

Nothing here computes with gradkit. Each ``pure_*`` function is the hand-written rewrite of
an imperative program: it takes the Variables' entry values as plain arrays and threads
every assignment as a new array, so ``jax.grad`` of it is the exact derivative that
gradkit must reproduce.
"""

from __future__ import annotations

import contextlib

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

# The same test once eagerly and once compiled (chex's with_jit/without_jit variants). A
# function reading Variables compiles with gk.jit, which passes them in: a plain jax.jit would take
# their values as constants (and gradkit warns; see test_core_plain_jax_reads.py).
WITH_AND_WITHOUT_JIT = pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])


def maybe_jit(fn, jit: bool):
    return gk.jit(fn) if jit else fn


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    """Same tree structure (a list is not a tuple) and values equal to tolerance."""
    chex.assert_trees_all_close(actual, expected, rtol=rtol, atol=atol)


def snapshot(variables):
    """The live values of ``variables`` as NumPy copies, to show a call changed nothing."""
    return [np.array(v._value) for v in variables]


def assert_unchanged(variables, before):
    for v, old in zip(variables, before):
        np.testing.assert_array_equal(np.asarray(v._value), old, err_msg=f"Variable {v.name} changed")


# --- the reference program ------------------------------------------------------------------
# It exercises a scalar, a vector and a matrix Variable, a whole assign, an assign_add, a slice
# assignment that reads the variable it writes, and reads of the assigned values afterwards.

ENTRY = {
    "u": np.array([0.3, -0.7, 1.1], np.float32),
    "m": np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32),
    "s": np.float32(0.8),
}
X = np.array([[0.2, -0.4, 0.6], [1.0, 0.1, -0.3]], np.float32)


def pure_program(vals: dict, x):
    """The pure rewrite of :meth:`Program.imperative`: returns (scalar loss, final values)."""
    u, m, s = (jnp.asarray(vals[k]) for k in "ums")
    m = m * jnp.tanh(u)[None, :]
    s = s + jnp.sum(m * x)
    u = u.at[1:].set(u[:2] * s)
    loss = jnp.sum(jnp.sin(m) ** 2) + s * jnp.sum(u) + jnp.sum(x**3)
    return loss, {"u": u, "m": m, "s": s}


def pure_loss(vals: dict, x):
    return pure_program(vals, x)[0]


def pure_vector(vals: dict, x):
    """A vector-valued variant, for Jacobians and VJPs."""
    loss, final = pure_program(vals, x)
    return jnp.concatenate([final["u"] * loss, final["m"][0] * final["s"]])


class Program:
    """Fresh Variables holding ``ENTRY`` and the imperative program over them."""

    def __init__(self):
        self.u = gk.Variable(ENTRY["u"], name="u")
        self.m = gk.Variable(ENTRY["m"], name="m")
        self.s = gk.Variable(ENTRY["s"], name="s")
        self.variables = [self.u, self.m, self.s]
        self.name_of = {id(self.u): "u", id(self.m): "m", id(self.s): "s"}

    def imperative(self, x):
        u, m, s = self.u, self.m, self.s
        m.assign(m * jnp.tanh(u)[None, :])
        s.assign_add(jnp.sum(m * x))
        u[1:].assign(u[:2] * s)
        return jnp.sum(jnp.sin(m) ** 2) + s * jnp.sum(u) + jnp.sum(x**3)

    def imperative_vector(self, x):
        loss = self.imperative(x)
        return jnp.concatenate([self.u * loss, self.m[0] * self.s])

    def arrange(self, wrt, by_name: dict):
        """``by_name`` (a dict keyed "u", "m", "s") laid out in the structure of ``wrt``."""
        return jax.tree.map(lambda v: by_name[self.name_of[id(v)]], wrt, is_leaf=lambda v: isinstance(v, gk.Variable))


# --- seed 000 (tf.Variable.assign breaks the tape) -------------------------------------------


def seed000_scalar(a, b, c):
    """``c.assign(a + b); loss = mean(c**2)`` with c's entry value overwritten."""
    del c
    c = a + b
    return jnp.mean(c**2)


def seed000_list(a: list, b: list, c: list, x):
    """The extension: ``c_i.assign((1 - x) a_i + x b_i); loss = norm(c)``."""
    del c
    c = [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]
    return jnp.linalg.norm(jnp.stack(c))


def seed000_nested(a: list, b: list, c: list, x):
    """The nested-shape version: ``loss = norm([norm(c_i) for c_i])`` after the assignment."""
    del c
    c = [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(ci) for ci in c]))


SEED000_LIST_ENTRY = {
    "a": [np.float32(1.0), np.float32(4.0)],
    "b": [np.float32(2.0), np.float32(9.0)],
    "c": [np.float32(3.0), np.float32(0.0)],
    "x": np.float32(0.01),
}
SEED000_NESTED_ENTRY = {
    "a": [np.array([1.0, 2.0], np.float32), np.array([5.0], np.float32), np.float32(7.0)],
    "b": [np.array([3.0, 4.0], np.float32), np.array([6.0], np.float32), np.float32(8.0)],
    "c": [np.array([1.0, 1.0], np.float32), np.array([1.0], np.float32), np.float32(1.0)],
    "x": np.float32(0.5),
}
# The seed prints these for the assignment-free rewrite in TensorFlow: the exact d loss/d x.
SEED000_LIST_DX = 5.0933886
SEED000_NESTED_DX = 2.3057709


# --- seed 002 (slice assignment) -------------------------------------------------------------

SEED002_X = np.array([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]], np.float32)
SEED002_PATCH = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)


def seed002(x, patch):
    """``x[:2, :2].assign(patch); o = mean(x @ x.T)``."""
    x = jnp.asarray(x).at[:2, :2].set(patch)
    return jnp.mean(jnp.tensordot(x, x.T, axes=1))


# --- unrolled optimisation -------------------------------------------------------------------

REGRESSION_X = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.2], [1.5, 0.1]], np.float32)
REGRESSION_Y = np.array([1.0, -2.0, 0.5, 0.3], np.float32)


def regression_loss(w, xs=REGRESSION_X, ys=REGRESSION_Y):
    return jnp.mean((xs @ w - ys) ** 2)


def pure_unrolled_sgd(w, lr, steps: int):
    """``steps`` of ``w <- w - lr * dL/dw``, then the loss: a function of (w_entry, lr)."""
    for _ in range(steps):
        w = w - lr * jax.grad(regression_loss)(w)
    return regression_loss(w)


def pure_maml(w, lr, train=(REGRESSION_X[:2], REGRESSION_Y[:2]), val=(REGRESSION_X[2:], REGRESSION_Y[2:])):
    """One inner SGD step on the train split, then the loss on the validation split."""
    adapted = w - lr * jax.grad(regression_loss)(w, *train)
    return regression_loss(adapted, *val)


_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
# The counters open now: each a list that gets one entry per XLA compilation. One listener,
# registered once for the whole process, feeds them: jax.monitoring has no way to remove a
# single listener before jax 0.9 (only clear_event_listeners, which would remove jax's own).
_open_counters: list[list] = []
_listening = False


def _on_duration_event(event, duration, **kwargs):
    if event == _COMPILE_EVENT:
        for counter in _open_counters:
            counter.append(event)


@contextlib.contextmanager
def compile_counter():
    """A list that gets one entry per XLA compilation made inside the ``with`` block."""
    global _listening
    if not _listening:
        jax.monitoring.register_event_duration_secs_listener(_on_duration_event)
        _listening = True
    counter: list = []
    _open_counters.append(counter)
    try:
        yield counter
    finally:
        _open_counters.remove(counter)


def count_compiles(fn) -> int:
    """How many XLA compilations calling ``fn()`` made (jax.monitoring events)."""
    with compile_counter() as compiles:
        fn()
    return len(compiles)
