"""The pure level-pass kernels (numpy / numba, no Dask): pass and routing plans (``plans``), the
histogram kernel (``histogram``), histogram subtraction (``subtraction``) and ragged offsets
(``ragged``)."""
