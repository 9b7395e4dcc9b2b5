"""deploy/etl/: the nightly fit and predict as an Airflow DAG and a Prefect flow.

The steps (dasktree_etl.py) are tested everywhere. The DAG is loaded by Airflow's own DagBag and
run with ``dag.test()``, the flow is run by Prefect, each in a Python that has the orchestrator:
this one when it imports it, else the one ``DASKTREE_AIRFLOW_PYTHON`` / ``DASKTREE_PREFECT_PYTHON``
names (the orchestrators' dependencies rarely fit beside dasktree's test environment). Without
either, those tests skip and say so: CI does not install the orchestrators.
"""

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap

import pyarrow.parquet as pq
import pytest

from dasktree.datasets import agrawal

ETL = os.path.join(os.path.dirname(__file__), "..", "deploy", "etl")
pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(shutil.which("dasktree") is None, reason="needs the installed dasktree command")]


@pytest.fixture(scope="module")
def etl():
    sys.path.insert(0, os.path.abspath(ETL))
    try:
        import dasktree_etl

        yield dasktree_etl
    finally:
        sys.path.remove(os.path.abspath(ETL))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("etl")
    agrawal.write_parquet(str(root / "events"), 4000, n_files=2, seed=0)
    agrawal.write_parquet(str(root / "incoming" / "date=2026-11-24"), 600, n_files=1, seed=5)
    return root


@pytest.fixture
def silent_scheduler():
    """An address that accepts connections and never answers: a run against it hangs until killed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"tcp://127.0.0.1:{s.getsockname()[1]}"


def test_steps_fit_beside_the_data_and_classify_failures(etl, data, tmp_path, silent_scheduler):
    events = str(data / "events")
    run = etl.Nightly(data=events, target="class", new=str(data / "incoming" / "date={ds}").replace("{ds}", "2026-11-24"),
                      model_dir=str(tmp_path / "models"), scheduler="threads", fit_args="--max-depth 3", timeout=600)
    model = run.fit()
    assert os.path.dirname(model) == str(tmp_path / "models") and os.path.exists(model)
    out = run.predict("2026-11-24")
    assert out == str(tmp_path / "models" / "predictions" / "date=2026-11-24")
    assert len(pq.read_table(out)) == 600
    assert etl.Nightly(data=events, target="class").models == str(data / "models")  # beside the data
    with pytest.raises(etl.PermanentFailure) as bad:
        etl.Nightly(data=events, target="no_such_column", model_dir=str(tmp_path / "models"), scheduler="threads").fit()
    assert bad.value.code == 1 and "no_such_column" in str(bad.value)
    with pytest.raises(etl.TransientFailure) as hung:
        etl.Nightly(data=events, target="class", model_dir=str(tmp_path / "models"), scheduler=silent_scheduler,
                    timeout=2).fit()
    assert hung.value.code == 75 and "timeout of 2s" in str(hung.value)
    assert os.path.realpath(tmp_path / "models" / "current.json") == model  # yesterday's model stays


def _orchestrator_python(module: str, variable: str) -> str:
    if importlib.util.find_spec(module) is not None:
        return sys.executable
    named = os.environ.get(variable)
    if named and os.path.exists(named):
        return named
    pytest.skip(f"{module} is not importable here and {variable} names no Python that has it: "
                f"the {module} test runs only where the orchestrator is installed")


def _environment(tmp_path) -> dict[str, str]:
    # the orchestrator's Python runs the wrappers, which find `dasktree` on PATH
    path = os.pathsep.join([os.path.dirname(shutil.which("dasktree")), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "DASKTREE_RETRIES": "1", "DASKTREE_RETRY_DELAY": "1",
            "HOME": str(tmp_path)}


AIRFLOW_DRIVER = textwrap.dedent("""
    import json, sys
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:
        from airflow.models.dagbag import DagBag
    bag = DagBag(dag_folder=sys.argv[1])
    assert not bag.import_errors, bag.import_errors
    dag = bag.dags["dasktree_nightly"]
    results = []
    for conf in json.loads(sys.argv[2]):
        run = dag.test(run_conf=conf)
        results.append({"state": str(run.state),
                        "tasks": {ti.task_id: [str(ti.state), ti.try_number] for ti in run.get_task_instances()}})
    print("RESULTS " + json.dumps(results))
""")


def test_airflow_dag_runs_with_dag_test(data, tmp_path, silent_scheduler):
    python = _orchestrator_python("airflow", "DASKTREE_AIRFLOW_PYTHON")
    env = {**_environment(tmp_path), "AIRFLOW_HOME": str(tmp_path / "airflow"),
           "AIRFLOW__CORE__DAGS_FOLDER": os.path.abspath(ETL), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    migrate = subprocess.run([python, "-m", "airflow", "db", "migrate"], env=env, capture_output=True, text=True,
                             timeout=600)
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    common = {"data": str(data / "events"), "new": str(data / "incoming" / "date=2026-11-24"),
              "scheduler": "threads", "fit_args": "--max-depth 3", "timeout": 600}
    confs = [{**common, "target": "class", "model_dir": str(tmp_path / "ok")},
             {**common, "target": "no_such_column", "model_dir": str(tmp_path / "bad")},
             {**common, "target": "class", "model_dir": str(tmp_path / "hung"), "scheduler": silent_scheduler,
              "timeout": 2}]
    dag_file = os.path.join(os.path.abspath(ETL), "airflow_dasktree.py")
    result = subprocess.run([python, "-c", AIRFLOW_DRIVER, dag_file, json.dumps(confs)], env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("RESULTS ")]
    ok, bad, hung = json.loads(line[len("RESULTS "):])
    assert ok == {"state": "success", "tasks": {"fit": ["success", 1], "predict": ["success", 1]}}
    current = os.path.realpath(tmp_path / "ok" / "current.json")
    assert os.path.exists(current.replace("model-", "report-"))
    predictions = tmp_path / "ok" / "predictions"
    [day] = os.listdir(predictions)
    assert len(pq.read_table(predictions / day)) == 600
    # a permanent failure is not retried; a transient one (timed out: 75) is, once here
    assert bad["state"] == "failed" and bad["tasks"]["fit"] == ["failed", 1]
    assert bad["tasks"]["predict"][0] == "upstream_failed"
    assert hung["state"] == "failed" and hung["tasks"]["fit"] == ["failed", 2]
    assert not os.path.exists(tmp_path / "hung" / "current.json")


PREFECT_DRIVER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import dasktree_etl, prefect_dasktree
    calls = []
    real_run_step = dasktree_etl.run_step
    def counted(step, *args, **kwargs):  # counts the attempts, runs the step as it is
        calls.append(step)
        return real_run_step(step, *args, **kwargs)
    dasktree_etl.run_step = counted
    results = []
    for params in json.loads(sys.argv[2]):
        calls.clear()
        state = prefect_dasktree.nightly(**params, return_state=True)
        results.append({"state": state.type.value, "result": str(state.result(raise_on_failure=False)),
                        "attempts": list(calls)})
    print("RESULTS " + json.dumps(results))
""")


def test_prefect_flow_runs_locally(data, tmp_path, silent_scheduler):
    python = _orchestrator_python("prefect", "DASKTREE_PREFECT_PYTHON")
    env = {**_environment(tmp_path), "PREFECT_HOME": str(tmp_path / "prefect"),
           "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "300"}
    common = {"data": str(data / "events"), "new": str(data / "incoming" / "date={ds}"), "day": "2026-11-24",
              "scheduler": "threads", "fit_args": "--max-depth 3", "timeout": 600}
    params = [{**common, "target": "class", "model_dir": str(tmp_path / "ok")},
              {**common, "target": "no_such_column", "model_dir": str(tmp_path / "bad")},
              {**common, "target": "class", "model_dir": str(tmp_path / "hung"), "scheduler": silent_scheduler,
               "timeout": 2}]
    result = subprocess.run([python, "-c", PREFECT_DRIVER, os.path.abspath(ETL), json.dumps(params)], env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("RESULTS ")]
    ok, bad, hung = json.loads(line[len("RESULTS "):])
    out = tmp_path / "ok" / "predictions" / "date=2026-11-24"
    assert ok == {"state": "COMPLETED", "result": str(out), "attempts": ["fit", "predict"]}
    assert len(pq.read_table(out)) == 600
    # a permanent failure is not retried; a transient one (timed out: 75) is, once here
    assert bad["state"] == "FAILED" and "exited with code 1" in bad["result"] and bad["attempts"] == ["fit"]
    assert hung["state"] == "FAILED" and "exited with code 75" in hung["result"]
    assert hung["attempts"] == ["fit", "fit"]
    assert not os.path.exists(tmp_path / "hung" / "current.json")
