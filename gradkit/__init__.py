"""gradkit: exact gradients through Variable assignment, on JAX.

The public API is re-exported here; the modules behind it are private.
"""

from gradkit import numpy as numpy
from gradkit._core.custom import custom_gradient as custom_gradient
from gradkit._core.custom import stop_gradient as stop_gradient
from gradkit._core.functionalize import functionalize as functionalize
from gradkit._core.jit import jit as jit
from gradkit._core.optax_interop import apply_updates as apply_updates
from gradkit._core.scan import scan as scan
from gradkit._core.state import State as State
from gradkit._core.transforms import grad as grad
from gradkit._core.transforms import hessian as hessian
from gradkit._core.transforms import jacfwd as jacfwd
from gradkit._core.transforms import jacrev as jacrev
from gradkit._core.transforms import jvp as jvp
from gradkit._core.transforms import value_and_grad as value_and_grad
from gradkit._core.transforms import vjp as vjp
from gradkit._core.transforms import vmap as vmap
from gradkit._core.variable import Variable as Variable
from gradkit._errors import AssignmentError as AssignmentError
from gradkit._errors import GradkitError as GradkitError
from gradkit._errors import GradkitWarning as GradkitWarning
from gradkit._tape.forward import ForwardAccumulator as ForwardAccumulator
from gradkit._tape.lift import lift as lift
from gradkit._tape.tape import GradientTape as GradientTape
from gradkit._tape.tape import UnconnectedGradients as UnconnectedGradients
from gradkit._tape.tensor import Tensor as Tensor

__version__ = "0.1.0"
