"""The test server's TLS material: a CA and a serving certificate for 127.0.0.1 and
localhost (ECDSA P-256, valid for a century, made once with openssl and kept here so a
fresh clone needs no tool to make them). Clients verify the server against ``ca.crt``,
as a kubeconfig's ``certificate-authority-data`` makes them do against a real cluster's CA.
The key is a test key: it protects nothing."""

from __future__ import annotations

import base64
import ssl
from pathlib import Path

__all__ = ["CA_FILE", "ca_data", "server_context"]

_DIR = Path(__file__).resolve().parent / "tls"
CA_FILE = _DIR / "ca.crt"
_CERT_FILE = _DIR / "server.crt"
_KEY_FILE = _DIR / "server.key"


def server_context() -> ssl.SSLContext:
    """What the server presents: its certificate, TLS 1.2 or newer, HTTP/1.1 only (as the
    real server speaks to kubesched's client)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(_CERT_FILE, _KEY_FILE)
    context.set_alpn_protocols(["http/1.1"])
    return context


def ca_data() -> str:
    """``certificate-authority-data`` for a kubeconfig: the CA in base64-encoded PEM."""
    return base64.b64encode(CA_FILE.read_bytes()).decode()
