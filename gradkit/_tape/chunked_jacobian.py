"""Full Jacobians computed a chunk of basis vectors at a time.

``jax.jacrev`` / ``jax.jacfwd`` push every basis vector through the derivative at once (one
``vmap``), so every temporary of the derivative exists for all of them together: for a large
Jacobian, gigabytes of them. On a CPU, writing that much fresh memory costs more than the
arithmetic (each call's new pages are faulted in, and nothing stays in cache). Taking the
basis in chunks (``jax.lax.map`` with ``batch_size``: a loop over chunks, each vectorised)
keeps the temporaries the size of one chunk; the result is the same array. TensorFlow's
``parallel_iterations`` of ``GradientTape.jacobian`` is this chunk size.

On a GPU the one vmap is the faster program (its memory is fast and reused; a chunked
(64, 256, 256, 256) Jacobian took 2.6x as long on an H200, a 4096 x 4096 Hessian the same),
so there chunks are made only when ``parallel_iterations`` asks for them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp

from .._core.compat import jaxprs_in_params

# Bytes of temporaries one chunk may make. On a CPU, chunks of up to 32 MiB took 0.45-0.6x
# the time of jax.hessian for a 4096 x 4096 Hessian and of jax.jacrev for a (64, 256, 256,
# 256) Jacobian (2-core x86-64, XLA:CPU); a Jacobian whose temporaries fit in one chunk is
# left to one vmap, the program jax.jacrev / jax.jacfwd make.
_CPU_CHUNK_BYTES = 32 << 20
# Fewer basis vectors per chunk than this would lose the vectorisation of each chunk.
_MIN_ROWS = 8


def rows_per_chunk(rows: int, row_bytes: Callable[[], int], requested: int | None = None) -> int | None:
    """How many of ``rows`` basis vectors to take together (each making ``row_bytes()`` of
    temporaries, asked only when needed), or None to take all of them at once.
    ``requested`` (``parallel_iterations``) overrides the automatic choice."""
    if requested is not None:
        return requested if requested < rows else None
    if jax.default_backend() != "cpu":
        return None
    chunk = max(_MIN_ROWS, _CPU_CHUNK_BYTES // max(row_bytes(), 1))
    if chunk >= rows:
        return None
    # Chunks that divide the rows evenly: a last, smaller chunk would be computed apart and
    # joined to the rest, a copy of the whole result (as costly as the rest for a large one).
    even = next(d for d in range(chunk, 0, -1) if rows % d == 0)
    return even if 4 * even >= chunk else chunk


def temporaries_bytes(fn: Callable, *args) -> int:
    """The bytes of every value ``fn(*args)`` computes (its program's temporaries, programs
    nested in it included): what one basis vector costs in memory."""
    return _jaxpr_bytes(jax.make_jaxpr(fn)(*args).jaxpr)


def _jaxpr_bytes(jaxpr) -> int:
    total = 0
    for eqn in jaxpr.eqns:
        for var in eqn.outvars:
            aval = var.aval
            total += math.prod(getattr(aval, "shape", ())) * getattr(getattr(aval, "dtype", None), "itemsize", 0)
        for sub in jaxprs_in_params(eqn.params):
            total += _jaxpr_bytes(sub)
    return total


def jacobian(g: Callable, primals: list, forward_mode: bool, requested: int | None = None) -> list:
    """``jax.jacfwd(g)(primals)`` or ``jax.jacrev(g)(primals)``, for ``g`` of a list of arrays,
    in chunks of basis vectors when that many would make more temporaries than a chunk may
    (``requested``, TensorFlow's ``parallel_iterations``, sets the chunk's size instead).

    In forward mode ``g`` must have a forward rule (no ``jax.custom_vjp`` inside)."""
    if forward_mode:
        return _jacfwd(g, primals, requested)
    return _jacrev(g, primals, requested)


def _jacrev(g, primals, requested):
    y, pull = jax.vjp(g, primals)
    size = math.prod(y.shape)

    def row(i):
        return pull(jax.nn.one_hot(i, size, dtype=y.dtype).reshape(y.shape))[0]

    chunk = rows_per_chunk(size, lambda: temporaries_bytes(row, 0), requested)
    indices = jnp.arange(size)
    # All rows at once is what jax.jacrev does: vmap of the pullback over the one-hot basis.
    rows = jax.vmap(row)(indices) if chunk is None else jax.lax.map(row, indices, batch_size=chunk)
    return [r.reshape(y.shape + jnp.shape(p)) for r, p in zip(rows, primals)]


def _jacfwd(g, primals, requested):
    sizes = [math.prod(jnp.shape(p)) for p in primals]
    starts = [sum(sizes[:k]) for k in range(len(sizes))]

    def column(i):
        # Basis vector i of all sources together: a one in the source whose range holds i.
        tangents = [
            jax.nn.one_hot(i - start, n, dtype=jnp.result_type(p)).reshape(jnp.shape(p))
            for start, n, p in zip(starts, sizes, primals)
        ]
        return jax.jvp(g, (primals,), (tangents,))[1]

    chunk = rows_per_chunk(sum(sizes), lambda: temporaries_bytes(column, 0), requested)
    if chunk is None:
        return jax.jacfwd(g)(primals)
    y_shape = jax.eval_shape(g, primals).shape
    columns = jax.lax.map(column, jnp.arange(sum(sizes)), batch_size=chunk)  # (n, *y.shape)
    out = []
    for start, n, p in zip(starts, sizes, primals):
        block = jnp.moveaxis(columns[start : start + n], 0, -1)
        out.append(block.reshape(y_shape + jnp.shape(p)))
    return out
