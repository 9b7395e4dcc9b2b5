"""The split search from class-count histograms alone (no Dask): criteria, bins to blocks, binary
and multi-way tests, optimal partitions (Bin-Opt, Block-Opt, Block-Opt-P), with the compiled
helpers they share in ``compiled``."""
