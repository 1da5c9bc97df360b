"""``tf.GradientTape``: gradkit's tape with TensorFlow's signature and complex convention."""

from __future__ import annotations

import jax
import numpy as np

import gradkit.numpy as gnp
from gradkit._core import key_order
from gradkit._errors import GradkitRuntimeError, GradkitValueError, InvalidArgumentTypeError
from gradkit._tape.tape import GradientTape as _GkTape
from gradkit._tape.tape import UnconnectedGradients as UnconnectedGradients
from gradkit._tape.tensor import Tensor

from ._convert import convert, wrap


def _is_complex(x) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and np.issubdtype(np.dtype(dtype), np.complexfloating)


def _conj_tree(tree):
    conj = jax.tree_util.tree_map(
        lambda g: gnp.conj(g) if _is_complex(g) else g, tree, is_leaf=lambda x: isinstance(x, Tensor) or x is None
    )
    return key_order.like(tree, conj)  # the caller's dict order, which tree_map sorts


def _check_cotangent_dtypes(targets, cotangents) -> None:
    """TensorFlow refuses an ``output_gradients`` entry whose dtype is not its target's
    (``InvalidArgumentError``); gradkit.tf does too, rather than casting it silently (a
    complex cotangent for a real target would lose its imaginary part)."""
    for k, (t, c) in enumerate(zip(targets, cotangents)):
        t_dtype, c_dtype = getattr(t, "dtype", None), getattr(c, "dtype", None)
        if c is None or t_dtype is None or c_dtype is None:
            continue  # Python numbers and lists take the target's dtype
        t_dtype, c_dtype = np.dtype(t_dtype), np.dtype(c_dtype)
        if np.issubdtype(t_dtype, np.inexact) and c_dtype != t_dtype:
            raise InvalidArgumentTypeError(
                f"output_gradients[{k}] has dtype {c_dtype.name} but its target has dtype {t_dtype.name}; "
                "TensorFlow refuses a cotangent of another dtype (InvalidArgumentError). Cast it first: "
                f"tf.cast(output_gradient, tf.{t_dtype.name})."
            )


def _refuse_none_cotangents(cotangents) -> None:
    """TensorFlow raises ``ValueError`` for a None ``output_gradients`` entry (it converts
    each one to a tensor); gradkit's own tape reads None as ones, so gradkit.tf checks first."""
    for k, c in enumerate(cotangents):
        if c is None:
            raise GradkitValueError(
                f"output_gradients[{k}] is None; TensorFlow refuses a None cotangent (ValueError). "
                "Pass tf.ones_like(target) for the plain gradient of that target, or tf.zeros_like(target) "
                "to leave it out."
            )


def _is_slices(x) -> bool:
    return hasattr(type(x), "__gradkit_dense__")


def _dense_slices(tree):
    """``tf.IndexedSlices`` in ``output_gradients`` (a gather's gradient) as the dense tensors they
    stand for, as TensorFlow converts them."""
    from gradkit._core.variable import Variable

    # Tensors and Variables are leaves: a recorded tensor refuses to be flattened by jax.
    leaf = lambda x: _is_slices(x) or isinstance(x, (Tensor, Variable))  # noqa: E731
    return jax.tree_util.tree_map(lambda x: convert(x) if _is_slices(x) else x, tree, is_leaf=leaf)


def _leaves(tree):
    from gradkit._core.variable import Variable

    return jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)) or x is None)


class GradientTape(_GkTape):
    """TensorFlow's ``tf.GradientTape(persistent=False, watch_accessed_variables=True)``.

    ``track_assignments=True`` (gradkit's default): gradients flow through Variable
    assignment (``c.assign(a + b)`` keeps d loss/d b). Pass ``track_assignments=False``
    for TensorFlow's exact results (an assignment cuts the path).

    Complex numbers follow TensorFlow's convention: the gradient of a real loss with
    respect to ``z`` is the conjugate of JAX's, ``d|z|²/dz = 2z``.

    >>> import gradkit.tf as tf
    >>> z = tf.Variable(1 + 2j)
    >>> with GradientTape() as tape:
    ...     y = tf.math.real(z * tf.math.conj(z))
    >>> complex(tape.gradient(y, z))
    (2+4j)
    >>> a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    >>> with GradientTape() as tape:
    ...     _ = c.assign(a + b)
    ...     loss = tf.reduce_mean(c ** 2)
    >>> float(tape.gradient(loss, b))             # TensorFlow: None
    6.0
    """

    def __init__(self, persistent=False, watch_accessed_variables=True, track_assignments=True):
        super().__init__(
            persistent=persistent,
            watch_accessed_variables=watch_accessed_variables,
            track_assignments=track_assignments,
        )

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        if output_gradients is not None:
            output_gradients = _conj_tree(_dense_slices(output_gradients))
            n_targets = len(_leaves(target))
            flat = _leaves(output_gradients)
            _refuse_none_cotangents(flat)
            if len(flat) > n_targets:
                # TensorFlow pairs output_gradients with the flattened targets and silently
                # ignores the extra entries; so does gradkit.tf (checked against TF 2.21).
                output_gradients = flat[:n_targets]
            elif isinstance(target, (list, tuple, dict)) is False and len(flat) == 1:
                output_gradients = flat[0]
            _check_cotangent_dtypes(_leaves(target), flat)
        out = super().gradient(target, sources, output_gradients, unconnected_gradients)
        return wrap(_conj_tree(out))

    def reset(self):
        """Forget everything recorded so far (TensorFlow's ``reset``): only while recording."""
        if not self._recording:
            # TensorFlow raises here ("Tape is not recording"); gradkit's own tape forgets instead.
            raise GradkitValueError(
                "GradientTape.reset() was called on a tape that is not recording; TensorFlow raises here. "
                "Call it inside 'with tape:', or create a new GradientTape to start over."
            )
        super().reset()

    def jacobian(
        self,
        target,
        sources,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        _check_loop_jacobian(self, "jacobian", experimental_use_pfor)
        out = super().jacobian(target, sources, unconnected_gradients, parallel_iterations, experimental_use_pfor)
        return wrap(_conj_tree(out))

    def batch_jacobian(
        self,
        target,
        source,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
        check_independence=True,
    ):
        _check_loop_jacobian(self, "batch_jacobian", experimental_use_pfor)
        out = super().batch_jacobian(
            target, source, unconnected_gradients, parallel_iterations, experimental_use_pfor, check_independence
        )
        return wrap(_conj_tree(out))


def _check_loop_jacobian(tape, what: str, use_pfor) -> None:
    # Run eagerly, TensorFlow computes a jacobian without pfor by one gradient per row, which needs
    # a persistent tape, and refuses it otherwise (inside tf.function it builds a loop instead).
    # gradkit computes both the same way; it refuses alike, so a program that runs here runs on
    # TensorFlow too.
    from ._control import executing_eagerly

    if not use_pfor and not tape._persistent and executing_eagerly():
        raise GradkitRuntimeError(
            f"[gradkit] GradientTape must be created with persistent=True to compute the {what} with "
            "experimental_use_pfor=False when running eagerly, as TensorFlow requires (it takes one gradient per "
            "row). Pass persistent=True, or leave experimental_use_pfor at True."
        )
