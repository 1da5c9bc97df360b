"""``gradkit tour``: every scenario agrees with its pure-JAX rewrite, TensorFlow's column is
TensorFlow's, and a wrong scenario is flagged."""

import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _tour, _tour_programs
from gradkit._cli import main

SCENARIOS = _tour_programs.SCENARIOS
IDS = [s.tf_program.__name__ for s in SCENARIOS]


def _same(got, want):
    if want is None:
        return got is None
    return got is not None and np.allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_tour_agrees_on_every_scenario(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    assert main(["tour", "--plots", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.rstrip().endswith(("\u2713", "\u2717"))]
    assert len(rows) == len(SCENARIOS)
    assert all(row.rstrip().endswith("\u2713") for row in rows)
    assert {p.name for p in tmp_path.iterdir()} == {
        "sigmoid_and_derivative.png",
        "hessian.png",
        "batch_jacobian_patches.png",
        "batch_jacobian_batchnorm.png",
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_parity_mode_reproduces_tensorflow_column(scenario):
    got = scenario.tf_program(gtf, track_assignments=False)
    assert _same(got, scenario.tensorflow), (got, scenario.tensorflow)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_tensorflow_column_is_what_tensorflow_returns(scenario):
    tf = pytest.importorskip("tensorflow")
    got = scenario.tf_program(tf)
    assert _same(None if got is None else got.numpy(), scenario.tensorflow)


def test_tour_flags_a_disagreement(capsys, monkeypatch):
    def returns_one(tf, **tape):
        return jnp.float32(1.0)

    def raises(tf, **tape):
        raise ZeroDivisionError

    wrong = _tour_programs.Scenario("wrong on purpose", None, returns_one, lambda: 1.0, lambda: jnp.float32(2.0))
    broken = _tour_programs.Scenario("raises", None, raises, lambda: 2.0, lambda: jnp.float32(2.0))
    monkeypatch.setattr(_tour, "SCENARIOS", [wrong, broken])
    assert _tour.run_tour(plots=None) == 1
    out = capsys.readouterr().out
    assert "\u2717" in out and "error: ZeroDivisionError" in out
