"""``gradkit tour``: every seed scenario agrees with its pure-JAX rewrite, and a wrong one is flagged."""

import jax.numpy as jnp

from gradkit import _tour
from gradkit._cli import main


def test_tour_agrees_on_every_scenario(capsys, tmp_path):
    assert main(["tour", "--plots", str(tmp_path / "figures")]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.rstrip().endswith(("\u2713", "\u2717"))]
    assert len(rows) == len(_tour.SCENARIOS)
    assert all(row.rstrip().endswith("\u2713") for row in rows)
    assert "None" in out  # the TensorFlow column
    assert (tmp_path / "figures").is_dir()


def test_tour_flags_a_disagreement(capsys, monkeypatch):
    wrong = _tour.Scenario("wrong on purpose", "None", lambda: jnp.float32(1.0), lambda: jnp.float32(2.0))
    broken = _tour.Scenario("raises", "None", lambda: 1 / 0, lambda: jnp.float32(2.0))
    monkeypatch.setattr(_tour, "SCENARIOS", [wrong, broken])
    assert _tour.run_tour(plots=None) == 1
    out = capsys.readouterr().out
    assert "\u2717" in out and "error: ZeroDivisionError" in out
