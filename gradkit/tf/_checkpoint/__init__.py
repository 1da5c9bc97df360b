"""``tf.train``'s checkpoints: ``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint`` and the
readers, in gradkit's own file format under TensorFlow's file names.

The modules: ``object_graph.py`` (the objects a checkpoint saves, each under its attribute path),
``files.py`` (the ``.index`` and ``.data-00000-of-00001`` files), ``state_file.py`` (the
``checkpoint`` file, ``latest_checkpoint``), ``deferred.py`` (values waiting for the objects they
belong to), ``status.py`` (what ``restore`` returns), ``checkpoint.py``, ``manager.py`` and
``reader.py`` (``list_variables``, ``load_variable``). Nothing is imported here: the Keras layers
and optimizers import ``deferred`` while ``gradkit.tf`` is still being set up.
"""
