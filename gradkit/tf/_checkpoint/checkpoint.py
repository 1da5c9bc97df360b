"""``tf.train.Checkpoint``: object-based saving and restoring, as TensorFlow's.

>>> import os, tempfile
>>> import gradkit.tf as tf
>>> step, w = tf.Variable(0), tf.Variable([1.0, 2.0])
>>> ckpt = tf.train.Checkpoint(step=step, w=w)
>>> path = ckpt.save(os.path.join(tempfile.mkdtemp(), "ckpt"))
>>> os.path.basename(path)
'ckpt-1'
>>> _ = w.assign([0.0, 0.0])
>>> ckpt.restore(path).assert_consumed().__class__.__name__
'CheckpointLoadStatus'
>>> w.numpy().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import os
import weakref

import numpy as np

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.variable import Variable

from .._control import executing_eagerly
from .._keras.optimizers import Optimizer
from .._variables import Variable as TfVariable
from . import deferred, files, object_graph, state_file, watched_containers
from .status import CheckpointLoadStatus, InitializationOnlyStatus


def _check_trackable(value, name: str) -> None:
    # A list or dict is taken whatever it holds (an empty history list, numbers), as TensorFlow
    # wraps each as a trackable container (not a tuple); only what is trackable inside is saved.
    if not object_graph.is_trackable(value) and not isinstance(value, (list, dict)):
        raise _errors.GradkitValueError(
            f"`Checkpoint` was expecting {name} to be a trackable object (an object derived from `Trackable`), got "
            f"{value!r}. A checkpoint saves Variables and the objects that hold them: tf.Variable, Keras layers, "
            "models and optimizers, tf.Module, tf.train.Checkpoint, and lists or dicts of these. Wrap a number in a "
            "tf.Variable to save it."
        )


def _value(variable) -> np.ndarray:
    return np.array(frames.concrete(frames.read(variable)))


class Checkpoint:
    """``tf.train.Checkpoint(root=None, **kwargs)``: saves the Variables reachable from the objects
    given (a model, an optimizer, Variables, lists and dicts of them), each under its path of
    attribute names, and restores them into the same objects of another run of the program.

    ``save(prefix)`` numbers the checkpoints (``prefix-1``, ``prefix-2``, ... from ``save_counter``,
    itself saved) and records the newest in the directory's ``checkpoint`` file for
    ``tf.train.latest_checkpoint``; ``write(prefix)`` writes one without either; ``restore(path)``
    (and ``read(path)`` for ``write``'s) assigns the saved values. A value whose Variable is made
    later (a layer not built yet, an optimizer's slots before its first step) is given to it when
    it is made, as in TensorFlow. Every shape and dtype is checked before any Variable is written.

    The files are gradkit's own (see ``files.py``) under TensorFlow's names; TensorFlow's own
    checkpoints cannot be read.
    """

    def __init__(self, root=None, **kwargs):
        self.__dict__["_ckpt_save_counter"] = None
        self.__dict__["_ckpt_root"] = None
        self.__dict__["_ckpt_attached"] = ()
        if root is not None:
            target = root() if isinstance(root, weakref.ref) else root
            _check_trackable(target, "root")
            for key, value in kwargs.items():
                existing = object_graph.child(target, key)
                if existing is not None and existing is not value:
                    raise _errors.GradkitValueError(
                        f"Cannot create a Checkpoint with keyword argument {key} if root.{key} already exists. "
                        f"Pass tf.train.Checkpoint(root) alone, or give the other object another name."
                    )
            self.__dict__["_ckpt_root"] = root
            self.__dict__["_ckpt_attached"] = tuple(sorted(kwargs))
            kwargs["root"] = root
        if "save_counter" in kwargs:
            raise _errors.GradkitAttributeError(
                "tf.train.Checkpoint got the keyword save_counter, the name of its own numbering Variable "
                "(TensorFlow raises AttributeError: property 'save_counter' has no setter). Give the object "
                "another name, such as step=."
            )
        for key, value in sorted(kwargs.items()):
            if key != "root" or root is None:
                _check_trackable(value() if isinstance(value, weakref.ref) else value, key)
            self.__dict__[key] = value

    def __setattr__(self, name, value):
        object.__setattr__(self, name, watched_containers.watched(self, value))
        if deferred.waiting():
            deferred.built(self)

    def __repr__(self) -> str:
        names = [n for n, _ in self._checkpoint_children()]
        return f"<tf.train.Checkpoint of {names}>"

    # -- the object graph ------------------------------------------------------------------

    def _root_object(self):
        root = self._ckpt_root
        return root() if isinstance(root, weakref.ref) else root

    def _checkpoint_children(self) -> list:
        """The children of this checkpoint in its object graph: the objects given (with ``root=``,
        the root's own children, then the others given), then ``save_counter``."""
        root = self._root_object()
        if root is not None:
            out = object_graph.children(root)
            names = {n for n, _ in out}
            extra = [n for n in self._ckpt_attached if n not in names]
            extra += [n for n in vars(self) if not n.startswith("_") and n not in names and n != "root"]
        else:
            out, extra = [], [n for n in vars(self) if not n.startswith("_")]
        seen = set()
        for name in extra:
            value = vars(self)[name]
            value = value() if isinstance(value, weakref.ref) else value
            if name not in seen and object_graph.is_trackable(value):
                seen.add(name)
                out.append((name, value))
        if self._ckpt_save_counter is not None:
            out.append(("save_counter", self._ckpt_save_counter))
        return out

    @property
    def save_counter(self):
        """The number of ``save`` calls (a Variable, saved with the checkpoint), made at the first use.

        An int32 Variable (TensorFlow's is int64): gradkit keeps JAX's default 32-bit integers."""
        if self._ckpt_save_counter is None:
            with frames.Suspend():
                counter = TfVariable(np.int32(0), name="save_counter/", trainable=False)
            self.__dict__["_ckpt_save_counter"] = counter
            deferred.built(self)  # a value read before it was made
        return self._ckpt_save_counter

    # -- saving ----------------------------------------------------------------------------

    def _refuse_traced(self, method: str) -> None:
        if not executing_eagerly():
            raise _errors.GradkitNotImplementedError(
                f"Calling tf.train.Checkpoint.{method}() from a function is not supported: it moves values between "
                "the Variables and files, which a traced tf.function would do once, while tracing, not at each call "
                "(TensorFlow refuses it there too). Call it between the steps, outside the tf.function."
            )

    def write(self, file_prefix, options=None):
        """Write a checkpoint at ``file_prefix`` (``file_prefix.index`` and
        ``file_prefix.data-00000-of-00001``), without numbering it or updating the ``checkpoint``
        file; read it back with ``read``. Returns ``file_prefix``."""
        self._refuse_traced("write")
        return self._write(os.fspath(file_prefix))

    def _write(self, prefix: str) -> str:
        graph = object_graph.Graph(self)
        records = [
            {
                "key": object_graph.variable_key(path),
                "path": path,
                "other_paths": graph.other_paths.get(id(v), []),
                "value": _value(v),
            }
            for path, v in graph.variables
        ]
        records += [
            {
                "key": object_graph.slot_key(var_path, optimizer_path, name),
                "path": (),
                "slot": (var_path, optimizer_path, name),
                "value": _value(state),
            }
            for var_path, optimizer_path, name, state in graph.slots
        ]
        files.write(prefix, records)
        return prefix

    def save(self, file_prefix, options=None):
        """Save a checkpoint numbered by ``save_counter`` (``file_prefix-1``, then ``-2``, ...) and
        record it in the ``checkpoint`` file of its directory. Returns its path."""
        self._refuse_traced("save")
        file_prefix = os.fspath(file_prefix)
        number = int(self.save_counter.assign_add(1).numpy())
        path = self._write(f"{file_prefix}-{number}")
        state_file.update(os.path.dirname(path), path, [path])
        return path

    # -- restoring -------------------------------------------------------------------------

    def read(self, save_path, options=None):
        """Restore a checkpoint written by ``write`` (``save``'s too): like ``restore``, without
        making ``save_counter``. Returns the load status."""
        self._refuse_traced("read")
        return self._restore(os.fspath(save_path))

    def restore(self, save_path, options=None):
        """Restore the checkpoint at ``save_path`` (a path ``save`` returned, or
        ``tf.train.latest_checkpoint(directory)``; None restores nothing). Existing Variables are
        assigned their saved values at once; values for Variables made later wait for them.
        Returns the load status, whose ``assert_consumed()`` and kin check the match."""
        self._refuse_traced("restore")
        if save_path is None:
            return InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        self.save_counter  # noqa: B018  (made first, so it is restored like the rest)
        try:
            return self._restore(save_path)
        except _errors.GradkitNotFoundError as e:
            raise _errors.GradkitNotFoundError(
                f"Error when restoring from checkpoint or SavedModel at {save_path}: {str(e)[len(_errors.PREFIX) :]}\n"
                "Please double-check that the path is correct. You may be missing the checkpoint suffix (e.g. the "
                "'-1' in 'path/to/ckpt-1')."
            ) from None

    def _restore(self, save_path: str) -> CheckpointLoadStatus:
        if os.path.isdir(save_path):
            raise _errors.GradkitNotFoundError(
                f"{save_path!r} is a directory, not a checkpoint. Pass a checkpoint's prefix: "
                "tf.train.latest_checkpoint(directory), or a path save() returned ('.../ckpt-3')."
            )
        bundle = files.Bundle(save_path)
        values = bundle.load(bundle.entries)
        entries, other_paths = [], {}
        for key, info in bundle.entries.items():
            slot = info.get("slot")
            slot = None if slot is None else (tuple(slot["variable"]), tuple(slot["optimizer"]), slot["name"])
            entries.append(deferred.Entry(key, tuple(info["path"]), slot, values[key]))
            other_paths[tuple(info["path"])] = [tuple(p) for p in info.get("other_paths", [])]
        self._other_paths = other_paths
        writes, waits = [], []
        for entry in entries:
            if entry.slot is None:
                found, anchor, rest = self._follow(entry.path)
                if isinstance(found, Variable):
                    writes.append((entry, found))
                elif found is None:
                    waits.append((anchor, deferred.Waiting(entry, rest)))
            else:
                self._place_slot(entry, writes, waits)
        checked = [(variable, deferred.checked(entry, variable)) for entry, variable in writes]
        for (entry, variable), (_, value) in zip(writes, checked):
            deferred.write(variable, value)
            entry.bind(variable)
        for anchor, item in waits:
            deferred.wait(anchor, item)
        return CheckpointLoadStatus(self, entries)

    def _place_slot(self, entry, writes: list, waits: list) -> None:
        """An optimizer slot's value: written when the optimizer has that state, else left waiting at
        the optimizer (or at the deepest object on the way to it)."""
        var_path, optimizer_path, name = entry.slot
        variable, var_anchor, var_rest = self._follow(var_path)
        if isinstance(variable, Variable):
            target = weakref.ref(variable)
        elif variable is None:
            target = (weakref.ref(var_anchor), var_rest)
        else:
            return
        optimizer, anchor, rest = object_graph.follow(self, optimizer_path)
        if isinstance(optimizer, Optimizer):
            state = object_graph.state_of(optimizer, variable, name) if isinstance(variable, Variable) else None
            if state is not None:
                writes.append((entry, state))
            else:
                waits.append((optimizer, deferred.Waiting(entry, (), target)))
        elif optimizer is None:
            waits.append((anchor, deferred.Waiting(entry, rest, target, finding_optimizer=True)))

    def _follow(self, path: tuple):
        """``object_graph.follow`` of a saved Variable's path, or of another path that reached it
        when it was saved, where the first does not lead to a Variable now."""
        found = object_graph.follow(self, path)
        if isinstance(found[0], Variable):
            return found
        for other in self.__dict__.get("_other_paths", {}).get(path, []):
            alternative = object_graph.follow(self, other)
            if isinstance(alternative[0], Variable):
                return alternative
        return found

    def sync(self):
        """Nothing to wait for: gradkit writes checkpoints synchronously."""
        return None
