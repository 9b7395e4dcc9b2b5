"""The Blockeel-Struyf forest and its growth (no Dask): trees sharing nodes (``forest``), the level
loop (``grow``), a level's search and decisions (``level_search``), search results in wire form
(``results``), and one tree of the forest as a model (``to_model``). Each reaches the split
search through one module, :mod:`dasktree.split.api`."""
