"""``tf.keras.optimizers.SGD`` and ``Adam`` as optax transformations, applied by Variable assignment.

The optax update is recorded as one op (``gk.lift``) and each Variable is assigned
``v + update``, so inside an outer tape the step is differentiable: MAML meta-gradients
and hypergradients with respect to a learning rate that is a Variable are exact.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import optax

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.variable import Variable
from gradkit._tape.lift import lift
from gradkit._tape.tensor import Tensor

from .._convert import convert
from .._variables import Variable as _TfVariable
from . import schedules as schedules
from .schedules import LearningRateSchedule


def _sgd(lr, step, momentum, nesterov):
    """Keras' SGD, step for step: the learning rate is inside the momentum buffer
    (``m = momentum * m - lr * g``), so a learning rate changed between steps acts as in
    Keras, where ``optax.sgd`` would rescale the whole buffer."""
    if not momentum:
        return optax.scale(-lr)

    def velocity(m, g):
        return momentum * m - lr * g

    def update(grads, state, params=None):
        m = jax.tree_util.tree_map(velocity, state, grads)
        # Nesterov: one more velocity step from the new buffer, as Keras writes it.
        return (jax.tree_util.tree_map(velocity, m, grads) if nesterov else m), m

    return optax.GradientTransformation(lambda params: jax.tree_util.tree_map(jnp.zeros_like, params), update)


def _sqrt(v):
    """``sqrt(v)`` for ``v >= 0`` whose derivative at 0 is 0, not infinity.

    ``v`` is 0 only while a parameter's gradients have all been exactly 0, and then so is
    the first moment: the update's true derivative comes through the first moment alone, and
    an infinite factor here would turn a meta-gradient through the step into NaN.
    """
    positive = v > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, v, 1)), 0)


def _adam(lr, step, beta_1, beta_2, epsilon, amsgrad):
    """Keras' Adam, step for step: ``epsilon`` is added to ``sqrt(v)`` before the bias
    correction (the paper's "epsilon hat"), where ``optax.adam`` adds it after; with Keras'
    default 1e-7 the two differ visibly while ``v`` is small. The bias correction counts the
    optimizer's steps (``step``, its ``iterations``), as Keras does, not a Variable's own."""

    def init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return (zeros, zeros, zeros if amsgrad else ())

    def update(grads, state, params=None):
        m, v, v_hat = state
        count = step
        m = jax.tree_util.tree_map(lambda g, m: m + (g - m) * (1 - beta_1), grads, m)
        v = jax.tree_util.tree_map(lambda g, v: v + (g * g - v) * (1 - beta_2), grads, v)
        if amsgrad:
            v_hat = jax.tree_util.tree_map(jnp.maximum, v_hat, v)
        denominators = v_hat if amsgrad else v

        def scaled_step(mi, vi):
            t = (count + 1).astype(mi.dtype)
            alpha = (
                lr
                * jnp.sqrt(1 - jnp.power(jnp.asarray(beta_2, mi.dtype), t))
                / (1 - jnp.power(jnp.asarray(beta_1, mi.dtype), t))
            )
            return -((mi * alpha) / (_sqrt(vi) + epsilon))

        return jax.tree_util.tree_map(scaled_step, m, denominators), (m, v, v_hat)

    return optax.GradientTransformation(init, update)


# Keras optimizer options gradkit.tf does not implement, with the value that means "off".
_UNSUPPORTED = {
    "weight_decay": None,
    "clipnorm": None,
    "clipvalue": None,
    "global_clipnorm": None,
    "use_ema": False,
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


def _check_options(cls_name: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key in _UNSUPPORTED and value == _UNSUPPORTED[key]:
            continue
        if key in ("ema_momentum", "ema_overwrite_frequency", "jit_compile"):
            continue  # meaningful only with use_ema / an option gradkit always takes
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.{cls_name}({key}={value!r}) is not supported by gradkit.tf: it would be "
            "silently ignored, so the result would differ from TensorFlow's. Transform the gradients "
            "yourself before apply_gradients (for example tf.clip_by_norm), or use an optax chain with "
            "gk.apply_updates."
        )


def _update(lr, step, grads, states, params, make, hyper):
    """Each Variable's update and new state from its own state (Keras keeps one set of slots per
    Variable, so a Variable left out of a step keeps its moments)."""
    tx = make(lr, step, *hyper)
    results = [tx.update([g], state, [p]) for g, state, p in zip(grads, states, params)]
    return [u[0] for u, _ in results], [state for _, state in results]


class Optimizer:
    """Keras' optimizer API over an optax transformation.

    Its state (optax's moments and counters) lives in Variables, as Keras keeps optimizer
    slots in ``tf.Variable``: under ``tf.function`` the state is threaded through the
    compiled step, and under a tape its updates are tracked like any assignment.
    """

    def __init__(self, learning_rate, make, hyper):
        # As in Keras, a number becomes a float32 Variable (opt.learning_rate.assign(...) works, and
        # a new rate set between steps of a tf.function is read, not baked in); a Variable is kept,
        # so a learned rate gets its hypergradient; a schedule is called with the step and a
        # callable with nothing, at each step.
        if not isinstance(learning_rate, Variable) and not callable(learning_rate):
            learning_rate = _TfVariable(float(learning_rate), name="learning_rate", trainable=False)
        self._learning_rate = learning_rate
        self._make = make
        self._hyper = hyper
        self._slots: dict = {}  # id(Variable) -> (a weak reference to it, its state Variables, their treedef)
        self.iterations = Variable(0, name="iterations", trainable=False, dtype=jnp.int32)

    @property
    def learning_rate(self):
        """The rate's Variable, or the rate now: a schedule's at ``iterations``, a callable's
        result, as Keras gives it."""
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return lr(self.iterations.value)
        return lr if isinstance(lr, Variable) or not callable(lr) else lr()

    @learning_rate.setter
    def learning_rate(self, value):
        # Keras assigns a number into the rate's Variable; a Variable or a callable replaces it.
        if isinstance(value, Variable) or callable(value) or not isinstance(self._learning_rate, Variable):
            self._learning_rate = value
        else:
            self._learning_rate.assign(float(value))

    def _slot_variables(self, variable):
        """The state Variables of ``variable``'s slots (made at its first step) and their treedef."""
        key = id(variable)
        hit = self._slots.get(key)
        if hit is None or hit[0]() is not variable:
            # Initial state from the Variable's live value: concrete even when the first step
            # is being traced, so the slots can be Variables.
            with frames.Suspend(), jax.ensure_compile_time_eval():
                state = self._make(0.0, 0, *self._hyper).init([jnp.asarray(variable.value)])
            leaves, treedef = jax.tree_util.tree_flatten(state)
            slots = [
                Variable(leaf, name=f"{variable.name.split(':')[0]}/slot_{i}", trainable=False)
                for i, leaf in enumerate(leaves)
            ]
            hit = self._slots[key] = (weakref.ref(variable), slots, treedef)
        return hit[1], hit[2]

    def apply_gradients(self, grads_and_vars, name=None):
        """Assign each Variable ``v + update`` (skips pairs whose gradient is None)."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            return
        grads = [convert(g) for g, _ in pairs]
        variables = [v for _, v in pairs]
        slots = [self._slot_variables(v) for v in variables]
        states = [jax.tree_util.tree_unflatten(treedef, [s.value for s in ss]) for ss, treedef in slots]
        params = [v.value for v in variables]
        lr = self.learning_rate
        lr = lr.value if isinstance(lr, Variable) else convert(lr)
        updates, new_states = lift(_update)(
            lr, self.iterations.value, grads, states, params, make=self._make, hyper=self._hyper
        )
        for (ss, _), new_state in zip(slots, new_states):
            # The new state's leaves are recorded tensors under a tape: leaves here, not pytrees.
            new_leaves = jax.tree_util.tree_leaves(new_state, is_leaf=lambda x: x is None or isinstance(x, Tensor))
            for slot, value in zip(ss, new_leaves):
                slot.assign(value)
        for v, u in zip(variables, updates):
            v.assign(v.value + u)
        self.iterations.assign_add(1)


class SGD(Optimizer):
    """``tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.0, nesterov=False)``.

    >>> import gradkit.tf as tf
    >>> w = tf.Variable(1.0)
    >>> tf.keras.optimizers.SGD(0.1).apply_gradients(zip([tf.constant(2.0)], [w]))
    >>> round(float(w.numpy()), 6)
    0.8
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        _check_options("SGD", kwargs)
        self.momentum, self.nesterov = float(momentum), bool(nesterov)
        super().__init__(learning_rate, _sgd, (float(momentum), bool(nesterov)))


class Adam(Optimizer):
    """``tf.keras.optimizers.Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``.

    Keras' update, including where epsilon goes and ``amsgrad``, as an optax transformation.
    """

    def __init__(
        self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="Adam", **kwargs
    ):
        _check_options("Adam", kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = (
            float(beta_1),
            float(beta_2),
            float(epsilon),
            bool(amsgrad),
        )
        super().__init__(learning_rate, _adam, (float(beta_1), float(beta_2), float(epsilon), bool(amsgrad)))


def __getattr__(name):
    from .._namespace import missing

    raise AttributeError(missing("gradkit.tf.keras.optimizers", name))
