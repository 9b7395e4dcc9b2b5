"""Prefect flow ``dasktree-nightly``: fit, then predict the day's new partition.

Serve it on a schedule with ``python prefect_dasktree.py`` (02:30 every night, parameters from
``DASKTREE_*`` variables), or run it once by calling :func:`nightly`. ``dasktree_etl.py`` and
deploy/ (``run_fit.sh``, ``run_predict.sh``, or ``DASKTREE_DEPLOY``) must be beside it and
``dasktree`` on PATH. A step fails the run on a non-zero exit of dasktree; only exit 75
(transient) is retried (``retry_condition_fn``); every step is bounded by the wrapper's timeout,
then by its ``timeout_seconds``, and the flow by its own.
"""

from __future__ import annotations

import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # dasktree_etl, beside this file

from prefect import flow, task  # noqa: E402

import dasktree_etl  # noqa: E402

TIMEOUT = int(os.environ.get("DASKTREE_TIMEOUT", 4 * 3600))
RETRIES = int(os.environ.get("DASKTREE_RETRIES", 3))
RETRY_DELAY = int(os.environ.get("DASKTREE_RETRY_DELAY", 15 * 60))


def only_transient(task, task_run, state) -> bool:
    """Retry a step only when it failed with dasktree's transient exit code (75)."""
    try:
        state.result()
    except dasktree_etl.TransientFailure:
        return True
    except Exception:  # noqa: BLE001 - any other failure is permanent
        return False
    return False


_step = dict(retries=RETRIES, retry_delay_seconds=RETRY_DELAY, retry_condition_fn=only_transient,
             timeout_seconds=dasktree_etl.step_timeout(TIMEOUT))


@task(name="fit", **_step)
def fit(run: dasktree_etl.Nightly) -> str:
    """Fit the data; the model and its JSON report go beside it, current.json points at it."""
    return run.fit()


@task(name="predict", **_step)
def predict(run: dasktree_etl.Nightly, model: str, day: str) -> str:
    """Predict the day's new partition with the model just made current."""
    print(f"predicting with {model}")
    return run.predict(day)


@flow(name="dasktree-nightly", timeout_seconds=2 * dasktree_etl.step_timeout(TIMEOUT) * (RETRIES + 1))
def nightly(data: str, target: str, new: str = "", model_dir: str = "", scheduler: str = "",
            fit_args: str = "--max-depth 12 --log-format json", predict_args: str = "", keep: int = 7,
            timeout: int = TIMEOUT, day: str = "", tls_dir: str = "") -> str:
    """Fit ``data`` and predict ``new`` (``{ds}`` in it: the run's date, or ``day``); a ``tls://``
    ``scheduler`` with the client's certificates in ``tls_dir`` (deploy/make-certs.sh's files)."""
    day = day or datetime.date.today().isoformat()
    run = dasktree_etl.Nightly(data=data, target=target, new=new.replace("{ds}", day), model_dir=model_dir or None,
                               scheduler=scheduler, fit_args=fit_args, predict_args=predict_args, keep=keep,
                               timeout=timeout, tls_dir=tls_dir)
    return predict(run, fit(run), day)


if __name__ == "__main__":
    nightly.serve(name="dasktree-nightly", cron="30 2 * * *", parameters={
        "data": os.environ.get("DASKTREE_DATA", "/srv/events"),
        "target": os.environ.get("DASKTREE_TARGET", "label"),
        "new": os.environ.get("DASKTREE_NEW", "/srv/incoming/date={ds}"),
        "model_dir": os.environ.get("DASKTREE_MODEL_DIR", ""),
        "scheduler": os.environ.get("DASKTREE_SCHEDULER", ""),
        "tls_dir": os.environ.get("DASKTREE_TLS_DIR", ""),
    })
