"""``model.summary()``: Keras 3's table of a model's layers (name and type, output shape,
parameter count) and its parameter totals, with their memory sizes.

The rows, shapes, counts and totals are Keras' (a functional model that is not a chain gets
Keras' "Connected to" column, and its operators, ``x + y``, rows of their own; a layer not
built yet shows ``?`` and
``0 (unbuilt)``; a Sequential built from ``tf.keras.Input`` shows its batch dimension as
``None``; a layer built by a call shows the output shape for that call's input). Keras draws
the table with the ``rich`` library; gradkit draws the same kind of box itself, so column
widths and line breaks inside a cell may differ slightly.
"""

from __future__ import annotations

import math
import re
import shutil
import sys
import textwrap

import numpy as np

from gradkit import _errors


def _count(weights) -> int:
    return int(sum(math.prod(tuple(v.shape)) for v in weights))


def _memory(weights) -> float:
    unique = {id(w): w for w in weights}.values()
    return float(sum(math.prod(tuple(w.shape)) * np.dtype(w.dtype).itemsize for w in unique))


def readable_memory_size(size: float) -> str:
    """Keras' ``readable_memory_size``: bytes in B, KB, MB, ... (powers of 1024), 2 decimals."""
    for unit in ["B", "KB", "MB", "GB", "TB", "PB"]:
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _format_shape(shape) -> str:
    if isinstance(shape, dict):
        return str({k: _format_shape(v) for k, v in shape.items()}).replace("'", "")
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
        return str([_format_shape(s) for s in shape]).replace("'", "")
    return "(" + ", ".join(str(None if d is None else int(d)) for d in shape) + ")"


def _output_shape(layer, known_input=None) -> str:
    """The layer's output shape for ``known_input`` (a Sequential's chain) or for the input it
    was built by; ``?`` where neither is known or the layer cannot say."""
    shape = known_input if known_input is not None else layer.__dict__.get("_keras_build_shape")
    if shape is None or not getattr(layer, "built", False):
        return "?"
    try:
        return _format_shape(layer.compute_output_shape(shape))
    except Exception:  # Keras shows "?" where a layer cannot compute it (NotImplementedError and kin)
        return _symbolic_output_shape(layer)


def _symbolic_output_shape(layer) -> str:
    """The shape of the layer's output in the graph it was first called in (a functional model's,
    a Sequential's with a declared input), as Keras reads it; ``?`` where it has none."""
    nodes = getattr(layer, "__dict__", {}).get("_keras_inbound_nodes")
    outputs = nodes[0].outputs if nodes else None
    if outputs is None:
        return "?"
    leaves = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    if not all(hasattr(t, "shape") for t in leaves):
        return "?"
    return _format_shape(
        tuple(outputs.shape) if not isinstance(outputs, (list, tuple)) else [tuple(t.shape) for t in leaves]
    )


def _layer_range(layers, layer_range):
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2 or not all(isinstance(n, str) for n in layer_range):
        raise _errors.GradkitValueError(
            f"layer_range must be a list or tuple of 2 layer names (the first and last layer to show, as "
            f"regular expressions). Received: layer_range = {layer_range!r}"
        )
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise _errors.GradkitValueError(
            f"Passed layer_names do not match the layer names in the model. Received: {layer_range}"
        )
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1


def _chain(layers, shape, shapes: dict) -> None:
    """Each layer's output shape from the one before it (into nested Sequentials too)."""
    for layer in layers:
        if hasattr(layer, "_sequence"):
            _chain(layer.layers, shape, shapes)
        try:
            shape = tuple(layer.compute_output_shape(shape))
        except Exception:  # a layer that cannot say: it, and those after it, fall back
            return
        shapes[id(layer)] = _format_shape(shape)


def _connections(graph, layer) -> str:
    """Keras' "Connected to" cell: ``producer[node][tensor]`` for each tensor the layer reads."""
    entries = [f"{producer.name}[{node}][{index}]" for producer, node, index in graph.inbound(layer)]
    return ", ".join(entries) or "-"


def _rows(model, expand_nested: bool, show_trainable: bool, layer_range, connected: bool) -> list:
    graph = model.__dict__.get("_keras_graph")
    # A functional model lists its operators too (``x + y`` is Keras' ``Add`` operation).
    layers = model.layers if graph is None else graph.operations()
    shapes: dict = {}
    if graph is not None:  # a functional model: each layer's shape at its first call
        for layer in layers:
            shape = getattr(layer, "batch_shape", None) or graph.output_shape_of(layer)
            if shape is not None:
                shapes[id(layer)] = _format_shape(shape)
    build_shape = model.__dict__.get("_keras_build_input_shape")
    if build_shape is not None and hasattr(model, "_sequence"):
        # A Sequential built from its input declaration: each layer's shape from the last's,
        # with the batch dimension unknown, as Keras' symbolic build gives it.
        _chain(layers, tuple(build_shape), shapes)

    def fields(layer, prefix: str) -> list:
        if not hasattr(layer, "built"):  # an operator: no weights
            params = "0"
        elif not layer.built:
            params = "0 (unbuilt)"
        else:
            params = f"{_count(layer.weights):,}"
        kind = getattr(layer, "class_name", None) or type(layer).__name__
        row = [f"{prefix}{layer.name} ({kind})", shapes.get(id(layer)) or _output_shape(layer), params]
        if connected:
            row.append(_connections(graph, layer))
        if show_trainable:
            row.append(("Y" if layer.trainable else "N") if getattr(layer, "weights", None) else "-")
        return row

    def visit(layer, level: int) -> list:
        rows = [fields(layer, "   " * level + "└ " if level else "")]
        if expand_nested and getattr(layer, "layers", None):
            for inner in layer.layers:
                rows += visit(inner, level + 1)
        return rows

    start, stop = _layer_range(layers, layer_range)
    return [row for layer in layers[start:stop] for row in visit(layer, 0)]


def _wrap(text: str, width: int) -> list:
    """Lines of at most ``width``, broken at spaces; a word longer than the line is cut with an
    ellipsis, as Keras' table does."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]
    return [line if len(line) <= width else line[: width - 1] + "…" for line in lines]


def _table(header: list, rows: list, widths: list, align: list) -> list:
    """A box like Keras' (heavy lines around the header, light ones between rows)."""

    def line(left, fill, mid, right):
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def cells(values) -> list:
        wrapped = [_wrap(v, w) for v, w in zip(values, widths)]
        out = []
        for i in range(max(len(c) for c in wrapped)):
            parts = []
            for c, w, a in zip(wrapped, widths, align):
                text = c[i] if i < len(c) else ""
                parts.append(text.rjust(w) if a == "right" else text.center(w) if a == "center" else text.ljust(w))
            out.append(parts)
        return out

    lines = [line("┏", "━", "┳", "┓")]
    lines += ["┃ " + " ┃ ".join(p) + " ┃" for p in cells(header)]
    lines.append(line("┡", "━", "╇", "┩"))
    for k, row in enumerate(rows):
        if k:
            lines.append(line("├", "─", "┼", "┤"))
        lines += ["│ " + " │ ".join(p) + " │" for p in cells(row)]
    lines.append(line("└", "─", "┴", "┘"))
    return lines


def print_summary(
    model, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False, layer_range=None
):
    """Keras' ``model.summary`` (see the module docstring); ``print_fn`` receives the whole text."""
    graph = model.__dict__.get("_keras_graph")
    connected = graph is not None and not graph.sequential_like()
    if connected:  # Keras' wider table for a graph that is not a chain
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        align = ["left", "left", "right", "left"]
        default_length = 108
        positions = list(positions or [0.3, 0.56, 0.74, 1.0])
    else:
        header = ["Layer (type)", "Output Shape", "Param #"]
        align = ["left", "left", "right"]
        default_length = 88
        positions = list(positions or [0.45, 0.80, 1.0])
    if show_trainable:
        default_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        align.append("center")
    line_length = line_length or min(default_length, shutil.get_terminal_size().columns - 4)
    widths, current = [], 0
    for pos in positions:
        width = int(pos * line_length) - current
        if width < 4:
            raise _errors.GradkitValueError(
                "Insufficient console width to print summary: pass a larger line_length (or wider positions)."
            )
        widths.append(width)
        current += width
    # Each column's text is its share of the line less the padding and rules around it.
    content = [w - 3 for w in widths]
    content[-1] -= 1
    rows = _rows(model, expand_nested, show_trainable, layer_range, connected)
    lines = [f'Model: "{model.name}"', *_table(header, rows, content, align)]

    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    optimizer = getattr(model, "optimizer", None)
    optimizer_vars = list(optimizer.variables) if model.compiled and optimizer is not None and optimizer.built else None
    counts = [_count(trainable), _count(non_trainable), _count(optimizer_vars or [])]
    sizes = [_memory(trainable), _memory(non_trainable), _memory(optimizer_vars or [])]
    lines.append(f" Total params: {sum(counts):,} ({readable_memory_size(sum(sizes))})")
    lines.append(f" Trainable params: {counts[0]:,} ({readable_memory_size(sizes[0])})")
    lines.append(f" Non-trainable params: {counts[1]:,} ({readable_memory_size(sizes[1])})")
    if optimizer_vars is not None:
        lines.append(f" Optimizer params: {counts[2]:,} ({readable_memory_size(sizes[2])})")
    text = "\n".join(lines) + "\n"
    if print_fn is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        print_fn(text)
