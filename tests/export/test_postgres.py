"""The postgres dialect of the SQL export in a real PostgreSQL server (a throwaway cluster on a
Unix socket, run as the ``postgres`` user): random trees and rows, and a fitted tree on rows at
every threshold, NaN, null and unseen categories, predict as dasktree does."""

import csv
import io
import math
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pyarrow as pa
import pytest

import dasktree
from dasktree.export.sql import quote_identifier
from dasktree.io.schema import NUMERIC, nominal_values, numeric_values
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import edge_rows, random_model, random_rows, reference

BIN = "/usr/lib/postgresql/15/bin"


def _server_missing() -> str | None:
    import pwd

    if not os.path.exists(os.path.join(BIN, "initdb")) or shutil.which("psql") is None:
        return "PostgreSQL 15 (initdb, pg_ctl, psql) is not installed"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "no postgres user to run the server as"
    if os.geteuid() != 0:
        return "starting a throwaway server as the postgres user needs root"
    return None


@pytest.fixture(scope="module")
def server():
    reason = _server_missing()
    if reason:
        pytest.skip(reason)
    root = tempfile.mkdtemp(prefix="dasktree-pg-")
    shutil.chown(root, "postgres")
    as_postgres = ["su", "postgres", "-s", "/bin/sh", "-c"]
    start = (f"{BIN}/initdb -D {root}/data -A trust -U postgres > /dev/null && "
             f"{BIN}/pg_ctl -D {root}/data -o \"-k {root} -c listen_addresses=''\" -l {root}/log -w start > /dev/null")
    subprocess.run([*as_postgres, start], check=True, timeout=120)
    try:
        yield root
    finally:
        subprocess.run([*as_postgres, f"{BIN}/pg_ctl -D {root}/data -m immediate stop"], capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _psql(server: str, sql: str) -> str:
    result = subprocess.run(["psql", "-h", server, "-U", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv"],
                            input=sql, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _score(server: str, model, table: pa.Table):
    names = [f.name for f in model.spec.features]
    types = ["DOUBLE PRECISION" if f.kind == NUMERIC else "TEXT" for f in model.spec.features]
    columns = []
    for f in model.spec.features:
        if f.kind == NUMERIC:
            values = numeric_values(table.column(f.name), f.name)  # missing: NULL and NaN, one row in two
            columns.append([(None if i % 2 else "NaN") if math.isnan(v) else repr(float(v)) for i, v in enumerate(values)])
        else:
            columns.append(nominal_values(table.column(f.name)).to_pylist())
    data = io.StringIO()
    writer = csv.writer(data, lineterminator="\n")
    for row in zip(*columns):
        writer.writerow([r"\N" if v is None else v for v in row])
    create = f"CREATE TEMP TABLE held_out ({', '.join(f'{quote_identifier(n)} {t}' for n, t in zip(names, types))});\n"
    copy = f"COPY held_out FROM STDIN WITH (FORMAT csv, NULL '\\N');\n{data.getvalue()}\\.\n"
    query = model.export("sql", dialect="postgres", table="held_out", keep=()).rstrip() + ";\n"
    out = _psql(server, create + copy + query)
    rows = list(csv.reader(io.StringIO(out)))[1:]
    labels = [r[0] for r in rows]
    proba = np.asarray([[float(v) for v in r[1:]] for r in rows], dtype=np.float64).reshape(len(rows), len(model.classes))
    return labels, proba


def test_random_trees_in_postgres(server):
    for seed in range(25):
        model = random_model(seed)
        table = random_rows(model, 60, seed + 1)
        labels, proba = _score(server, model, table)
        want_labels, want_proba = reference(model, table)
        assert labels == want_labels, seed
        np.testing.assert_array_equal(proba, want_proba)


def test_a_fitted_tree_in_postgres(server):
    model = dasktree.fit(mixed_frame(3000), target="label", scheduler="inprocess", max_depth=6,
                         nominal_split="multiway", max_arity=3)
    table = edge_rows(model, mixed_frame(1000, seed=1).drop(columns=["label"]))
    labels, proba = _score(server, model, table)
    want_labels, want_proba = reference(model, table)
    assert labels == want_labels
    np.testing.assert_array_equal(proba, want_proba)
