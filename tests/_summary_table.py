"""Reading back a table printed by ``model.summary()`` (Keras' or gradkit's), for the tests."""


def parse(text: str) -> dict:
    """The title, each row's cells (a wrapped cell's lines joined by spaces) and the totals."""
    lines = text.splitlines()
    rows, current = [], None
    for line in lines:
        if line.startswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            if current is None:
                current = [[] for _ in cells]
            for parts, cell in zip(current, cells):
                if cell:
                    parts.append(cell)
        elif current is not None:
            rows.append([" ".join(parts) for parts in current])
            current = None
    header = next(line for line in lines if line.startswith("┃"))
    return {
        "title": lines[0],
        "header": [c.strip() for c in header.strip("┃").split("┃")],
        "rows": rows,
        "totals": [line for line in lines if line.startswith(" ") and "params:" in line],
    }


def summary(model, **kwargs) -> dict:
    printed = []
    model.summary(print_fn=printed.append, **kwargs)
    return parse("".join(printed))
