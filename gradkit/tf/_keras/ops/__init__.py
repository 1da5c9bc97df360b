"""``tf.keras.ops``: Keras 3's backend-agnostic ops on gradkit's tape.

Each module implements one family (``numpy_*``: ``keras.ops.numpy``, ``nn_*``: ``keras.ops.nn``,
``linalg_ops``: ``keras.ops.linalg``, ``math_ops`` and ``core_ops``), with Keras' names, argument
names, defaults and dtype rules as Keras 3 has them on its TensorFlow backend; ``dtype_rules``
holds Keras' type promotion and ``dispatch`` what every op shares. ``gradkit.tf.keras``
(``_keras/__init__.py``) builds the namespaces from each module's ``NAMES``.
"""
