"""W7: per-op recording overhead: the W2 chain at 10, 100 and 1,000 ops, forward only and forward+gradient.

"Forward only" records the ops on a tape and reads the value (one compiled forward
program); "forward+gradient" also asks the tape for the gradient. Divide by the op count
for a per-op cost; the table's ratio is to the jax.jit floor of the same chain.
"""

from __future__ import annotations

from ._common import peer_notes
from ._harness import Case
from .w2_chain import chain_contenders

TITLE = "per-op overhead: elementwise chain, 10/100/1,000 ops"
TARGETS: dict = {}
SIZES = (10, 100, 1000)


def contenders(quick: bool = False) -> dict:
    return chain_contenders(SIZES[0], False)


def cases(quick: bool = False) -> list[Case]:
    out = []
    for n in SIZES:
        for with_grad in (False, True):
            name = f"{n} ops, {'fwd+grad' if with_grad else 'fwd'}"
            out.append(Case("W7", name, chain_contenders(n, with_grad), TARGETS, peer_notes()))
    return out
