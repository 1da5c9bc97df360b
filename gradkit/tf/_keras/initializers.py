"""``tf.keras.initializers``: Keras 3's initializers, with its argument defaults and fan rules.

An initializer is called as ``init(shape, dtype=None)`` and returns a tensor. A random one
fixes its key when it is made, as Keras 3 fixes its seed: calling the same instance twice
gives the same values (``seed=None`` draws that key from ``gradkit.tf.random``'s global
sequence, so ``tf.keras.utils.set_random_seed`` makes it reproducible). The values follow
Keras' distributions but are not TensorFlow's draws.

>>> import gradkit.tf as tf
>>> init = tf.keras.initializers.get("he_normal")
>>> type(init).__name__, init((3, 2)).shape
('HeNormal', (3, 2))
>>> tf.keras.initializers.Constant(2.0)((2,)).numpy().tolist()
[2.0, 2.0]
"""

from __future__ import annotations

import inspect
import math

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor
from gradkit.nn import initializers as _nn_init

from .._convert import convert, known_value
from . import object_registry


def _dtype(dtype):
    return np.dtype("float32" if dtype is None else dtype)


def _shape(shape) -> tuple:
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise _errors.GradkitTypeError(
            f"an initializer takes a fully defined shape (a tuple of ints), but got {shape!r}. Pass e.g. init((3, 2))."
        ) from None


class Initializer:
    """Base class: subclasses implement ``__call__(shape, dtype=None)``."""

    def __call__(self, shape, dtype=None):  # pragma: no cover - overridden
        raise NotImplementedError(f"[gradkit] {type(self).__name__} must define __call__(shape, dtype=None).")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.get_config()}>"


def _concrete(values, dtype):
    # Initial values are drawn on the host (no XLA program per new shape) and are concrete,
    # also while a tf.function traces the build.
    return Tensor.concrete(_nn_init.to_device(values, dtype))


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return _concrete(np.zeros(_shape(shape)), _dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return _concrete(np.ones(_shape(shape)), _dtype(dtype))


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return _concrete(np.full(_shape(shape), np.asarray(self.value)), _dtype(dtype))

    def get_config(self):
        return {"value": self.value}


class Identity(Initializer):
    """``gain * eye(rows, cols)``, for 2-D shapes only (as in Keras)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        if len(shape) != 2:
            raise _errors.GradkitValueError(
                f"tf.keras.initializers.Identity makes a 2-D matrix, as in Keras, but got shape {shape}. "
                "Use it for a (rows, cols) weight."
            )
        return _concrete(self.gain * np.eye(*shape), _dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


class RandomInitializer(Initializer):
    """A random initializer: its key is fixed when it is made (from ``seed``, or, for
    ``seed=None``, drawn from the global sequence), so each call gives the same values."""

    def __init__(self, seed=None):
        from .keras_random import SeedGenerator

        if isinstance(seed, dict) and seed.get("class_name") == "SeedGenerator":  # as get_config writes it
            seed = SeedGenerator.from_config(seed.get("config", {}))
        if isinstance(seed, SeedGenerator):
            # Keras' way to new values at each call: each draws the generator's next seed.
            self.seed, self._key = seed, None
            return
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
            raise _errors.GradkitTypeError(
                f"{type(self).__name__} takes seed=None, an int or a tf.keras.random.SeedGenerator, but got "
                f"{seed!r}. Pass an int seed."
            )
        self.seed = seed
        with jax.ensure_compile_time_eval():
            self._key = _nn_init.next_key() if seed is None else jax.random.key(int(seed))

    def _rng(self) -> np.random.Generator:
        if self._key is None:
            pair = known_value(self.seed.next())
            if pair is None:
                raise _errors.GradkitValueError(
                    f"{type(self).__name__} with a SeedGenerator seed was called inside a compiled function, where "
                    "the generator's state is not known; call the initializer eagerly (outside tf.function)."
                )
            return np.random.default_rng([int(w) & 0xFFFFFFFF for w in np.ravel(pair)])
        # A new generator from the fixed key at each call: the same values each time.
        return _nn_init.host_rng(self._key)

    def _seed_config(self):
        """The seed as Keras' get_config writes it (a SeedGenerator serialized)."""
        if self._key is None:
            return object_registry.serialize(self.seed, type(self.seed), "keras.random", "random")
        return self.seed

    def get_config(self):
        return {"seed": self._seed_config()}


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        return _concrete(self.mean + self.stddev * self._rng().standard_normal(_shape(shape)), _dtype(dtype))

    def get_config(self):
        return {"seed": self._seed_config(), "mean": self.mean, "stddev": self.stddev}


class TruncatedNormal(RandomInitializer):
    """Normal draws more than two standard deviations from the mean redrawn (Keras' rule)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        draws = _nn_init.truncated_standard_normal(self._rng(), _shape(shape))
        return _concrete(self.mean + self.stddev * draws, _dtype(dtype))

    def get_config(self):
        return {"seed": self._seed_config(), "mean": self.mean, "stddev": self.stddev}


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval = minval, maxval
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        dtype = _dtype(dtype)
        if dtype.kind in "iu":  # Keras draws integers in [minval, maxval), each alike
            return _concrete(self._rng().integers(int(self.minval), int(self.maxval), _shape(shape)), dtype)
        return _concrete(self._rng().uniform(self.minval, self.maxval, _shape(shape)), dtype)

    def get_config(self):
        return {"seed": self._seed_config(), "minval": self.minval, "maxval": self.maxval}


def compute_fans(shape, input_axes=None, output_axes=None):
    """Keras' ``(fan_in, fan_out)``: a convolution kernel ``(..., in, out)`` counts its
    receptive field in both."""
    if input_axes is not None and output_axes is not None:
        return math.prod(shape[a] for a in input_axes), math.prod(shape[a] for a in output_axes)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class VarianceScaling(RandomInitializer):
    """Draws with variance ``scale / n``, ``n`` the fan given by ``mode``: a normal truncated at
    two standard deviations (its stddev corrected for the truncation), an untruncated normal,
    or a uniform on ``±sqrt(3 * scale / n)``."""

    def __init__(
        self,
        scale=1.0,
        mode="fan_in",
        distribution="truncated_normal",
        seed=None,
        input_axes=None,
        output_axes=None,
    ):
        if scale <= 0.0:
            raise _errors.GradkitValueError(
                f"VarianceScaling takes a positive scale, as Keras does, but got scale={scale!r}."
            )
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise _errors.GradkitValueError(
                f"VarianceScaling got mode={mode!r}; Keras takes 'fan_in', 'fan_out' or 'fan_avg'."
            )
        distribution = str(distribution).lower()
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise _errors.GradkitValueError(
                f"VarianceScaling got distribution={distribution!r}; Keras takes 'uniform', 'truncated_normal' "
                "(or 'normal') or 'untruncated_normal'."
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape, d = _shape(shape), _dtype(dtype)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, fan)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978  # the stddev of a unit normal truncated at ±2
            return _concrete(stddev * _nn_init.truncated_standard_normal(self._rng(), shape), d)
        if self.distribution == "untruncated_normal":
            return _concrete(math.sqrt(scale) * self._rng().standard_normal(shape), d)
        limit = math.sqrt(3.0 * scale)
        return _concrete(self._rng().uniform(-limit, limit, shape), d)

    def get_config(self):
        return {
            "seed": self._seed_config(),
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "input_axes": self.input_axes,
            "output_axes": self.output_axes,
        }


def _variance_scaling(name, scale, mode, distribution):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._seed_config(), "input_axes": self.input_axes, "output_axes": self.output_axes}

    doc = f"Keras' ``{name}``: VarianceScaling(scale={scale}, mode={mode!r}, distribution={distribution!r})."
    return type(name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config, "__doc__": doc})


GlorotUniform = _variance_scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _variance_scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _variance_scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _variance_scaling("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _variance_scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _variance_scaling("LecunUniform", 1.0, "fan_in", "uniform")
for _cls in (GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal, LecunUniform):
    _cls.__module__ = __name__


class Orthogonal(RandomInitializer):
    """An orthogonal matrix (the last axis against all the others flattened), times ``gain``."""

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape, d = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise _errors.GradkitValueError(
                f"tf.keras.initializers.Orthogonal needs a shape of rank 2 or more, as in Keras, but got {shape}."
            )
        rows, cols = math.prod(shape[:-1]), shape[-1]

        q, r = np.linalg.qr(self._rng().standard_normal((max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))  # makes the decomposition unique, as Keras does
        q = q.T if rows < cols else q
        return _concrete(self.gain * q.reshape(shape), d)

    def get_config(self):
        return {"seed": self._seed_config(), "gain": self.gain}


CLASSES = {
    cls.__name__: cls
    for cls in (
        Zeros,
        Ones,
        Constant,
        Identity,
        RandomNormal,
        RandomUniform,
        TruncatedNormal,
        VarianceScaling,
        GlorotUniform,
        GlorotNormal,
        HeNormal,
        HeUniform,
        LecunNormal,
        LecunUniform,
        Orthogonal,
    )
}
# Keras' snake-case names ('glorot_uniform', 'he_normal', ...) and its short aliases.
NAMES = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "identity": Identity,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_normal": HeNormal,
    "he_uniform": HeUniform,
    "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal,
}


# Keras' short names for four initializers ('uniform' is RandomUniform(-0.05, 0.05)).
ALIASES = {"uniform": "random_uniform", "normal": "random_normal", "one": "ones", "zero": "zeros"}


def lookup(name: str):
    """The initializer class of a Keras name or class name (None if gradkit.tf has none)."""
    return _table().get(name)


def known(identifier) -> bool:
    """Whether ``get`` takes ``identifier`` (without making an instance, which would draw a seed)."""
    if identifier is None or callable(identifier):
        return True
    if isinstance(identifier, dict):
        return isinstance(identifier.get("class_name"), str) and lookup(identifier["class_name"]) is not None
    return isinstance(identifier, str) and lookup(identifier) is not None


def get(identifier):
    """``tf.keras.initializers.get``: None stays None; a name (``'he_normal'``, ``'HeNormal'``)
    or a config dict (``{'class_name': ..., 'config': ...}``) makes a new instance, and so
    does a class (``tf.keras.initializers.Ones``), as in Keras; another callable is returned as
    it is."""
    if inspect.isclass(identifier):
        return identifier()
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict) and "class_name" in identifier:
        cls = lookup(identifier["class_name"])
        if cls is not None:
            return cls(**identifier.get("config", {}))
    elif isinstance(identifier, str):
        cls = lookup(identifier)
        if cls is not None:
            return cls()
    raise _errors.GradkitValueError(
        f"{identifier!r} is not an initializer gradkit.tf knows; it knows {sorted(NAMES)} (and their class "
        "names, e.g. 'GlorotUniform'). Pass one of those, an instance such as "
        "tf.keras.initializers.RandomNormal(stddev=0.1), or a callable init(shape, dtype=None)."
    )


# Keras 3's other names for two classes.
IdentityInitializer = Identity
OrthogonalInitializer = Orthogonal


def _table() -> dict:
    """Keras' ``ALL_OBJECTS_DICT``: each class by its names, snake_case and short names included
    (but STFT's: gradkit has no STFT initializer)."""
    return {
        **CLASSES,
        "Initializer": Initializer,
        "initializer": Initializer,
        "IdentityInitializer": Identity,
        "OrthogonalInitializer": Orthogonal,
        **NAMES,
        **{alias: NAMES[name] for alias, name in ALIASES.items()},
    }


def serialize(initializer):
    """``tf.keras.initializers.serialize``, as Keras writes it."""
    return object_registry.serialize(initializer, Initializer, "keras.initializers", "initializers")


def deserialize(config, custom_objects=None):
    """``tf.keras.initializers.deserialize``: the initializer a name or ``serialize``'s dict describes."""
    return object_registry.deserialize(config, _table(), custom_objects, "initializers")


def as_nn_initializer(init, what: str):
    """An initializer as gradkit.nn's ``init(key, shape, dtype)``, from a Keras name, a Keras
    initializer or a Keras-style callable ``init(shape, dtype=None)`` (gradkit.nn's own
    initializers are taken as they are)."""
    if isinstance(init, (str, dict)) or inspect.isclass(init):
        try:
            init = get(init)
        except ValueError as e:
            raise _errors.GradkitValueError(f"{what}: {str(e).removeprefix(_errors.PREFIX)}") from None
    if not callable(init):
        raise _errors.GradkitTypeError(
            f"{what} must be an initializer name or a callable init(shape, dtype=None), but got "
            f"{type(init).__name__} {init!r}. Pass e.g. 'zeros' or lambda shape, dtype=None: tf.zeros(shape)."
        )
    if getattr(init, "__module__", None) == _nn_init.__name__:
        return init

    def keras_style(key, shape, dtype):
        with jax.ensure_compile_time_eval():
            value = convert(init(shape, dtype=dtype))
            value = value.__gradkit_value__() if hasattr(value, "__gradkit_value__") else value
            return np.asarray(value).astype(dtype) if not isinstance(value, jax.Array) else value.astype(dtype)

    return keras_style
