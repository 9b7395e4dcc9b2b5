"""The only Dask layer. The runners make the passes: what every runner has (``runner``), in this
process (``local_runner``; out of core: ``stream_runner``, with ``memory_plan`` and ``spill``) or on a
cluster (``dask_runner``, by two strategies: ``holder_passes`` and ``task_graph_passes``). The work on
a group of parts (``part_tasks``), the per-worker actors holding encoded parts (``part_holders``),
which worker thread holds which parts (``part_groups``),
where a job runs (``place``), cluster start (``cluster``), every wait bounded (``waits``), progress,
checkpoints, and predictions, evaluation and scores of a dataset (``predict``, ``evaluate``, ``score``)."""
