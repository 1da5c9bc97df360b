"""``tf.keras.utils.Progbar``: Keras 3's progress bar, writing the same text to stdout.

With ``verbose=1`` each update (at most one per ``interval`` seconds, and the last) redraws the
line: backspaces over the previous line and a carriage return, then the bar in ANSI colours,
the ETA (or the time taken) and the values averaged since the start (as Keras' ``Progbar``
decides; on Linux Keras takes any stream as a terminal, as its ``posix`` test does, so does this).
With ``verbose=2`` it prints one plain line when the target is reached. Values named in
``stateful_metrics`` are shown as given, the others averaged over the steps.

>>> import gradkit.tf as tf
>>> bar = tf.keras.utils.Progbar(2, verbose=2)
>>> bar.update(1, [("loss", 0.5)]); bar.update(2, [("loss", 0.25)])  # doctest: +ELLIPSIS
2/2 - 0s - ...s/step - loss: 0.2500
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

from gradkit import _errors


def _write(message: str) -> None:
    sys.stdout.write(message)
    sys.stdout.flush()


class Progbar:
    """``tf.keras.utils.Progbar(target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
    stateless_metrics=None, unit_name="step")``: ``update(current, values)`` and ``add(n, values)``,
    ``values`` a list of ``(name, value)`` pairs; ``target`` None when the number of steps is unknown."""

    def __init__(
        self,
        target,
        width=20,
        verbose=1,
        interval=0.05,
        stateful_metrics=None,
        stateless_metrics=None,
        unit_name="step",
    ):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise _errors.GradkitValueError(
                "tf.keras.utils.Progbar takes stateful_metrics or stateless_metrics, not both (Keras raises "
                "ValueError): stateful_metrics lists the values shown as given, stateless_metrics those averaged."
            )
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        if stateful_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = set(stateful_metrics), None
        elif stateless_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = None, set(stateless_metrics)
        else:
            self.stateful_metrics, self.stateless_metrics = set(), None
        self._dynamic_display = (
            (hasattr(sys.stdout, "isatty") and sys.stdout.isatty())
            or "ipykernel" in sys.modules
            or "posix" in sys.modules
            or "PYCHARM_HOSTED" in os.environ
        )
        self._seen_so_far = 0
        self._values = {}
        self._values_order = []
        self._start = time.time()
        self._last_update = 0
        self._time_after_first_step = None
        self._prev_total_width = 0

    def _averaged(self, name) -> bool:
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def _record(self, current, values, finalize) -> None:
        for k, v in values or []:
            if k not in self._values_order:
                self._values_order.append(k)
            if not self._averaged(k) or finalize:
                self._values[k] = [v, 1]
                continue
            base = max(current - self._seen_so_far, 1)
            if k not in self._values:
                self._values[k] = [v * base, base]
            else:
                self._values[k][0] += v * base
                self._values[k][1] += base
        self._seen_so_far = current

    def _average(self, k):
        total, count = self._values[k]
        if not isinstance(total, float):
            total = np.mean(total)
        return total / max(1, count)

    def update(self, current, values=None, finalize=None):
        """Show step ``current`` with ``values`` (``(name, value)`` pairs); ``finalize`` (default: whether
        ``current`` reached the target) ends the line."""
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        self._record(current, values, finalize)
        now = time.time()
        per_unit = self._estimate_step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, per_unit, finalize)
        elif self.verbose == 2 and finalize and self.target is not None and self.target > 0:
            digits = int(math.log10(self.target)) + 1
            count = f"%{digits}d/%d" % (current, self.target)
            info = f"{count} - {now - self._start:.0f}s -{self._format_time(per_unit)}"
            for k in self._values_order:
                avg = self._average(k)
                info += f" - {k}: {avg:.4f}" if avg > 1e-3 else f" - {k}: {avg:.4e}"
            _write(info + "\n")
        self._last_update = now

    def _draw(self, current, now, per_unit, finalize) -> None:
        message = ("\b" * self._prev_total_width + "\r") if self._dynamic_display else "\n"
        special = 0
        if self.target is not None and self.target > 0:
            digits = int(math.log10(self.target)) + 1
            bar = "\x1b[1m" + f"%{digits}d/%d" % (current, self.target) + "\x1b[0m "
            special += 8
            done = int(self.width * float(current) / self.target)
            if done > 0:
                bar += f"\33[32m{'━' * done}\x1b[0m"
                special += 9
            bar += f"\33[37m{'━' * (self.width - done)}\x1b[0m"
            special += 9
        else:
            bar = "%7d/Unknown" % current  # noqa: UP031  (Keras' formatting, which takes a float step too)
        message += bar
        if self.target is not None and self.target > 0 and not finalize:
            eta = per_unit * (self.target - current)
            if eta > 3600:
                shown = f"{int(eta // 3600)}:{int((eta % 3600) // 60):02d}:{int(eta % 60):02d}"
            elif eta > 60:
                shown = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                shown = f"{int(eta)}s"
            info = f" \x1b[1m{shown}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        special += 8
        info += self._format_time(per_unit)
        for k in self._values_order:
            info += f" - {k}:"
            if isinstance(self._values[k], list):
                avg = self._average(k)
                info += f" {avg:.4f}" if abs(avg) > 1e-3 else f" {avg:.4e}"
            else:
                info += f" {self._values[k]}"
        message += info
        total_width = len(bar) + len(info) - special
        if self._prev_total_width > total_width:
            message += " " * (self._prev_total_width - total_width)
        if finalize:
            message += "\n"
        _write(message)
        self._prev_total_width = total_width

    def add(self, n, values=None):
        """``update(current + n, values)``."""
        self.update(self._seen_so_far + n, values)

    def _format_time(self, time_per_unit, unit_name=None):
        unit_name = self.unit_name if unit_name is None else unit_name
        if time_per_unit >= 1 or time_per_unit == 0:
            return f" {time_per_unit:.0f}s/{unit_name}"
        if time_per_unit >= 1e-3:
            return f" {time_per_unit * 1000.0:.0f}ms/{unit_name}"
        return f" {time_per_unit * 1000000.0:.0f}us/{unit_name}"

    def _estimate_step_duration(self, current, now):
        # Keras' estimate: the first step (compilation) left out once later ones are seen.
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit
