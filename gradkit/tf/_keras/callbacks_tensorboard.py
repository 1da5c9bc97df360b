"""``tf.keras.callbacks.TensorBoard``: ``fit``'s logs as TensorBoard event files, with Keras 3's
tags and steps (ported from ``keras/src/callbacks/tensorboard.py``), written by gradkit's own
``tf.summary``: at each epoch's end ``epoch_<metric>`` (and ``epoch_learning_rate``) under
``log_dir/train``, the validation logs under ``log_dir/validation``; with ``update_freq`` a
number of batches (or ``"batch"``), ``batch_<metric>`` every that many batches; after each
evaluation ``evaluation_<metric>_vs_iterations``; with ``histogram_freq``, each weight's
histogram every that many epochs. The model's graph (``write_graph``) is not written: gradkit
has no TensorFlow graph to show. Profiling and embeddings are refused.
"""

from __future__ import annotations

import os
import time

import numpy as np

from gradkit import _errors

from .. import _summary
from .callbacks import Callback

_summary_ops = _summary.ops
_writer = _summary.writer


class TensorBoard(Callback):
    """``tf.keras.callbacks.TensorBoard(log_dir="logs", histogram_freq=0, write_graph=True,
    write_images=False, write_steps_per_second=False, update_freq="epoch", profile_batch=0,
    embeddings_freq=0, embeddings_metadata=None)``; see the module docstring."""

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
    ):
        super().__init__()
        for option, value in (("profile_batch", profile_batch), ("embeddings_freq", embeddings_freq)):
            if value:
                raise _errors.GradkitNotImplementedError(
                    f"tf.keras.callbacks.TensorBoard({option}={value!r}): gradkit.tf writes scalars and weight "
                    f"histograms but not TensorFlow's profiler traces or embedding projections. Leave {option}=0; "
                    "jax.profiler traces a JAX program (jax.profiler.trace(log_dir))."
                )
        if write_images:
            raise _errors.GradkitNotImplementedError(
                "tf.keras.callbacks.TensorBoard(write_images=True): gradkit.tf does not draw weights as images. "
                "Leave write_images=False (histogram_freq= writes their histograms)."
            )
        self.log_dir = str(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._previous_epoch_iterations = 0
        self._batch_start_time = 0.0
        self._epoch_start_time = 0.0
        self._writers: dict = {}
        self._prev_summary_state: list = []

    def set_model(self, model):
        super().set_model(model)
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}

    @property
    def _train_writer(self):
        if "train" not in self._writers:
            self._writers["train"] = _writer.create_file_writer(self._train_dir)
        return self._writers["train"]

    @property
    def _val_writer(self):
        if "val" not in self._writers:
            self._writers["val"] = _writer.create_file_writer(self._val_dir)
        return self._writers["val"]

    # Between batches the writer stays the default, recording every ``update_freq``-th step,
    # so that summaries a model writes in its own call land there too, as in Keras.
    def _push_writer(self, writer, step):
        if self.update_freq == "epoch":
            return
        freq = self.update_freq
        contexts = (writer.as_default(step), _writer.record_if(lambda: step % freq == 0))
        self._prev_summary_state.append(contexts)
        contexts[0].__enter__()
        contexts[1].__enter__()

    def _pop_writer(self):
        if self.update_freq == "epoch" or not self._prev_summary_state:
            return
        contexts = self._prev_summary_state.pop()
        contexts[1].__exit__(None, None, None)
        contexts[0].__exit__(None, None, None)

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._previous_epoch_iterations = 0
        self._push_writer(self._train_writer, self._global_train_batch)

    def on_train_end(self, logs=None):
        self._pop_writer()
        self._close_writers()

    def on_test_begin(self, logs=None):
        self._push_writer(self._val_writer, self._global_test_batch)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations"):
            step = int(np.asarray(optimizer.iterations))
            with self._val_writer.as_default():
                for name, value in (logs or {}).items():
                    _summary_ops.scalar(f"evaluation_{name}_vs_iterations", value, step=step)
        self._pop_writer()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer(self._train_writer, self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start_time = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch":
            return  # no default writer between batches: Keras' scalars here record nothing
        if self.write_steps_per_second:
            elapsed = time.time() - self._batch_start_time
            _summary_ops.scalar("batch_steps_per_second", 1.0 / elapsed, step=self._global_train_batch)
        if isinstance(logs, dict):
            for name, value in logs.items():
                _summary_ops.scalar(f"batch_{name}", value, step=self._global_train_batch)

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer(self._val_writer, self._global_test_batch)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._previous_epoch_iterations = float(np.asarray(self.model.optimizer.iterations))
            self._epoch_start_time = time.time()

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _collect_learning_rate(self, logs):
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)
        if hasattr(optimizer, "optimizers"):
            for inner in optimizer.optimizers:
                logs[f"learning_rate_{inner.name}"] = float(np.asarray(inner.learning_rate))
        elif optimizer is not None and hasattr(optimizer, "learning_rate"):
            logs["learning_rate"] = float(np.asarray(optimizer.learning_rate))
        return logs

    def _log_epoch_metrics(self, epoch, logs):
        if not logs:
            return
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k: v for k, v in logs.items() if k.startswith("val_")}
        train_logs = self._collect_learning_rate(train_logs)
        if self.write_steps_per_second:
            iterations = float(np.asarray(self.model.optimizer.iterations))
            train_logs["steps_per_second"] = (iterations - self._previous_epoch_iterations) / (
                time.time() - self._epoch_start_time
            )
        if train_logs:
            with self._train_writer.as_default():
                for name, value in train_logs.items():
                    _summary_ops.scalar(f"epoch_{name}", value, step=epoch)
        if val_logs:
            with self._val_writer.as_default():
                for name, value in val_logs.items():
                    _summary_ops.scalar(f"epoch_{name[4:]}", value, step=epoch)

    def _log_weights(self, epoch):
        # Keras 3 tags a weight by its path: the names of the layers that built it and its own.
        with self._train_writer.as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    path = weight.path.replace(":", "_")
                    _summary_ops.histogram(f"{path}/histogram", weight, step=epoch)
        self._train_writer.flush()
