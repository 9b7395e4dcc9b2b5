"""`dasktree show` of a 30,000-leaf tree: the whole command, its interpreter and imports, and in process.

Two kinds of model, one of each task. Fitted: a tree grown in full (``max_depth=None``,
``prune=None``) on 60,000 rows of noise (6 normal features, random labels of 2 classes, or a normal
target; the regression tree with ``min_samples_leaf=2``), about 30,000 leaves each. Generated
(:func:`dasktree.testing.exports.full_binary_model`, no fit): 16 levels (65,536 leaves, threshold
tests on 4 numeric features of 255 bins) pruned at 15 levels, so the file holds a 32,768-leaf tree
and its 65,536-leaf grown tree (``full_tree``) as a pruned model's file does, which ``show`` does not
print and does not read. The generated ones are also saved in two older layouts this dasktree still
reads: version 5's (every tree as columns of JSON numbers, a list per node; the grown tree a JSON text)
and version 3's (the main tree as a node list, each test's code table in full).

Whole processes, alternated round after round: ``python -c pass`` (the interpreter's start),
``python -c "import dasktree.cli"`` (the imports ``show`` pays before it reads a byte), and
``dasktree show MODEL`` (``--format text``, to stdout, captured) of each file. In process: the
median of the load (JSON to a checked model) and of the text, of each file. The claim is the
command's seconds less the interpreter's start, under 1 s.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

from benchmarks import harness

NAME = "show"
CLAIM = "`dasktree show` of a 30,000-leaf tree in under 1 s (the whole command less the interpreter's start)"


def model_files(tmp: str, depth: int, pruned_at: int) -> dict[str, str]:
    """Each task's generated pruned model, as saved and in version 3's layout: name -> path."""
    from dasktree.model.grown_json import grown_to_json
    from dasktree.testing.exports import full_binary_model

    paths = {}
    for task in ("classification", "regression"):
        model = full_binary_model(depth, task=task, bins=255, pruned_at=pruned_at)
        path = os.path.join(tmp, f"{task}.json")
        model.save(path)
        paths[f"{task}, {model.tree.n_leaves:,} leaves"] = path
        v5 = json.loads(model.dumps())  # the previous version: columns of JSON numbers
        v5["version"], v5["tree"] = 5, grown_to_json(model.tree)
        v5["full_tree"] = json.dumps(grown_to_json(model.full_tree), sort_keys=True, separators=(",", ":"))
        path5 = os.path.join(tmp, f"{task}-v5.json")
        with open(path5, "w") as f:
            json.dump(v5, f, sort_keys=True, separators=(",", ":"))
        paths[f"{task}, {model.tree.n_leaves:,} leaves, version 5 file"] = path5
        old = json.loads(model.dumps())
        old["version"], old["tree"] = 3, model.tree.to_json()  # the previous version's main tree: a node list
        path3 = os.path.join(tmp, f"{task}-v3.json")
        with open(path3, "w") as f:
            json.dump(old, f, sort_keys=True, separators=(",", ":"))
        paths[f"{task}, {model.tree.n_leaves:,} leaves, version 3 file"] = path3
    return paths


def fitted_files(tmp: str, rows: int) -> dict[str, str]:
    """Each task's tree grown in full on ``rows`` rows of noise: name -> path."""
    import numpy as np
    import pandas as pd

    import dasktree

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(rows, 6)), columns=[f"x{j}" for j in range(6)])
    paths = {}
    for task, target, extra in (("classification", rng.choice(["a", "b"], size=rows), {}),
                                ("regression", rng.normal(size=rows), {"min_samples_leaf": 2})):
        model = dasktree.fit(frame.assign(y=target), target="y", task=task, max_depth=None, prune=None, **extra)
        path = os.path.join(tmp, f"fitted-{task}.json")
        model.save(path)
        paths[f"{task}, fitted, {model.tree.n_leaves:,} leaves"] = path
    return paths


def in_process(path: str, repeat: int) -> dict:
    """Median seconds of loading ``path`` and of its text (``export_text``)."""
    from dasktree.model.text import export_text
    from dasktree.model.model import load

    loads, texts = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        model = load(path, lazy=True)  # as `show` loads it
        loads.append(time.perf_counter() - t)
        t = time.perf_counter()
        export_text(model)
        texts.append(time.perf_counter() - t)
    return {"load": harness.median(loads), "text": harness.median(texts)}


def run(quick: bool) -> harness.Result:
    depth, pruned_at, repeat, rows = (12, 11, 3, 6_000) if quick else (16, 15, 3, 60_000)
    with tempfile.TemporaryDirectory(prefix="dasktree-show-") as tmp:
        paths = {**fitted_files(tmp, rows), **model_files(tmp, depth, pruned_at)}
        sizes = {name: os.path.getsize(p) for name, p in paths.items()}
        commands = {"python -c pass": [sys.executable, "-c", "pass"],
                    "python -c 'import dasktree.cli'": [sys.executable, "-c", "import dasktree.cli"]}
        commands.update({f"dasktree show ({name})": harness.dasktree_command("show", p) for name, p in paths.items()})
        runs = harness.alternate(commands, repeat, warmup=1)
        inside = {name: in_process(p, repeat) for name, p in paths.items()}
    seconds = {name: harness.median(r["seconds"] for r in rs) for name, rs in runs.items()}
    start, imports = seconds["python -c pass"], seconds["python -c 'import dasktree.cli'"]
    lines = [f"Trees grown in full on {rows:,} rows of noise, and generated pruned models ({2 ** pruned_at:,} leaves "
             f"of a {2 ** depth:,}-leaf grown tree, 255 bins); median of {repeat} alternated rounds after a warm-up, "
             "each command a fresh process (a shared machine: seconds are inflated, ratios hold).", "",
             "| command | seconds | less the interpreter's start | less the imports too |", "| --- | --- | --- | --- |"]
    for name in commands:
        lines.append(f"| {name} | {seconds[name]:.3f} | {seconds[name] - start:.3f} | "
                     f"{max(seconds[name] - imports, 0.0):.3f} |")
    lines += ["", "In process (medians): load is the JSON read into a checked model as `show` reads it (the grown "
              "tree left unread); text is `export_text`.", "",
              "| model file | bytes | load s | text s |", "| --- | --- | --- | --- |"]
    lines += [f"| {name} | {sizes[name]:,} | {inside[name]['load']:.3f} | {inside[name]['text']:.3f} |"
              for name in paths]
    current = [name for name in paths if "version" not in name]
    summary = [(f"`dasktree show` of the {name} tree, less the interpreter's start (target < 1 s)",
                f"{seconds[f'dasktree show ({name})'] - start:.2f} s (whole command "
                f"{seconds[f'dasktree show ({name})']:.2f} s; in process, load + text "
                f"{inside[name]['load'] + inside[name]['text']:.2f} s)") for name in current]
    return harness.Result(summary=summary, markdown="\n".join(lines) + "\n",
                          figures={"seconds": seconds, "runs": {n: [r["seconds"] for r in rs] for n, rs in runs.items()},
                                   "in_process": inside, "bytes": sizes, "depth": depth, "pruned_at": pruned_at,
                                   "rows": rows})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
