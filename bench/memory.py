"""Peak memory of one contender of W3/W5, each in a fresh child process.

The child builds the workload, calls the contender a few times, and prints its peak RSS
(``VmHWM`` from ``/proc/self/status`` on Linux, where ``resource.getrusage``'s
``ru_maxrss`` is no good: it keeps the parent's high-water mark across fork+exec;
``ru_maxrss`` elsewhere); a baseline child that only
builds the workload (with or without TF/PyTorch imported, like the row) gives the memory of
imports and data, subtracted for "above baseline". On a GPU the child also reports the peak of
device memory in use: JAX's allocator (``memory_stats()["peak_bytes_in_use"]``) plus PyTorch's
(``torch.cuda.max_memory_allocated``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALLS = 3

_CHILD = """
import importlib, json, resource, sys
sys.path.insert(0, {root!r})
from bench._harness import block
mod = importlib.import_module({module!r})
case = [c for c in mod.cases({quick!r}) if c.name == {case!r}][0]
fn = case.contenders.get({name!r})
for _ in range({calls!r} if fn is not None else 0):
    block(fn())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:  # Linux: ru_maxrss survives fork+exec (the parent's high-water mark); VmHWM is this program's own
    peak = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
except (OSError, IndexError):
    pass
device = None
import jax
if jax.default_backend() == "gpu":
    device = jax.local_devices()[0].memory_stats().get("peak_bytes_in_use", 0)
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        device += sys.modules["torch"].cuda.max_memory_allocated()
print(json.dumps([peak, device]))
"""


def peak_mib(module: str, case: str, name: str | None, quick: bool) -> tuple[float | None, float | None]:
    """(peak RSS, peak GPU memory or None) in MiB of a child that runs ``name`` of ``case`` (None: build only)."""
    code = _CHILD.format(root=str(ROOT), module=module, case=case, name=name, quick=quick, calls=CALLS)
    peer = name is not None and not name.startswith(("gradkit", "jax"))  # "-": a peer baseline
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(peer))
    if proc.returncode != 0:
        print(f"memory child for {module} {case} {name} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None, None
    rss_kib, device_bytes = json.loads(proc.stdout.strip().splitlines()[-1])
    return rss_kib / 1024, None if device_bytes is None else device_bytes / 2**20


def _env(peer: bool):
    import os

    # Only a TF/PyTorch row's child imports TF/PyTorch: their import alone is hundreds of MiB.
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GRADKIT_BENCH_PEERS="1" if peer else "0")


def measure(modules: dict[str, str], quick: bool, names: list[str]) -> list[dict]:
    """Rows {workload, case, contender, peak_mib, extra_mib} for every case of ``modules``."""
    import importlib

    rows = []
    for wid, module in modules.items():
        for case in importlib.import_module(module).cases(quick):
            bases = {}
            for name in names:
                if case.contenders.get(name) is None:
                    continue
                peer = not name.startswith(("gradkit", "jax"))
                if peer not in bases:
                    bases[peer] = peak_mib(module, case.name, None if not peer else "-", quick)
                (base, base_dev), (peak, peak_dev) = bases[peer], peak_mib(module, case.name, name, quick)
                rows.append(
                    {
                        "workload": wid,
                        "case": case.name,
                        "contender": name,
                        "peak_mib": peak,
                        "extra_mib": None if peak is None or base is None else peak - base,
                        "device_peak_mib": peak_dev,
                        "device_extra_mib": None if peak_dev is None or base_dev is None else peak_dev - base_dev,
                    }
                )
    return rows


def table(rows: list[dict], markdown: bool = False) -> str:
    gpu = any(r.get("device_peak_mib") is not None for r in rows)
    head = ["workload", "contender", "peak RSS MiB", "above baseline MiB"]
    head += ["peak GPU MiB", "GPU above baseline MiB"] if gpu else []

    def mib(x, missing="—"):
        return missing if x is None else f"{x:.0f}"

    body = [
        [f"{r['workload']} {r['case']}", r["contender"], mib(r["peak_mib"], "failed"), mib(r["extra_mib"])]
        + ([mib(r.get("device_peak_mib"), "failed"), mib(r.get("device_extra_mib"))] if gpu else [])
        for r in rows
    ]
    if markdown:
        return "\n".join(
            ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(b) + " |" for b in body]
        )
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in [head, *body])
