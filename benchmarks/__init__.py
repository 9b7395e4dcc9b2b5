"""dasktree's benchmarks: one module per claim of the Performance table (docs/performance.md) (:mod:`benchmarks.harness`)."""

#: The claim modules ``python -m benchmarks`` runs, in order.
CLAIMS: list[str] = ["core", "cv", "memory", "latency", "multisplit", "discretize", "postpone", "faults",
                     "soak", "prune", "startup", "small", "accuracy", "regression", "export", "grid", "fuzz", "flakes", "outofcore", "csv_input", "hundred_million",
                     "discretize_compare", "scaling", "deep_trees", "show", "forests"]
