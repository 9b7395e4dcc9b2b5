"""Storage credentials never reach an output: model files, reports, --json, JSON logs, checkpoints,
predictions, error lines. And files that can hold data are written with the user's umask.

The data sits in moto's S3 server on 127.0.0.1; every command gets a known fake secret the way the
deploy recipes give it (``AWS_*`` variables), or in a URL (``https://user:SECRET@host/...``), or in
``storage_options``; then every byte written (each file below the test's directory, stdout,
stderr) is searched for it.
"""

import os
import subprocess

import pytest

from dasktree.datasets import agrawal
from dasktree.testing.hooks import armed_command
from dasktree.testing.processes import run_commands
from dasktree.testing.s3 import s3_server

pytestmark = pytest.mark.cluster
pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

SECRET = "FAKE-SECRET-b7e1c94d2a"
KEY_ID = "FAKEKEYID0c3d"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with s3_server() as endpoint:
        env = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL_S3": endpoint,
               "AWS_DEFAULT_REGION": "us-east-1"}
        fs = s3fs.S3FileSystem(key=KEY_ID, secret=SECRET, client_kwargs={"endpoint_url": endpoint,
                                                                         "region_name": "us-east-1"})
        fs.call_s3("create_bucket", Bucket="secrets")
        local = tmp_path_factory.mktemp("s3-data")
        agrawal.write_parquet(str(local / "data"), 3000, n_files=2, seed=0, overwrite=True)
        fs.put(str(local / "data"), "secrets/data", recursive=True)
        yield dict(env=env, endpoint=endpoint, fs=fs)


def _every_byte(root) -> dict[str, bytes]:
    out = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                out[path] = f.read()
    return out


class Runs:
    """dasktree commands run under umask 077 with the secret in their environment; what they printed. A
    command armed with a fault runs in a process of its own (it is killed); the others are queued and
    run together by :meth:`flush` in one new interpreter (:func:`~dasktree.testing.processes.run_commands`:
    the same environment and umask, one interpreter's imports instead of one per command)."""

    def __init__(self, env, cwd):
        self.env, self.cwd, self.printed, self.queued = env, cwd, [], []

    def __call__(self, *argv, fault=None, expect=0):
        if fault is None:
            self.queued.append((argv, expect))
            return
        self.flush()
        result = subprocess.run(armed_command(fault, *argv), capture_output=True, text=True, timeout=300,
                                env={**os.environ, **self.env}, cwd=self.cwd, preexec_fn=lambda: os.umask(0o077))
        self.printed += [result.stdout, result.stderr]
        assert result.returncode == expect, (argv, result.returncode, result.stderr)

    def flush(self):
        if not self.queued:
            return
        queued, self.queued = self.queued, []
        done, whole = run_commands([argv for argv, _ in queued], env={**os.environ, **self.env}, cwd=self.cwd,
                                   umask=0o077)
        self.printed += [whole.stdout, whole.stderr]
        for (argv, expect), result in zip(queued, done):
            self.printed += [result.stdout, result.stderr]
            assert result.returncode == expect, (argv, result.returncode, result.stderr)


def test_no_output_holds_the_secret_and_data_files_follow_the_umask(store, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    run = Runs(store["env"], str(out))
    data = "s3://secrets/data"
    common = ["--scheduler", "threads", "--log-format", "json"]
    # a fit whose client dies after level pass 2 was saved: its checkpoint is left as it was
    ckpt = out / "ckpt"
    run("fit", data, "--target", "class", "--out", out / "m.json", "--max-depth", 4, "--checkpoint", ckpt,
        "--cv", 2, *common, fault=f"saved:2:{out / 'killed'}", expect=-9)
    left = _every_byte(ckpt)
    assert any(p.endswith(".npz") for p in left)
    assert not any(SECRET.encode() in b for b in left.values()), "the checkpoint holds the secret"
    run("fit", data, "--target", "class", "--out", out / "m.json", "--max-depth", 4, "--checkpoint", ckpt,
        "--json", "--cv", 2, *common)
    run("show", out / "m.json", "--format", "report")
    run("predict", out / "m.json", data, "--out", out / "pred", "--json", *common)
    run("evaluate", out / "m.json", data, "--json", *common)
    run("discretize", data, "--target", "class", "--out", out / "disc", "--json", *common)
    # credentials in a URL, and a store that refuses them: error lines
    host = store["endpoint"].split("://")[1]
    run("fit", f"http://{KEY_ID}:{SECRET}@{host}/secrets/data/part-0.parquet", "--target", "class",
        "--out", out / "u.json", *common, expect=1)
    run("predict", out / "m.json", f"s3://secrets/missing/", "--out", out / "p2", *common, expect=1)
    bad = Runs({**store["env"], "AWS_SECRET_ACCESS_KEY": SECRET + "-wrong"}, str(out))
    bad("evaluate", out / "m.json", f"http://u:{SECRET}@{host}/nowhere.parquet", *common, expect=1)
    run.flush()
    bad.flush()
    run.printed += bad.printed
    written = _every_byte(out)
    assert {"m.json"} <= {os.path.basename(p) for p in written}
    for path, content in written.items():
        assert SECRET.encode() not in content, f"{path} holds the secret"
        assert os.stat(path).st_mode & 0o077 == 0, f"{path} ignores the umask (077)"
    for text in run.printed:
        assert SECRET not in text, text
    for directory, dirs, _ in os.walk(out):
        for name in dirs:
            assert os.stat(os.path.join(directory, name)).st_mode & 0o077 == 0, name


def test_storage_options_stay_out_of_the_model_and_its_report(store, tmp_path):
    from dasktree import DaskTreeClassifier, Discretizer

    options = {"key": KEY_ID, "secret": SECRET, "client_kwargs": {"endpoint_url": store["endpoint"],
                                                                   "region_name": "us-east-1"}}
    clf = DaskTreeClassifier(max_depth=3, scheduler="threads").fit("s3://secrets/data", target="class",
                                                                    storage_options=options)
    clf.model_.save(str(tmp_path / "m.json"))
    assert SECRET not in (tmp_path / "m.json").read_text()
    assert SECRET not in repr(clf.run_) and SECRET not in repr(clf.report_)
    disc = Discretizer(scheduler="threads").fit("s3://secrets/data", target="class", storage_options=options)
    assert SECRET not in repr(disc.report_) and SECRET not in repr(disc.run_)


def test_a_checkpoint_directory_others_can_write_is_refused(tmp_path, capsys):
    from dasktree.cli import main

    agrawal.write_parquet(str(tmp_path / "data"), 500, n_files=1, seed=0)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    code = main(["fit", str(tmp_path / "data"), "--target", "class", "--out", str(tmp_path / "m.json"),
                 "--checkpoint", str(shared), "--quiet"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "writable by other users" in lines[0], lines
    assert not (tmp_path / "m.json").exists() and os.listdir(shared) == []
    os.chmod(shared, 0o755)
    assert main(["fit", str(tmp_path / "data"), "--target", "class", "--out", str(tmp_path / "m.json"),
                 "--checkpoint", str(shared), "--quiet"]) == 0
