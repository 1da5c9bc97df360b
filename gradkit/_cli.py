"""The ``gradkit`` command: ``gradkit tour`` and ``gradkit bench``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gradkit", description="Exact gradients through Variable assignment, on JAX.")
    sub = parser.add_subparsers(dest="command", required=True)
    tour = sub.add_parser("tour", help="run the seed scenarios and compare TensorFlow, gradkit and pure JAX")
    tour.add_argument("--plots", metavar="DIR", default=None, help="write the figures as PNG files into DIR")
    bench = sub.add_parser("bench", help="benchmark gradkit against hand-written JAX (and TF/PyTorch when installed)")
    bench.add_argument("--quick", action="store_true", help="a one-minute pass")
    bench.add_argument("--only", default=None, help="comma-separated workloads, e.g. W1,W4")
    bench.add_argument("--out", default="bench/results", help="directory for the JSON table and the chart")
    bench.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    args = parser.parse_args(argv)
    if args.command == "tour":
        from gradkit._tour import run_tour

        return run_tour(plots=args.plots)
    from gradkit._bench_cli import run_bench

    return run_bench(quick=args.quick, only=args.only, out=args.out, memory=not args.no_memory)


if __name__ == "__main__":
    sys.exit(main())
