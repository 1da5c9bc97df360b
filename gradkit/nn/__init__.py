"""``gradkit.nn``: native layers whose Variables work with the tape and the functional API.

>>> import gradkit as gk, jax, jax.numpy as jnp
>>> from gradkit import nn
>>> nn.set_seed(0)
>>> layer = nn.Dense(2)
>>> x = jnp.ones((3, 4))
>>> _ = layer(x)
>>> grads = gk.grad(lambda x: jnp.sum(layer(x) ** 2), wrt=layer.trainable_variables)(x)
>>> [g.shape for g in grads]
[(4, 2), (2,)]
"""

from . import activations as activations
from . import initializers as initializers
from .batchnorm import BatchNorm as BatchNorm
from .dense import Dense as Dense
from .initializers import set_seed as set_seed
from .layer import Layer as Layer
from .module import Module as Module
