"""dasktree's benchmarks: one module per claim of the README's Performance table (:mod:`benchmarks.harness`)."""

#: The claim modules ``python -m benchmarks`` runs, in order.
CLAIMS: list[str] = ["core", "cv", "memory", "latency", "multisplit", "discretize", "postpone", "faults",
                     "prune", "startup", "small", "outofcore"]
