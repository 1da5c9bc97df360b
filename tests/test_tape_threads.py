"""Recording is thread-local: tapes in several threads at once each get exact gradients."""

import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

gnp = gk.numpy


def _oracle(x, depth):
    return jax.grad(lambda v: jnp.sum(functools.reduce(lambda a, _: jnp.sin(a) * 1.5, range(depth), v)))(x)


def _worker(seed, errors):
    try:
        rng = np.random.default_rng(seed)
        for _ in range(15):
            v = gk.Variable(rng.standard_normal(3).astype(np.float32))
            depth = int(rng.integers(1, 4))
            with gk.GradientTape() as tape:
                y = v.value
                for _ in range(depth):
                    y = gnp.sin(y) * 1.5
                loss = gnp.sum(y)
            np.testing.assert_allclose(tape.gradient(loss, v).numpy(), _oracle(v.numpy(), depth), rtol=1e-5)
    except Exception as e:  # reported by the main thread
        errors.append(e)


def test_tapes_in_several_threads_are_independent():
    errors: list = []
    threads = [threading.Thread(target=_worker, args=(seed, errors)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_tape_in_another_thread_does_not_record_this_threads_ops():
    v = gk.Variable(2.0)
    entered, release = threading.Event(), threading.Event()

    def hold_a_tape_open():
        with gk.GradientTape():
            entered.set()
            release.wait(10)

    other = threading.Thread(target=hold_a_tape_open)
    other.start()
    entered.wait(10)
    try:
        y = gnp.sin(v)  # no tape records in this thread: plain jax, not a recorded tensor
        assert isinstance(y, jax.Array)
    finally:
        release.set()
        other.join()
