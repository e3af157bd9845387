"""Log lines are redacted last, in both formats (issue 15 finding 4: the RM password was in every
failed-poll line): URL userinfo and secret query values, `Bearer` values, and the registered
secrets (admin token, keytab path) — in the message, in `extra` fields and in tracebacks."""

from __future__ import annotations

import io
import json
import logging

import pytest

from harvester.observability.logs import configure_logging

TOKEN = "tok-0123456789-abcdef"
KEYTAB = "/etc/security/keytabs/harvester.service.keytab"


@pytest.fixture()
def logged() -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    return logging.getLogger("test.redaction"), stream


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_every_kind_of_secret_is_masked(fmt: str, logged: tuple[logging.Logger, io.StringIO]) -> None:
    log, stream = logged
    configure_logging("DEBUG", fmt, stream=stream, secrets=[TOKEN, KEYTAB])
    try:
        log.warning("poll of http://yarn:hunter2@rm-1:8088/ws/v1/cluster/nodes failed",
                    extra={"url": "https://rm-2:8090/ws/v1/cluster/apps?delegation=SeCrEtDt&user.name=h"})
        log.info("sent Authorization: Bearer %s to the admin face", "some-other-token")
        log.info("admin token %s read; keytab %s loaded", TOKEN, KEYTAB)
        try:
            raise RuntimeError(f"cannot open {KEYTAB} for http://u:pw@nn:9870/jmx")
        except RuntimeError:
            log.exception("refit failed")
    finally:
        logging.getLogger().removeHandler(next(h for h in logging.getLogger().handlers if h.get_name() == "harvester"))
    out = stream.getvalue()
    for secret in ("hunter2", "SeCrEtDt", "some-other-token", TOKEN, KEYTAB, "u:pw@"):
        assert secret not in out, (secret, out)
    assert "http://***@rm-1:8088/ws/v1/cluster/nodes" in out and "delegation=***" in out
    assert "Bearer ***" in out and "user.name=h" in out
    if fmt == "json":
        assert all(json.loads(line) for line in out.splitlines() if line.startswith("{"))
