"""The README's Python examples run as written, and say what they compute. Oracle: the hand
derivations in their comments (a = 1, b = 2: d/db mean((a + b)^2) = 2 (a + b) = 6)."""

import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_python_examples_run_in_order_and_give_what_they_say():
    import gradkit.tf

    blocks = _blocks()
    assert len(blocks) >= 4
    namespace: dict = {"tf": gradkit.tf}
    run = [lambda block=block: exec(compile(block, str(README), "exec"), namespace) for block in blocks]  # noqa: S102
    run[0]()  # TensorFlow's text, here on gradkit.tf
    run[1]()
    gk, a, b = namespace["gk"], namespace["a"], namespace["b"]
    np.testing.assert_allclose([float(g) for g in gk.grad(namespace["loss"], wrt=[a, b])()], [6.0, 6.0])
    run[2]()
    # pipeline(0.5): c = (a + b) / 2 = 1.5, so [2c(1 - x), 2cx] = [1.5, 1.5] and d/dx = 2c(b - a) = 3.
    a.assign(1.0), b.assign(2.0)
    np.testing.assert_allclose([float(g) for g in gk.grad(namespace["pipeline"], wrt=[a, b])(0.5)], [1.5, 1.5])
    np.testing.assert_allclose(float(gk.grad(namespace["pipeline"])(0.5)), 3.0)
    a.assign(1.0), b.assign(2.0)
    run[3]()
    tape, loss, c = namespace["tape"], namespace["loss"], namespace["c"]
    grads = tape.gradient(loss, [a, b, c])
    assert float(grads[0]) == 6.0 and float(grads[1]) == 6.0 and grads[2] is None
    assert "assign" in tape.explain(loss, c)
    for rest in run[4:]:
        rest()
