"""The public API is exactly what gradkit/__init__.py re-exports (optax_test's snapshot)."""

import ast
import pathlib

import gradkit

PUBLIC = [
    "AssignmentError",
    "ForwardAccumulator",
    "GradientTape",
    "GradkitError",
    "GradkitWarning",
    "State",
    "Tensor",
    "UnconnectedGradients",
    "Variable",
    "apply_updates",
    "custom_gradient",
    "functionalize",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "lift",
    "numpy",
    "scan",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    "vmap",
]


# Subpackages imported explicitly (import gradkit.tf); Python adds them to dir(gradkit) once loaded.
SUBPACKAGES = {"nn", "tf"}


def test_public_names():
    assert sorted(n for n in dir(gradkit) if not n.startswith("_") and n not in SUBPACKAGES) == PUBLIC


def _imports(package: str) -> set[str]:
    """Every module the files of ``gradkit/<package>`` import (absolute and relative), statically."""
    found = set()
    for path in (pathlib.Path(gradkit.__file__).parent / package).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = "gradkit." if node.level == 2 else f"gradkit.{package}." if node.level == 1 else ""
                found.add(base + (node.module or ""))
                found.update(base + (node.module + "." if node.module else "") + a.name for a in node.names)
    return found


def _reaches(imports: set[str], layers: tuple[str, ...]) -> list[str]:
    return sorted(m for m in imports if m.startswith(layers))


def test_core_imports_nothing_above_it():
    """The core stands alone: no import of the tape, gradkit.numpy, gradkit.nn or gradkit.tf."""
    assert _reaches(_imports("_core"), ("gradkit._tape", "gradkit.numpy", "gradkit.nn", "gradkit.tf")) == []


def test_tape_imports_nothing_above_it():
    assert _reaches(_imports("_tape"), ("gradkit.nn", "gradkit.tf")) == []
