"""``tf.summary``: TensorBoard event files written by gradkit itself (no TensorFlow, no protobuf).

``records.py`` frames records (CRC-32C), ``protos.py`` encodes the messages, ``events_file.py``
names, queues and flushes one file, ``writer.py`` holds the writers and the per-thread
defaults, ``emit.py`` writes one summary now or at each call of a compiled ``tf.function``,
``ops.py`` has the summary ops, over ``histogram.py`` (TensorBoard's buckets) and ``png.py``.
"""

from __future__ import annotations

from .._namespace import Namespace
from . import ops, writer
from .emit import should_record_summaries


def namespace() -> Namespace:
    """The ``gradkit.tf.summary`` namespace, with TensorFlow 2.21's names."""
    return Namespace(
        "gradkit.tf.summary",
        SummaryWriter=writer.SummaryWriter,
        create_file_writer=writer.create_file_writer,
        create_noop_writer=writer.create_noop_writer,
        flush=writer.flush,
        record_if=writer.record_if,
        should_record_summaries=should_record_summaries,
        scalar=ops.scalar,
        histogram=ops.histogram,
        image=ops.image,
        text=ops.text,
        write=ops.write,
        audio=ops.audio,
        graph=ops.graph,
        trace_on=ops.trace_on,
        trace_export=ops.trace_export,
        trace_off=ops.trace_off,
        experimental=Namespace(
            "gradkit.tf.summary.experimental",
            get_step=writer.get_step,
            set_step=writer.set_step,
            summary_scope=ops.summary_scope,
            write_raw_pb=ops.write_raw_pb,
        ),
    )
