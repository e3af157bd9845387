"""The `server:` settings section: listen addresses, the admin HTTP face's limits, who may call
it (bearer token, open reads) and TLS for gRPC and HTTP — part of config.py, documented in
deploy/harvester.yaml and docs/security.md.

Rules a schema cannot see (a token given by environment, whether an address is this machine's
loopback, whether the files hold a usable certificate) are checked by harvester/preflight.py,
which `config check` and `serve` both run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from harvester.config_base import MAX_TIMEOUT_S, FilePath, Section, check_listen, listens_clash

MIB = 1024 * 1024


def _readable(v: Path | None) -> Path | None:
    if v is not None and (not v.is_file() or not os.access(v, os.R_OK)):
        raise ValueError(f"cannot read the file {v}")
    return v


class AdminHttpSettings(Section):
    """Input limits of the admin/advice HTTP server (advice/admin_http.py)."""

    max_connections: int = Field(4096, ge=16, le=100_000, description="Open connections at most; the next one gets 503.")
    max_long_polls: int = Field(4096, ge=0, le=100_000, description="Long-polls (placement table, node ordering) waiting at once; more get 503 + Retry-After.")
    max_body_bytes: int = Field(65536, ge=1024, le=64 * MIB, description="Largest request body read (413 above; admin writes carry tiny bodies).")
    max_header_bytes: int = Field(8190, ge=1024, le=65536, description="Longest request line or header field (bytes).")
    max_headers: int = Field(100, ge=16, le=1000, description="Most header fields in one request.")
    idle_timeout_s: float = Field(15.0, gt=0, le=3600, description="A connection with no request in progress (new, keep-alive, or trickling headers) is closed after this long.")
    body_timeout_s: float = Field(10.0, gt=0, le=MAX_TIMEOUT_S, description="A request body must arrive within this long (408).")
    handler_threads: int = Field(8, ge=1, le=256, description="Threads running blocking routes (/status, refit, ...); long-polls and /metrics need none.")
    metrics_max_age_s: float = Field(0.0, ge=0, le=60, description="/metrics may answer from a rendering this old (0: scrapes that arrive during a rendering share it, later ones get a new one).")


class AuthSettings(Section):
    """Bearer token for admin writes; which reads are open (docs/security.md)."""

    token_file: FilePath | None = Field(None, description="File holding the admin bearer token (one line, mode 0600 or 0640 owned by root; HARVESTER_ADMIN_TOKEN overrides it). Without a token, admin writes are refused (cluster.source: embedded makes a local one).")
    public_reads: list[str] = Field(default_factory=lambda: ["*"], description="GET paths served without the token: \"*\" = all, \"/v1/hdfs/*\" = a prefix, else exact paths.")

    _file = field_validator("token_file")(_readable)

    @field_validator("public_reads")
    @classmethod
    def _paths(cls, v: list[str]) -> list[str]:
        for p in v:
            if p != "*" and not p.startswith("/"):
                raise ValueError(f"{p!r}: expected \"*\" or a path starting with /")
        return v


class TlsSettings(Section):
    """TLS of BOTH servers (gRPC and admin HTTP); mutual TLS with `client_ca_file`."""

    cert_file: FilePath | None = Field(None, description="PEM certificate chain of the servers (gRPC and admin HTTP); null = plaintext.")
    key_file: FilePath | None = Field(None, description="PEM private key of cert_file.")
    client_ca_file: FilePath | None = Field(None, description="PEM CA bundle: clients must present a certificate it signed (mutual TLS); null = no client certificates.")

    _files = field_validator("cert_file", "key_file", "client_ca_file")(_readable)

    @model_validator(mode="after")
    def _pairs(self) -> TlsSettings:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("server.tls: give both cert_file and key_file, or neither")
        if self.client_ca_file is not None and self.cert_file is None:
            raise ValueError("server.tls.client_ca_file needs cert_file and key_file (mutual TLS is TLS first)")
        return self

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None


#: The largest CPU number `server.grpc_advice_cpus` takes (Linux's default NR_CPUS is 8192).
MAX_CPU = 8191


class ServerSettings(Section):
    grpc_listen: str = Field("127.0.0.1:50051", description="gRPC advice server address (host:port); port 0 picks a free port.")
    admin_listen: str = Field("127.0.0.1:9464", description="HTTP admin address for /healthz /readyz /metrics /status.")
    shutdown_grace_s: float = Field(3.0, gt=0, le=4.5, description="Seconds in-flight RPCs get on shutdown (total stop stays under 5 s).")
    grpc_max_workers: int = Field(8, ge=1, le=256, description="Threads serving gRPC requests.")
    grpc_max_message_bytes: int = Field(4 * MIB, ge=64 * 1024, le=256 * MIB, description="Largest gRPC request accepted (RESOURCE_EXHAUSTED above).")
    grpc_advice_process: bool = Field(False, description="Answer SelectClasses and ListTenantClasses from a second process that runs no loop, so the loops' computing does not delay them (issue 29); every other gRPC call is forwarded to the main process over a private Unix socket. docs/deploy.md.")
    grpc_advice_cpus: list[Annotated[int, Field(ge=0, le=MAX_CPU)]] = Field(default_factory=list, description="With grpc_advice_process: the CPUs the advice process runs on; the main process (the loops) then runs on the others. Empty = no pinning.")
    admin_http: AdminHttpSettings = Field(default_factory=AdminHttpSettings, description="Admin HTTP input limits.")
    auth: AuthSettings = Field(default_factory=AuthSettings, description="Admin bearer token and open reads.")
    tls: TlsSettings = Field(default_factory=TlsSettings, description="TLS (and mutual TLS) for gRPC and admin HTTP.")
    allow_insecure_remote: bool = Field(False, description="Serve on a non-loopback address without TLS and a token anyway (refused otherwise).")

    _listen = field_validator("grpc_listen", "admin_listen")(check_listen)

    @model_validator(mode="after")
    def _advice_cpus(self) -> ServerSettings:
        cpus = self.grpc_advice_cpus
        if cpus and not self.grpc_advice_process:
            raise ValueError("server.grpc_advice_cpus pins the advice process: set server.grpc_advice_process: true too")
        if len(set(cpus)) != len(cpus):
            raise ValueError(f"server.grpc_advice_cpus must list distinct CPU numbers, got {cpus}")
        return self

    @model_validator(mode="after")
    def _distinct(self) -> ServerSettings:
        if listens_clash(self.admin_listen, self.grpc_listen):
            raise ValueError(f"server.admin_listen ({self.admin_listen}) and server.grpc_listen ({self.grpc_listen}) "
                             "take the same port: give each its own")
        return self
