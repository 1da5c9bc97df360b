"""``tf.keras.optimizers``: Keras 3's optimizers over optax transformations, applied by Variable assignment.

A step (clipping, weight decay and the update rule) is recorded as one op (``gk.lift``) and
each Variable is assigned its new value, so inside an outer tape the step is differentiable:
MAML meta-gradients and hypergradients with respect to a learning rate that is a Variable are
exact.
"""

from __future__ import annotations

import re
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.variable import Variable
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor
from gradkit.nn.layer import unique_name

from .._checkpoint import deferred
from .._convert import call, convert, known_value, wrap
from .._scatter import IndexedSlices
from .._variables import Variable as _TfVariable
from . import optimizer_config, stateless
from . import optimizer_rules as rules
from . import schedules as schedules
from .gradient_accumulation import (
    accumulated_gradient,
    accumulated_step,
    accumulation_steps,
    check_accumulation_option,
    updates_made,
)
from .gradient_clipping import active_clip, check_clip_options, clip_gradients
from .layer_weight import KerasStateVariable
from .optimizer_custom import CustomOptimizerMethods, check_custom_options
from .optimizer_ema import check_ema_options, moving_averages
from .optimizer_weights import OptimizerWeights
from .schedules import LearningRateSchedule

# The base options of every Keras optimizer that gradkit.tf implements, with their defaults.
_BASE_OPTIONS = {
    "weight_decay": None,
    "clipnorm": None,
    "clipvalue": None,
    "global_clipnorm": None,
    "loss_scale_factor": None,
    "use_ema": False,
    "ema_momentum": 0.99,
    "ema_overwrite_frequency": None,
    "gradient_accumulation_steps": None,
}


def named_base_options(arguments: dict) -> dict:
    """The base options among a constructor's named arguments (``locals()``), for an optimizer
    whose Keras signature names them (Muon, ScheduleFreeAdamW) rather than taking ``**kwargs``."""
    return {key: arguments[key] for key in _BASE_OPTIONS if key in arguments}


def _check_options(cls_name: str, kwargs: dict) -> dict:
    """The base options among ``kwargs`` (checked as Keras checks them); refuses the rest."""
    options = dict(_BASE_OPTIONS)
    for key, value in kwargs.items():
        if key in _BASE_OPTIONS:
            options[key] = value
            continue
        if key == "decay":  # Keras 3 still takes Keras 2's argument, and ignores it
            if value is not None:
                warnings.warn("Argument `decay` is no longer supported and will be ignored.", stacklevel=3)
            continue
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.{cls_name}({key}={value!r}): Keras' optimizers take no argument {key!r} "
            "(Keras raises ValueError: Argument(s) not recognized). Check its spelling; the options every "
            f"optimizer takes are {', '.join(_BASE_OPTIONS)}."
        )
    check_clip_options(cls_name, options)
    check_ema_options(cls_name, options)
    check_accumulation_option(cls_name, options["gradient_accumulation_steps"])
    return options


def _step(lr, step, shared, grads, states, params, make, hyper, advance, clip, decays, loss_scale=None):
    """Each Variable's new value and new state, in Keras' order: the gradients divided by
    ``loss_scale_factor`` and clipped, the Variable decayed (``v - v * weight_decay * lr``),
    then the rule's update added. Each Variable
    has its own state (Keras keeps one set of slots per Variable, so a Variable left out of a
    step keeps its moments); ``shared`` is the optimizer's own state (Nadam's), advanced first."""
    if advance is not None:
        shared = advance(step, shared, *hyper)
        step = (step, shared)
    if loss_scale is not None:
        grads = [g / loss_scale for g in grads]
    values, new_states = [], []
    for g, state, p, decay in zip(clip_gradients(grads, clip), states, params, decays):
        # Keras casts the (clipped) gradient and the learning rate to the Variable's dtype: a
        # bfloat16 Variable steps in bfloat16 whatever its gradient's dtype.
        g, lr_p = g.astype(p.dtype), lr.astype(p.dtype)
        if decay is not None:
            p = p - p * rules.keras_cast(decay, p.dtype) * lr_p
        (update,), state = make(lr_p, step, *hyper).update([g], state, [p])
        # Ftrl's rule gives the Variable's new value, as Keras assigns it.
        values.append(update if getattr(make, "assigns_value", False) else p + update)
        new_states.append(state)
    return values, new_states, shared


def _constrained(variables, values) -> list:
    """Each new value projected by its Variable's ``constraint``, as Keras applies it after every
    call (also one that only accumulates gradients)."""
    out = []
    for v, value in zip(variables, values):
        constraint = getattr(v, "constraint", None)
        if constraint is None:
            out.append(value)
            continue
        projected = convert(constraint(wrap(value)))
        if tuple(projected.shape) != tuple(v.shape) or np.dtype(projected.dtype) != np.dtype(v.dtype):
            raise _errors.GradkitValueError(
                f"The constraint of Variable {v.name!r} ({constraint!r}) returned a {np.dtype(projected.dtype).name} "
                f"tensor of shape {tuple(projected.shape)} for a {np.dtype(v.dtype).name} Variable of shape "
                f"{tuple(v.shape)}; a constraint projects a weight onto a value of its own shape and dtype. No "
                "Variable was changed."
            )
        out.append(projected)
    return out


def _snake_case(name: str) -> str:
    """Keras' default name of an optimizer class: ``AdamW`` is ``'adam_w'``, ``RMSprop`` ``'rm_sprop'``."""
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


class Optimizer(CustomOptimizerMethods, OptimizerWeights):
    """Keras' optimizer API over an optax transformation; a subclass of your own that writes
    ``build`` and ``update_step`` runs those instead (``optimizer_custom.py``).

    Its state (optax's moments and counters) lives in Variables, as Keras keeps optimizer
    slots in ``tf.Variable``: under ``tf.function`` the state is threaded through the
    compiled step, and under a tape its updates are tracked like any assignment.
    """

    _advance = None  # a rule's optimizer-wide state, advanced once per step (Nadam's)
    _shared_name = None  # the name of its Variable
    _config_keys: tuple = ()  # the optimizer's own hyperparameters in get_config, in Keras' order
    # How Keras groups each Variable's slots when it makes them (``add_optimizer_variables`` calls),
    # by their positions in the rule's state: None, one group of all of them.
    _slot_groups: tuple | None = None

    def __init__(self, learning_rate=0.001, make=None, hyper=None, options=None, name=None, **kwargs):
        # An optimizer of your own (update_step), with Keras' base arguments; the wrappers of other
        # optimizers (LossScaleOptimizer, MultiOptimizer) pass no rule either, but a hyper tuple.
        self._custom_update = make is None and hyper is None
        if self._custom_update:
            options = _check_options(type(self).__name__, kwargs)
            check_custom_options(type(self).__name__, options)
            hyper = ()
        elif kwargs:
            raise _errors.GradkitTypeError(f"Optimizer.__init__ got unexpected arguments {sorted(kwargs)}.")
        # Keras 3's default: 'adam', then 'adam_1', ...
        self.name = unique_name(_snake_case(type(self).__name__)) if name is None else str(name)
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
        self._shared = None  # the Variable holding the optimizer-wide state, when the rule has one
        self._averages: dict = {}  # with use_ema: id(Variable) -> (a weak reference to it, its average)
        self._accumulators: dict = {}  # with gradient_accumulation_steps: id(Variable) -> (a weak reference, its sum)
        # Keras' raw step counter: one per apply_gradients call, accumulating or not.
        self._iterations = KerasStateVariable(0, name="iterations", trainable=False, dtype=jnp.int32)
        for key, value in (options or _BASE_OPTIONS).items():
            setattr(self, key, value)  # read at each step, as Keras reads them
        self.exclude_from_weight_decay()

    @property
    def iterations(self):
        """The steps made: the counter Variable, or with ``gradient_accumulation_steps=k`` the
        updates made, ``calls // k`` (a tensor), as Keras gives it."""
        if not self.gradient_accumulation_steps:
            return self._iterations
        return call(updates_made, self._iterations.value, steps=self.gradient_accumulation_steps)

    def _rule_iterations(self):
        """``iterations``' value, as the update rules and the moving averages read it."""
        steps = accumulation_steps(self.gradient_accumulation_steps)
        return self._iterations.value if steps is None else updates_made(self._iterations.value, steps)

    @property
    def learning_rate(self):
        """The rate's Variable, or the rate now: a schedule's at the number of
        ``apply_gradients`` calls (each call counts, also one that only accumulates gradients),
        a callable's result, as Keras gives it."""
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return wrap(lr(self._iterations))  # the step counter itself, as Keras passes it
        return lr if isinstance(lr, Variable) or not callable(lr) else lr()

    @learning_rate.setter
    def learning_rate(self, value):
        # Keras assigns a number into the rate's Variable (a tf.function step reads the new rate);
        # a schedule or a callable replaces it, and so does a Variable (kept, for its hypergradient).
        if isinstance(value, Variable) or callable(value) or not isinstance(self._learning_rate, Variable):
            if isinstance(self._learning_rate, LearningRateSchedule) and not callable(value):
                raise _errors.GradkitTypeError(  # Keras' TypeError, in its words
                    "This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                    "constructor argument, hence its learning rate is not settable. If you need the learning "
                    "rate to be settable, you should instantiate the optimizer with a float `learning_rate` "
                    "argument."
                )
            self._learning_rate = value
        else:
            self._learning_rate.assign(float(value))

    def get_config(self) -> dict:
        """Keras 3's config of this optimizer (see ``optimizer_config``)."""
        return optimizer_config.get_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new optimizer (without state) from ``get_config()``'s dict, as Keras makes one."""
        return optimizer_config.from_config(cls, config, custom_objects)

    def scale_loss(self, loss):
        """Keras': ``loss * loss_scale_factor`` (``loss`` itself without one). ``apply_gradients``
        divides the gradients by the factor again, so scaling the loss before taking its
        gradients keeps small float16 gradients from underflowing without changing the step."""
        if self.loss_scale_factor is not None:
            return loss * self.loss_scale_factor
        return loss

    def finalize_variable_values(self, var_list):
        """Keras': at the end of training, write the moving averages into the Variables when
        ``use_ema`` (without it, nothing)."""
        if not self.use_ema:
            return
        var_list = list(var_list)
        averages = [self._averages.get(id(v)) for v in var_list]
        if any(hit is None or hit[0]() is not v for hit, v in zip(averages, var_list)):
            raise _errors.GradkitValueError(
                "optimizer.finalize_variable_values got Variables the optimizer has not updated, so they have "
                "no moving average. Pass the Variables given to apply_gradients (model.trainable_variables)."
            )
        for (_, average), v in zip(averages, var_list):
            v.assign(average.value)

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Keras': no weight decay for the Variables in ``var_list``, nor for those whose name
        contains one of the strings (regular expressions) in ``var_names``."""
        self._no_decay = {id(v): weakref.ref(v) for v in var_list or ()}
        self._no_decay_pattern = re.compile("|".join(set(var_names))) if var_names else None

    def _excluded_from_decay(self, variable) -> bool:
        """Whether ``exclude_from_weight_decay`` named ``variable`` (itself or by its name)."""
        ref = self._no_decay.get(id(variable))
        if ref is not None and ref() is variable:
            return True
        return self._no_decay_pattern is not None and bool(self._no_decay_pattern.search(variable.name))

    def _decay_of(self, variable):
        if self.weight_decay is None or self._excluded_from_decay(variable):
            return None
        return float(self.weight_decay)

    def _initial_state(self, variable):
        """The rule's state for ``variable`` before its first step."""
        return self._make(0.0, 0, *self._hyper).init([jnp.asarray(variable.value)])

    def _slot_variables(self, variable):
        """The state Variables of ``variable``'s slots (made at its first step) and their treedef."""
        key = id(variable)
        hit = self._slots.get(key)
        if hit is None or hit[0]() is not variable:
            # Initial state from the Variable's live value: concrete even when the first step
            # is being traced, so the slots can be Variables.
            with frames.Suspend(), jax.ensure_compile_time_eval():
                state = self._initial_state(variable)
            leaves, treedef = jax.tree_util.tree_flatten(state)
            # A checkpoint restored before this step gives the state its starting value.
            base = variable.name.split(":")[0]
            slots = [
                deferred.state_variable(self, variable, f"slot_{i}", leaf, f"{base}/slot_{i}")
                for i, leaf in enumerate(leaves)
            ]
            hit = self._slots[key] = (weakref.ref(variable), slots, treedef)
        return hit[1], hit[2]

    def _make_state(self, var_list):
        """The slots of each Variable in ``var_list`` and the optimizer-wide state, as Keras'
        ``build`` makes them: for every Variable given, its gradient None or not, and the
        optimizer-wide state (Nadam's ``u_product``) in the dtype of the first Variable."""
        for variable in var_list:
            self._slot_variables(variable)
            hit = self._averages.get(id(variable))
            if self.use_ema and (hit is None or hit[0]() is not variable):
                with frames.Suspend(), jax.ensure_compile_time_eval():
                    zeros = jnp.zeros(variable.shape, variable.dtype)
                base = variable.name.split(":")[0]
                average = deferred.state_variable(self, variable, "average", zeros, f"{base}/average")
                self._averages[id(variable)] = (weakref.ref(variable), average)
        if self.gradient_accumulation_steps:
            for variable in var_list:
                self._accumulator(variable)
        if self._advance is not None and self._shared is None and var_list:
            with frames.Suspend(), jax.ensure_compile_time_eval():
                start = jnp.ones((), var_list[0].dtype)
            self._shared = KerasStateVariable(start, name=self._shared_name, trainable=False)
        deferred.built(self)  # checkpoint values waiting for the state made now

    def _accumulator(self, variable):
        """The Variable that sums ``variable``'s gradients between updates (made at its first step)."""
        hit = self._accumulators.get(id(variable))
        if hit is None or hit[0]() is not variable:
            with frames.Suspend(), jax.ensure_compile_time_eval():
                zeros = jnp.zeros(variable.shape, variable.dtype)
            base = variable.name.split(":")[0]
            accumulator = deferred.state_variable(
                self, variable, "gradient_accumulator", zeros, f"{base}/gradient_accumulator"
            )
            hit = self._accumulators[id(variable)] = (weakref.ref(variable), accumulator)
        return hit[1]

    def _check_variables_are_known(self, variables) -> None:
        """Keras' rule: once built (by ``build`` or a first step), the optimizer updates only the
        Variables it was built with; a GAN's second model needs an optimizer of its own."""
        if not self.built:
            return
        for variable in variables:
            hit = self._slots.get(id(variable))
            if hit is None or hit[0]() is not variable:
                raise _errors.GradkitValueError(
                    f"Unknown variable: {variable.name!r}. This optimizer can only be called for the variables it "
                    "was originally built with (Keras' rule: it holds their state, such as Adam's moments and "
                    "step count). When working with a new set of variables, create a new optimizer instance; "
                    "to update both sets with one optimizer, build a new one with all of them before its first step: "
                    "optimizer.build(vars_a + vars_b)."
                )

    def build(self, var_list):
        """Keras': make the optimizer's state for ``var_list`` now (a step would make a
        Variable's state at its first update), for instance before a ``tf.function`` step."""
        var_list = list(var_list)
        if self._custom_update:
            self._custom_build(var_list)
            return
        self._make_state(var_list)
        self._built = [weakref.ref(v) for v in var_list]

    @property
    def built(self) -> bool:
        """Keras': whether the optimizer has made its state (by ``build`` or a first step)."""
        return bool(self._slots) or bool(getattr(self, "_built", None))

    @property
    def variables(self) -> list:
        """The optimizer's Variables in Keras' order: the step counter, the learning rate's Variable,
        the moving averages, the gradient accumulators, and the state of each Variable it updates."""
        out = [self._iterations]
        if isinstance(self._learning_rate, Variable):
            out.append(self._learning_rate)
        out.extend(average for ref, average in self._averages.values() if ref() is not None)
        out.extend(accumulator for ref, accumulator in self._accumulators.values() if ref() is not None)
        live = [slots for ref, slots, _ in self._slots.values() if ref() is not None]
        # Keras makes the slots in groups, each over every Variable (Adam's momentum and velocity,
        # then its amsgrad maxima; RMSprop's velocities, then its momentums): its order, group by group.
        for group in self._slot_groups or (None,):
            for slots in live:
                out.extend(slots if group is None else [slots[i] for i in group if i < len(slots)])
        if self._shared is not None:
            out.append(self._shared)
        return out + list(self.__dict__.get("_custom_slots", ()))

    def stateless_apply(self, optimizer_variables, grads, trainable_variables):
        """Keras 3's ``stateless_apply``: the step on the state given as values (1:1 with
        ``variables`` and with the Variables given to ``build``), returning
        ``(new_trainable_values, new_optimizer_values)``; the Variables are left as they were."""
        return stateless.stateless_apply(self, optimizer_variables, grads, trainable_variables)

    def apply(self, grads, trainable_variables=None):
        """Keras 3's ``apply``: ``apply_gradients(zip(grads, trainable_variables))``, by default
        the Variables given to ``build``."""
        if trainable_variables is None:
            built = [ref() for ref in getattr(self, "_built", ())]
            if not built or any(v is None for v in built):
                raise _errors.GradkitValueError(
                    "optimizer.apply(grads) without trainable_variables needs the Variables given to "
                    "optimizer.build(var_list) first; pass them: optimizer.apply(grads, trainable_variables)."
                )
            trainable_variables = built
        grads, trainable_variables = list(grads), list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise _errors.GradkitValueError(
                f"optimizer.apply got {len(grads)} gradients for {len(trainable_variables)} Variables; "
                "give one gradient per Variable, in the same order."
            )
        self.apply_gradients(zip(grads, trainable_variables))

    def apply_gradients(self, grads_and_vars, name=None):
        """Assign each Variable its new value and return the step counter, as Keras does.

        A pair whose gradient is None is skipped with Keras' warning naming its Variable; if
        every gradient is None, nothing is applied and a ValueError says so (as in Keras).
        With ``gradient_accumulation_steps`` see ``gradient_accumulation``."""
        pairs, every_variable = _checked_pairs(grads_and_vars)
        if self._custom_update:
            return self._apply_custom(pairs, every_variable)
        steps = accumulation_steps(self.gradient_accumulation_steps)
        variables = [v for _, v in pairs]
        if steps is None:
            grads = [convert(g) for g, _ in pairs]
        else:
            grads = [accumulated_gradient(g, v) for g, v in pairs]  # checked before any state is made
        for k, (g, v) in enumerate(zip(grads, variables)):
            shape = tuple(jnp.shape(v.value))  # its value's (a Variable declared with shape=None may change size)
            if tuple(jnp.shape(g)) != shape:
                raise _errors.InvalidArgumentValueError(
                    f"apply_gradients got a gradient of shape {tuple(jnp.shape(g))} for Variable {v.name!r} of "
                    f"shape {shape} (pair {k}): a gradient has its Variable's shape (TensorFlow: 'shapes "
                    "must be equal'). Pair each gradient with its own Variable, in the order of "
                    "tape.gradient(loss, variables)."
                )
        self._check_variables_are_known(every_variable)
        self._make_state(every_variable)
        slots = [self._slot_variables(v) for v in variables]
        states = [jax.tree_util.tree_unflatten(treedef, [s.value for s in ss]) for ss, treedef in slots]
        params = [v.value for v in variables]
        lr = self.learning_rate
        lr = lr.value if isinstance(lr, Variable) else convert(lr)
        shared = None if self._shared is None else self._shared.value
        options = dict(
            make=self._make,
            hyper=self._hyper,
            advance=self._advance,
            clip=active_clip(self.clipnorm, self.clipvalue, self.global_clipnorm),
            decays=tuple(self._decay_of(v) for v in variables),
            loss_scale=None if self.loss_scale_factor is None else float(self.loss_scale_factor),
        )
        sums = []  # (accumulator, its new value): assigned with the rest, once nothing can fail
        if steps is None:
            new_values, new_states, shared = lift(_step)(
                lr, self._iterations.value, shared, grads, states, params, **options
            )
        else:
            accumulators = [self._accumulator(v) for v in variables]
            # Keras sets every accumulator to zero at an update, also those of Variables left out.
            given = {id(a) for a in accumulators}
            others = [a for ref, a in self._accumulators.values() if ref() is not None and id(a) not in given]
            new_values, new_states, shared, new_sums, other_sums = lift(accumulated_step)(
                lr,
                self._iterations.value,
                shared,
                grads,
                [a.value for a in accumulators],
                [a.value for a in others],
                states,
                params,
                steps=steps,
                step=_step,
                **options,
            )
            sums = list(zip(accumulators + others, list(new_sums) + list(other_sums)))
        new_values = _constrained(variables, new_values)  # before any assignment: a failing one changes nothing
        for accumulator, value in sums:
            accumulator.assign(value)
        for (ss, _), new_state in zip(slots, new_states):
            # The new state's leaves are recorded tensors under a tape: leaves here, not pytrees.
            new_leaves = jax.tree_util.tree_leaves(new_state, is_leaf=lambda x: x is None or isinstance(x, Tensor))
            for slot, value in zip(ss, new_leaves):
                slot.assign(value)
        if self._shared is not None:
            self._shared.assign(shared)
        for v, value in zip(variables, new_values):
            v.assign(value)
        if self.use_ema:
            self._move_averages()
        self._iterations.assign_add(1)
        return self._iterations

    def _move_averages(self):
        """Keras' moving averages of every Variable the optimizer has state for, after a step."""
        pairs = [(v, average) for ref, average in self._averages.values() if (v := ref()) is not None]
        new_averages, new_values = lift(moving_averages)(
            self._rule_iterations(),
            [average.value for _, average in pairs],
            [v.value for v, _ in pairs],
            momentum=float(self.ema_momentum),
            overwrite_frequency=self.ema_overwrite_frequency,
        )
        for (v, average), new_average, value in zip(pairs, new_averages, new_values):
            average.assign(new_average)
            if self.ema_overwrite_frequency:
                v.assign(value)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _checked_pairs(grads_and_vars) -> tuple:
    """The (gradient, Variable) pairs with a gradient, and every Variable given; Keras' warning
    for the others, and its error when none has one (an optimizer step that silently changes
    nothing hides a loss computed outside the tape)."""
    pairs = list(grads_and_vars)
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise _errors.GradkitValueError(
                f"apply_gradients takes (gradient, Variable) pairs, but got {type(pair).__name__} {pair!r}. "
                "Pass zip(grads, variables)."
            )
    seen = set()
    for k, (g, v) in enumerate(pairs):
        if not isinstance(v, Variable):
            raise _errors.GradkitTypeError(
                f"apply_gradients takes (gradient, Variable) pairs, but the second item of pair {k} is "
                f"{type(v).__name__} {_short(v)}, not a tf.Variable: an optimizer updates Variables. Pass "
                "zip(grads, model.trainable_variables) (or the tf.Variables the gradients were taken for)."
            )
        if g is None:
            continue
        if id(v) in seen:
            raise _errors.GradkitValueError(
                f"apply_gradients got Variable {v.name!r} in more than one pair. TensorFlow applies such pairs one "
                "after the other (two steps for one call); gradkit.tf computes a call's updates together, so it "
                "refuses rather than drop one. Sum the gradients of a Variable used twice (a tied weight) and "
                "pass it once."
            )
        seen.add(id(v))
    if not pairs:
        raise _errors.GradkitValueError(
            "apply_gradients got no (gradient, Variable) pairs (an empty list or an exhausted zip). "
            "Pass zip(grads, model.trainable_variables); a zip can be consumed only once."
        )
    missing = [v for g, v in pairs if g is None]
    if len(missing) == len(pairs):
        raise _errors.GradkitValueError(
            f"No gradients provided for any variable: every gradient passed to apply_gradients is None "
            f"(for {[getattr(v, 'name', v) for v in missing]}). The loss does not depend on these Variables "
            "as the tape recorded it: compute it inside the `with tf.GradientTape()` block from them; "
            "tape.explain(loss, variable) says where the path breaks."
        )
    if missing:
        warnings.warn(
            f"Gradients do not exist for variables {[getattr(v, 'name', v) for v in missing]} when minimizing "
            "the loss.",
            stacklevel=3,
        )
    given = [(_with_dense_shape(g, v), v) for g, v in pairs if g is not None]
    for k, (g, v) in enumerate(given):
        if isinstance(g, IndexedSlices):
            _check_rows(g, v, k)
    return given, [v for _, v in pairs]


def _check_rows(g: IndexedSlices, v, k: int) -> None:
    """Refuse an ``IndexedSlices`` gradient whose known indices leave its Variable's rows, as
    TensorFlow's scatter kernels do (made dense, a negative row would be dropped silently)."""
    indices = known_value(g.indices)
    rows = int(np.shape(v.value)[0]) if np.ndim(v.value) else 0
    if indices is None or indices.size == 0:
        return
    bad = indices[(indices < 0) | (indices >= rows)]
    if bad.size:
        raise _errors.InvalidArgumentValueError(
            f"apply_gradients got a tf.IndexedSlices gradient for Variable {v.name!r} (pair {k}) with index "
            f"{int(bad.reshape(-1)[0])}, not in [0, {rows}): each index names a row of the Variable "
            "(TensorFlow: 'indices[...] is not in [0, rows)'). Give the rows the gradient is for."
        )


def _with_dense_shape(g, v):
    """A ``tf.IndexedSlices`` gradient made without ``dense_shape`` takes its Variable's shape, as Keras
    applies its rows to that Variable."""
    if isinstance(g, IndexedSlices) and g.dense_shape is None:
        return IndexedSlices(g.values, g.indices, tuple(jnp.shape(v.value)))
    return g


class SGD(Optimizer):
    """``tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.0, nesterov=False)``.

    >>> import gradkit.tf as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.SGD(0.1).apply_gradients(zip([tf.constant(2.0)], [w]))
    >>> round(float(w.numpy()), 6)
    0.8
    """

    _config_keys = ("momentum", "nesterov")

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name=None, **kwargs):
        options = _check_options("SGD", kwargs)
        if not 0.0 <= float(momentum) <= 1.0:
            raise _errors.GradkitValueError(
                f"SGD got momentum={momentum!r}: Keras takes a float in [0, 1] (the fraction of the last update "
                "kept), and refuses others."
            )
        self.momentum, self.nesterov = float(momentum), bool(nesterov)
        super().__init__(learning_rate, rules.sgd, (float(momentum), bool(nesterov)), options, name)


class Adam(Optimizer):
    """``tf.keras.optimizers.Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``.

    Keras' update, including where epsilon goes and ``amsgrad``, as an optax transformation.
    """

    _config_keys = ("beta_1", "beta_2", "epsilon", "amsgrad")
    _slot_groups = ((0, 1), (2,))

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name=None, **kwargs):
        options = _check_options(type(self).__name__, kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = (
            float(beta_1),
            float(beta_2),
            float(epsilon),
            bool(amsgrad),
        )
        super().__init__(
            learning_rate, rules.adam, (self.beta_1, self.beta_2, self.epsilon, self.amsgrad), options, name
        )


class AdamW(Adam):
    """``tf.keras.optimizers.AdamW(learning_rate=0.001, weight_decay=0.004, ...)``: Adam with
    Keras' decoupled weight decay (``v - v * weight_decay * lr`` before each update)."""

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        name=None,
        **kwargs,
    ):
        if weight_decay is None:
            raise _errors.GradkitValueError(
                "tf.keras.optimizers.AdamW(weight_decay=None): AdamW needs a float weight_decay, as in Keras. "
                "Pass a number, or use tf.keras.optimizers.Adam for no weight decay."
            )
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name, weight_decay=weight_decay, **kwargs)


class RMSprop(Optimizer):
    """``tf.keras.optimizers.RMSprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
    centered=False)``."""

    _config_keys = ("rho", "momentum", "epsilon", "centered")
    _slot_groups = ((0,), (1,), (2,))

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name=None, **kwargs):
        options = _check_options("RMSprop", kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = (
            float(rho),
            float(momentum),
            float(epsilon),
            bool(centered),
        )
        super().__init__(
            learning_rate, rules.rmsprop, (self.rho, self.momentum, self.epsilon, self.centered), options, name
        )


class Adagrad(Optimizer):
    """``tf.keras.optimizers.Adagrad(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7)``."""

    _config_keys = ("initial_accumulator_value", "epsilon")

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name=None, **kwargs):
        options = _check_options("Adagrad", kwargs)
        self.initial_accumulator_value, self.epsilon = float(initial_accumulator_value), float(epsilon)
        super().__init__(learning_rate, rules.adagrad, (self.initial_accumulator_value, self.epsilon), options, name)


class Adamax(Optimizer):
    """``tf.keras.optimizers.Adamax(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``."""

    _config_keys = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None, **kwargs):
        options = _check_options("Adamax", kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate, rules.adamax, (self.beta_1, self.beta_2, self.epsilon), options, name)


class Nadam(Optimizer):
    """``tf.keras.optimizers.Nadam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``."""

    _advance = staticmethod(rules.nadam_advance)
    _shared_name = "u_product"

    _config_keys = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None, **kwargs):
        options = _check_options("Nadam", kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate, rules.nadam, (self.beta_1, self.beta_2, self.epsilon), options, name)


def __getattr__(name):
    from .._namespace import missing

    raise AttributeError(missing("gradkit.tf.keras.optimizers", name))
