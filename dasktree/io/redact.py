"""Credentials out of what dasktree prints and saves: a URL's ``user:password@`` and its signed
query's secrets (``X-Amz-Signature=``, Azure's ``sig=``, ``token=``...) become ``***``.

Paths and URLs reach error lines, reports and ``--json`` output as the user gave them; a URL may
carry credentials (``https://user:secret@host/data.parquet``, a presigned URL). :func:`redact`
is applied where a path is described (a dataset's ``description``) and, as a last guard, to every
line the command prints (:mod:`dasktree.cli`). Credentials given as ``storage_options`` or in the
environment (``AWS_SECRET_ACCESS_KEY``) are never written anywhere in the first place.
"""

from __future__ import annotations

import re

__all__ = ["redact"]

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s\"'<>]+@")
_SECRET_QUERY = re.compile(
    r"(?P<name>[?&;](?:x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|"
    r"signature|sig|token|access_token|password|passwd|secret|client_secret|api_key|apikey|key|code)=)"
    r"[^&;#\s\"'<>]+", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with every URL's credentials replaced by ``***``."""
    if "://" not in text and "=" not in text:
        return text
    return _SECRET_QUERY.sub(r"\g<name>***", _USERINFO.sub(r"\g<scheme>***@", text))
