"""The ``tf.signal`` parity programs that each ``test_tf_parity_signal_*.py`` lists in
``FLOAT64`` (transforms, windows, frames and their gradients; the refusals and dtype checks stay
float32's) again in float64, against real TensorFlow 2.21, to 1e-10 of each output's size.
float64 needs ``jax_enable_x64``, which is process-wide, so the programs run in one subprocess.
"""

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
MODULES = sorted(p.stem for p in TESTS.glob("test_tf_parity_signal_*.py") if p.stem != pathlib.Path(__file__).stem)

_SCRIPT = """
import importlib, json, sys, traceback
import jax
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
sys.path.insert(0, sys.argv[1])
from _signal_parity import run_both

results = {}
for module_name in json.loads(sys.argv[2]):
    module = importlib.import_module(module_name)
    for program in getattr(module, "FLOAT64", ()):
        try:
            run_both(program, "float64")
            results[module_name + "::" + program.__name__] = None
        except Exception:
            results[module_name + "::" + program.__name__] = traceback.format_exc(limit=3)[-3000:]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def float64_results():
    pytest.importorskip("tensorflow")
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SCRIPT), str(TESTS), json.dumps(MODULES)],
        capture_output=True,
        text=True,
        cwd=TESTS.parent,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_signal_programs_agree_in_float64(float64_results):
    assert len(float64_results) >= 12, float64_results
    failures = {name: error for name, error in float64_results.items() if error is not None}
    assert not failures, "\n\n".join(f"{name}:\n{error}" for name, error in failures.items())
