"""What the scaling claim reads off a real cluster: per level pass, on every worker, the holder's time,
its counting, the cells it serves its peers and its wait for theirs; and the CPU of the cluster's processes.

:func:`install` wraps (in each worker process, not in dasktree) the methods of
:class:`dasktree.engine.part_holders.PartHolder` a cached fit's level pass runs: ``level_pass``
(the holder's whole pass), ``histogram_of_many`` as the holder calls it (counting: seconds, its
thread's CPU seconds and the bytes of each group's histogram), ``search_cells`` (its thread's
CPU seconds), ``cells`` (the bytes a holder hands a peer: the exchange) and ``_pieces`` (a
search chunk's fetch of its cells from every peer, waits for their counts included).
:func:`collected` brings every worker's records back, by pass number. The wrapped methods
call the originals: the passes and the model are the same.
"""

from __future__ import annotations

import time

__all__ = ["install", "collected", "ProcessCpu", "per_pass"]

# summed over the workers (and a level's passes); the rest are the slowest worker's
ADDED = ("count_s", "count_cpu_s", "search_cpu_s", "hist_bytes", "served_bytes", "fetch_s", "hist_groups")
_RECORDS: dict[int, dict] = {}  # in a worker process: pass number -> what it measured there
_CURRENT: list[int] = []  # the pass the holder of this worker is in (one at a time)


def _record(number: int) -> dict:
    return _RECORDS.setdefault(number, {"holder_s": 0.0, "count_s": 0.0, "count_cpu_s": 0.0, "search_cpu_s": 0.0,
                                        "hist_bytes": 0, "served_bytes": 0,
                                        "fetch_s": 0.0, "hist_groups": 0,
                                        "cell_bytes": 0})


def install() -> bool:
    """In a worker process (``client.run``): wrap the holder's methods once, forget earlier records."""
    from dasktree.engine import part_holders

    _RECORDS.clear()
    holder = part_holders.PartHolder
    if getattr(holder, "_scaling_probes", False):
        return False
    level_pass, cells, pieces = holder.level_pass, holder.cells, holder._pieces
    count, search = part_holders.histogram_of_many, part_holders.search_cells

    async def timed_level_pass(self, number, *args, **kwargs):
        _CURRENT[:] = [number]
        started = time.perf_counter()
        try:
            return await level_pass(self, number, *args, **kwargs)
        finally:
            _record(number)["holder_s"] += time.perf_counter() - started

    async def served_cells(self, number, lo, hi):
        out = await cells(self, number, lo, hi)
        _record(number)["served_bytes"] += sum(int(piece.nbytes) for piece in out)
        return out

    async def timed_pieces(self, chunk, number):
        started = time.perf_counter()
        try:
            return await pieces(self, chunk, number)
        finally:
            _record(number)["fetch_s"] += time.perf_counter() - started

    def timed_count(group, **kwargs):
        started, cpu = time.perf_counter(), time.thread_time()
        hist = count(group, **kwargs)
        record = _record(_CURRENT[0] if _CURRENT else -1)
        record["count_s"] += time.perf_counter() - started  # summed over the worker's threads
        record["count_cpu_s"] += time.thread_time() - cpu  # other work on the machine aside
        record["hist_bytes"] += int(hist.nbytes)
        record["hist_groups"] += 1
        record["cell_bytes"] = int(hist.itemsize)  # 2: the mixed layout's uint16 units, 4: int32 cells
        return hist

    def timed_search(*hists, **kwargs):
        cpu = time.thread_time()
        try:
            return search(*hists, **kwargs)
        finally:
            _record(_CURRENT[0] if _CURRENT else -1)["search_cpu_s"] += time.thread_time() - cpu

    holder.level_pass, holder.cells, holder._pieces = timed_level_pass, served_cells, timed_pieces
    part_holders.histogram_of_many, part_holders.search_cells = timed_count, timed_search
    holder._scaling_probes = True
    return True


def records() -> dict[int, dict]:
    """In a worker process: its records so far."""
    return {number: dict(record) for number, record in _RECORDS.items()}


def collected(client) -> dict[int, list[dict]]:
    """Every worker's records: pass number -> one record per worker that took part."""
    by_pass: dict[int, list[dict]] = {}
    for found in client.run(records).values():
        for number, record in found.items():
            by_pass.setdefault(int(number), []).append(record)
    return dict(sorted(by_pass.items()))


def per_pass(found: list[dict]) -> dict:
    """One pass's records summed over the workers (times also as the slowest worker's)."""
    total = {key: sum(r[key] for r in found) for key in ADDED}
    return {**total, "workers": len(found), "cell_bytes": max(r["cell_bytes"] for r in found),
            "holder_s_max": max(r["holder_s"] for r in found),
            "count_s_max": max(r["count_s"] for r in found), "fetch_s_max": max(r["fetch_s"] for r in found)}


class ProcessCpu:
    """CPU seconds (user + system) of the scheduler's process and of the workers' process trees."""

    def __init__(self, scheduler_pid: int, worker_pids: list[int]):
        import psutil

        self.scheduler = psutil.Process(scheduler_pid)
        self.workers = [p for pid in worker_pids  # a nanny's worker too; listed once: the scan costs this process
                        for p in (psutil.Process(pid), *psutil.Process(pid).children(recursive=True))]

    @staticmethod
    def _seconds(processes) -> float:
        import psutil

        total = 0.0
        for p in processes:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def now(self) -> tuple[float, float, float]:
        """(this process, the scheduler, the workers) CPU seconds so far."""
        return time.process_time(), self._seconds([self.scheduler]), self._seconds(self.workers)

    def idle(self, seconds: float = 3.0) -> tuple[float, float, float]:
        """CPU seconds per second of each (this process, the scheduler, the workers) while the cluster
        waits for work: heartbeats and event loops, charged to any pass for as long as it takes."""
        before = self.now()
        time.sleep(seconds)
        return tuple((b - a) / seconds for a, b in zip(before, self.now()))
