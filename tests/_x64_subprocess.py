"""Run a script in a fresh Python process with its cases as JSON, for the float64 comparisons:
JAX's 64-bit mode is process-wide, so it is switched on in a child, not in the test process."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_script(script: str, cases) -> dict:
    """``script`` (which reads ``sys.argv[1]`` and prints one JSON line last) run on ``cases``."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
