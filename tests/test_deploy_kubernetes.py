"""deploy/kubernetes/: the manifests against the Kubernetes and Dask operator schemas, and the
commands of their containers run on 127.0.0.1 as the operator would start them.

Core types (and every pod spec inside the Dask resources, as a Pod) are validated with
kubernetes-validate, strictly (unknown fields fail), when it is installed. The DaskCluster and
DaskJob are validated against the openAPIV3Schema of the operator's CustomResourceDefinitions,
with unknown fields failing as under kubectl's strict field validation: the installed
dask-kubernetes' CRDs, else the copy in tests/data (dask-kubernetes 2026.3.0).
"""

import copy
import gzip
import importlib.util
import json
import os
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest
import yaml

from dasktree.datasets import agrawal
from deploy_commands import DEPLOY, Processes, expand_kubernetes, free_port, localize, wait_for_workers
from tls_certs import client_security, have_openssl, make_certs

KUBE = os.path.join(DEPLOY, "kubernetes")
CRDS = os.path.join(os.path.dirname(__file__), "data", "dask-operator-crds.yaml.gz")


def _documents(name: str) -> list[dict]:
    with open(os.path.join(KUBE, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def _crds() -> dict[str, dict]:
    """The operator's CRDs by kind: from the installed dask_kubernetes when there is one."""
    spec = importlib.util.find_spec("dask_kubernetes")
    texts = []
    if spec is not None and spec.submodule_search_locations:
        crd_dir = os.path.join(spec.submodule_search_locations[0], "operator", "deployment", "helm",
                               "dask-kubernetes-operator", "crds")
        texts = [open(os.path.join(crd_dir, n)).read() for n in ("daskcluster.yaml", "daskjob.yaml")]
    if not texts:
        with gzip.open(CRDS, "rt") as f:
            texts = [f.read()]
    crds = [d for text in texts for d in yaml.safe_load_all(text) if d]
    return {crd["spec"]["names"]["kind"]: crd for crd in crds}


def _strict(schema):
    """Unknown fields fail where the schema lists an object's fields (as kubectl --validate=strict)."""
    if isinstance(schema, dict):
        schema = {k: _strict(v) for k, v in schema.items()}
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _crd_errors(resource: dict, crds: dict[str, dict]) -> list[str]:
    import jsonschema

    crd = crds[resource["kind"]]
    group, version = resource["apiVersion"].split("/")
    assert group == crd["spec"]["group"]
    [served] = [v for v in crd["spec"]["versions"] if v["name"] == version and v["served"]]
    schema = _strict(served["schema"]["openAPIV3Schema"])
    body = {k: v for k, v in resource.items() if k not in ("apiVersion", "kind", "metadata")}
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in jsonschema.Draft7Validator(schema).iter_errors(body)]


def _dask_resources() -> list[dict]:
    return _documents("daskcluster.yaml") + _documents("daskjob.yaml")


def test_dask_resources_match_the_operator_crds():
    crds = _crds()
    resources = _dask_resources()
    assert sorted(r["kind"] for r in resources) == ["DaskCluster", "DaskJob"]
    for resource in resources:
        assert _crd_errors(resource, crds) == [], resource["kind"]
        assert resource["metadata"]["name"]
    # the schemas do catch a misspelt field and a wrong type
    broken = copy.deepcopy(resources[0])
    broken["spec"]["worker"]["replica"] = broken["spec"]["worker"].pop("replicas")
    broken["spec"]["scheduler"]["service"]["ports"][0]["port"] = "eight"
    errors = _crd_errors(broken, crds)
    assert any("replica" in e for e in errors) and any("eight" in e for e in errors)


def _pod_specs(resource: dict) -> list[tuple[str, dict]]:
    spec = resource["spec"]
    cluster = spec["cluster"]["spec"] if resource["kind"] == "DaskJob" else spec
    pods = [("worker", cluster["worker"]["spec"]), ("scheduler", cluster["scheduler"]["spec"])]
    if resource["kind"] == "DaskJob":
        pods.append(("job", spec["job"]["spec"]))
    return pods


def test_core_types_and_pod_specs_validate_against_kubernetes():
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed")
    from kubernetes_validate.utils import latest_version

    version = latest_version()
    manifests = _documents("storage.yaml")
    for resource in _dask_resources():
        name = resource["metadata"]["name"]
        manifests += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-{role}"}, "spec": pod}
                      for role, pod in _pod_specs(resource)]
        cluster = resource["spec"]["cluster"]["spec"] if resource["kind"] == "DaskJob" else resource["spec"]
        manifests.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{name}-scheduler"},
                          "spec": cluster["scheduler"]["service"]})
    assert len(manifests) == 9
    for manifest in manifests:
        kv.validate(manifest, version, strict=True)
    bad = copy.deepcopy(manifests[2])
    bad["spec"]["containers"][0]["args"] = "dask worker"  # a string, not a list
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, version, strict=True)


def test_pods_run_the_image_as_its_non_root_user():
    for resource in _dask_resources():
        for role, pod in _pod_specs(resource):
            assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 10001
            assert all(c["image"] == "dasktree:latest" for c in pod["containers"]), role
    # the DaskJob's own cluster is the DaskCluster's, but for the names of the scheduler's service
    cluster, job = _dask_resources()
    mine = json.loads(json.dumps(job["spec"]["cluster"]["spec"]).replace("dasktree-nightly", "dasktree"))
    assert mine == cluster["spec"]


@pytest.mark.cluster
def test_every_pod_speaks_tls_with_its_own_key_only():
    for resource in _dask_resources():
        for role, pod in _pod_specs(resource):
            [certs] = [v for v in pod["volumes"] if v["name"] == "certs"]
            assert certs["secret"]["secretName"] == "dasktree-tls"
            own = "client" if role == "job" else role
            assert [i["key"] for i in certs["secret"]["items"]] == ["ca.pem", f"{own}.pem", f"{own}-key.pem"]
            [container] = pod["containers"]
            assert {"name": "certs", "mountPath": "/certs", "readOnly": True} in container["volumeMounts"]
            if role != "job":
                assert f"/certs/{role}-key.pem" in container["args"]
    cluster, job = _dask_resources()
    [container] = job["spec"]["job"]["spec"]["containers"]
    assert container["args"][-1] == "tls://dasktree-nightly-scheduler:8786"


@pytest.mark.cluster
@pytest.mark.skipif(shutil.which("dask") is None or shutil.which("dasktree") is None or not have_openssl(),
                    reason="needs the installed dask and dasktree commands and openssl")
def test_the_daskjob_commands_run_on_a_real_cluster(tmp_path):
    cluster, job = _dask_resources()
    for name in ("data", "new", "models", "logs"):
        (tmp_path / name).mkdir()
    agrawal.write_parquet(str(tmp_path / "data"), 4000, n_files=2, seed=1, overwrite=True)
    agrawal.write_parquet(str(tmp_path / "new"), 500, n_files=1, seed=2, overwrite=True)
    port, dashboard = free_port(), free_port()
    address = f"tls://127.0.0.1:{port}"
    certs = make_certs(tmp_path / "certs", "dasktree-nightly-scheduler")  # the secret dasktree-tls
    paths = {"/data": str(tmp_path / "data"), "/new": str(tmp_path / "new"), "/models": str(tmp_path / "models"),
             "/opt/dasktree/deploy": DEPLOY, "/tmp/dask-worker": str(tmp_path / "dask-worker"),
             "/certs": str(tmp_path / "certs"), "tls://dasktree-scheduler:8786": address,
             "tls://dasktree-nightly-scheduler:8786": address}
    # what the operator puts in every pod's environment
    operator_env = {"DASK_SCHEDULER_ADDRESS": address.replace("tls://", "tcp://")}
    processes = Processes(str(tmp_path / "logs"))
    try:
        [scheduler] = cluster["spec"]["scheduler"]["spec"]["containers"]
        processes.start("scheduler", localize(scheduler["args"], {**paths, "0.0.0.0": "127.0.0.1", "8786": str(port),
                                                                  ":8787": f":{dashboard}"}), dict(os.environ))
        [worker] = cluster["spec"]["worker"]["spec"]["containers"]
        for i in range(cluster["spec"]["worker"]["replicas"]):
            env = {**os.environ, **operator_env, "DASK_WORKER_NAME": f"dasktree-default-worker-{i}"}
            argv = localize(expand_kubernetes(worker["args"], env), {**paths, "8788": str(free_port())})
            processes.start(f"worker-{i}", argv, env)
        wait_for_workers(address, 2, processes, security=client_security(certs))
        [container] = job["spec"]["job"]["spec"]["containers"]
        env = {**os.environ, **operator_env, **{e["name"]: e["value"] for e in container["env"]},
               "DASKTREE_FIT_ARGS": "--max-depth 4 --log-format json"}  # the manifest's, shallower
        for key in ("DASKTREE_PREDICT", "DASKTREE_PREDICT_OUT", *(k for k in env if k.startswith("DASK_DISTRIBUTED__COMM__TLS"))):
            env[key] = localize([env[key]], paths)[0]
        argv = localize(expand_kubernetes(container["args"], env), {**paths, "label": "class"})  # the data's target
        assert argv[-1] == address
        result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
    finally:
        processes.stop()
    models = tmp_path / "models"
    current = os.readlink(models / "current.json")
    report = json.loads((models / current.replace("model-", "report-")).read_text())
    assert report["run"]["workers"] == 2 and report["report"]["rows"] == 4000, (report["run"], result.stderr)
    assert len(pq.read_table(models / "predictions")) == 500
