"""Tables (with target and met? columns), the JSON file, and a log-scale chart of ratios."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

from ._harness import Timing


def _ms(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x * 1e3:.3g}" if x < 1 else f"{x * 1e3:,.0f}"


def _ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def table(rows: list[Timing], markdown: bool = False) -> str:
    """One table per (workload, case): median, min, first call (ms), ratio to the floor, target, met?."""
    head = ["contender", "median ms", "min ms", "first call ms", "vs floor", "target", "met?", "note"]
    lines = []
    for key in dict.fromkeys((r.workload, r.case) for r in rows):
        group = [r for r in rows if (r.workload, r.case) == key]
        title = f"{key[0]} {key[1]}".strip()
        body = [
            [
                r.name,
                _ms(r.median_s),
                _ms(r.min_s),
                _ms(r.first_s),
                _ratio(r.ratio),
                "—" if r.target is None else f"≤{r.target:g}×",
                "—" if r.met is None else ("yes" if r.met else "**no**" if markdown else "NO"),
                r.note,
            ]
            for r in group
        ]
        if markdown:
            lines += [f"**{title}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(b) + " |" for b in body]
        else:
            widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
            lines += [f"== {title}", "  ".join(h.ljust(w) for h, w in zip(head, widths))]
            lines += ["  ".join(str(c).ljust(w) for c, w in zip(b, widths)).rstrip() for b in body]
        lines.append("")
    return "\n".join(lines)


def write_json(rows: list[Timing], meta: dict, path: Path) -> None:
    path.write_text(json.dumps({"meta": meta, "results": [dataclasses.asdict(r) for r in rows]}, indent=1))


def write_chart(rows: list[Timing], path: Path) -> bool:
    """A horizontal bar chart of ratios to the floor, log scale; False when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [r for r in rows if r.ratio is not None]
    labels = [f"{r.workload} {r.case} · {r.name}".replace("  ", " ") for r in timed]
    colors = [
        "tab:gray" if "floor" in r.name else "tab:blue" if r.name.startswith("gradkit") else "tab:orange" for r in timed
    ]
    fig, ax = plt.subplots(figsize=(10, 0.22 * len(timed) + 1.5))
    ax.barh(range(len(timed)), [r.ratio for r in timed], color=colors)
    for i, r in enumerate(timed):
        if r.target is not None:
            ax.plot([r.target, r.target], [i - 0.4, i + 0.4], color="red" if not r.met else "green", lw=2)
    ax.set_yticks(range(len(timed)), labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xlabel("median time / jax.jit floor (log scale); red/green tick: target missed/met")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


SUMMARY_COLUMNS = [
    "gradkit eager tape",
    "gradkit gk.jit(tape)",
    "gradkit functional",
    "TF eager",
    "TF tf.function",
    "PyTorch eager",
    "PyTorch torch.func",
]


def summary(rows: list[Timing]) -> str:
    """One markdown row per case: the floor's median and every contender's ratio to it, with the target."""
    head = ["workload", "jax.jit floor (median)", *SUMMARY_COLUMNS, "targets", "met?"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in dict.fromkeys((r.workload, r.case) for r in rows):
        group = {r.name: r for r in rows if (r.workload, r.case) == key}
        floor = next((r for r in group.values() if "floor" in r.name), None)
        targets = [r for r in group.values() if r.target is not None]
        cells = [f"{key[0]} {key[1]}".strip(), f"{_ms(floor.median_s if floor else None)} ms"]
        cells += [
            _ratio(group[c].ratio) if c in group and group[c].ratio is not None else "n/a" for c in SUMMARY_COLUMNS
        ]
        cells.append(", ".join(f"{r.name.removeprefix('gradkit ')} ≤{r.target:g}×" for r in targets) or "—")
        cells.append(", ".join("yes" if r.met else "**no**" for r in targets) or "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
