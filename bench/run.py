"""Run the workloads: ``python -m bench [--quick] [--only W1,W4] [--out DIR]``."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import os
import platform
import signal
import sys
from pathlib import Path

# Before TensorFlow/PyTorch load: their OpenMP/Eigen pools otherwise spin-wait after each op and
# take the CPU from whichever contender runs next in the interleaved rotation (2 cores).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from . import WORKLOADS, memory, report  # noqa: E402
from ._harness import time_case  # noqa: E402

# Per case: (seconds of interleaved rounds, min rounds, max rounds, seconds per sample).
SETTINGS = {True: (0.6, 2, 10, 0.003), False: (6.0, 3, 40, 0.02)}
MEMORY_WORKLOADS = ("W3", "W5")
MEMORY_CONTENDERS = ["jax.jit (floor)", "gradkit eager tape", "gradkit gk.jit(tape)", "TF eager", "PyTorch torch.func"]


def _progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="case", file=sys.stderr)


def run(quick: bool = False, only: str | None = None, out: str = "bench/results", memory_check: bool = True) -> int:
    """Time the selected workloads, print the tables, write JSON (+ PNG); 0 on success, 130 when interrupted."""
    import jax

    wanted = [w.strip().upper() for w in only.split(",")] if only else list(WORKLOADS)
    unknown = [w for w in wanted if w not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}", file=sys.stderr)
        return 2
    commit = _git_head()  # now: gradkit's code is imported from the tree as it is at the start
    modules = {w: importlib.import_module(WORKLOADS[w]) for w in wanted}
    budget, min_rounds, max_rounds, sample_s = SETTINGS[quick]
    cases = [c for m in modules.values() for c in m.cases(quick)]
    bar = _progress(len(cases))
    rows = []
    done = 0
    # A run stopped by Ctrl-C or SIGTERM (a job's time limit) still prints and writes the cases
    # it finished: a full run takes minutes, and losing all of it to a limit helps nobody.
    with _sigterm_as_keyboard_interrupt():
        try:
            for case in cases:
                if bar is not None:
                    bar.set_description(f"{case.workload} {case.name}".strip())
                rows += time_case(
                    case, budget_s=budget, min_rounds=min_rounds, max_rounds=max_rounds, sample_s=sample_s
                )
                done += 1
                if bar is not None:
                    bar.update(1)
        except KeyboardInterrupt:
            pass
    if bar is not None:
        bar.close()
    interrupted = done < len(cases)
    if interrupted:
        print(f"interrupted: {done} of {len(cases)} cases finished; their results follow", file=sys.stderr)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "gradkit_commit": commit,
        "cases_finished": f"{done} of {len(cases)}",
    }
    print(
        f"gradkit bench — {meta['date']}, jax {meta['jax']} ({meta['backend']}), {meta['cpus']} CPUs"
        + (", --quick" if quick else "")
    )
    print(report.table(rows))
    mem_rows = []
    mem = {w: WORKLOADS[w] for w in wanted if w in MEMORY_WORKLOADS}
    if interrupted and mem:
        print("Peak memory: skipped, the run was interrupted.")
    elif quick and mem:
        print("Peak memory: skipped in --quick (a child process per contender); run without --quick.")
    elif memory_check and mem:
        with _sigterm_as_keyboard_interrupt():
            try:
                mem_rows = memory.measure(mem, quick, MEMORY_CONTENDERS)
            except KeyboardInterrupt:  # the timings are kept; the child in flight is killed
                interrupted = True
        if interrupted:
            print("Peak memory: interrupted; the timings follow in the files.")
        else:
            print("Peak memory (separate process per contender)")
            print(memory.table(mem_rows))
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    meta["memory"] = mem_rows
    report.write_json(rows, meta, out_dir / "results.json")
    print(f"\nwrote {out_dir / 'results.json'}")
    if report.write_chart(rows, out_dir / "ratios.png"):
        print(f"wrote {out_dir / 'ratios.png'}")
    else:
        print("matplotlib not installed: no chart")
    (out_dir / "results.md").write_text(
        report.table(rows, markdown=True) + "\n" + (memory.table(mem_rows, markdown=True) if mem_rows else "")
    )
    print(f"wrote {out_dir / 'results.md'}")
    return 130 if interrupted else 0


@contextlib.contextmanager
def _sigterm_as_keyboard_interrupt():
    """SIGTERM raises KeyboardInterrupt while the block runs (main thread only; elsewhere a no-op)."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals cannot be handled here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _git_head() -> str:
    """The commit measured, with '+dirty' when gradkit's sources differ from it (shared working tree)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "gradkit"], cwd=root, capture_output=True, text=True
        ).stdout
    except OSError:
        return "unknown"
    return head + ("+dirty" if dirty.strip() else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a one-minute pass (fewer rounds, smaller W5)")
    parser.add_argument("--only", default=None, help="comma-separated workloads, e.g. W1,W4")
    parser.add_argument("--out", default="bench/results", help="directory for results.json and ratios.png")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory children")
    args = parser.parse_args(argv)
    return run(args.quick, args.only, args.out, not args.no_memory)
