"""What only regression trees have: their task (exact fixed-point sums at the nodes), level passes,
trees, pruning, report, metrics, and their fit's and forest's own steps (``fitting``, ``forest``); the
fit itself (:func:`dasktree.fit.fit`), the runners, pass 0, the bins and the encoding are both tasks'."""
