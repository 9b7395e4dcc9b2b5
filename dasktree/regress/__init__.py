"""Regression trees: :class:`~dasktree.regress.estimator.DaskTreeRegressor` and
:func:`~dasktree.regress.fit.fit_regression`, grown in the same passes as classification trees
(the runners, pass 0, the bins and the encoding are shared) from exact fixed-point sums."""
