"""Tests never listen on the default ports (18088, 9464, 50051): `make run` may hold them while
`make test` runs (tests/test_default_ports.py checks that the suite passes then)."""

from __future__ import annotations

from harvester.config import Settings


def on_free_ports(settings: Settings) -> Settings:
    """`settings` with every listen address (admin, gRPC, embedded emulator) on port 0 of its host."""
    def zero(listen: str) -> str:
        return f"{listen.rpartition(':')[0]}:0"

    s = settings.server
    return settings.model_copy(update={
        "server": s.model_copy(update={"grpc_listen": zero(s.grpc_listen), "admin_listen": zero(s.admin_listen)}),
        "embedded": settings.embedded.model_copy(update={"listen": zero(settings.embedded.listen)}),
    })
