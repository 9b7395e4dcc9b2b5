"""Run the commands of deploy/'s compose and Kubernetes files on this host, as written.

The files' commands are taken literally; only what names the containers' world is mapped to
this host's: host names and ports (``tcp://scheduler:8786``) to processes on 127.0.0.1, mount
paths (``/data``) to temporary directories, ``/opt/dasktree/deploy`` to this checkout's deploy/.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

import yaml

DEPLOY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "deploy"))
_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate(value, env: dict[str, str]):
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``$$`` in every string of ``value``."""
    if isinstance(value, str):
        def one(match: re.Match) -> str:
            if match.group(0) == "$$":
                return "$"
            name, default = match.group(1), match.group(2)
            return env[name] if env.get(name) else (default if default is not None else "")
        return _VARIABLE.sub(one, value)
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    return value


def merge(base: dict, override: dict) -> dict:
    """Compose's merge of an override file: mappings merge key by key, anything else is replaced."""
    out = dict(base)
    for key, value in override.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def compose_services(*names: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    """The services of deploy/NAME... merged in order, interpolated with ``env``."""
    merged: dict = {}
    for name in names:
        with open(os.path.join(DEPLOY, name)) as f:
            merged = merge(merged, yaml.safe_load(f))
    return interpolate(merged["services"], env or {})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def localize(argv: list[str], mapping: dict[str, str]) -> list[str]:
    """``argv`` mapped to this host: an address key (``tcp://scheduler:8786``, ``:8787``) is
    replaced wherever it occurs, any other key (a mount path, a port) as a whole argument or as
    the start of a path."""
    out = []
    for arg in argv:
        for key in sorted(mapping, key=len, reverse=True):
            if "://" in key or key.startswith(":"):
                arg = arg.replace(key, mapping[key])
            elif arg == key or arg.startswith(key + "/"):
                arg = mapping[key] + arg[len(key):]
                break
        out.append(arg)
    return out


class Processes:
    """Long-running commands (a scheduler, workers) started here and stopped together."""

    def __init__(self, log_dir: str):
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen] = []
        self.names: list[str] = []

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = open(os.path.join(self.log_dir, f"{name}.log"), "w")
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=os.setpgrp)
        log.close()
        self.procs.append(proc)
        self.names.append(name)
        return proc

    def log(self, name: str) -> str:
        with open(os.path.join(self.log_dir, f"{name}.log")) as f:
            return f.read()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def wait_for_http(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.5)


def wait_for_workers(address: str, n: int, processes: Processes, security=None) -> None:
    """Until ``n`` workers of ``processes`` are connected to the scheduler at ``address``: bounded by
    the machine's speed, ended early when a process ended (:func:`dasktree.testing.cluster.wait_for_workers`);
    a failure shows the last lines of every process's log."""
    from dasktree.testing.cluster import wait_for_workers as wait

    try:
        wait(address, n, processes.procs, security=security)
    except (RuntimeError, TimeoutError) as exc:
        tails = "\n".join(f"--- {name}: ...{processes.log(name)[-1500:]}" for name in processes.names)
        raise AssertionError(f"{exc}\n{tails}") from None


def worker_environ(address: str, name: str, security=None) -> list[str | None]:
    """``os.environ[name]`` in every worker process of the cluster at ``address``."""
    from distributed import Client

    with Client(address, timeout="60s", security=security) as client:
        # a lambda, pickled by value, reads the worker's os.environ (os.environ.get itself would
        # carry this process's environment along)
        return sorted(client.run(lambda: os.environ.get(name)).values(), key=str)


def expand_kubernetes(argv: list[str], env: dict[str, str]) -> list[str]:
    """Kubernetes' ``$(VAR)`` references in a container's args, from its environment."""
    return [re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), arg)
            for arg in argv]
