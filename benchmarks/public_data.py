"""Public datasets that ship inside installable packages, for the accuracy claim (:mod:`benchmarks.accuracy`).

Nothing is downloaded at run time. Each dataset comes from a package this machine installs from
its registries: scikit-learn's bundled sets and ``palmerpenguins`` (PyPI); the ARFF examples of
Debian's ``weka`` package (``/usr/share/doc/weka/examples``); and R packages from Debian
(``r-cran-mlbench``, ``r-cran-mass``, ``r-cran-kernlab``, ``r-cran-th.data``, ``r-cran-rpart`` and
R's own ``datasets``), written to CSV once by ``peers/export.R`` under ``benchmarks/data/public/``
(git ignores it). Most are UCI repository sets: numeric and nominal attributes, some with missing
values, two to 26 classes.

Every set keeps its attributes as its package gives them: an unordered factor, a logical or a
string is a nominal attribute (strings, missing as NaN); a number, or an R ordered factor (as its
level number, e.g. mlbench's BreastCancer grades 1..10), is numeric. Only identifiers (and, for a
regression target, a column computed from it) are dropped. Classification sets belong to one of two
suites fixed here before any result was seen: ``"tuning"`` (for choosing defaults) and ``"report"``
(the figures reported); see :data:`CLASSIFICATION`. :data:`REGRESSION` lists regression sets the
same way.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "data", "public")
WEKA_EXAMPLES = "/usr/share/doc/weka/examples"
#: The Debian package each R package comes from.
R_DEBIAN = {"mlbench": "r-cran-mlbench", "MASS": "r-cran-mass", "kernlab": "r-cran-kernlab",
            "TH.data": "r-cran-th.data", "rpart": "r-cran-rpart", "datasets": "r-base-core"}


@dataclass(frozen=True)
class Dataset:
    """One dataset: where it ships, its target, the columns dropped, and its suite."""

    name: str
    source: str  # "scikit-learn", "palmerpenguins", "weka", or an R package
    ref: str  # the set's name in its source (a loader, an ARFF stem, an R dataset)
    target: str
    suite: str  # "tuning" or "report" (classification), "regression"
    drop: tuple[str, ...] = ()

    @property
    def debian(self) -> str | None:
        """The Debian package this set needs, or None for a PyPI one."""
        return "weka" if self.source == "weka" else R_DEBIAN.get(self.source)


@dataclass
class Loaded:
    """A loaded set: features (nominal columns as strings, missing as NaN), target, and provenance."""

    X: pd.DataFrame
    y: np.ndarray
    nominal: list[str]
    version: str  # "SOURCE VERSION" of the package that ships it


def _c(name, source, ref, target, suite, drop=()):
    return Dataset(name, source, ref, target, suite, tuple(drop))


#: Classification sets. The tuning suite spans the kinds of data (small and noisy, all nominal, wide
#: numeric, thousands of rows); the report suite is every other set.
CLASSIFICATION: list[Dataset] = [
    _c("sonar", "mlbench", "Sonar", "Class", "tuning"),
    _c("vehicle", "mlbench", "Vehicle", "Class", "tuning"),
    _c("house-votes-84", "mlbench", "HouseVotes84", "Class", "tuning"),
    _c("credit-g", "weka", "credit-g", "class", "tuning"),
    _c("crabs", "MASS", "crabs", "sp", "tuning", drop=["index"]),
    _c("kyphosis", "rpart", "kyphosis", "Kyphosis", "tuning"),
    _c("spam", "kernlab", "spam", "type", "tuning"),
    _c("wine", "scikit-learn", "wine", "target", "tuning"),
    _c("breast-cancer-wisconsin", "mlbench", "BreastCancer", "Class", "report", drop=["Id"]),
    _c("dna", "mlbench", "DNA", "Class", "report"),
    _c("glass", "mlbench", "Glass", "Type", "report"),
    _c("ionosphere", "mlbench", "Ionosphere", "Class", "report"),
    _c("letter", "mlbench", "LetterRecognition", "lettr", "report"),
    _c("pima-diabetes", "mlbench", "PimaIndiansDiabetes", "diabetes", "report"),
    _c("satellite", "mlbench", "Satellite", "classes", "report"),
    _c("shuttle", "mlbench", "Shuttle", "Class", "report"),
    _c("soybean", "mlbench", "Soybean", "Class", "report"),
    _c("vowel", "mlbench", "Vowel", "Class", "report"),
    _c("zoo", "mlbench", "Zoo", "type", "report"),
    _c("breast-cancer", "weka", "breast-cancer", "Class", "report"),
    _c("labor", "weka", "labor", "class", "report"),
    _c("segment", "weka", "segment", "class", "report"),
    _c("promoters", "kernlab", "promotergene", "Class", "report"),
    _c("glaucoma", "TH.data", "GlaucomaM", "Class", "report"),
    _c("iris", "scikit-learn", "iris", "target", "report"),
    _c("wdbc", "scikit-learn", "breast_cancer", "target", "report"),
    _c("digits", "scikit-learn", "digits", "target", "report"),
    _c("penguins", "palmerpenguins", "penguins", "species", "report"),
]

#: Regression sets (for regression trees); rows whose target is missing are dropped.
REGRESSION: list[Dataset] = [
    _c("boston-housing", "mlbench", "BostonHousing", "medv", "regression"),
    _c("ozone", "mlbench", "Ozone", "V4", "regression"),
    _c("servo", "mlbench", "Servo", "Class", "regression"),
    _c("diabetes", "scikit-learn", "diabetes", "target", "regression"),
    _c("cpu", "weka", "cpu", "class", "regression"),
    _c("airquality", "datasets", "airquality", "Ozone", "regression"),
    _c("swiss", "datasets", "swiss", "Fertility", "regression"),
    _c("bodyfat", "TH.data", "bodyfat", "DEXfat", "regression"),
    _c("birthwt", "MASS", "birthwt", "bwt", "regression", drop=["low"]),  # low is bwt < 2500 g
    _c("cats", "MASS", "cats", "Hwt", "regression"),
]


def by_name(name: str) -> Dataset:
    for d in CLASSIFICATION + REGRESSION:
        if d.name == name:
            return d
    raise KeyError(name)


# ---------------------------------------------------------------- availability

@functools.lru_cache(maxsize=None)
def _r_libraries() -> tuple[str, ...]:
    """R's library folders (one ``Rscript``), or none without R."""
    if shutil.which("Rscript") is None:
        return ()
    done = subprocess.run(["Rscript", "-e", "cat(.libPaths(), sep = '\\n')"], capture_output=True, text=True,
                          timeout=120)
    return tuple(done.stdout.split()) if done.returncode == 0 else ()


def _r_has(package: str) -> bool:
    return any(os.path.exists(os.path.join(lib, package, "DESCRIPTION")) for lib in _r_libraries())


def missing(dataset: Dataset) -> str | None:
    """Why ``dataset`` cannot be loaded here (one line naming the package to install), or None."""
    if dataset.source == "weka":
        return None if _weka_paths(dataset.ref) else f"{dataset.name}: needs Debian's weka (its ARFF examples)"
    if dataset.source in R_DEBIAN:
        return None if _r_has(dataset.source) else f"{dataset.name}: needs Rscript and Debian's {dataset.debian}"
    try:
        importlib.metadata.version(dataset.source)
    except importlib.metadata.PackageNotFoundError:
        return f"{dataset.name}: needs the PyPI package {dataset.source}"
    return None


# ---------------------------------------------------------------- loaders

def load(dataset: Dataset) -> Loaded:
    """Load ``dataset`` (:func:`missing` says first whether it can be)."""
    loader = {"scikit-learn": _sklearn, "palmerpenguins": _penguins, "weka": _weka}.get(dataset.source, _r)
    frame, nominal, version = loader(dataset)
    frame = frame.drop(columns=list(dataset.drop))
    if dataset.suite == "regression":
        frame = frame[frame[dataset.target].notna()].reset_index(drop=True)
        y = frame.pop(dataset.target).to_numpy(dtype=float)
    else:
        y = frame.pop(dataset.target).astype(str).to_numpy()
    nominal = [c for c in nominal if c in frame.columns]
    columns = {c: frame[c].astype(object).where(frame[c].notna(), np.nan) if c in nominal else frame[c].astype(float)
               for c in frame.columns}
    return Loaded(pd.DataFrame(columns), y, nominal, version)  # built at once: one block per dtype, not per column


def _sklearn(dataset):
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{dataset.ref}")(as_frame=True)
    frame = bunch.frame.copy()
    if dataset.suite != "regression" and "target_names" in bunch:
        frame["target"] = np.asarray(bunch.target_names)[bunch.target.to_numpy()]
    return frame, [], f"scikit-learn {importlib.metadata.version('scikit-learn')}"


def _penguins(dataset):
    import palmerpenguins

    frame = palmerpenguins.load_penguins()
    nominal = [c for c in frame.columns if frame[c].dtype == object or isinstance(frame[c].dtype, pd.StringDtype)]
    return frame, nominal, f"palmerpenguins {importlib.metadata.version('palmerpenguins')}"


def _weka_paths(ref: str) -> list[str]:
    stems = ["segment-challenge", "segment-test"] if ref == "segment" else [ref]  # UCI's 2310 rows, split in two
    paths = []
    for stem in stems:
        for path in (os.path.join(WEKA_EXAMPLES, f"{stem}.arff"), os.path.join(WEKA_EXAMPLES, f"{stem}.arff.gz")):
            if os.path.exists(path):
                paths.append(path)
                break
    return paths if len(paths) == len(stems) else []


def _debian_version(package: str) -> str:
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                              timeout=30)
        return done.stdout.strip() or "?"
    except OSError:
        return "?"


def _weka(dataset):
    import gzip
    import io

    from scipy.io import arff

    frames, nominal = [], []
    for path in _weka_paths(dataset.ref):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            data, meta = arff.loadarff(io.StringIO(f.read()))
        frame = pd.DataFrame(data)
        nominal = [n for n, kind in zip(meta.names(), meta.types()) if kind == "nominal"]
        for column in nominal:
            frame[column] = frame[column].str.decode("utf-8").replace("?", np.nan)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True), nominal, f"weka (Debian) {_debian_version('weka')}"


def _export_r(datasets: list[Dataset]) -> None:
    """Write every R set of ``datasets`` not yet under ``CACHE`` to CSV, in one ``Rscript``."""
    todo = [d for d in datasets if d.source in R_DEBIAN and not os.path.exists(os.path.join(CACHE, f"{d.ref}.csv"))]
    if not todo:
        return
    os.makedirs(CACHE, exist_ok=True)
    specs = [f"{d.source}:{d.ref}" for d in todo]
    done = subprocess.run(["Rscript", os.path.join(HERE, "peers", "export.R"), CACHE, *specs], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"Rscript export.R {' '.join(specs)}: {done.stderr.strip()[-500:]}")


def prepare(datasets: list[Dataset]) -> None:
    """Export the R sets among ``datasets`` that can be loaded here in one R process (else one per set)."""
    _export_r([d for d in datasets if d.source in R_DEBIAN and missing(d) is None])


def _r(dataset):
    _export_r([dataset])
    with open(os.path.join(CACHE, f"{dataset.ref}.columns.tsv")) as f:
        header, *columns = [line.rstrip("\n").split("\t") for line in f]
    kinds = dict(columns)
    nominal = [name for name, kind in columns if kind == "nominal"]
    frame = pd.read_csv(os.path.join(CACHE, f"{dataset.ref}.csv"), dtype={c: object for c in nominal},
                        keep_default_na=False, na_values=[""])
    assert list(frame.columns) == list(kinds), f"{dataset.ref}: columns differ from its .columns.tsv"
    return frame, nominal, f"{header[1]} {header[2]} (R, Debian {R_DEBIAN[dataset.source]})"
