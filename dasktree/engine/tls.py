"""TLS between dasktree and a Dask scheduler: the client's certificates, checked before connecting,
and a failed connection explained.

A Dask scheduler runs the pickled work any client sends it: one reachable over the network must
speak TLS and require client certificates (``dask scheduler --tls-ca-file ... --tls-cert ...
--tls-key ...``, addresses ``tls://host:port``). dasktree connects as dask's own client does, with
``security=`` (:func:`client_security`): a ``distributed.security.Security``; a directory of
``deploy/make-certs.sh`` (``ca.pem``, ``client.pem``, ``client-key.pem``); a mapping with
``ca_file``, ``cert`` and ``key`` paths; or None, for dask's settings ``distributed.comm.tls.ca-file``,
``distributed.comm.tls.client.cert`` and ``.key`` (a Dask config file or the variables
``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``, ``..._CLIENT__CERT``, ``..._CLIENT__KEY``).

Every problem with them is bad usage, exit 2, one line saying what to fix, found before any work
where it can be (:func:`check_security`): a certificate or key file missing, unreadable, not PEM or
not matching; a certificate expired or not yet valid; ``tls://`` without certificates; certificates
with a ``tcp://`` address. When connecting fails, :func:`explain_failure` asks the address itself
(one TLS handshake, seconds at most): a ``tcp://`` address whose server speaks TLS, a scheduler
certificate the client's CA does not trust or that has expired, and a client certificate the
scheduler refuses are each exit 2, since no retry can succeed; anything else stays transient (75).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import ssl
from collections.abc import Iterator, Mapping

from ..errors import ParameterError

__all__ = ["client_security", "check_security", "explain_failure", "tls_config", "TLS_OPTIONS"]

TLS_OPTIONS = "--tls-ca-file, --tls-cert and --tls-key (or security=, or dask's distributed.comm.tls.* settings)"
PROBE_SECONDS = 3.0
"""How long asking a scheduler's address which protocol it speaks may take."""


@contextlib.contextmanager
def tls_config(settings: Mapping[str, str]) -> Iterator[None]:
    """Dask's settings ``settings`` (e.g. ``{"distributed.comm.tls.ca-file": path}``) for the block: the
    command's ``--tls-*`` options, as dask's own client reads them."""
    import dask

    with dask.config.set(dict(settings)):
        yield


def client_security(security=None):
    """``security=`` as a ``distributed.security.Security`` for a client (see the module's documentation)."""
    from distributed.security import Security

    if security is None or isinstance(security, Security):
        return Security() if security is None else security
    if isinstance(security, (str, os.PathLike)):
        root = os.fspath(security)
        if not os.path.isdir(root):
            raise ParameterError(f"security={root!r}: not a directory of certificates (ca.pem, client.pem, "
                                 "client-key.pem as deploy/make-certs.sh writes them)")
        security = {"ca_file": os.path.join(root, "ca.pem"), "cert": os.path.join(root, "client.pem"),
                    "key": os.path.join(root, "client-key.pem")}
    if isinstance(security, Mapping):
        unknown = set(security) - {"ca_file", "cert", "key"}
        if unknown or not security.get("ca_file") or not security.get("cert"):
            raise ParameterError(f"security= as a mapping needs the keys ca_file and cert (and key, unless "
                                 f"the cert file holds it), got {sorted(security)}")
        return Security(tls_ca_file=os.fspath(security["ca_file"]), tls_client_cert=os.fspath(security["cert"]),
                        tls_client_key=None if security.get("key") is None else os.fspath(security["key"]),
                        require_encryption=True)
    raise ParameterError(f"security= must be a distributed.security.Security, a directory of certificates or "
                         f"a mapping of ca_file, cert and key paths, got {type(security).__name__}")


def _has_tls(security) -> bool:
    return bool(security.tls_ca_file or security.tls_client_cert)


def check_security(security, address: str) -> None:
    """Raise :class:`ParameterError` if ``security`` cannot connect to ``address`` as it is: see the
    module's documentation. Files are named as given; their contents are never quoted."""
    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    if not _has_tls(security):
        if scheme == "tls":
            raise ParameterError(f"scheduler {address} speaks TLS: give the client's certificates with {TLS_OPTIONS}")
        return
    if scheme != "tls":
        raise ParameterError(f"TLS certificates are given but the scheduler address is {address}: use "
                             f"tls://{address.split('://', 1)[-1]} (a Dask scheduler started with --tls-* "
                             "listens on tls://)")
    ca, cert, key = security.tls_ca_file, security.tls_client_cert, security.tls_client_key
    if not ca or not cert:
        raise ParameterError(f"TLS needs the cluster's CA and a client certificate: {TLS_OPTIONS} "
                             f"(got {'no CA file' if not ca else 'no client certificate'})")
    for what, path in (("CA file", ca), ("certificate", cert), ("key", key)):
        if path is None or "\n" in path:  # in memory (PEM text): loaded below
            continue
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise ParameterError(f"TLS {what} {path}: {exc.strerror or exc}") from None
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        if "\n" in ca:
            context.load_verify_locations(cadata=ca)
        else:
            context.load_verify_locations(cafile=ca)
    except (ssl.SSLError, ValueError) as exc:
        raise ParameterError(f"TLS CA file {_name(ca)}: not a PEM certificate ({_reason(exc)})") from None
    try:
        security.get_connection_args("client")
    except (ssl.SSLError, ValueError, OSError) as exc:
        raise ParameterError(f"TLS certificate {_name(cert)} and key {_name(key) if key else '(in the certificate)'}: "
                             f"cannot be loaded as a PEM certificate and its private key ({_reason(exc)})") from None
    for what, path in (("CA file", ca), ("certificate", cert)):
        _check_dates(what, path)


def _name(path: str | None) -> str:
    return "(given in memory)" if path and "\n" in path else str(path)


def _reason(exc: BaseException) -> str:
    return getattr(exc, "reason", None) or getattr(exc, "verify_message", None) or type(exc).__name__


def _check_dates(what: str, path: str) -> None:
    """An expired certificate (or one not valid yet) is refused here, where the message can name it."""
    try:
        from cryptography import x509
    except ImportError:  # the handshake's failure is explained instead (explain_failure)
        return
    try:
        data = path.encode() if "\n" in path else open(path, "rb").read()
        certificate = x509.load_pem_x509_certificate(data)
    except (ValueError, OSError):
        return
    now = datetime.datetime.now(datetime.timezone.utc)
    if certificate.not_valid_after_utc < now:
        raise ParameterError(f"TLS {what} {_name(path)} expired on {certificate.not_valid_after_utc:%Y-%m-%d %H:%M} "
                             "UTC: make new certificates (deploy/make-certs.sh)")
    if certificate.not_valid_before_utc > now:
        raise ParameterError(f"TLS {what} {_name(path)} is not valid before "
                             f"{certificate.not_valid_before_utc:%Y-%m-%d %H:%M} UTC: check this machine's clock")


def explain_failure(address: str, security) -> ParameterError | None:
    """Why connecting to ``address`` failed, when no retry can help: a :class:`ParameterError`, or
    None (then the failure may be transient). Costs one TLS handshake with the address."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except ValueError:
        return None
    if scheme == "tcp":
        if _speaks_tls(host, port):
            return ParameterError(f"the scheduler at {address} speaks TLS: use tls://{location} and the "
                                  f"client's certificates: {TLS_OPTIONS}")
        return None
    if scheme != "tls" or not _has_tls(security):
        return None
    try:
        context = security.get_connection_args("client")["ssl_context"]
    except (ssl.SSLError, ValueError, OSError):
        return None
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS) as raw:
            with context.wrap_socket(raw) as conn:
                conn.settimeout(0.5)
                try:
                    conn.recv(1)  # TLS 1.3: the server's verdict on our certificate comes after the handshake
                except ssl.SSLError as exc:
                    return _refused(address, exc)
                except (OSError, TimeoutError):
                    pass
    except ssl.SSLCertVerificationError as exc:
        return ParameterError(f"the scheduler at {address} presents a certificate this client does not trust "
                              f"({exc.verify_message}): give the CA that signed it with --tls-ca-file, or renew it")
    except ssl.SSLError as exc:
        return _refused(address, exc)
    except (OSError, TimeoutError):
        return None
    return None


def _refused(address: str, exc: ssl.SSLError) -> ParameterError | None:
    reason = (getattr(exc, "reason", None) or "").lower()
    if "alert" not in reason:
        return None
    return ParameterError(f"the scheduler at {address} refused this client's certificate "
                          f"({reason.replace('_', ' ')}): give a certificate signed by the cluster's CA "
                          "with --tls-cert and --tls-key, or renew an expired one")


def _speaks_tls(host: str, port: int) -> bool:
    """Whether the server at ``host:port`` answers a TLS handshake (asked only after a plain TCP
    connection was dropped by it: a plain Dask server is never sent one)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS) as raw:
            with context.wrap_socket(raw):
                return True
    except ssl.SSLError as exc:
        return "alert" in (getattr(exc, "reason", None) or "").lower()
    except (OSError, TimeoutError):
        return False
