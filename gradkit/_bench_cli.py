"""``gradkit bench``: run the repository's ``bench/`` package (present in a source checkout only)."""

from __future__ import annotations

import sys
from pathlib import Path


def _repo_root() -> Path:
    # gradkit is installed editable: the package directory sits in the repository, beside bench/.
    return Path(__file__).resolve().parent.parent


def run_bench(quick: bool = False, only: str | None = None, out: str = "bench/results", memory: bool = True) -> int:
    """Run the benchmarks; returns the exit status (1 when ``bench/`` is not there)."""
    root = _repo_root()
    if not (root / "bench" / "run.py").is_file():
        print(
            f"gradkit bench needs the repository's bench/ package, which is not next to {Path(__file__).parent} "
            "(a non-editable install ships without it). Clone the repository and run "
            "'pip install -e .' there, or 'python -m bench' from its root.",
            file=sys.stderr,
        )
        return 1
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from bench.run import run

    return run(quick=quick, only=only, out=out, memory_check=memory)
