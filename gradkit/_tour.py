"""``gradkit tour``: the seed scenarios side by side: TensorFlow, gradkit and pure JAX.

Each scenario is data: the imperative program (run under ``gk.grad``), its hand-written
pure-JAX rewrite (the oracle, differentiated with ``jax.grad``), and what TensorFlow 2
returns for it, as documented in the seeds (a literal, never computed here). More columns
(the tape, ``gradkit.tf``) are more entries in ``COLUMNS``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

TOLERANCE = 1e-5


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One seed program.

    Attributes:
      name: what the row shows.
      tensorflow: what TensorFlow 2 returns, as the seed documents it.
      gradkit: runs the imperative program under ``gk.grad`` and returns the gradient.
      oracle: the same gradient from a pure-JAX rewrite.
    """

    name: str
    tensorflow: str
    gradkit: Callable[[], Any]
    oracle: Callable[[], Any]


def _mix(a, b, x):
    return [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]


def _seed000_scalar():
    import gradkit as gk

    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")

    def loss():
        c.assign(a + b)
        return jnp.mean(c**2)

    return gk.grad(loss, wrt=b)()


def _seed000_structured(a0, b0, c0, x0, loss_of):
    import gradkit as gk

    a, b, c = ([gk.Variable(v) for v in vals] for vals in (a0, b0, c0))
    x = gk.Variable(x0, name="x")

    def loss():
        for target, value in zip(c, _mix(a, b, x)):
            target.assign(value)
        return loss_of([ci.value for ci in c])

    return gk.grad(loss, wrt=x)()


def _norm(c):
    return jnp.linalg.norm(jnp.stack(c))


def _norm_of_norms(c):
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(ci) for ci in c]))


LIST = ([1.0, 4.0], [2.0, 9.0], [3.0, 0.0], 0.01)
NESTED = (
    [np.array([1.0, 2.0]), np.array([5.0]), 7.0],
    [np.array([3.0, 4.0]), np.array([6.0]), 8.0],
    [np.array([1.0, 1.0]), np.array([1.0]), 1.0],
    0.5,
)


def _f32(tree):
    return jax.tree.map(lambda v: np.asarray(v, np.float32), tree)


def _seed002():
    import gradkit as gk

    x = gk.Variable(np.array([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]], np.float32), name="x")
    patch = gk.Variable(np.array([[0.0, 1.0], [2.0, 3.0]], np.float32), name="patch")

    def objective():
        x[:2, :2].assign(patch)
        return jnp.mean(jnp.tensordot(x, x.T, axes=1))

    return gk.grad(objective, wrt=patch)()


def _seed002_oracle():
    def objective(patch):
        x = jnp.array([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]]).at[:2, :2].set(patch)
        return jnp.mean(jnp.tensordot(x, x.T, axes=1))

    return jax.grad(objective)(jnp.array([[0.0, 1.0], [2.0, 3.0]]))


def _chain():
    import gradkit as gk

    c = gk.Variable(3.0, name="c")

    def loss():
        c.assign(c * 2)
        return c**2

    return gk.grad(loss, wrt=c)()


MAML_X = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.2], [1.5, 0.1]], np.float32)
MAML_Y = np.array([1.0, -2.0, 0.5, 0.3], np.float32)


def _mse(w, rows):
    return jnp.mean((MAML_X[rows] @ w - MAML_Y[rows]) ** 2)


def _maml():
    import gradkit as gk

    w = gk.Variable(np.array([0.3, -0.2], np.float32), name="w")

    def meta_loss():
        g = gk.grad(lambda: _mse(w.value, slice(0, 2)), wrt=w)()
        w.assign_sub(0.05 * g)
        return _mse(w.value, slice(2, 4))

    return gk.grad(meta_loss, wrt=w)()


def _maml_oracle():
    def meta_loss(w):
        return _mse(w - 0.05 * jax.grad(_mse)(w, slice(0, 2)), slice(2, 4))

    return jax.grad(meta_loss)(jnp.array([0.3, -0.2]))


SCENARIOS = [
    Scenario(
        "000 c.assign(a+b): dloss/db",
        "None",
        _seed000_scalar,
        lambda: jax.grad(lambda a, b: jnp.mean((a + b) ** 2), argnums=1)(1.0, 2.0),
    ),
    Scenario(
        "000 list c_i.assign(mix): dloss/dx",
        "None",
        lambda: _seed000_structured(*LIST, _norm),
        lambda: jax.grad(lambda x: _norm(_mix(*_f32(LIST[:2]), x)))(LIST[3]),
    ),
    Scenario(
        "000 nested shapes: dloss/dx",
        "None",
        lambda: _seed000_structured(*NESTED, _norm_of_norms),
        lambda: jax.grad(lambda x: _norm_of_norms(_mix(*_f32(NESTED[:2]), x)))(NESTED[3]),
    ),
    Scenario("002 x[:2,:2].assign(patch): do/dpatch", "None", _seed002, _seed002_oracle),
    # TensorFlow cuts the path at the assignment and sums over the reads after it: 2 * 6.
    Scenario("c.assign(c*2); c**2: dloss/dc", "12 (cut)", _chain, lambda: jax.grad(lambda c: (2 * c) ** 2)(3.0)),
    # TensorFlow's outer gradient stops at w.assign_sub: the loss gradient at the adapted w.
    Scenario("MAML w.assign_sub(lr*g): dmeta/dw", "first-order", _maml, _maml_oracle),
]


def _show(value) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return f"{float(arr):.6g}"
    return np.array2string(arr.ravel(), precision=4, separator=",", max_line_width=1000)


def _agree(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=TOLERANCE, atol=TOLERANCE))


# The columns after the scenario name: a title and how to fill it from one scenario's results.
COLUMNS: list[tuple[str, Callable[[Scenario, dict], str]]] = [
    ("TensorFlow", lambda s, r: s.tensorflow),
    ("gradkit", lambda s, r: r["gradkit"]),
    ("pure JAX", lambda s, r: r["oracle"]),
    ("", lambda s, r: "\u2713" if r["ok"] else "\u2717"),
]


def run_tour(plots: str | None) -> int:
    """Print one row per seed scenario; return 0 only if gradkit agrees with pure JAX on all.

    Args:
      plots: a directory for figures. It is created; no figures are written yet.
    """
    if plots is not None:
        os.makedirs(plots, exist_ok=True)
    rows = []
    all_ok = True
    for scenario in SCENARIOS:
        want = scenario.oracle()
        try:
            got = scenario.gradkit()
            shown, ok = _show(got), _agree(got, want)
        except Exception as e:  # a broken scenario is a failed row, not a crashed tour
            shown, ok = f"error: {type(e).__name__}", False
        all_ok &= ok
        result = {"gradkit": shown, "oracle": _show(want), "ok": ok}
        rows.append([scenario.name] + [fill(scenario, result) for _, fill in COLUMNS])
    header = ["scenario"] + [title for title, _ in COLUMNS]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(
        "\nAll gradients agree with the pure-JAX rewrite."
        if all_ok
        else "\nSome gradients do not agree with the pure-JAX rewrite (marked \u2717)."
    )
    return 0 if all_ok else 1
