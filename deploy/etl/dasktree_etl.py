"""The steps a scheduled ETL run makes, for any orchestrator: fit nightly, predict a new partition.

Each step runs a wrapper of deploy/ (``run_fit.sh``, ``run_predict.sh``) and turns its exit code
into what an orchestrator needs: :class:`TransientFailure` for 75 (the scheduler unreachable, the
cluster lost, the run timed out: worth retrying) and :class:`PermanentFailure` for anything else
that is not 0 (1 bad data, 2 bad usage, 3 a bug: a retry would fail the same way). Every step is
bounded three times over: dasktree's wrapper kills the run after ``timeout`` seconds (and exits
75), this module kills the wrapper's whole process group ``GRACE`` seconds later should the
wrapper itself hang, and the orchestrator's own timeout (``step_timeout``) comes after both.

Models and reports go *next to the data*: ``models/`` beside the dataset directory (a sibling,
so the dataset's readers never see them), the day's predictions under ``models/predictions/``.
This module imports no orchestrator: ``airflow_dasktree.py`` and ``prefect_dasktree.py`` use it.
"""

from __future__ import annotations

import os
import posixpath
import signal
import subprocess
from dataclasses import dataclass

__all__ = ["TRANSIENT", "GRACE", "Failure", "TransientFailure", "PermanentFailure", "Nightly", "step_timeout"]

TRANSIENT = 75  # dasktree's exit code for a failure a retry may fix (sysexits' EX_TEMPFAIL)
GRACE = 120  # seconds past the wrapper's own timeout (and its KILL a minute later) before it is killed here
DEPLOY = os.environ.get("DASKTREE_DEPLOY") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Failure(RuntimeError):
    """A step exited non-zero: ``code`` and the last lines of its stderr."""

    def __init__(self, step: str, code: int, stderr: str):
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        super().__init__(f"dasktree {step} exited with code {code}: {tail}")
        self.step, self.code, self.stderr = step, code, stderr


class TransientFailure(Failure):
    """Exit code 75: retry later."""


class PermanentFailure(Failure):
    """Exit code 1, 2, 3 (or any other): do not retry."""


def step_timeout(timeout: int) -> int:
    """The orchestrator's bound of a step whose run is bounded by ``timeout`` seconds."""
    return timeout + GRACE + 60


def run_step(step: str, argv: list[str], env: dict[str, str], timeout: int) -> str:
    """Run ``argv`` (a wrapper) with ``env``, in its own process group; return its stdout.

    Raises :class:`TransientFailure` on exit 75 or when it outlives ``timeout + GRACE`` (its
    whole process group is killed), :class:`PermanentFailure` on any other non-zero exit.
    """
    proc = subprocess.Popen(argv, env={**os.environ, **env, "DASKTREE_TIMEOUT": str(timeout)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=os.setpgrp)
    try:
        out, err = proc.communicate(timeout=timeout + GRACE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise TransientFailure(step, TRANSIENT, f"{err}\nkilled after {timeout + GRACE}s") from None
    except BaseException:  # the orchestrator's own timeout or a cancelled run: leave nothing running
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if err:
        print(err, end="", flush=True)  # the wrapper's and dasktree's log lines, into the task's log
    if proc.returncode == TRANSIENT:
        raise TransientFailure(step, proc.returncode, err)
    if proc.returncode != 0:
        raise PermanentFailure(step, proc.returncode, err)
    return out


@dataclass(frozen=True)
class Nightly:
    """One nightly run: fit ``data`` and make the model current, then predict ``new``.

    ``model_dir`` defaults to ``models/`` beside the dataset directory; ``scheduler`` is a Dask
    scheduler address (default: a local cluster per step); ``fit_args`` / ``predict_args`` are
    more `dasktree fit` / `dasktree predict` options; ``keep`` models are kept; each step may run
    ``timeout`` seconds. A scheduler on the network speaks TLS (``tls://host:8786``): ``tls_dir``
    holds the client's certificate as deploy/make-certs.sh writes it (``ca.pem``, ``client.pem``,
    ``client-key.pem``), given to dasktree as dask's ``DASK_DISTRIBUTED__COMM__TLS__*`` variables.
    """

    data: str
    target: str
    new: str | None = None
    model_dir: str | None = None
    scheduler: str = ""
    fit_args: str = ""
    predict_args: str = ""
    keep: int = 7
    timeout: int = 4 * 3600
    tls_dir: str = ""

    def _tls(self) -> dict[str, str]:
        if not self.tls_dir:
            return {}
        return {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": os.path.join(self.tls_dir, "ca.pem"),
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": os.path.join(self.tls_dir, "client.pem"),
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": os.path.join(self.tls_dir, "client-key.pem")}

    @property
    def models(self) -> str:
        return self.model_dir or posixpath.join(posixpath.dirname(self.data.rstrip("/")), "models")

    def predictions(self, day: str) -> str:
        return posixpath.join(self.models, "predictions", f"date={day}")

    def fit(self) -> str:
        """Fit and make the model current; returns the model file's path."""
        env = {"DASKTREE_KEEP": str(self.keep), "DASKTREE_FIT_ARGS": self.fit_args, **self._tls()}
        run_step("fit", [os.path.join(DEPLOY, "run_fit.sh"), self.data, self.target, self.models, self.scheduler],
                 env, self.timeout)
        return os.path.realpath(os.path.join(self.models, "current.json"))

    def predict(self, day: str) -> str:
        """Predict the new partition with the current model; returns the output directory."""
        if not self.new:
            raise PermanentFailure("predict", 2, "no new partition to predict (new=)")
        out = self.predictions(day)
        run_step("predict", [os.path.join(DEPLOY, "run_predict.sh"), self.models, self.new, out, self.scheduler],
                 {"DASKTREE_PREDICT_ARGS": self.predict_args, **self._tls()}, self.timeout)
        return out
