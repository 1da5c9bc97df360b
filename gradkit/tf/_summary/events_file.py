"""One event file: its name, its queue of events and when they reach the disk.

Named as TensorFlow names it, ``events.out.tfevents.<seconds>.<hostname>.<pid>.<n><suffix>``
(``n`` counts the files this process opened), and created, with its file-version event, when
the writer is. Events wait in a queue that is written out when it holds more than
``max_queue`` events, when ``flush_millis`` have passed since the last write, on ``flush()``
and ``close()``, and when the program exits, as TensorFlow's summary file writer does.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
import weakref

from . import protos, records

_numbers = itertools.count()  # one per file, in the whole process (TensorFlow's counter)
_numbers_lock = threading.Lock()


def file_name(seconds: int, suffix: str) -> str:
    """TensorFlow's event file name for a file opened at ``seconds`` with ``filename_suffix``."""
    with _numbers_lock:
        number = next(_numbers)
    if not suffix.startswith("."):
        suffix = "." + suffix
    return f"events.out.tfevents.{seconds:010d}.{socket.gethostname()}.{os.getpid()}.{number}{suffix}"


class _Queue:
    """What the file and the finalizer share: the open file, the events not yet written, a lock."""

    def __init__(self, handle):
        self.handle = handle
        self.pending: list[bytes] = []
        self.lock = threading.Lock()

    def write_out(self, close: bool = False) -> None:
        with self.lock:
            if self.handle is None:
                return
            if self.pending:
                self.handle.write(b"".join(self.pending))
                self.pending.clear()
            self.handle.flush()
            if close:
                self.handle.close()
                self.handle = None


class EventFile:
    """An open event file in ``logdir`` (made, with its parents, if missing)."""

    def __init__(self, logdir: str, max_queue: int, flush_millis: int, suffix: str):
        if logdir:  # "" is the current directory, as in TensorFlow
            os.makedirs(logdir, exist_ok=True)
        now = time.time()
        self.path = os.path.join(logdir, file_name(int(now), suffix))
        handle = open(self.path, "wb")  # noqa: SIM115 - closed by close() or at exit
        handle.write(records.frame(protos.file_version_event(float(int(now)))))
        handle.flush()
        self._queue = _Queue(handle)
        self._max_queue = max_queue
        self._flush_seconds = flush_millis / 1000.0
        self._last_write = now
        # Events still queued reach the file when the writer is collected or the program exits.
        self._finalizer = weakref.finalize(self, self._queue.write_out, True)

    @property
    def closed(self) -> bool:
        return self._queue.handle is None

    def add(self, event: bytes) -> None:
        """Queue one encoded ``Event``; write the queue out if it is long or old enough."""
        queue = self._queue
        with queue.lock:
            queue.pending.append(records.frame(event))
            due = len(queue.pending) > self._max_queue or time.time() - self._last_write > self._flush_seconds
        if due:
            self.flush()

    def flush(self) -> None:
        self._queue.write_out()
        self._last_write = time.time()

    def close(self) -> None:
        self._finalizer()
