"""The level loop and what it grows (no Dask): the Blockeel-Struyf forest, the main and fold trees sharing
nodes (``forest``), the loop (``grow``), a level's search and decisions (``level_search``), its search chunks on a cluster
(``search_chunks``), search results in wire form (``results``), and one tree of the forest as a model (``to_model``). Each reaches the split
search through one module, :mod:`dasktree.split.api`."""
