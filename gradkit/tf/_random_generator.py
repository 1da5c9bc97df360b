"""``tf.random.Generator``: a random number generator whose state lives in a Variable.

Each draw reads the state and assigns the next one, so inside a ``tf.function`` the state is
an input and an output of the compiled program: each call draws new numbers and a step of
the same shapes compiles once, as in TensorFlow. The state is a uint32[2] ``jax.random`` key
(TensorFlow's is an int64[3] Philox state), and the numbers differ from TensorFlow's.

>>> import gradkit.tf as tf
>>> g = tf.random.Generator.from_seed(1)
>>> a = g.normal([2]); b = g.normal([2])
>>> bool((a == b).numpy().any()), bool((a == tf.random.Generator.from_seed(1).normal([2])).numpy().all())
(False, True)
"""

from __future__ import annotations

import enum
import os

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import _dtypes, _random, _random_seeds, _random_stateless
from ._namespace import missing
from ._variables import Variable

_GENERATOR_DOMAIN = 0xBB67AE85


class Algorithm(enum.Enum):
    """``tf.random.Algorithm``: the names TensorFlow's generators take as ``alg``. gradkit accepts
    each of them and draws with jax.random's threefry key whichever is named."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _check_algorithm(alg) -> None:
    if alg is None or isinstance(alg, Algorithm):
        return
    names = {a.name.lower(): a for a in Algorithm}
    if isinstance(alg, str) and alg.lower() in names:
        return
    if isinstance(alg, int) and not isinstance(alg, bool) and alg in {a.value for a in Algorithm}:
        return
    raise _errors.GradkitValueError(
        f"tf.random.Generator got alg={alg!r}: it takes None, a tf.random.Algorithm, or one of the names "
        f"{sorted(names)} (or their numbers 1-3), as in TensorFlow."
    )


def _key_of_seed(seed) -> np.ndarray:
    if isinstance(seed, Tensor):
        seed = seed.numpy()
    seed = int(np.asarray(seed))
    with jax.ensure_compile_time_eval():
        # A domain of its own folded in first: Generator.from_seed(s) does not replay the global
        # sequence tf.random.set_seed(s) starts.
        key = jax.random.fold_in(jax.random.key(seed & 0xFFFFFFFF), _GENERATOR_DOMAIN)
        key = jax.random.fold_in(key, (seed >> 32) & 0xFFFFFFFF)
        return np.asarray(jax.random.key_data(key))


def _checked_state(state, what: str) -> np.ndarray:
    state = np.asarray(state.numpy() if isinstance(state, (Tensor, Variable)) else state)
    if state.shape != (2,) or state.dtype != np.uint32:
        raise _errors.GradkitValueError(
            f"{what} got a state of shape {list(state.shape)} and dtype {state.dtype}: gradkit's "
            "is a uint32[2] jax.random key (TensorFlow's int64[3] Philox state does not carry over). "
            "Call tf.random.Generator.from_seed(seed), or pass a state from tf.random.create_rng_state or "
            "another generator's g.state."
        )
    return state


def create_rng_state(seed, alg) -> Tensor:
    """``tf.random.create_rng_state``: the state ``Generator.from_seed(seed)`` starts from, for
    ``Generator(state=...)`` or ``Generator.from_state``. gradkit's state is a uint32[2]
    jax.random key, where TensorFlow's is an int64 Philox or threefry state."""
    _check_algorithm(alg)
    return Tensor.concrete(_key_of_seed(seed))


class Generator:
    """``tf.random.Generator``: make one with ``Generator.from_seed(seed)``,
    ``Generator.from_state(state, alg)`` or ``Generator.from_non_deterministic_state()``;
    ``g.normal``, ``g.uniform``, ``g.truncated_normal``, ``g.uniform_full_int``, ``g.binomial``,
    ``g.make_seeds``, ``g.split``, ``g.skip``, ``g.reset``, ``g.reset_from_seed``. ``g.state`` is
    the Variable holding its state."""

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            state = copy_from.state.numpy()
        if state is None:
            raise _errors.GradkitValueError(
                "tf.random.Generator() needs a state to start from. Call tf.random.Generator.from_seed(seed) or "
                "tf.random.Generator.from_non_deterministic_state(), or pass copy_from=another_generator."
            )
        _check_algorithm(alg)
        self._state_var = Variable(_checked_state(state, "tf.random.Generator"), name="StateVar", trainable=False)

    @classmethod
    def _holding(cls, state_var: Variable) -> Generator:
        """A generator whose state is ``state_var`` itself (a loaded SavedModel's)."""
        generator = cls.__new__(cls)
        generator._state_var = state_var
        return generator

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose draws are fixed by ``seed`` (an integer)."""
        return cls(state=_key_of_seed(seed), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        """A generator that starts from ``state`` (from ``tf.random.create_rng_state`` or another
        generator's ``g.state``)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        return cls.from_seed(int.from_bytes(os.urandom(8), "little"), alg=alg)

    def __getattr__(self, name):
        raise AttributeError(missing("tf.random.Generator", name))

    @property
    def state(self) -> Variable:
        return self._state_var

    @property
    def algorithm(self) -> int:
        """The number of the algorithm the draws use: jax.random's threefry
        (``tf.random.Algorithm.THREEFRY.value``), whichever ``alg`` was named."""
        return Algorithm.THREEFRY.value

    def reset(self, state) -> None:
        """Starts again from ``state``, as ``Generator.from_state(state, alg)`` does."""
        self._state_var.assign(_checked_state(state, "Generator.reset"))

    def skip(self, delta):
        """Advances the state to where a draw of ``delta`` numbers leaves it, and returns the state
        before. Each draw advances gradkit's state by one step of ``jax.random.split``, whatever
        its size, so any ``delta`` is one step."""
        int(np.asarray(delta.numpy() if isinstance(delta, Tensor) else delta))  # an integer, as TensorFlow takes
        before = Tensor.concrete(np.asarray(self._state_var.numpy()))
        self._next_key()
        return before

    def reset_from_seed(self, seed) -> None:
        """Starts again as ``Generator.from_seed(seed)`` does."""
        self._state_var.assign(_key_of_seed(seed))

    def _next_key(self):
        # The state is integer data: reading its value takes it off a tape, which would give
        # it no gradient anyway; the assignment makes it an output of a compiled step.
        state = self._state_var.value
        if isinstance(state, Tensor):
            state = state.__gradkit_value__()
        keys = jax.random.split(state)
        self._state_var.assign(keys[0])
        return keys[1]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        dtype = _random_stateless._float_dtype(dtype, "Generator.normal")
        dims = _random._shape(shape, "Generator.normal")
        return _random._affine(_random.standard_normal(self._next_key(), dims, dtype), stddev, mean, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        dtype = _random_stateless._float_dtype(dtype, "Generator.truncated_normal")
        dims = _random._shape(shape, "Generator.truncated_normal")
        standard = _random.standard_truncated_normal(self._next_key(), dims, dtype)
        return _random._affine(standard, stddev, mean, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        """Floats in ``[minval, maxval)`` (maxval None: 1); for an integer dtype minval and maxval
        must both be given, or both None for the whole range, as in TensorFlow."""
        dtype = _random_stateless.check_uniform_dtype(dtype, "Generator.uniform")
        dims = _random._shape(shape, "Generator.uniform")
        if dtype in _random_stateless._INTEGERS:
            # Checked before drawing, so a refused call leaves the state alone.
            if (minval is None) != (maxval is None):
                _random_stateless.uniform_integers(None, dims, minval, maxval, dtype, "Generator.uniform")
            return _random_stateless.uniform_integers(
                self._next_key(), dims, minval, maxval, dtype, "Generator.uniform"
            )
        return _random_stateless.uniform_floats(self._next_key(), dims, minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        """Integers over the whole range of ``dtype`` (uint64 by default, as in TensorFlow)."""
        return self.uniform(shape, None, None, dtype)

    def binomial(self, shape, counts, probs, dtype=_dtypes.int32, name=None):
        """Binomial draws of shape ``shape`` (which must end with the broadcast shape of ``counts``
        and ``probs``), as ``Generator.binomial``; the state advances only for a call that draws."""
        dims, n, p = _random_seeds.binomial_arguments(shape, counts, probs, "Generator.binomial")
        return _random_seeds.binomial_draws(self._next_key(), dims, n, p, dtype)

    def make_seeds(self, count=1):
        """``count`` seeds for the ``tf.random.stateless_*`` functions: shape ``[2, count]``, int64."""
        out = jax.dtypes.canonicalize_dtype(np.int64)
        unsigned = np.dtype(f"uint{8 * out.itemsize}")
        bits = jax.random.bits(self._next_key(), (2, int(count)), unsigned)
        return Tensor.concrete(jax.lax.bitcast_convert_type(bits, out))

    def split(self, count=1):
        """``count`` new generators, each with its own state taken from this one's."""
        keys = np.asarray(jax.random.split(self._next_key(), int(count)))
        return [Generator(state=key.astype(np.uint32)) for key in keys]


_global = [None]


def get_global_generator() -> Generator:
    """``tf.random.get_global_generator``: one made from the system's entropy at the first call."""
    if _global[0] is None:
        _global[0] = Generator.from_non_deterministic_state()
    return _global[0]


def set_global_generator(generator) -> None:
    """``tf.random.set_global_generator``: ``generator`` becomes the global one."""
    if not isinstance(generator, Generator):
        raise _errors.GradkitTypeError(
            f"tf.random.set_global_generator got {type(generator).__name__}: it takes a tf.random.Generator. "
            "Pass tf.random.Generator.from_seed(seed)."
        )
    _global[0] = generator
