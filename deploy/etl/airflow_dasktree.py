"""Airflow DAG ``dasktree_nightly``: fit at 02:30, then predict the day's new partition.

Put this file and ``dasktree_etl.py`` in the DAGs folder, with deploy/ (``run_fit.sh``,
``run_predict.sh``) beside it or named by ``DASKTREE_DEPLOY`` (the image has it at
/opt/dasktree/deploy), and ``dasktree`` on the workers' PATH. The run is configured by the DAG's
params (defaults from ``DASKTREE_*`` variables; a manual run may override them):

- ``data``, ``target``: the training dataset and its class column;
- ``new``: the new partition to predict, with ``{ds}`` for the run's date;
- ``model_dir``: models and reports (default ``models/`` beside the data), predictions under
  ``predictions/date={ds}`` there;
- ``scheduler``: a Dask scheduler address (default: a local cluster per task, on loopback), on the
  network a TLS one (``tls://host:8786``) with ``tls_dir``: the client's certificates
  (deploy/make-certs.sh's ``ca.pem``, ``client.pem``, ``client-key.pem``);
- ``fit_args``, ``predict_args``, ``keep``, ``timeout`` (seconds per task).

A task fails on a non-zero exit of dasktree; only exit 75 (transient) is retried
(``AirflowFailException`` ends the others at once). Every task is bounded by the wrapper's timeout,
then by its ``execution_timeout``; the whole run by ``dagrun_timeout``.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # dasktree_etl, beside this file

try:  # Airflow 3
    from airflow.sdk import DAG, task
    from airflow.sdk.exceptions import AirflowFailException
except ImportError:  # Airflow 2
    from airflow import DAG
    from airflow.decorators import task
    from airflow.exceptions import AirflowFailException

import dasktree_etl  # noqa: E402

TIMEOUT = int(os.environ.get("DASKTREE_TIMEOUT", 4 * 3600))
RETRIES = int(os.environ.get("DASKTREE_RETRIES", 3))
RETRY_DELAY = timedelta(seconds=int(os.environ.get("DASKTREE_RETRY_DELAY", 15 * 60)))
PARAMS = {
    "data": os.environ.get("DASKTREE_DATA", "/srv/events"),
    "target": os.environ.get("DASKTREE_TARGET", "label"),
    "new": os.environ.get("DASKTREE_NEW", "/srv/incoming/date={ds}"),
    "model_dir": os.environ.get("DASKTREE_MODEL_DIR", ""),
    "scheduler": os.environ.get("DASKTREE_SCHEDULER", ""),
    "tls_dir": os.environ.get("DASKTREE_TLS_DIR", ""),
    "fit_args": os.environ.get("DASKTREE_FIT_ARGS", "--max-depth 12 --log-format json"),
    "predict_args": os.environ.get("DASKTREE_PREDICT_ARGS", ""),
    "keep": int(os.environ.get("DASKTREE_KEEP", 7)),
    "timeout": TIMEOUT,
}


def _nightly(params: dict, ds: str) -> dasktree_etl.Nightly:
    return dasktree_etl.Nightly(
        data=params["data"], target=params["target"], new=params["new"].replace("{ds}", ds),
        model_dir=params["model_dir"] or None, scheduler=params["scheduler"], fit_args=params["fit_args"],
        predict_args=params["predict_args"], keep=int(params["keep"]), timeout=int(params["timeout"]),
        tls_dir=params.get("tls_dir", ""))


def _only_transient_retried(step):
    try:
        return step()
    except dasktree_etl.PermanentFailure as exc:
        raise AirflowFailException(str(exc)) from None  # no retry: the same data fails the same way
    # a TransientFailure propagates: Airflow retries the task


with DAG(
    dag_id="dasktree_nightly",
    description="dasktree: fit a decision tree nightly, predict the new partition",
    schedule="30 2 * * *",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(seconds=2 * dasktree_etl.step_timeout(TIMEOUT) * (RETRIES + 1)),
    params=PARAMS,
    default_args={"retries": RETRIES, "retry_delay": RETRY_DELAY,
                  "execution_timeout": timedelta(seconds=dasktree_etl.step_timeout(TIMEOUT))},
    tags=["dasktree"],
) as dag:

    @task
    def fit(params=None, ds=None) -> str:
        """Fit the data; the model and its JSON report go beside it, current.json points at it."""
        return _only_transient_retried(_nightly(params, ds).fit)

    @task
    def predict(model: str, params=None, ds=None) -> str:
        """Predict the day's new partition with the model just made current."""
        print(f"predicting with {model}")
        return _only_transient_retried(lambda: _nightly(params, ds).predict(ds))

    predict(fit())
