"""dasktree's benchmarks: one module per claim of the README's Performance table (:mod:`benchmarks.harness`)."""

#: The claim modules ``python -m benchmarks`` runs, in order.
CLAIMS: list[str] = ["postpone", "startup", "small"]
