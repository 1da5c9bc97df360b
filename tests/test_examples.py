"""Run every examples/*.py in a subprocess: each asserts its numbers (exit status non-zero on a mismatch)."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted(
    p for p in (pathlib.Path(__file__).parent.parent / "examples").glob("*.py") if not p.name.startswith("_")
)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    args = [sys.executable, str(path)]
    if "seed001" in path.name:
        args += ["--plots", str(tmp_path)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "MISMATCH" not in out.stdout
