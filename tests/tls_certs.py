"""Certificates for the tests' TLS clusters: deploy/make-certs.sh as a user runs it, and what it
cannot make (an expired certificate signed by the same CA), with the cryptography package."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess

DEPLOY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "deploy"))
MAKE_CERTS = os.path.join(DEPLOY, "make-certs.sh")


def have_openssl() -> bool:
    return shutil.which("openssl") is not None


def make_certs(directory, *names: str) -> dict[str, str]:
    """Run deploy/make-certs.sh into ``directory``; the paths of what it wrote, by role."""
    subprocess.run(["bash", MAKE_CERTS, str(directory), *names], check=True, capture_output=True, timeout=120)
    d = str(directory)
    paths = {"ca": os.path.join(d, "ca.pem")}
    for role in ("scheduler", "worker", "client"):
        paths[role] = os.path.join(d, f"{role}.pem")
        paths[f"{role}-key"] = os.path.join(d, f"{role}-key.pem")
    return paths


def expired_client_cert(certs: dict[str, str], directory) -> tuple[str, str]:
    """A client certificate signed by ``certs``' CA that expired yesterday, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    with open(certs["ca"], "rb") as f:
        ca = x509.load_pem_x509_certificate(f.read())
    with open(os.path.join(os.path.dirname(certs["ca"]), "ca-key.pem"), "rb") as f:
        ca_key = serialization.load_pem_private_key(f.read(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dasktree expired client")]))
            .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=30)).not_valid_after(now - datetime.timedelta(days=1))
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path = os.path.join(str(directory), "expired.pem"), os.path.join(str(directory), "expired-key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path


def tls_args(certs: dict[str, str], role: str = "client") -> list[str]:
    """The ``--tls-*`` options of a dask or dasktree command for ``role``'s certificate."""
    return ["--tls-ca-file", certs["ca"], "--tls-cert", certs[role], "--tls-key", certs[f"{role}-key"]]


def tls_environ(certs: dict[str, str]) -> dict[str, str]:
    """Dask's own client settings as environment variables (what the deploy recipes set)."""
    return {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": certs["ca"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": certs["client"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": certs["client-key"]}


def client_security(certs: dict[str, str]):
    from distributed.security import Security

    return Security(tls_ca_file=certs["ca"], tls_client_cert=certs["client"], tls_client_key=certs["client-key"],
                    require_encryption=True)
