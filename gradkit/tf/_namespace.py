"""A tiny namespace object whose missing attributes raise gradkit's AttributeError."""

from __future__ import annotations


class Namespace:
    def __init__(self, qualname: str, **members):
        self.__dict__.update(members)
        self._qualname = qualname

    def __getattr__(self, name):
        raise AttributeError(missing(f"{self._qualname}", name))

    def __repr__(self) -> str:
        return f"<namespace {self._qualname}>"


def missing(where: str, name: str) -> str:
    return (
        f"[gradkit] {where} has no {name!r} (gradkit.tf covers the TensorFlow API that autodiff code uses; for "
        "anything else use gk.numpy, all of jax.numpy recorded by the tape, or gk.lift(fn) to record any JAX "
        "function as one op)"
    )  # no final period: Python may append ". Did you mean: 'name'?"
