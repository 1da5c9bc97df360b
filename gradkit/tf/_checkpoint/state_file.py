"""The ``checkpoint`` file in a checkpoint directory, in TensorFlow's text format, and
``tf.train.latest_checkpoint`` / ``tf.train.get_checkpoint_state`` reading it.

TensorFlow writes a ``CheckpointState`` protocol buffer as text::

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"

paths relative to the directory (a manager adds the timestamps it keeps); this writes and reads
the same text, so either library's ``latest_checkpoint`` finds the other's newest checkpoint name.
"""

from __future__ import annotations

import os
import re

from . import files

_FIELD = re.compile(r"^\s*(\w+)\s*:\s*(.*?)\s*$")


class CheckpointState:
    """What the ``checkpoint`` file holds (TensorFlow's ``CheckpointState``): the newest checkpoint,
    every checkpoint kept (oldest first), their timestamps and the manager's last preserved time."""

    def __init__(
        self,
        model_checkpoint_path="",
        all_model_checkpoint_paths=(),
        all_model_checkpoint_timestamps=(),
        last_preserved_timestamp=0.0,
    ):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self) -> str:
        return to_text(self)


def _quote(text: str) -> str:
    """Protocol buffer text format's C escaping of a string (UTF-8 bytes beyond ASCII in octal)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in "\"'\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _unquote(text: str) -> str:
    if len(text) < 2 or text[0] not in "\"'" or text[-1] != text[0]:
        raise ValueError(text)
    body, out, i = text[1:-1], bytearray(), 0
    escapes = {"n": 10, "r": 13, "t": 9, "\\": 92, '"': 34, "'": 39}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in escapes:
                out.append(escapes[nxt])
                i += 2
                continue
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            if digits:
                out.append(int(digits.group(), 8))
                i += 1 + len(digits.group())
                continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8")


def to_text(state: CheckpointState) -> str:
    lines = [f"model_checkpoint_path: {_quote(state.model_checkpoint_path)}"]
    lines += [f"all_model_checkpoint_paths: {_quote(p)}" for p in state.all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {float(t)!r}" for t in state.all_model_checkpoint_timestamps]
    if state.last_preserved_timestamp:
        lines.append(f"last_preserved_timestamp: {float(state.last_preserved_timestamp)!r}")
    return "\n".join(lines) + "\n"


def from_text(text: str) -> CheckpointState:
    state = CheckpointState()
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _FIELD.match(line)
        if match is None:
            raise ValueError(line)
        field, value = match.groups()
        if field == "model_checkpoint_path":
            state.model_checkpoint_path = _unquote(value)
        elif field == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(_unquote(value))
        elif field == "all_model_checkpoint_timestamps":
            state.all_model_checkpoint_timestamps.append(float(value))
        elif field == "last_preserved_timestamp":
            state.last_preserved_timestamp = float(value)
    return state


def _state_path(directory: str, latest_filename=None) -> str:
    return os.path.join(directory, latest_filename or "checkpoint")


def _relative(path: str, directory: str) -> str:
    if os.path.isabs(path) or not os.path.isabs(directory):
        return os.path.relpath(path, directory or ".")
    return path


def update(directory, model_checkpoint_path, all_paths, timestamps=None, last_preserved=None, latest_filename=None):
    """Write the ``checkpoint`` file of ``directory`` as TensorFlow does, with paths relative to it
    (``all_paths`` oldest first; the newest is added when missing)."""
    directory = os.fspath(directory)
    all_paths = list(all_paths)
    if not all_paths or all_paths[-1] != model_checkpoint_path:
        all_paths.append(model_checkpoint_path)
    state = CheckpointState(
        _relative(model_checkpoint_path, directory),
        [_relative(p, directory) for p in all_paths],
        list(timestamps or ()),
        last_preserved or 0.0,
    )
    path = _state_path(directory, latest_filename)
    if os.path.normpath(path) == os.path.normpath(os.path.join(directory, state.model_checkpoint_path)):
        from gradkit import _errors

        raise _errors.GradkitRuntimeError(
            f"Save path {model_checkpoint_path!r} conflicts with path used for checkpoint state. Please use a "
            "different save path (TensorFlow refuses it too)."
        )
    text = to_text(state).encode()
    files._atomic_write(path, lambda f: f.write(text))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """``tf.train.get_checkpoint_state``: the ``checkpoint`` file of ``checkpoint_dir`` (paths joined
    to the directory), or None when there is none or it cannot be read."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = _state_path(checkpoint_dir, latest_filename)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            state = from_text(f.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return None  # TensorFlow logs the parse error and ignores the file
    if not state.model_checkpoint_path:
        from gradkit import _errors

        raise _errors.GradkitValueError(
            f"Invalid checkpoint state loaded from {checkpoint_dir}: its 'checkpoint' file names no "
            "model_checkpoint_path. Delete the file, or save a checkpoint there again."
        )

    def joined(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    state.model_checkpoint_path = joined(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [joined(p) for p in state.all_model_checkpoint_paths]
    return state


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """``tf.train.latest_checkpoint``: the prefix of the newest checkpoint the ``checkpoint`` file of
    ``checkpoint_dir`` names, if its files exist; None otherwise."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    prefix = state.model_checkpoint_path
    return prefix if files.exists(prefix) or os.path.exists(prefix) else None
