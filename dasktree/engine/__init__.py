"""The only Dask layer: runners that make the passes (``runners``; on a cluster by two strategies:
``holder_passes`` and ``task_graph_passes``), per-part tasks (``tasks``), the
per-worker actors holding encoded parts (``part_holders``), parts placed per worker thread
(``placement``), a level's search chunks (``search_chunks``), cluster start (``cluster``), progress,
and predictions written from a dataset (``predict``)."""
