"""Weka's MDLP cut points (``peers/WekaCuts.java``), the reference that Fayyad & Irani's users compare with.

``weka_cuts(X, y)`` writes the numeric columns of ``X`` and the class ``y`` as ARFF, runs
``weka.filters.supervised.attribute.Discretize`` with its defaults (Fayyad & Irani's MDL) in one
JVM and returns each column's cut points; :func:`missing` says why it cannot run here.
:func:`agree` is the comparison the benchmark and the tests make.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
WEKA_JAR = "/usr/share/java/weka.jar"
REL_TOL = 1e-9  # Weka adds midpoints in its own order of operations: the last bits may differ


def missing() -> str | None:
    """Why Weka's Discretize cannot run here (one line), or None."""
    if not os.path.exists(WEKA_JAR) or shutil.which("java") is None:
        return "Weka is missing (apt-get install weka)"
    if shutil.which("javac") is None:  # the source-file launcher compiles with the JDK's compiler
        return "Java's compiler is missing (apt-get install default-jdk-headless)"
    return None


def _label(value) -> str:
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def weka_cuts(X: pd.DataFrame, y: np.ndarray) -> dict[str, list[float]]:
    """Weka's cut points of every column of ``X`` (numeric; NaN missing) for the class ``y``."""
    classes = sorted(set(map(str, y)))
    with tempfile.TemporaryDirectory(prefix="dasktree-weka-") as tmp:
        path = os.path.join(tmp, "data.arff")
        with open(path, "w") as f:
            f.write("@RELATION mdlp\n\n")
            f.writelines(f"@ATTRIBUTE x{j} NUMERIC\n" for j in range(X.shape[1]))
            f.write("@ATTRIBUTE class {" + ",".join(_label(c) for c in classes) + "}\n\n@DATA\n")
            cells = [X[c].map(lambda v: "?" if pd.isna(v) else repr(float(v))).to_numpy() for c in X.columns]
            cells.append(np.asarray([_label(v) for v in map(str, y)]))
            for row in zip(*cells):
                f.write(",".join(row) + "\n")
        done = subprocess.run(["java", "-Xmx2g", "-cp", WEKA_JAR, os.path.join(HERE, "peers", "WekaCuts.java"), path],
                              capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"WekaCuts: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    out = {}
    for line in done.stdout.splitlines():
        index, _, cuts = line.partition("\t")
        out[X.columns[int(index)]] = [float(t) for t in cuts.split(",")] if cuts else []
    return out


def agree(ours: list[float], weka: list[float]) -> bool:
    """The same cut points (to the last bits of a midpoint)."""
    return len(ours) == len(weka) and all(math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
                                          for a, b in zip(ours, weka))
