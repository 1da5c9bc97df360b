"""``gradkit tour``: the seed scenarios side by side: TensorFlow, gradkit and pure JAX.

A row per scenario (see ``_tour_programs``): what TensorFlow 2.21 returns for the program
text, what ``gradkit.tf`` returns for the same text, what the functional API returns, the
pure-JAX oracle, and a check mark where both gradkit columns agree with the oracle.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from gradkit._tour_programs import SCENARIOS, Scenario

TOLERANCE = 1e-5


def _show(value) -> str:
    if value is None:
        return "None"
    arr = np.asarray(value)
    if arr.ndim == 0:
        return f"{float(arr):.6g}"
    return np.array2string(arr.ravel(), precision=4, separator=",", max_line_width=1000)


def _agree(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=TOLERANCE, atol=TOLERANCE))


def _attempt(compute: Callable):
    try:
        return compute(), None
    except Exception as e:  # a broken scenario is a failed row, not a crashed tour
        return None, f"error: {type(e).__name__}"


def _run(scenario: Scenario) -> dict:
    import gradkit.tf as gtf

    want = np.asarray(scenario.oracle())
    tape, tape_error = _attempt(lambda: scenario.tf_program(gtf))
    functional, functional_error = _attempt(scenario.functional)
    ok = tape_error is None and functional_error is None and _agree(tape, want) and _agree(functional, want)
    return {
        "gradkit.tf": tape_error or _show(tape),
        "gk.grad": functional_error or _show(functional),
        "pure JAX": _show(want),
        "ok": ok,
    }


# The columns after the scenario name: a title and how to fill it from one scenario's results.
COLUMNS: list[tuple[str, Callable[[Scenario, dict], str]]] = [
    ("TensorFlow 2.21", lambda s, r: _show(s.tensorflow)),
    ("gradkit.tf", lambda s, r: r["gradkit.tf"]),
    ("gk.grad", lambda s, r: r["gk.grad"]),
    ("pure JAX", lambda s, r: r["pure JAX"]),
    ("", lambda s, r: "\u2713" if r["ok"] else "\u2717"),
]


def run_tour(plots: str | None) -> int:
    """Print one row per seed scenario; return 0 only if gradkit agrees with pure JAX on all.

    Args:
      plots: a directory to write the seed-001 figures into as PNG files (needs matplotlib).
    """
    rows = []
    all_ok = True
    for scenario in SCENARIOS:
        result = _run(scenario)
        all_ok &= result["ok"]
        rows.append([scenario.name] + [fill(scenario, result) for _, fill in COLUMNS])
    header = ["scenario"] + [title for title, _ in COLUMNS]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(
        "\nEvery gradient agrees with the pure-JAX rewrite; TensorFlow's None and cut values are exact in gradkit."
        if all_ok
        else "\nSome gradients do not agree with the pure-JAX rewrite (marked \u2717)."
    )
    if plots is not None:
        from gradkit._plots import write_seed001_figures

        os.makedirs(plots, exist_ok=True)
        for path in write_seed001_figures(plots):
            print(f"wrote {path}")
    return 0 if all_ok else 1
