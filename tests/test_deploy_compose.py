"""deploy/compose.yaml and compose.s3.yaml: the services' own commands, run on 127.0.0.1.

No container engine runs here, so the image is not built (test_deploy_image.py checks the
Dockerfile); the scheduler, the two workers, the fit and the predict run as the compose file
writes them, with host names, ports and mounts mapped to this host (tests/deploy_commands.py).
The S3 variant reads the data over the S3 protocol from moto's server where MinIO would be.
"""

import json
import os
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest

from dasktree.datasets import agrawal
from dasktree.testing.s3 import s3_server
from deploy_commands import (
    DEPLOY,
    Processes,
    compose_services,
    free_port,
    localize,
    wait_for_http,
    wait_for_workers,
    worker_environ,
)
from tls_certs import client_security, have_openssl, make_certs, tls_args

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(shutil.which("dask") is None or shutil.which("dasktree") is None
                                 or not have_openssl(),
                                 reason="needs the installed dask and dasktree commands and openssl")]
ENV = {"TARGET": "class", "DASKTREE_FIT_ARGS": "--max-depth 4 --log-format json"}
DASKTREE_SERVICES = ["scheduler", "worker-1", "worker-2", "fit", "predict"]


def test_compose_services_and_mounts():
    services = compose_services("compose.yaml")
    assert sorted(services) == sorted(DASKTREE_SERVICES)
    for name in DASKTREE_SERVICES:
        service = services[name]
        assert service["image"] == "dasktree:latest"
        assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        assert os.path.isfile(os.path.join(DEPLOY, "..", service["build"]["dockerfile"]))
        assert [v.split(":")[1] for v in service["volumes"]] == ["/data", "/new", "/models", "/certs"]
    assert services["scheduler"]["command"][:4] == ["dask", "scheduler", "--protocol", "tls"]
    assert services["scheduler"]["ports"] == ["127.0.0.1:8787:8787"]  # the dashboard for this host only
    for worker in ("worker-1", "worker-2"):
        command = services[worker]["command"]
        assert command[:3] == ["dask", "worker", "tls://scheduler:8786"] and "/certs/worker.pem" in command
    assert services["fit"]["restart"] == "no" and services["fit"]["command"][-1] == "tls://scheduler:8786"
    for job in ("fit", "predict"):
        assert services[job]["environment"]["DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT"] == "/certs/client.pem"
    assert services["fit"]["depends_on"]["scheduler"]["condition"] == "service_healthy"
    assert services["predict"]["profiles"] == ["predict"]
    assert services["predict"]["depends_on"]["fit"]["condition"] == "service_completed_successfully"
    s3 = compose_services("compose.yaml", "compose.s3.yaml")
    assert sorted(s3) == sorted([*DASKTREE_SERVICES, "minio", "minio-init"])
    assert s3["fit"]["command"][1].startswith("s3://")
    for name in DASKTREE_SERVICES:  # every process that reads the data gets the store's endpoint
        assert s3[name]["environment"]["AWS_ENDPOINT_URL_S3"] == "http://minio:9000"
    assert s3["fit"]["environment"]["DASK_DISTRIBUTED__COMM__TLS__CA_FILE"] == "/certs/ca.pem"
    assert all(p.startswith("127.0.0.1:") for s in s3.values() for p in s.get("ports", []))
    assert s3["fit"]["environment"]["DASKTREE_KEEP"] == "7"  # the base file's environment is kept


@pytest.fixture(scope="module")
def s3_endpoint():
    pytest.importorskip("moto.server")
    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, s3_endpoint):
    """The scheduler and the two workers of compose.s3.yaml (compose.yaml's commands, with the S3
    variables), on free ports of 127.0.0.1; the image's Dask configuration (deploy/dask.yaml)."""
    root = tmp_path_factory.mktemp("compose")
    for name in ("data", "new", "models", "dask-worker", "etc-dask", "logs"):
        (root / name).mkdir()
    agrawal.write_parquet(str(root / "data"), 5000, n_files=2, seed=0, overwrite=True)
    agrawal.write_parquet(str(root / "new"), 800, n_files=1, seed=3, overwrite=True)
    shutil.copy(os.path.join(DEPLOY, "dask.yaml"), root / "etc-dask" / "dasktree.yaml")  # the image's /etc/dask
    certs = make_certs(root / "certs", "scheduler")  # as compose.yaml's comment says
    port, dashboard = free_port(), free_port()
    mapping = {"tls://scheduler:8786": f"tls://127.0.0.1:{port}", "/certs": str(root / "certs"), "http://minio:9000": s3_endpoint,
               "0.0.0.0": "127.0.0.1", "8786": str(port), ":8787": f":{dashboard}",
               "http://localhost:8787": f"http://127.0.0.1:{dashboard}",
               "/data": str(root / "data"), "/new": str(root / "new"), "/models": str(root / "models"),
               "/tmp/dask-worker": str(root / "dask-worker"), "/opt/dasktree/deploy": DEPLOY}
    services = compose_services("compose.yaml", "compose.s3.yaml", env=ENV)
    processes = Processes(str(root / "logs"))

    def env_of(name: str) -> dict[str, str]:
        own = {k: localize([v], mapping)[0] for k, v in services[name].get("environment", {}).items()}
        # a container starts from the image's environment; this process's may carry what an
        # in-process nanny of another test put there (MALLOC_TRIM_THRESHOLD_)
        inherited = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
        return {**inherited, "DASK_CONFIG": str(root / "etc-dask"), **own}

    try:
        processes.start("scheduler", localize(services["scheduler"]["command"], mapping), env_of("scheduler"))
        health = localize(services["scheduler"]["healthcheck"]["test"][1:], mapping)
        wait_for_http(f"http://127.0.0.1:{dashboard}/health")
        assert subprocess.run(health, timeout=30).returncode == 0  # the compose healthcheck, as written
        for worker in ("worker-1", "worker-2"):
            processes.start(worker, localize(services[worker]["command"], mapping), env_of(worker))
        wait_for_workers(f"tls://127.0.0.1:{port}", 2, processes, security=client_security(certs))
        yield dict(root=root, mapping=mapping, services=services, env_of=env_of, processes=processes,
                   address=f"tls://127.0.0.1:{port}", dashboard=dashboard, certs=certs)
    finally:
        processes.stop()


def _job(cluster, services, name):
    argv = localize(services[name]["command"], cluster["mapping"])
    return subprocess.run(argv, env=cluster["env_of"](name), capture_output=True, text=True, timeout=600)


def test_workers_start_from_the_image_config(cluster):
    # deploy/dask.yaml: the nanny starts the workers without MALLOC_TRIM_THRESHOLD_
    security = client_security(cluster["certs"])
    assert worker_environ(cluster["address"], "MALLOC_TRIM_THRESHOLD_", security=security) == [None, None]


def test_compose_fit_and_predict_on_the_cluster(cluster):
    services = compose_services("compose.yaml", env=ENV)
    fit = _job(cluster, services, "fit")
    assert fit.returncode == 0, fit.stderr
    models = cluster["root"] / "models"
    current = os.readlink(models / "current.json")
    report = json.loads((models / current.replace("model-", "report-")).read_text())
    assert report["run"]["workers"] == 2 and report["report"]["rows"] == 5000
    assert report["report"]["depth"] <= 4
    logs = [json.loads(line) for line in fit.stderr.splitlines() if line.startswith("{")]
    [announce] = [r for r in logs if r["event"] == "cluster"]
    assert announce == {"event": "cluster", "scheduler": cluster["address"], "started": False,
                        "dashboard": f"http://127.0.0.1:{cluster['dashboard']}/status"}
    assert len([r for r in logs if r["event"] == "pass"]) == report["report"]["passes"]
    predict = _job(cluster, services, "predict")
    assert predict.returncode == 0, predict.stderr
    predictions = pq.read_table(models / "predictions")
    assert len(predictions) == 800 and "prediction" in predictions.column_names


def test_compose_s3_fit_reads_the_object_store(cluster, s3_endpoint):
    boto3 = pytest.importorskip("boto3")
    services = cluster["services"]  # compose.yaml with compose.s3.yaml
    env = cluster["env_of"]("fit")
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"], region_name=env["AWS_DEFAULT_REGION"])
    s3.create_bucket(Bucket="dasktree")  # what minio-init does with mc
    data = cluster["root"] / "data"
    for name in sorted(os.listdir(data)):
        s3.upload_file(str(data / name), "dasktree", f"data/{name}")
    models = cluster["root"] / "models"
    fit = _job(cluster, services, "fit")
    assert fit.returncode == 0, fit.stderr
    current = models / os.readlink(models / "current.json")
    report = json.loads((models / current.name.replace("model-", "report-")).read_text())
    assert report["run"]["workers"] == 2 and report["report"]["rows"] == 5000
    # the same rows from a directory: the same model, byte for byte
    local = cluster["root"] / "local.json"
    direct = subprocess.run(["dasktree", "fit", str(data), "--target", "class", "--out", str(local),
                             *ENV["DASKTREE_FIT_ARGS"].split(), "--scheduler", cluster["address"], "--quiet",
                             *tls_args(cluster["certs"])],
                            capture_output=True, text=True, timeout=600)
    assert direct.returncode == 0, direct.stderr
    assert current.read_bytes() == local.read_bytes()
