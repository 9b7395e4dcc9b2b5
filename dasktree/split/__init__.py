"""The split search from class-count histograms alone (no Dask): criteria, bins to blocks, binary
and multi-way tests, optimal partitions (Bin-Opt, Block-Opt, Block-Opt-P), with the compiled
helpers they share in ``compiled``. Its face is ``api``: what every other room imports of it (the
types, ``choose``, the tests); the types passed between the layers are in ``types``."""
