"""The ``--tls-*`` options of the verbs that connect to a cluster: TLS with a client certificate.

They are dask's own client settings (``distributed.comm.tls.ca-file``, ``.client.cert``,
``.client.key``), set for the command's run by :func:`tls_settings` (through
:func:`dasktree.engine.tls.tls_config`: Dask is the engine's); so the same settings given in a
Dask config file or as ``DASK_DISTRIBUTED__COMM__TLS__*`` variables serve as well (the deploy
recipes use the variables). What each problem exits with: :mod:`dasktree.engine.tls` (2, one line).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Iterator

from ..errors import ParameterError

__all__ = ["add_security", "tls_settings"]

_SETTINGS = {"tls_ca_file": "distributed.comm.tls.ca-file", "tls_cert": "distributed.comm.tls.client.cert",
             "tls_key": "distributed.comm.tls.client.key"}


def add_security(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("TLS (a scheduler at tls://; deploy/make-certs.sh makes the files)")
    g.add_argument("--tls-ca-file", metavar="PEM",
                   help="the cluster's CA certificate, which signed the scheduler's and this client's "
                        "(default: dask's distributed.comm.tls.ca-file, e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE)")
    g.add_argument("--tls-cert", metavar="PEM",
                   help="this client's certificate, signed by the CA (default: dask's distributed.comm.tls.client.cert)")
    g.add_argument("--tls-key", metavar="PEM",
                   help="this client's private key (default: dask's distributed.comm.tls.client.key, or in --tls-cert)")


@contextlib.contextmanager
def tls_settings(args: argparse.Namespace) -> Iterator[None]:
    """Dask's TLS client settings from ``args``' ``--tls-*`` options, for the block."""
    given = {key: getattr(args, name) for name, key in _SETTINGS.items() if getattr(args, name, None)}
    if not given:
        yield
        return
    scheduler = getattr(args, "scheduler", None) or ""
    if "://" not in scheduler:
        raise ParameterError(f"--tls-ca-file, --tls-cert and --tls-key are for a scheduler at tls://host:port, "
                             f"got --scheduler {scheduler or '(none: a cluster on this machine)'}")
    from ..engine.tls import tls_config

    with tls_config(given):
        yield
