"""``tf.random``: a stateful global PRNG on ``jax.random`` (draws differ from TensorFlow's).

Seeded by ``tf.random.set_seed`` / ``tf.keras.utils.set_random_seed``. A draw without an op
seed splits a fresh key off the global one (``gradkit.nn.initializers.next_key``). A draw
with an op seed (``seed=5``) follows TensorFlow's rule: the global and the op seed together
fix its sequence, the n-th such draw of that op since ``set_seed`` is the same whatever other
draws ran in between, and it leaves the global sequence alone. Inside a ``tf.function`` each
op is a kernel of its own, as in a TensorFlow graph: every op of one op seed draws the same
numbers in a call, new ones at the next, the n-th call (with a global seed) drawing the op's
n-th eager numbers; in a traced loop each iteration draws anew.

``mean``/``stddev`` and ``minval``/``maxval`` may be tensors or Variables: as in TensorFlow,
the draw is ``standard * stddev + mean`` (``u * (maxval - minval) + minval``), recorded, so a
tape differentiates through them.

>>> import gradkit.tf as tf
>>> tf.random.set_seed(0); a = tf.random.normal([2])
>>> tf.random.set_seed(0); b = tf.random.normal([2])
>>> bool((a == b).numpy().all()), a.shape
(True, (2,))
"""

from __future__ import annotations

import secrets
import threading
import zlib

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor
from gradkit.nn import initializers

from . import _dtypes
from ._convert import check_python_value, convert, known_value, static_ints

_DEFAULT_GLOBAL_SEED = 87654321  # TensorFlow's, used for an op seed while no global seed is set
_global_seed = [None]
_op_counts: dict = {}  # (op, dtype, op seed) -> its draws since set_seed
# tf.function calls since set_seed (a call that raised gives its seed back): with a global seed
# set, counted per function, as TensorFlow's op seeds follow each function's own ops (two
# functions of the same ops draw the same numbers); without one, all together (every call
# draws anew, as TensorFlow's random op seeds do).
_calls: dict = {}
# Folded into every tf.function call's key, so that its draws are never those of the eager
# sequence (split off the same global seed) or of a Generator seeded with the same number.
_FUNCTION_DOMAIN = 0x6A09E667
# Folded into an op-seeded draw's key inside a loop or mapped element, so its numbers are not
# an unseeded draw's of the same key.
_OP_SEED_DOMAIN = 0xBB67AE85


class _Traces(threading.local):
    def __init__(self):
        # [key data, draws so far, eager op seeds, element index, kind, call seed] of each
        # tf.function being traced (and custom_gradient call being run). The key is kept as its
        # uint32 data, not a typed key: a program traced inside (a custom gradient, a transform a
        # tape records) then closes over a plain array. kind is _CALL (a tf.function trace, whose
        # call seed is the runtime seed's uint32 pair), _DISCARDED or _REPLAY.
        self.stack: list = []


_traces = _Traces()
_CALL, _DISCARDED, _REPLAY = "call", "discarded", "replay"  # what pushed a stack entry


def set_seed(seed):
    """``tf.random.set_seed``: seeds the global sequence and restarts every op seed's. ``None``
    clears the global seed, as in TensorFlow: the draws that follow are not reproducible."""
    if seed is None:
        initializers.set_seed(secrets.randbits(32))
        _global_seed[0] = None
    else:
        initializers.set_seed(seed)
        _global_seed[0] = int(seed)
    _op_counts.clear()
    _calls.clear()


def function_seed(owner=None):
    """The runtime seed of one call of the ``tf.function`` ``owner`` (a uint32 pair, an argument
    of the compiled program, so each call draws afresh, as in TensorFlow, instead of a draw baked
    in at trace time); inside the trace of another one, derived from its key."""
    if _traces.stack:
        return jax.random.bits(_next_traced_key(), (2,), np.uint32)
    global_seed = _DEFAULT_GLOBAL_SEED if _global_seed[0] is None else _global_seed[0]
    slot = _slot(owner)
    call = _calls.get(slot, 0)
    _calls[slot] = call + 1
    return np.array([global_seed & 0xFFFFFFFF, call & 0xFFFFFFFF], np.uint32)


def _slot(owner):
    return None if owner is None or _global_seed[0] is None else id(owner)


def init_seed(call_seed):
    """The seed an initial value lifted out of a ``tf.function`` draws with, in place of the call's
    ``call_seed``: concrete, as TensorFlow's init_scope draws eagerly, and split off the global key,
    so the initializer's numbers are not the ones the call itself draws."""
    with jax.ensure_compile_time_eval():
        return np.asarray(jax.random.bits(initializers.next_key(), (2,), np.uint32))


def give_back(seed, owner=None) -> None:
    """A call given ``seed`` (``function_seed(owner)``'s) raised: the next call gets it again, as
    a failed call in TensorFlow leaves its random state alone."""
    slot = _slot(owner)
    if not isinstance(seed, jax.core.Tracer) and _calls.get(slot, 0) == int(seed[1]) + 1:
        _calls[slot] -= 1


class NeedsSeed(Exception):
    """A ``tf.function`` traced without a runtime seed drew a random number: trace it again with one."""


def unseeded() -> bool:
    """Whether a draw now would raise ``NeedsSeed`` (a ``tf.function`` traced without a runtime seed)."""
    return bool(_traces.stack) and _traces.stack[-1][0] is None


class tracing:
    """While a ``tf.function`` is traced: its draws come from its runtime seed (None: the
    function is compiled without one, so a draw raises ``NeedsSeed``)."""

    def __init__(self, seed):
        self.seed = seed

    def __enter__(self):
        if self.seed is None:
            key = None
        else:
            key = jax.random.fold_in(jax.random.key(self.seed[0]), _FUNCTION_DOMAIN)
            key = jax.random.fold_in(key, self.seed[1])
        _traces.stack.append([None if key is None else jax.random.key_data(key), 0, False, None, _CALL, self.seed])

    def __exit__(self, *exc):
        _traces.stack.pop()


class discarded:
    """Draws whose numbers nothing uses (a branch ``tf.cond`` does not take, traced only for what
    it reads): a fixed key of their own, so the draws around them are the ones they would be
    without them, and no runtime seed is asked for."""

    def __enter__(self):
        with jax.ensure_compile_time_eval():
            data = jax.random.key_data(jax.random.key(0))
        _traces.stack.append([np.asarray(data), 0, False, None, _DISCARDED, None])

    def __exit__(self, *exc):
        _traces.stack.pop()


_EAGER = object()  # a replayed call made eagerly: its key is split off the global one at its first draw


class replaying:
    """Every run of a function inside one ``replaying`` draws the same numbers.

    ``custom_gradient`` runs its function more than once per call (traced for its forward and
    for its ``grad_fn``, again at the gradient when ``grad_fn`` cannot be traced at the call);
    in TensorFlow it runs once, so a ``grad_fn`` closing over a draw sees the forward's draw.
    Each run here restarts the same key: eagerly one split off the global key at the first
    draw, inside a ``tf.function`` one taken from its runtime seed.
    """

    def __init__(self, op_seeds=True):
        self.eager = not _traces.stack
        self.op_seeds = op_seeds and self.eager  # op-seeded draws follow the eager rule
        self.index = None  # an element's index folded into each key (tf.vectorized_map)
        self.counts = None  # eagerly: each op seed's count at the call, restored at each run
        if self.eager:
            self.data = _EAGER
        elif _traces.stack[-1][0] is None:
            self.data = None  # the tf.function has no runtime seed yet: a draw asks for one
        else:
            self.data = _next_traced_key()

    def at(self, index):
        """The runs of one mapped element: ``index`` (a traced one under ``vmap``) is folded
        into each key, so each element draws its own numbers."""
        self.index = index
        return self

    def __enter__(self):
        self.before = None
        if self.op_seeds:
            if self.counts is None:  # the first run counts its op-seeded draws
                self.counts = dict(_op_counts)
            else:  # a later run draws them again, and leaves the counts as it found them
                self.before = dict(_op_counts)
                _op_counts.clear()
                _op_counts.update(self.counts)
        _traces.stack.append([self.data, 0, self.op_seeds, self.index, _REPLAY, None])

    def __exit__(self, *exc):
        self.data = _traces.stack.pop()[0]
        if self.before is not None:
            _op_counts.clear()
            _op_counts.update(self.before)


def _entry_key(entry):
    """The key data of a stack entry (split off the global key at the first draw of an eager replay)."""
    if entry[0] is None:
        raise NeedsSeed
    if entry[0] is _EAGER:
        with jax.ensure_compile_time_eval():
            entry[0] = jax.random.key_data(initializers.next_key())
    return entry[0]


def _at_element(key, index):
    """``key`` with a mapped element's ``index`` folded in (None: not a mapped element)."""
    if index is None:
        return key
    # The element's index is traced (under vmap): the key joins that trace as uint32 data
    # first, since a typed key made eagerly from a concrete one would be a constant of it.
    return jax.random.fold_in(key + jnp.zeros_like(key) * index, index)


def _next_traced_key():
    entry = _traces.stack[-1]
    key = _entry_key(entry)
    entry[1] += 1
    # A raw uint32 key (jax.random takes one as a typed key's data), so a program traced
    # inside closes over plain arrays, never a typed key (which a tape cannot hold).
    return _at_element(jax.random.fold_in(key, entry[1]), entry[3])


def _op_name(op: str, dtype) -> int:
    return zlib.crc32(f"{op}/{np.dtype(dtype).name}".encode())


def _eager_op_key(seed, op: str, dtype):
    # TensorFlow's eager rule: the n-th draw of this op seed since set_seed.
    global_seed = _DEFAULT_GLOBAL_SEED if _global_seed[0] is None else _global_seed[0]
    ident = (op, np.dtype(dtype).name, int(seed))
    count = _op_counts.get(ident, 0)
    _op_counts[ident] = count + 1
    with jax.ensure_compile_time_eval():
        return _op_key(jax.random.key(global_seed), op, dtype, seed, count)


def _op_key(key, op: str, dtype, seed, count):
    for part in (_op_name(op, dtype), int(seed) & 0xFFFFFFFF, count):
        key = jax.random.fold_in(key, part)
    return key


def _op_seed_entry():
    """The stack entry an op-seeded draw keys off, or None where the eager rule applies.

    A custom_gradient run inside a trace (a replay without an element index) is skipped: its
    ops are the enclosing function's in TensorFlow, so ``seed=3`` in it draws what ``seed=3``
    outside does."""
    for entry in reversed(_traces.stack):
        if entry[2]:  # an eager custom_gradient call: its runs follow the eager rule
            return None
        if entry[4] != _REPLAY or entry[3] is not None:
            return entry
    return None


def _traced_op_key(entry, seed, op: str, dtype):
    """An op-seeded draw inside a trace: every op of one op seed draws the same numbers in one
    call, and new ones at the next, as each op is its own kernel in a TensorFlow graph (the
    set_seed docstring's ``(A1, A1)`` then ``(A2, A2)``); not from the draw counter, which
    differs for each op."""
    if entry[4] == _CALL:
        call_seed = entry[5]
        if call_seed is None:
            raise NeedsSeed
        # The runtime seed is (global seed, this function's calls since set_seed): the n-th call
        # draws what the op's n-th eager draw does, as TensorFlow's kernels start alike.
        key = _op_key(jax.random.key(call_seed[0]), op, dtype, seed, call_seed[1])
        return jax.random.key_data(key)
    # A mapped element or loop iteration (its own numbers, as each iteration of a TensorFlow
    # loop runs the op's kernel again), or a discarded branch.
    key = jax.random.fold_in(_entry_key(entry), _OP_SEED_DOMAIN)
    key = _op_key(key, op, dtype, seed, 0)
    return _at_element(key, entry[3])


def _key(seed, op: str, dtype):
    if seed is None:  # inside a trace or custom_gradient call, its key; eagerly the global one
        return _next_traced_key() if _traces.stack else initializers.next_key()
    entry = _op_seed_entry()
    return _eager_op_key(seed, op, dtype) if entry is None else _traced_op_key(entry, seed, op, dtype)


def _shape(shape, fn):
    dims = static_ints(shape)
    if any(d < 0 for d in dims):
        raise _errors.InvalidArgumentValueError(
            f"tf.random.{fn} got shape {list(dims)} with a negative dimension; TensorFlow refuses it too. "
            "Pass a shape of sizes >= 0."
        )
    return dims


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, bool)


def _affine(standard, scale, shift, dtype):
    """``standard * scale + shift`` as TensorFlow computes it: concretely for numbers, recorded
    for tensors and Variables (so a tape sees ``scale`` and ``shift``)."""
    if _is_number(scale) and _is_number(shift):
        with jax.ensure_compile_time_eval():
            return Tensor.concrete((standard * scale + shift).astype(dtype))
    return Tensor.concrete(standard) * convert(scale, dtype) + convert(shift, dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    dtype = np.dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise _errors.GradkitTypeError(
            f"tf.random.normal got dtype={dtype.name}: normal draws need a float dtype (float16, bfloat16, "
            "float32 or float64), as in TensorFlow (which cannot convert its mean 0.0 to an integer). Pass a "
            "float dtype, or tf.random.uniform(..., dtype=tf.int32, maxval=...) for integers."
        )
    dims = _shape(shape, "normal")
    with jax.ensure_compile_time_eval():
        standard = standard_normal(_key(seed, "normal", dtype), dims, dtype)
    return _affine(standard, stddev, mean, dtype)


def standard_normal(key, dims, dtype):
    """Standard normal draws of ``dtype``: drawn in float32 and cast for a half-precision one, as
    TensorFlow does. jax draws those from half-precision uniforms, whose few values leave 128
    distinct bfloat16 normals and no tail past 2.9."""
    return jax.random.normal(key, dims, _drawn_in(dtype)).astype(dtype)


def standard_truncated_normal(key, dims, dtype):
    """Standard normal draws cut at two standard deviations, in float32 for a half-precision
    ``dtype`` (see ``standard_normal``)."""
    return jax.random.truncated_normal(key, -2.0, 2.0, dims, _drawn_in(dtype)).astype(dtype)


def _drawn_in(dtype):
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """``tf.random.uniform``: floats in [minval, maxval), or integers (int32, int64) in [minval,
    maxval) with scalar bounds that dtype holds, as TensorFlow's RandomUniformInt takes them."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.integer):
        if dtype.name not in ("int32", "int64"):
            raise _errors.GradkitValueError(
                f"tf.random.uniform got dtype={dtype.name}; TensorFlow takes float16, bfloat16, float32, float64, "
                "int32 or int64. Draw int32 values and tf.cast them."
            )
        if maxval is None:
            raise _errors.GradkitValueError(
                f"tf.random.uniform with an integer dtype ({dtype.name}) needs maxval, as in TensorFlow: "
                "it draws from [minval, maxval). Pass maxval=..."
            )
        for what, bound in (("minval", minval), ("maxval", maxval)):
            check_python_value(bound, dtype, f"tf.random.uniform's {what}")  # 0.5 for an int32 draw: refused
            bound_shape = np.shape(bound) if not hasattr(bound, "shape") else tuple(bound.shape)
            if len(bound_shape) != 0:
                raise _errors.InvalidArgumentValueError(
                    f"tf.random.uniform with an integer dtype takes a scalar {what}, as TensorFlow's RandomUniformInt "
                    f"does, but got one of shape {bound_shape}. Draw with scalar bounds, or draw floats and scale them."
                )
    return draw_uniform(shape, minval, maxval, dtype, seed)


def draw_uniform(shape, minval, maxval, dtype, seed):
    """Uniform draws as ``tf.random.uniform`` makes them, bounds of any broadcasting shape
    (``tf.image.random_crop`` draws each offset below its own limit)."""
    dtype = np.dtype(dtype)
    dims = _shape(shape, "uniform")
    if np.issubdtype(dtype, np.integer):
        if maxval is None:
            raise _errors.GradkitValueError(
                f"tf.random.uniform with an integer dtype ({dtype.name}) needs maxval, as in TensorFlow: "
                "it draws from [minval, maxval). Pass maxval=..."
            )
        lo, hi = known_value(minval), known_value(maxval)
        if lo is not None and hi is not None and np.any(lo >= hi) and np.prod(dims) > 0:
            raise _errors.InvalidArgumentValueError(
                f"tf.random.uniform with an integer dtype draws from [minval, maxval), which is empty for "
                f"minval={lo.tolist()} and maxval={hi.tolist()}; TensorFlow refuses it too. Pass minval < maxval."
            )
        with jax.ensure_compile_time_eval():
            key = _key(seed, "uniform", dtype)
            lo, hi = (x.__gradkit_value__() if isinstance(x, Tensor) else x for x in (convert(minval), convert(maxval)))
            return Tensor.concrete(jax.random.randint(key, dims, lo, hi, dtype))
    maxval = 1.0 if maxval is None else maxval
    with jax.ensure_compile_time_eval():
        standard = jax.random.uniform(_key(seed, "uniform", dtype), dims, dtype)
    if _is_number(minval) and _is_number(maxval):
        return _affine(standard, maxval - minval, minval, dtype)
    lo = convert(minval, dtype)
    return Tensor.concrete(standard) * (convert(maxval, dtype) - lo) + lo


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    dtype = np.dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise _errors.GradkitTypeError(
            f"tf.random.truncated_normal got dtype={dtype.name}: its draws need a float dtype (float16, bfloat16, "
            "float32 or float64), as in TensorFlow. Pass a float dtype and cast the draws if integers are needed."
        )
    dims = _shape(shape, "truncated_normal")
    with jax.ensure_compile_time_eval():
        standard = standard_truncated_normal(_key(seed, "truncated_normal", dtype), dims, dtype)
    return _affine(standard, stddev, mean, dtype)
