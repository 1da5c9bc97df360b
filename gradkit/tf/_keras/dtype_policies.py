"""``tf.keras.mixed_precision``'s (and ``tf.keras.config``'s) dtype policies: ``DTypePolicy``
(``Policy``) names a compute and a variable dtype, as Keras' does; the global policy is
``"float32"``, which is what gradkit's Keras layers compute in. Setting another (``"mixed_float16"``,
``"mixed_bfloat16"``, ...) is refused with a ``[gradkit]`` error rather than leaving the layers
in float32 while the code believes otherwise.

>>> import gradkit.tf as tf
>>> policy = tf.keras.mixed_precision.Policy("mixed_float16")
>>> policy.compute_dtype, policy.variable_dtype, tf.keras.mixed_precision.global_policy().name
('float16', 'float32', 'float32')
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

_NAMES = ("float32", "float16", "bfloat16", "float64", "mixed_float16", "mixed_bfloat16")


class DTypePolicy:
    """``tf.keras.DTypePolicy(name="float32")`` (``mixed_precision.Policy``): a layer's compute and
    variable dtypes; ``"mixed_float16"`` computes in float16 with float32 variables."""

    def __init__(self, name=None):
        name = "float32" if name is None else getattr(name, "name", name)
        if name not in _NAMES:
            raise _errors.GradkitValueError(
                f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as 'float32'."
            )
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return self._name.removeprefix("mixed_")

    @property
    def variable_dtype(self) -> str:
        return "float32" if self._name.startswith("mixed_") else self._name

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash((DTypePolicy, self._name))

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy


def compute_dtype(dtype) -> str:
    """The dtype a loss or metric given ``dtype`` computes in, as Keras' ``dtype_policies.get(dtype
    or floatx()).compute_dtype``: a policy's (``"mixed_float16"`` computes in float16), a dtype's own."""
    if dtype is None:
        return "float32"
    name = getattr(dtype, "name", dtype)
    if isinstance(dtype, DTypePolicy) or name in _NAMES:
        return DTypePolicy(name).compute_dtype
    return np.dtype(dtype).name


_GLOBAL = DTypePolicy("float32")


def global_policy() -> DTypePolicy:
    """The policy new layers take: ``"float32"``."""
    return _GLOBAL


def set_global_policy(policy) -> None:
    """Keras' ``set_global_policy``: only ``"float32"`` (or None, the default) is taken; see the module docstring."""
    policy = DTypePolicy(policy)
    if policy.name != "float32":
        raise _errors.GradkitValueError(
            f"tf.keras.mixed_precision.set_global_policy({policy.name!r}): gradkit's Keras layers compute in "
            "float32 only, so the global policy stays 'float32'. Leave it at float32 (gradkit's programs are "
            "compiled by XLA, which on a GPU may use TensorFloat-32 for float32 matrix products: "
            "jax.default_matmul_precision chooses), or cast inputs and results where you need float16."
        )


dtype_policy = global_policy
set_dtype_policy = set_global_policy

NAMES = "DTypePolicy Policy global_policy set_global_policy"
CONFIG_NAMES = "dtype_policy set_dtype_policy"
