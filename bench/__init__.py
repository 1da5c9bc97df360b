"""gradkit's benchmarks: workloads W1-W7 against hand-written JAX (and TF/PyTorch when installed).

Run ``gradkit bench`` or ``python -m bench`` from the repository root. Each ``wN_*`` module
builds its contenders; ``_harness`` times them interleaved in one process; ``report``
prints the tables and writes the JSON file and the chart; ``memory`` measures peak memory
in a child process.
"""

WORKLOADS = {
    "W1": "bench.w1_mlp",
    "W2": "bench.w2_chain",
    "W3": "bench.w3_jacobian",
    "W4": "bench.w4_batch_jacobian",
    "W5": "bench.w5_hessian",
    "W6": "bench.w6_meta",
    "W7": "bench.w7_overhead",
}
