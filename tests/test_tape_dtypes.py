"""Dtypes in every derivative kind: ``gradient`` (with and without ``output_gradients``),
``jacobian``, ``batch_jacobian``, ``ForwardAccumulator`` JVPs and nested tapes, over
complex64 (holomorphic or not), float16, bfloat16, float64 (in a subprocess with
``jax_enable_x64``), int32 and mixed dtypes.

Oracles: real TensorFlow for ``gradkit.tf`` (values, None-ness and dtypes; skipped without
TensorFlow), ``jax.vjp``/``jax.jvp``/``jax.jacrev`` of pure-JAX rewrites for the native API.
For a complex target, row ``i`` of a Jacobian is the VJP with the one-hot cotangent ``e_i``
(JAX's convention natively; its conjugate in ``gradkit.tf``, TensorFlow's).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf
from gradkit._errors import GradkitError

gnp = gk.numpy


# -- comparing gradkit.tf with TensorFlow, dtypes included ---------------------------------


def _np(x):
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, (list, tuple)):
        return [_np(e) for e in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _compare(a, b, path="out"):
    if a is None or b is None:
        assert a is None and b is None, f"{path}: TensorFlow {a!r}, gradkit {b!r}"
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, f"{path}[{k}]")
    elif isinstance(a, str):
        assert a == b, f"{path}: TensorFlow {a!r}, gradkit {b!r}"
    else:
        assert a.shape == b.shape, f"{path}: shapes {a.shape} (TensorFlow), {b.shape} (gradkit)"
        assert a.dtype == b.dtype, f"{path}: dtypes {a.dtype} (TensorFlow), {b.dtype} (gradkit)"
        # float16/bfloat16: rounding differs with the order of operations (bfloat16 keeps 8 bits)
        tol = {np.dtype(np.float16): 1e-2, np.dtype(jnp.bfloat16): 5e-2}.get(a.dtype)
        as_wide = np.complex128 if np.iscomplexobj(a) else np.float64
        np.testing.assert_allclose(
            b.astype(as_wide), a.astype(as_wide), rtol=tol or 1e-5, atol=tol or 1e-6, err_msg=path
        )


def run_both(program):
    """``program(tf)`` under TensorFlow and gradkit.tf: equal values, dtypes and None-ness,
    or both raise (gradkit's error a "[gradkit]" one of the builtin class TensorFlow's derives from)."""
    tf = pytest.importorskip("tensorflow")
    out = {}
    for name, module in (("tf", tf), ("gk", gtf)):
        try:
            out[name] = _np(program(module))
        except Exception as e:  # noqa: BLE001  (compared below)
            out[name] = e
    if isinstance(out["tf"], Exception) or isinstance(out["gk"], Exception):
        assert isinstance(out["tf"], Exception), f"TensorFlow gives {out['tf']!r}, gradkit raises {out['gk']!r}"
        assert isinstance(out["gk"], GradkitError), f"TensorFlow raises {out['tf']!r}, gradkit gives {out['gk']!r}"
        builtin = next(c for c in type(out["tf"]).__mro__ if c.__module__ == "builtins")
        assert isinstance(out["gk"], builtin), (out["tf"], out["gk"])
        return out["gk"]
    _compare(out["tf"], out["gk"])
    return out["gk"]


def _name(x):
    return None if x is None else x.dtype.name


Z2 = [1 + 2j, 3 - 1j]
ZB = [[1 + 2j, 3 - 1j], [0.5j, 2], [1, -1j]]
XB = [[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]]
CB = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]  # a (batch, n) constant: the graph does not run on one example


# -- integer sources: None, as TensorFlow gives (gradkit gave a float32 scalar zero) ------


def p_gradient_integer_variable_source(tf):
    n = tf.Variable([1, 2])
    with tf.GradientTape() as t:
        t.watch(n)
        y = tf.cast(n, tf.float32) * 2.0
    return [t.gradient(y, n)]


def p_gradient_integer_source_zero(tf):
    n, f = tf.Variable([1, 2]), tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(n)
        y = tf.cast(n, tf.float32) * f
    g = t.gradient(y, [n, f], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return g + [_name(g[0])]


def p_jacobian_integer_source(tf):
    n = tf.constant([1, 2])
    with tf.GradientTape(persistent=True) as t:
        t.watch(n)
        y = tf.cast(n, tf.float32) * 2.0
    zero = t.jacobian(y, n, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return [t.jacobian(y, n), zero, _name(zero)]


def p_jacobian_complex_and_integer_sources(tf):
    z = tf.Variable(Z2, dtype=tf.complex64)
    n = tf.Variable([1, 2])
    with tf.GradientTape() as t:
        t.watch(n)
        y = z * tf.cast(n, tf.complex64)
    return t.jacobian(y, [z, n])


def p_batch_jacobian_integer_source(tf):
    n = tf.constant([[1, 2], [3, 4]])
    with tf.GradientTape() as t:
        t.watch(n)
        y = tf.cast(n, tf.float32) * 2.0
    j = t.batch_jacobian(y, n)
    return [j, _name(j)]


def p_batch_jacobian_integer_target(tf):
    x = tf.Variable(XB)
    with tf.GradientTape() as t:
        y = tf.cast(x, tf.int32) * 2
    j = t.batch_jacobian(y, x)
    return [j, _name(j)]


def p_gradient_integer_target(tf):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        y = tf.cast(x, tf.int32) * 2
    zero = t.gradient(y, x, unconnected_gradients="zero")
    return [t.gradient(y, x), t.jacobian(y, x), zero, _name(zero)]


def p_forward_integer_primal_and_target(tf):
    n = tf.constant([1, 2])
    x = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator([n, x], [tf.constant([1, 1]), tf.constant([1.0, 0.5])]) as acc:
        y = tf.cast(n, tf.float32) * 2.0
        k = tf.cast(x, tf.int32) * 2
    return [acc.jvp(y), acc.jvp(k)]


def p_nested_integer_source(tf):
    x = tf.Variable([1.0, 2.0])
    n = tf.constant([1, 2])
    with tf.GradientTape() as outer:
        outer.watch(n)
        with tf.GradientTape() as inner:
            inner.watch(n)
            y = tf.reduce_sum(x * x * tf.cast(n, tf.float32))
        g = inner.gradient(y, [x, n])
    return [g[0], g[1], outer.gradient(g[0], [x, n])]


# -- mixed dtypes: a Jacobian has its source's dtype (gradkit gave the target's) -----------


def p_jacobian_float32_target_of_float16_source(tf):
    x = tf.Variable([1.0, 2.0], dtype=tf.float16)
    with tf.GradientTape(persistent=True) as t:
        y = tf.cast(x, tf.float32) * tf.constant([3.0, 4.0])
        wide = tf.reshape(tf.cast(tf.sin(x), tf.float32), [2, 1]) * tf.constant([[1.0, 2.0, 3.0]])
    j, jw = t.jacobian(y, x), t.jacobian(wide, x)
    return [j, jw, _name(j), _name(jw)]


def p_jacobian_float16_target_of_float32_source(tf):
    x = tf.Variable([1.1, 0.53])
    with tf.GradientTape() as t:
        y = tf.cast(tf.reshape(tf.sin(x) * 3.3, [2, 1]) * tf.constant([[1.0, 2.0, 3.0]]), tf.float16)
    j = t.jacobian(y, x)
    return [j, _name(j)]


def p_mixed_dtype_gradients_and_batch_jacobians(tf):
    x = tf.Variable(XB, dtype=tf.float16)
    w = tf.Variable([[0.5], [1.5], [2.0]], dtype=tf.float16)
    with tf.GradientTape(persistent=True) as t:
        y = tf.cast(x, tf.float32) * tf.cast(x, tf.float32)[:, ::-1]
        wide = tf.cast(tf.sin(w), tf.float32) * tf.constant([[1.0, 2.0, 3.0]])
        s = tf.reduce_sum(y)
    out = [t.gradient(s, x), t.batch_jacobian(y, x), t.batch_jacobian(wide, w)]
    return out + [_name(o) for o in out]


def p_nested_mixed_dtypes(tf):
    x = tf.Variable([1.0, 2.0], dtype=tf.float16)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.cast(x, tf.float32) ** 3)
        g = inner.gradient(y, x)
        s = tf.reduce_sum(tf.cast(g, tf.float32) ** 2)
        g32 = tf.cast(g, tf.float32)
    h, jh = outer.gradient(s, x), outer.jacobian(g32, x)
    return [g, h, jh, _name(h), _name(jh)]


# -- complex batch Jacobians (gradkit raised jax's "jacrev requires real-valued outputs") --


def p_batch_jacobian_complex_per_example(tf):
    z = tf.Variable([[1 + 2j, 3 - 1j], [0.5j, 2]], dtype=tf.complex64)
    x = tf.Variable(XB)
    with tf.GradientTape(persistent=True) as t:
        holomorphic = z * z[:, ::-1]
        conj = tf.math.conj(z) * z[:, ::-1]
        wide = tf.reshape(tf.math.conj(z), [2, 2, 1]) * tf.constant([[[1.0 + 1j, 2.0, 3j]]], tf.complex64)
        from_real = tf.cast(x * x[:, ::-1], tf.complex64) * (1 + 2j)
        to_real = tf.abs(z) * tf.math.real(z[:, ::-1])
    out = [t.batch_jacobian(y, z) for y in (holomorphic, conj, wide, to_real)] + [t.batch_jacobian(from_real, x)]
    return out + [_name(o) for o in out]


def p_batch_jacobian_complex_whole_batch(tf):
    # (batch, n) constants: the graph does not run on one example, so TensorFlow's
    # whole-batch algorithm runs, and its independence check must handle complex values.
    z = tf.Variable(ZB, dtype=tf.complex64)
    x = tf.Variable(XB)
    c = tf.constant(CB)
    with tf.GradientTape(persistent=True) as t:
        conj = tf.math.conj(z) * z[:, ::-1] * tf.cast(c, tf.complex64)
        to_real = tf.abs(z) * tf.math.real(z[:, ::-1]) * c
        from_real = tf.cast(x * x[:, ::-1], tf.complex64) * (1 + 2j) * tf.cast(c, tf.complex64)
    return [t.batch_jacobian(conj, z), t.batch_jacobian(to_real, z), t.batch_jacobian(from_real, x)]


def p_batch_jacobian_complex_unchecked_interacting(tf):
    z = tf.Variable(ZB, dtype=tf.complex64)
    with tf.GradientTape() as t:
        y = tf.math.conj(z) - tf.reduce_mean(z, axis=0, keepdims=True)
    kw = {"check_independence": False} if tf is gtf else {}
    return t.batch_jacobian(y, z, **kw)


def p_nested_complex_batch_jacobian(tf):
    z = tf.Variable([[1 + 2j, 3 - 1j], [0.5j, 2]], dtype=tf.complex64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.math.conj(z) * z[:, ::-1]
        j = inner.batch_jacobian(y, z)
        s = tf.reduce_sum(tf.math.real(j) * tf.math.imag(j))
    return [j, outer.gradient(s, z)]


# -- complex everywhere else (regression guards) -----------------------------------------


def p_complex_gradients(tf):
    z = tf.Variable(Z2, dtype=tf.complex64)
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        holo = z * z * (2 + 1j)
        mag = tf.abs(z)
        parts = tf.math.real(z) * 3.0 + tf.math.imag(z) * tf.math.angle(z)
        conj = tf.math.conj(z) * (1 + 1j)
        from_real = tf.complex(x, 2.0 * x) ** 2
    og = tf.constant([1 - 1j, 2 + 0.5j], tf.complex64)
    return [
        t.gradient(holo, z),
        t.gradient(holo, z, output_gradients=og),
        t.gradient(mag, z),
        t.gradient(parts, z),
        t.gradient(conj, z, output_gradients=og),
        t.gradient(from_real, x),
        t.gradient(from_real, x, output_gradients=og),
        t.jacobian(conj, z),
        t.jacobian(from_real, x),
    ]


def p_complex_forward_and_nested(tf):
    z = tf.Variable(Z2, dtype=tf.complex64)
    x = tf.Variable([1.0, 2.0])
    v = tf.constant([1 + 1j, 2j], tf.complex64)
    with tf.autodiff.ForwardAccumulator([z, x], [v, tf.constant([1.0, -1.0])]) as acc:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.math.real(z * z * tf.math.conj(z)))
            y = tf.math.conj(z) * z + tf.cast(x, tf.complex64) * (1 + 2j)
        g = tape.gradient(loss, z)
        mag = tf.abs(z)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            cube = z * z * z
        g2 = inner.gradient(cube, z)
    return [acc.jvp(y), acc.jvp(mag), g, acc.jvp(g), outer.gradient(g2, z)]


# -- float16 and bfloat16 (tf.bfloat16 was missing from gradkit.tf) ----------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_every_derivative_kind(dtype):
    def program(tf):
        dt = getattr(tf, dtype)
        x = tf.Variable(XB, dtype=dt)
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            with tf.GradientTape(persistent=True) as outer:
                with tf.GradientTape(persistent=True) as t:
                    y = tf.tanh(x) * x[:, ::-1]
                    s = tf.reduce_sum(y * x)
                g = t.gradient(s, x)
            outs = [
                g,
                t.gradient(y, x, output_gradients=tf.ones_like(y) * 2),
                t.jacobian(y, x),
                t.batch_jacobian(y, x),
                outer.gradient(g, x),
                outer.batch_jacobian(g, x),
            ]
            outs.append(acc.jvp(y))
            outs.append(acc.jvp(g))
        return outs + [_name(o) for o in outs]

    run_both(program)


# -- dtype mismatches TensorFlow refuses: a clear error, not a silent cast ------------------


def p_output_gradients_of_another_dtype(tf):
    x = tf.Variable([1.0, 2.0], dtype=tf.float16)
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y, x, output_gradients=tf.constant([2.0, 3.0]))


def p_complex_output_gradients_for_a_real_target(tf):
    # gradkit.tf used to drop the imaginary part silently.
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y, x, output_gradients=tf.constant([1j, 2.0], tf.complex64))


def p_real_output_gradients_for_a_complex_target(tf):
    z = tf.Variable(Z2, dtype=tf.complex64)
    with tf.GradientTape() as t:
        y = z * z
    return t.gradient([y], [z], output_gradients=[tf.constant([2.0, 3.0])])


def p_complex_tangent_for_a_real_primal(tf):
    x = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0 + 1j, 0.5], tf.complex64)) as acc:
        y = x * x
    return acc.jvp(y)


def p_float32_tangent_for_a_float16_primal(tf):
    x = tf.Variable([1.0, 2.0], dtype=tf.float16)
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as acc:
        y = x * x
    return acc.jvp(y)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__[2:] for p in PROGRAMS])
def test_matches_tensorflow(program):
    run_both(program)


def test_dtype_mismatch_errors_say_what_to_do():
    x = gtf.Variable([1.0, 2.0])
    with gtf.GradientTape() as t:
        y = x * x
    with pytest.raises(TypeError, match=r"\[gradkit\] output_gradients\[0\] has dtype complex64 .* float32.*tf.cast"):
        t.gradient(y, x, output_gradients=gtf.constant([1j, 2.0], gtf.complex64))
    with pytest.raises(ValueError, match=r"\[gradkit\] ForwardAccumulator got a tangent of dtype int32 .*tf.cast"):
        gtf.autodiff.ForwardAccumulator(x, gtf.constant([1, 2]))


def test_unconnected_batch_jacobian_zero_has_the_source_dtype():
    def program(tf):
        x = tf.Variable([[1.0, 2.0]], dtype=tf.float16)
        w = tf.Variable([[1.0, 2.0, 3.0]])
        n = tf.constant([[1, 2], [3, 4]])
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, n])
            y = w * 2.0
            k = tf.cast(n, tf.float32) * 2.0
        a = t.batch_jacobian(y, x)
        b = t.batch_jacobian(y, x, unconnected_gradients="zero")
        c = t.batch_jacobian(k, n, unconnected_gradients="zero")
        return [a, b, c, _name(a), _name(b), _name(c)]

    run_both(program)


# -- the native API against JAX -----------------------------------------------------------


def _one_hot_rows(f, z):
    """Row i of the Jacobian of ``f`` at ``z``: the VJP of the one-hot cotangent e_i (JAX's
    convention), defined for non-holomorphic complex functions too."""
    y, pull = jax.vjp(f, z)
    basis = jnp.eye(y.size, dtype=y.dtype).reshape((y.size, *y.shape))
    return jax.vmap(lambda e: pull(e)[0])(basis).reshape(y.shape + z.shape)


def _per_example(f, z):
    return jax.vmap(lambda e: _one_hot_rows(lambda a: f(a[None])[0], e))(z)


CONST = jnp.asarray(CB, jnp.complex64)
COMPLEX_PROGRAMS = {
    "holomorphic": lambda np_, z: z * z[:, ::-1],
    "conj": lambda np_, z: np_.conj(z) * z[:, ::-1],
    "abs": lambda np_, z: np_.abs(z) * np_.real(z[:, ::-1]),
    "whole_batch_conj": lambda np_, z: np_.conj(z) * z[:, ::-1] * CONST,
    "whole_batch_real": lambda np_, z: np_.abs(z) * np_.imag(z[:, ::-1]) * np_.real(CONST),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_PROGRAMS))
def test_native_complex_batch_jacobian_is_jax_one_hot_rows(name):
    program = COMPLEX_PROGRAMS[name]
    z = jnp.asarray(ZB, jnp.complex64)
    zt = gk.Tensor(z)
    with gk.GradientTape() as tape:
        tape.watch(zt)
        y = program(gnp, zt)
    got = tape.batch_jacobian(y, zt)
    f = lambda a: program(jnp, a)  # noqa: E731
    if name.startswith("whole_batch"):
        # per-example rows of a graph with (batch, n) constants: example b's rows of the full Jacobian
        full = _one_hot_rows(f, z)  # (B, n, B, n)
        want = jnp.stack([full[b, :, b] for b in range(z.shape[0])])
    else:
        want = _per_example(f, z)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_native_complex_batch_jacobian_still_detects_interacting_examples():
    zt = gk.Tensor(jnp.asarray(ZB, jnp.complex64))
    with gk.GradientTape(persistent=True) as tape:
        tape.watch(zt)
        y = gnp.conj(zt) - gnp.mean(zt, axis=0, keepdims=True)
        y_whole = (gnp.conj(zt) - gnp.mean(zt, axis=0, keepdims=True)) * CONST
    for target in (y, y_whole):
        with pytest.warns(gk.GradkitWarning, match=r"\[gradkit\] batch_jacobian assumes example i"):
            tape.batch_jacobian(target, zt)


def test_native_integer_sources_give_none():
    n = gk.Tensor(jnp.asarray([[1, 2], [3, 4]], jnp.int32))
    x = gk.Variable(jnp.asarray([[1.0, 2.0]]))
    with gk.GradientTape(persistent=True) as tape:
        tape.watch(n)
        y = gnp.astype(n, jnp.float32) * x
    assert tape.gradient(y, n) is None
    assert tape.gradient(y, [n, x])[0] is None
    assert tape.jacobian(y, n) is None
    zero = tape.jacobian(y, n, unconnected_gradients="zero")
    assert zero.shape == (2, 2, 2, 2) and zero.dtype == jnp.int32 and not np.any(np.asarray(zero))
    assert not np.any(np.asarray(tape.batch_jacobian(y, n)))


def test_native_jacobian_has_the_source_dtype():
    x = gk.Variable(jnp.asarray([1.0, 0.5, 2.0], jnp.float16))
    c = jnp.asarray([[1.0, 2.0, 3.0, 4.0]])

    def f(xnp, v):
        return xnp.reshape(xnp.sin(v).astype(jnp.float32), (3, 1)) * c

    with gk.GradientTape() as tape:
        y = f(gnp, x)
    got = tape.jacobian(y, x)
    want = jax.jacrev(lambda v: f(jnp, v))(jnp.asarray(x.value))
    assert got.dtype == jnp.float16 == want.dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=1e-3)


_FLOAT64_SCRIPT = """
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
import gradkit as gk
import gradkit.tf as tf

gnp = gk.numpy
x0 = np.array([[1.0, 2.0], [0.3, 0.7]])
f = lambda xnp, v: xnp.sin(v) * v[:, ::-1] * 1.0000001
x = gk.Variable(jnp.asarray(x0))
with gk.ForwardAccumulator(x, jnp.ones_like(x0)) as acc:
    with gk.GradientTape(persistent=True) as outer:
        with gk.GradientTape(persistent=True) as t:
            y = f(gnp, x)
            s = gnp.sum(y)
        g = t.gradient(s, x)
    out = {
        "grad": g, "jac": t.jacobian(y, x), "bjac": t.batch_jacobian(y, x),
        "og": t.gradient(y, x, output_gradients=jnp.full((2, 2), 2.0)),
        "hess": outer.jacobian(g, x), "jvp": acc.jvp(y),
    }
pure = lambda v: f(jnp, v)
xj = jnp.asarray(x0)
jac = jax.jacrev(pure)(xj)
want = {
    "grad": jax.grad(lambda v: jnp.sum(pure(v)))(xj), "jac": jac,
    "bjac": jnp.stack([jac[b, :, b] for b in range(2)]),
    "og": jax.vjp(pure, xj)[1](jnp.full((2, 2), 2.0))[0],
    "hess": jax.hessian(lambda v: jnp.sum(pure(v)))(xj),
    "jvp": jax.jvp(pure, (xj,), (jnp.ones_like(xj),))[1],
}
for k in want:
    assert out[k].dtype == np.float64, (k, out[k].dtype)
    np.testing.assert_allclose(np.asarray(out[k]), np.asarray(want[k]), rtol=1e-12, atol=1e-12, err_msg=k)
z = tf.Variable([1 + 2j, 3 - 1j], dtype=tf.complex128)
with tf.GradientTape() as tape:
    m = tf.math.real(z * tf.math.conj(z))
gz = tape.gradient(m, z)
assert gz.dtype == np.complex128, gz.dtype
np.testing.assert_allclose(np.asarray(gz), 2 * np.array([1 + 2j, 3 - 1j]))  # TensorFlow's 2z
print("ok")
"""


def test_float64_every_derivative_kind_in_a_subprocess():
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_FLOAT64_SCRIPT)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
