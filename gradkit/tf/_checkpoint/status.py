"""What ``Checkpoint.restore`` returns: TensorFlow's load status, whose assertions look at the
program as it is when they are called (a layer built since the restore counts as matched once
its waiting values were given to it)."""

from __future__ import annotations

from . import object_graph


class CheckpointLoadStatus:
    """The result of restoring a checkpoint (TensorFlow's ``CheckpointLoadStatus``)."""

    def __init__(self, checkpoint, entries: list):
        self._checkpoint = checkpoint
        self._entries = entries

    def _bound(self) -> set:
        out = set()
        for entry in self._entries:
            obj = entry.bound() if entry.bound is not None else None
            if obj is not None:
                out.add(id(obj))
        return out

    def _unmatched_objects(self) -> list:
        bound = self._bound()
        graph = object_graph.Graph(self._checkpoint)
        return [v for v in graph.all_variables() if id(v) not in bound]

    def assert_consumed(self):
        """Raises AssertionError unless every Variable the program has now was restored from the
        checkpoint and every value of the checkpoint was restored into a Variable."""
        self.assert_existing_objects_matched()
        unresolved = [e.key for e in self._entries if not e.done]
        if unresolved:
            shown = ", ".join(repr(k) for k in unresolved[:10])
            raise AssertionError(
                f"[gradkit] Unresolved object in checkpoint: {len(unresolved)} checkpointed values have no Variable "
                f"in the program ({shown}{', ...' if len(unresolved) > 10 else ''}). Either the program does not have "
                "them, or not yet (a layer not built, an optimizer before its first step: their values are given "
                "when they are made). Build the objects first, or check only what exists with "
                "assert_existing_objects_matched()."
            )
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError if a Variable of the program (as it is now) has no value from the
        checkpoint; values of the checkpoint for objects not made yet are not required."""
        unmatched = self._unmatched_objects()
        if unmatched:
            shown = min(10, len(unmatched))
            raise AssertionError(
                f"[gradkit] Found {len(unmatched)} Python objects that were not bound to checkpointed values, likely "
                f"due to changes in the Python program. Showing {shown} of {len(unmatched)} unmatched objects: "
                f"{unmatched[:shown]}. Restore a checkpoint saved from this program, or use "
                "assert_nontrivial_match() / expect_partial() where a partial restore is meant."
            )
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing besides the checkpoint object itself matched."""
        if any(e.done for e in self._entries):
            return self
        for entry in self._entries:
            path = entry.path if entry.slot is None else entry.slot[1]
            if path and object_graph.child(self._checkpoint, path[0]) is not None:
                return self
        unmatched = self._unmatched_objects()
        if unmatched:
            raise AssertionError(
                "[gradkit] Nothing except the root object matched a checkpointed value. Typically this means that "
                "the checkpoint does not match the Python program. The following objects have no matching "
                f"checkpointed value: {unmatched}. Pass the objects under the names they were saved with."
            )
        raise AssertionError(
            f"[gradkit] Nothing to load. No dependencies have been added to {self._checkpoint!r} yet: give the "
            "Checkpoint the objects to restore (tf.train.Checkpoint(model=model, optimizer=optimizer))."
        )

    def expect_partial(self):
        """Says a partial restore is meant. TensorFlow then keeps quiet about values left unused;
        gradkit never warns about them, so this only returns the status."""
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: the values were assigned when ``restore`` ran (eager TensorFlow's meaning)."""
        return None

    def initialize_or_restore(self, session=None):
        """Nothing to run eagerly: restored Variables were assigned, the others keep their values."""
        return None


class InitializationOnlyStatus:
    """What ``restore(None)`` returns: nothing was restored, and every assertion fails, as in TensorFlow."""

    def __init__(self, checkpoint):
        self._checkpoint = checkpoint

    def _fail(self):
        raise AssertionError(
            "[gradkit] No checkpoint specified (save_path=None); nothing is being restored. This is what "
            "restore(manager.latest_checkpoint) gives when the directory holds no checkpoint yet; test for None "
            "before asserting."
        )

    def assert_consumed(self):
        self._fail()

    def assert_existing_objects_matched(self):
        self._fail()

    def assert_nontrivial_match(self):
        self._fail()

    def run_restore_ops(self, session=None):
        raise AssertionError(
            "[gradkit] No checkpoint specified, so no restore ops are available (save_path=None to Saver.restore)."
        )

    def initialize_or_restore(self, session=None):
        """Nothing to run eagerly: every Variable keeps its initial value."""
        return None

    def expect_partial(self):
        return self
