"""Once the command's --timeout expired, no output is committed, even where the interrupt it raised
was swallowed on its way (a library's optional import guarded by ``except Exception``)."""

import os

import pytest

from dasktree import cli
from dasktree.errors import TransientError
from dasktree.io import outputs


@pytest.fixture
def expired():
    outputs.expire("--timeout 1 s expired before the run finished; a retry may succeed")
    yield
    outputs.expire(None)


def test_an_expired_deadline_commits_no_file_and_no_directory(expired, tmp_path):
    with pytest.raises(TransientError, match="--timeout 1 s expired"):
        outputs.atomic_write_text(tmp_path / "m.json", "{}")
    with pytest.raises(TransientError, match="--timeout 1 s expired"):
        with outputs.atomic_directory(str(tmp_path / "out")) as staging:
            with open(os.path.join(staging.tmp, "part-0.parquet"), "wb") as f:
                f.write(b"x")
    assert os.listdir(tmp_path) == []  # neither the outputs nor their temporary names


def test_a_swallowed_expiry_still_ends_the_run_with_exit_75(monkeypatch, capsys):
    """The command's deadline fires inside a block that catches every Exception and goes on: the
    run still ends with the one line and exit 75."""
    import signal
    import threading

    def swallowing(args):
        try:
            signal.pthread_kill(threading.get_ident(), signal.SIGALRM)  # the deadline, now
        except Exception:  # noqa: BLE001 - what a library's guarded import does
            pass
        return None

    monkeypatch.setitem(cli.COMMANDS, "predict", swallowing)
    code = cli.main(["predict", "m.json", "data", "--out", "o", "--quiet", "--timeout", "30"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 75 and len(err) == 1 and "--timeout 30 s expired" in err[0]
    assert outputs.expired() is None  # cleared for the next run in this process
