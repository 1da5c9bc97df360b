"""The benchmark harness runs, its contenders agree with hand-written JAX, and an eager training loop
compiles once and keeps its memory flat. No wall-time assertions: timings are only printed by bench/."""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import gradkit as gk  # noqa: E402
from bench import _harness, w1_mlp, w2_chain, w3_jacobian, w4_batch_jacobian, w5_hessian, w6_meta  # noqa: E402
from bench._common import mlp, mlp_init, onehot, rand, xent  # noqa: E402

OURS = (_harness.FLOOR, "gradkit eager tape", "gradkit gk.jit(tape)", "gradkit functional")


def _ours(contenders: dict) -> dict:
    """The gradkit rows and the floor only: TF/PyTorch are optional and slow to start."""
    return {k: v for k, v in contenders.items() if k in OURS or k.startswith("gradkit")}


def _assert_same(ref, got, name):
    ref_leaves, got_leaves = jax.tree_util.tree_leaves(ref), jax.tree_util.tree_leaves(got)
    assert len(ref_leaves) == len(got_leaves), name
    for a, b in zip(ref_leaves, got_leaves):
        np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-5, err_msg=name)


def _tiny_w1():
    return mlp_init([12, 16, 16, 3], seed=3), rand(4, 8, 12), onehot(5, 8, 3)


CONTENDERS = {
    "W1": lambda: w1_mlp.contenders(data=_tiny_w1),
    "W2": lambda: w2_chain.chain_contenders(12, True, shape=(5,)),
    "W3": lambda: w3_jacobian.jacobian_contenders(4, 6, 5),
    "W4": w4_batch_jacobian.contenders,
    "W5": lambda: w5_hessian.hessian_contenders(True, quick=True),
    "W6": w6_meta.contenders,
}


@pytest.mark.parametrize("workload", list(CONTENDERS))
def test_contenders_compute_the_floors_numbers(workload):
    contenders = _ours(CONTENDERS[workload]())
    ref = _harness.to_numpy(contenders[_harness.FLOOR]())
    for name, fn in contenders.items():
        _assert_same(ref, _harness.to_numpy(fn()), f"{workload} {name}")
        _assert_same(ref, _harness.to_numpy(fn()), f"{workload} {name}, second call")


def test_harness_times_every_contender_and_keeps_note_rows():
    contenders = _ours(w2_chain.chain_contenders(6, True, shape=(3,)))
    contenders["missing peer"] = None
    case = _harness.Case("W2", "tiny", contenders, {"gradkit eager tape": 30.0})
    rows = _harness.time_case(case, budget_s=0.0, min_rounds=2, max_rounds=2, sample_s=1e-4)
    by_name = {r.name: r for r in rows}
    assert set(by_name) == set(contenders)
    floor = by_name[_harness.FLOOR]
    assert floor.ratio == pytest.approx(1.0) and floor.rounds == 2
    for name in OURS:
        r = by_name[name]
        assert r.median_s > 0 and r.min_s <= r.median_s and r.first_s > 0 and r.ratio > 0
    assert by_name["gradkit eager tape"].met in (True, False)
    assert by_name["missing peer"].median_s is None and by_name["missing peer"].note == "not installed"


def test_bench_cli_finds_the_bench_package(tmp_path, capsys):
    from gradkit._bench_cli import _repo_root

    assert (_repo_root() / "bench" / "run.py").is_file()


def test_gradkit_bench_passes_its_options_to_the_runner(monkeypatch):
    import bench.run
    from gradkit._cli import main

    seen = {}
    monkeypatch.setattr(bench.run, "run", lambda **kwargs: seen.update(kwargs) or 0)
    assert main(["bench", "--quick", "--only", "W1,W4", "--out", "somewhere", "--no-memory"]) == 0
    assert seen == {"quick": True, "only": "W1,W4", "out": "somewhere", "memory_check": False}
    assert main(["bench"]) == 0
    assert seen == {"quick": False, "only": None, "out": "bench/results", "memory_check": True}


def test_an_interrupted_run_writes_the_cases_it_finished(monkeypatch, tmp_path, capsys):
    """SIGTERM (a job's time limit) or Ctrl-C in the third case: the first two are printed and written."""
    import json
    import os
    import signal
    import threading
    import types

    import bench.run

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed from the main thread only")
    fake = types.ModuleType("fake_workload")
    fake.cases = lambda quick: [_harness.Case("W9", f"case {i}", {_harness.FLOOR: None}) for i in range(4)]
    monkeypatch.setitem(sys.modules, "fake_workload", fake)
    monkeypatch.setattr(bench.run, "WORKLOADS", {"W9": "fake_workload"})

    def fake_time_case(case, **settings):
        if case.name == "case 2":
            os.kill(os.getpid(), signal.SIGTERM)
        return [_harness.Timing("W9", case.name, _harness.FLOOR, 1e-3, 1e-3, 1e-2, 3, 1, 1.0)]

    monkeypatch.setattr(bench.run, "time_case", fake_time_case)
    handler_before = signal.getsignal(signal.SIGTERM)
    assert bench.run.run(quick=True, out=str(tmp_path), memory_check=False) == 130
    assert signal.getsignal(signal.SIGTERM) is handler_before
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["meta"]["cases_finished"] == "2 of 4"
    assert [r["case"] for r in saved["results"]] == ["case 0", "case 1"]
    captured = capsys.readouterr()
    assert "interrupted: 2 of 4 cases finished" in captured.err and "case 1" in captured.out


def test_a_run_interrupted_while_measuring_memory_keeps_its_timings(monkeypatch, tmp_path):
    import json
    import os
    import signal
    import threading
    import types

    import bench.run

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed from the main thread only")
    fake = types.ModuleType("fake_memory_workload")
    fake.cases = lambda quick: [_harness.Case("W3", "only case", {_harness.FLOOR: None})]
    monkeypatch.setitem(sys.modules, "fake_memory_workload", fake)
    monkeypatch.setattr(bench.run, "WORKLOADS", {"W3": "fake_memory_workload"})
    monkeypatch.setattr(
        bench.run,
        "time_case",
        lambda case, **settings: [_harness.Timing("W3", case.name, _harness.FLOOR, 1e-3, 1e-3, 1e-2, 3, 1, 1.0)],
    )
    monkeypatch.setattr(bench.run.memory, "measure", lambda *args: os.kill(os.getpid(), signal.SIGTERM))
    assert bench.run.run(quick=False, out=str(tmp_path), memory_check=True) == 130
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [r["case"] for r in saved["results"]] == ["only case"] and saved["meta"]["memory"] == []


# -- an eager training loop: compiles once, memory flat ------------------------------------


@contextlib.contextmanager
def _count_compiles():
    """Count XLA compilations (jax_log_compiles logs one 'Finished XLA compilation' each)."""
    records = []

    class Handler(logging.Handler):
        def emit(self, record):
            if "Finished XLA compilation" in record.getMessage():
                records.append(record.getMessage())

    handler, logger = Handler(level=logging.DEBUG), logging.getLogger("jax")
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False  # keep the compile log out of pytest's captured output
    jax.config.update("jax_log_compiles", True)
    try:
        yield records
    finally:
        jax.config.update("jax_log_compiles", False)
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def _training_loop():
    gnp = gk.numpy
    vs = [gk.Variable(p) for p in mlp_init([8, 16, 4], seed=9)]
    x, y = rand(10, 32, 8), onehot(11, 32, 4)
    lr = 0.05

    def step():
        with gk.GradientTape() as tape:
            loss = xent(gnp, mlp(gnp, vs, x), y)
        for v, g in zip(vs, tape.gradient(loss, vs)):
            v.assign_sub(lr * g)
        return loss

    return step


def _live_nodes() -> int:
    from gradkit._tape.graph import Node

    gc.collect()
    # type(o), not isinstance: isinstance reads o.__class__, which some libraries turn into a
    # property that warns (a deprecated torch.distributed object does).
    return sum(type(o) is Node for o in gc.get_objects())


def test_eager_training_loop_compiles_its_programs_once():
    step = _training_loop()
    first = float(step())
    for _ in range(5):  # warm-up: every program (gradient, update ops) compiled here
        step()
    with _count_compiles() as compiles:
        for _ in range(1000):
            loss = step()
        last = float(loss)
    assert compiles == [], f"{len(compiles)} compilations after warm-up, e.g. {compiles[:3]}"
    assert last < first  # and it trains


def test_eager_training_loop_memory_is_flat():
    step = _training_loop()
    for _ in range(100):
        step()
    nodes_early = _live_nodes()
    for _ in range(1900):
        step()
    nodes_late = _live_nodes()
    # Bounded: no recorded graph survives its step (a leak would grow by ~15 nodes a step).
    assert nodes_late <= nodes_early + 50, (nodes_early, nodes_late)
