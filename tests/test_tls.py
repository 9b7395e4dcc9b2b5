"""TLS with client certificates on a real ``dask scheduler`` and ``dask worker`` on 127.0.0.1.

The certificates are made here by deploy/make-certs.sh. Fit, predict, evaluate and discretize run
over TLS from the command line (``--tls-*``, or dask's own settings in the environment) and from
Python (``security=``); every wrong setting exits 2 with one line that says what to fix
(:mod:`dasktree.engine.tls`), never 3 (a bug) nor 75 (a retry cannot help).
"""

import json
import os
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from dasktree.cli import main
from dasktree.datasets import agrawal
from dasktree.testing.processes import run_command
from deploy_commands import DEPLOY, Processes, free_port, wait_for_workers
from tls_certs import client_security, expired_client_cert, have_openssl, make_certs, tls_args, tls_environ

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(shutil.which("dask") is None or not have_openssl(),
                                 reason="needs the dask command and openssl")]


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("tls")
    certs = make_certs(root / "certs")
    other = make_certs(root / "other")  # a second cluster's CA: trusted by no one here
    agrawal.write_parquet(str(root / "data"), 4000, n_files=2, seed=0, overwrite=True)
    (root / "logs").mkdir()
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    processes = Processes(str(root / "logs"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    try:
        processes.start("scheduler", ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol",
                                      "tls", "--dashboard-address", "127.0.0.1:0", *tls_args(certs, "scheduler")], env)
        processes.start("worker", ["dask", "worker", address, "--nworkers", "1", "--nthreads", "2", "--host",
                                   "127.0.0.1", *tls_args(certs, "worker")], env)
        wait_for_workers(address, 1, processes, security=client_security(certs))
        yield dict(root=root, certs=certs, other=other, address=address, data=str(root / "data"), env=env)
    finally:
        processes.stop()


def _cli(cluster, *argv, env=None):
    return subprocess.run([sys.executable, "-m", "dasktree.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=300, env={**cluster["env"], **(env or {})})


def test_the_cli_fits_predicts_evaluates_and_discretizes_over_tls(tls_cluster, tmp_path):
    """The options on the command line (the command's main in this process: :func:`run_command`), and
    dask's own settings in a job's environment (a process of its own: dask reads them at import)."""
    c = tls_cluster
    flags = ["--scheduler", c["address"], *tls_args(c["certs"])]
    fit = run_command("fit", c["data"], "--target", "class", "--out", tmp_path / "m.json", "--max-depth", 3, "--json",
                      "--quiet", *flags)
    assert fit.returncode == 0, fit.stderr
    assert json.loads(fit.stdout)["run"]["workers"] == 1
    # dask's own settings in the environment instead of the options
    predict = _cli(c, "predict", tmp_path / "m.json", c["data"], "--out", tmp_path / "pred", "--quiet",
                   "--scheduler", c["address"], env=tls_environ(c["certs"]))
    assert predict.returncode == 0, predict.stderr
    assert len(pq.read_table(tmp_path / "pred")) == 4000
    evaluate = run_command("evaluate", tmp_path / "m.json", c["data"], "--json", "--quiet", *flags)
    assert evaluate.returncode == 0, evaluate.stderr
    assert json.loads(evaluate.stdout)["metrics"]["rows"] == 4000
    discretize = run_command("discretize", c["data"], "--target", "class", "--out", tmp_path / "disc", "--quiet", *flags)
    assert discretize.returncode == 0, discretize.stderr
    assert len(pq.read_table(tmp_path / "disc")) == 4000
    # the same model as on a cluster of this machine's own
    local = run_command("fit", c["data"], "--target", "class", "--out", tmp_path / "local.json", "--max-depth", 3,
                        "--quiet", "--scheduler", "threads")
    assert local.returncode == 0, local.stderr
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def test_python_security_on_fit_the_estimator_and_the_discretizer(tls_cluster, tmp_path):
    from dasktree import DaskTreeClassifier, Discretizer, fit

    c = tls_cluster
    by_dir = fit(c["data"], target="class", max_depth=3, scheduler=c["address"],
                 security=os.path.dirname(c["certs"]["ca"]))
    clf = DaskTreeClassifier(max_depth=3, scheduler=c["address"], security=client_security(c["certs"]))
    clf.fit(c["data"], target="class")
    assert clf.model_.dumps() == by_dir.dumps()
    files = clf.predict(c["data"], out=str(tmp_path / "pred"))
    assert files and len(pq.read_table(tmp_path / "pred")) == 4000
    paths = {"ca_file": c["certs"]["ca"], "cert": c["certs"]["client"], "key": c["certs"]["client-key"]}
    disc = Discretizer(scheduler=c["address"], security=paths).fit(c["data"], target="class")
    assert disc.cut_points_


def _bad(cluster, tmp_path, capsys, argv, env=None):
    """Run the CLI in this process; its exit code and its stderr's lines."""
    out = tmp_path / "m.json"
    code = main(["fit", cluster["data"], "--target", "class", "--out", str(out), "--max-depth", "2", "--quiet",
                 *map(str, argv)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert not out.exists()
    return code, lines


def _bad_cases(c, tmp_path):
    certs, other, address = c["certs"], c["other"], c["address"]
    tcp = address.replace("tls://", "tcp://")
    expired, expired_key = expired_client_cert(certs, tmp_path)
    return {
        "tls without certificates": ([], "speaks TLS: give the client's certificates"),
        "tcp to a TLS scheduler": (["--scheduler", tcp], "speaks TLS: use tls://"),
        "certificates with tcp": (["--scheduler", tcp, *tls_args(certs)], "use tls://"),
        "no scheduler address": (["--scheduler", "threads", *tls_args(certs)], "are for a scheduler at tls://"),
        "a key missing": (["--tls-ca-file", certs["ca"], "--tls-cert", certs["client"], "--tls-key",
                           tmp_path / "nope.pem"], "No such file"),
        "a key not the certificate's": (["--tls-ca-file", certs["ca"], "--tls-cert", certs["client"], "--tls-key",
                                         certs["worker-key"]], "cannot be loaded"),
        "a CA file not a certificate": (["--tls-ca-file", certs["client-key"], "--tls-cert", certs["client"],
                                         "--tls-key", certs["client-key"]], "not a PEM certificate"),
        "no client certificate": (["--tls-ca-file", certs["ca"]], "no client certificate"),
        "an expired client certificate": (["--tls-ca-file", certs["ca"], "--tls-cert", expired, "--tls-key",
                                           expired_key], "expired on"),
        "a client certificate of another CA": (["--tls-ca-file", certs["ca"], "--tls-cert", other["client"],
                                                "--tls-key", other["client-key"]], "refused this client's certificate"),
        "a scheduler this CA did not sign": (tls_args(other), "does not trust"),
    }


def test_every_wrong_tls_setting_exits_2_with_one_line(tls_cluster, tmp_path, capsys):
    c = tls_cluster
    for name, (argv, phrase) in _bad_cases(c, tmp_path).items():
        scheduler = [] if "--scheduler" in map(str, argv) else ["--scheduler", c["address"]]
        code, lines = _bad(c, tmp_path, capsys, [*scheduler, *argv])
        assert (code, len(lines)) == (2, 1), (name, code, lines)
        assert lines[0].startswith("dasktree: error: ") and phrase in lines[0], (name, lines)
    # the scheduler serves a good client after the refused ones
    ok = _cli(c, "fit", c["data"], "--target", "class", "--out", tmp_path / "ok.json", "--quiet", "--max-depth", 1,
              "--scheduler", c["address"], *tls_args(c["certs"]))
    assert ok.returncode == 0, ok.stderr


def _unit_environment(name: str) -> dict[str, str]:
    """The ``Environment=`` assignments of a deploy/systemd unit, as systemd splits them."""
    import shlex

    env = {}
    with open(os.path.join(DEPLOY, "systemd", name)) as f:
        for line in f:
            if line.startswith("Environment="):
                for item in shlex.split(line.split("=", 1)[1]):
                    key, _, value = item.partition("=")
                    env[key] = value
    return env


def test_the_systemd_units_client_settings_reach_the_tls_scheduler(tls_cluster, tmp_path):
    c = tls_cluster
    unit = _unit_environment("dasktree-fit.service")
    assert unit["SCHEDULER"].startswith("tls://")
    certs_dir = os.path.dirname(c["certs"]["ca"])
    tls = {k: v.replace("/etc/dasktree/tls", certs_dir) for k, v in unit.items() if k.startswith("DASK_DISTRIBUTED")}
    assert sorted(tls.values()) == sorted([c["certs"]["ca"], c["certs"]["client"], c["certs"]["client-key"]])
    env = {**c["env"], **tls, "DASKTREE_FIT_ARGS": "--max-depth 2"}
    result = subprocess.run(["bash", os.path.join(DEPLOY, "run_fit.sh"), c["data"], "class", str(tmp_path / "models"),
                             c["address"]], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "models" / "current.json").exists()


def test_the_etl_steps_reach_the_tls_scheduler_with_their_certificates(tls_cluster, tmp_path):
    sys.path.insert(0, os.path.join(DEPLOY, "etl"))
    try:
        import dasktree_etl
    finally:
        sys.path.pop(0)
    c = tls_cluster
    common = dict(data=c["data"], target="class", scheduler=c["address"], fit_args="--max-depth 2", timeout=300)
    with pytest.raises(dasktree_etl.PermanentFailure) as failed:  # no certificates: bad usage, not retried
        dasktree_etl.Nightly(**common, model_dir=str(tmp_path / "none")).fit()
    assert failed.value.code == 2 and "speaks TLS" in failed.value.stderr
    model = dasktree_etl.Nightly(**common, model_dir=str(tmp_path / "models"),
                                 tls_dir=os.path.dirname(c["certs"]["ca"])).fit()
    assert os.path.isfile(model)
