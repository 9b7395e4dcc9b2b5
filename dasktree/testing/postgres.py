"""A throwaway PostgreSQL 15 server for the SQL export's tests (a cluster on a Unix socket, run as the
``postgres`` user), and the postgres dialect's export scored in it: :func:`score_postgres` returns
``(labels, proba)`` as :mod:`dasktree.testing.exports`'s scorers do (a regression model's: its values,
no probability columns)."""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import shutil
import subprocess
import tempfile
from typing import Iterator

import numpy as np
import pyarrow as pa

from ..export.sql import quote_identifier
from ..io.schema import NUMERIC, nominal_values, numeric_values

__all__ = ["BIN", "postgres_missing", "postgres_server", "psql", "score_postgres"]

BIN = "/usr/lib/postgresql/15/bin"


def postgres_missing() -> str | None:
    """Why a throwaway server cannot start here, or None."""
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


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A server listening on a Unix socket in a new directory (yielded), stopped and removed after."""
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


def psql(server: str, sql: str) -> str:
    """``sql`` run by psql on ``server``; its CSV output (an error raises with psql's message)."""
    result = subprocess.run(["psql", "-h", server, "-U", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv"],
                            input=sql, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(result.stderr[-2000:])
    return result.stdout


def score_postgres(server: str, model, table: pa.Table) -> tuple[list, np.ndarray]:
    """The rows in a temporary table (numeric columns DOUBLE PRECISION, missing as NULL and NaN one row
    in two; nominal TEXT), scored by the postgres dialect's SELECT."""
    names = [f.name for f in model.spec.features]
    types = ["DOUBLE PRECISION" if f.kind == NUMERIC else "TEXT" for f in model.spec.features]
    columns = []
    for f in model.spec.features:
        if f.kind == NUMERIC:
            values = numeric_values(table.column(f.name), f.name)
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
    rows = list(csv.reader(io.StringIO(psql(server, create + copy + query))))[1:]
    if not model.task.predicts_classes:  # PostgreSQL 12+ prints a double's shortest round-trip digits
        return [float(r[0]) for r in rows], np.zeros((len(rows), 0))
    labels = [r[0] for r in rows]
    proba = np.asarray([[float(v) for v in r[1:]] for r in rows], dtype=np.float64).reshape(len(rows), len(model.classes))
    return labels, proba
