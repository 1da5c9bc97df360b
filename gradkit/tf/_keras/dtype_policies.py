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

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


def _parse(name) -> str:
    """``name`` if Keras takes it as a policy name: a mixed policy's, or any dtype's."""
    if not isinstance(name, str):
        raise _errors.GradkitTypeError(
            f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} (of type {type(name)}); "
            "pass the dtype's name, e.g. DTypePolicy('float32') (Keras raises TypeError too)."
        )
    if name not in _MIXED:
        try:
            jnp.dtype(name)
        except TypeError:
            raise _errors.GradkitValueError(
                f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as 'float32'."
            ) from None
    return name


class DTypePolicy:
    """``tf.keras.DTypePolicy(name=None)`` (``mixed_precision.Policy``): a layer's compute and
    variable dtypes; ``"mixed_float16"`` computes in float16 with float32 variables, a dtype's
    name (``"int32"``) means that dtype for both, and None the global policy's."""

    def __init__(self, name=None):
        self._name = global_policy().name if name is None else _parse(name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return _MIXED.get(self._name, self._name)

    @property
    def variable_dtype(self) -> str:
        return "float32" if self._name in _MIXED else self._name

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


class FloatDTypePolicy(DTypePolicy):
    """Keras' ``FloatDTypePolicy``: a ``DTypePolicy`` (its older name, kept for configs that use it)."""


Policy = DTypePolicy


def compute_dtype(dtype) -> str:
    """The dtype a loss or metric given ``dtype`` computes in, as Keras' ``dtype_policies.get(dtype
    or floatx()).compute_dtype``: a policy's (``"mixed_float16"`` computes in float16), a dtype's own."""
    if dtype is None:
        return "float32"
    if isinstance(dtype, DTypePolicy):
        return dtype.compute_dtype
    name = getattr(dtype, "name", dtype)
    if name in _MIXED:
        return _MIXED[name]
    return np.dtype(dtype).name


_GLOBAL_NAME = "float32"


def global_policy() -> DTypePolicy:
    """The policy new layers take: ``"float32"``."""
    return DTypePolicy(_GLOBAL_NAME)


def set_global_policy(policy) -> None:
    """Keras' ``set_global_policy``: only ``"float32"`` is taken; see the module docstring."""
    if not isinstance(policy, (str, DTypePolicy)):
        raise _errors.GradkitValueError(
            "Invalid `policy` argument. Expected the string name of a policy (such as 'mixed_float16') or a "
            f"`DTypePolicy` instance. Received: policy={policy!r} (of type {type(policy)}). gradkit's Keras "
            "layers compute in float32: set_global_policy('float32')."
        )
    policy = DTypePolicy(policy) if isinstance(policy, str) else policy
    if policy.name != _GLOBAL_NAME:
        raise _errors.GradkitValueError(
            f"tf.keras.mixed_precision.set_global_policy({policy.name!r}): gradkit's Keras layers compute in "
            "float32 only, so the global policy stays 'float32'. Leave it at float32 (gradkit's programs are "
            "compiled by XLA, which on a GPU may use TensorFloat-32 for float32 matrix products: "
            "jax.default_matmul_precision chooses), or cast inputs and results where you need float16."
        )


dtype_policy = global_policy
set_dtype_policy = set_global_policy

_CLASSES = {"DTypePolicy": DTypePolicy, "FloatDTypePolicy": FloatDTypePolicy}


def serialize(policy):
    """Keras' ``dtype_policies.serialize``: a policy's config dict (a name stays a name)."""
    if isinstance(policy, str):
        return policy
    if not isinstance(policy, DTypePolicy):
        raise _errors.GradkitValueError(
            f"tf.keras.dtype_policies.serialize got {policy!r} (of type {type(policy)}); pass a DTypePolicy."
        )
    return {
        "module": "keras",
        "class_name": type(policy).__name__,
        "config": policy.get_config(),
        "registered_name": None,
    }


def deserialize(config):
    """Keras' ``dtype_policies.deserialize``: the policy a ``serialize`` dict describes."""
    if isinstance(config, (str, DTypePolicy)):
        return config if isinstance(config, DTypePolicy) else DTypePolicy(config)
    cls = _CLASSES.get(config.get("class_name")) if isinstance(config, dict) else None
    if cls is None:
        raise _errors.GradkitValueError(
            f"tf.keras.dtype_policies.deserialize got {config!r}: expected what tf.keras.dtype_policies.serialize "
            "returns, e.g. {'class_name': 'DTypePolicy', 'config': {'name': 'float32'}} (quantized policies are "
            "not available in gradkit)."
        )
    return cls.from_config(config.get("config") or {})


def get(identifier):
    """Keras' ``dtype_policies.get``: a policy from a name, a config dict or a policy (None: the
    global policy)."""
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    raise _errors.GradkitValueError(
        "Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
        f"Received: dtype={identifier!r}"
    )


NAMES = "DTypePolicy Policy global_policy set_global_policy"
CONFIG_NAMES = "dtype_policy set_dtype_policy"
MODULE_NAMES = "DTypePolicy FloatDTypePolicy get serialize deserialize"
