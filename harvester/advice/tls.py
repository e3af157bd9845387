"""TLS of the two servers from `server.tls` (docs/security.md): an `ssl.SSLContext` for the
admin HTTP server and gRPC server credentials, both from the same PEM files; with
`client_ca_file`, clients must present a certificate that CA signed (mutual TLS)."""

from __future__ import annotations

import ssl
from typing import Any

from harvester.config_server import TlsSettings


def server_ssl_context(tls: TlsSettings) -> ssl.SSLContext | None:
    """The admin server's context (TLS 1.2+), None without `cert_file`; `ssl.SSLError` /
    `OSError` when the files are not a usable certificate and key."""
    if tls.cert_file is None or tls.key_file is None:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(tls.cert_file), str(tls.key_file))
    if tls.client_ca_file is not None:
        ctx.load_verify_locations(cafile=str(tls.client_ca_file))
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def grpc_server_credentials(tls: TlsSettings) -> Any:
    """`grpc.ServerCredentials` for the same files, None without `cert_file`."""
    if tls.cert_file is None or tls.key_file is None:
        return None
    import grpc

    root = tls.client_ca_file.read_bytes() if tls.client_ca_file is not None else None
    return grpc.ssl_server_credentials([(tls.key_file.read_bytes(), tls.cert_file.read_bytes())],
                                       root_certificates=root, require_client_auth=root is not None)
