"""Kerberos (issue 15 finding 4: mutual_authentication=OPTIONAL, no keytab/principal settings).
Needs the optional 'kerberos' extra (requests-gssapi, built against MIT krb5); skipped without
it. No KDC runs here: what is checked is the auth object and the refusal without a KDC."""

from __future__ import annotations

from pathlib import Path

import pytest

requests_gssapi = pytest.importorskip("requests_gssapi", reason="the 'kerberos' extra (requests-gssapi) is not installed")

from rm_client import RMConfigError  # noqa: E402
from rm_client.transport import spnego_auth  # noqa: E402


def test_mutual_authentication_is_required() -> None:
    auth = spnego_auth()
    assert isinstance(auth, requests_gssapi.HTTPSPNEGOAuth)
    assert auth.mutual_authentication == requests_gssapi.REQUIRED


def test_a_keytab_without_a_reachable_kdc_fails_in_one_line_without_its_path(tmp_path: Path) -> None:
    keytab = tmp_path / "secret-place" / "h.keytab"
    keytab.parent.mkdir()
    keytab.write_bytes(b"\x05\x02")  # a keytab header, no keys: credentials cannot be acquired
    with pytest.raises(RMConfigError) as raised:
        spnego_auth("harvester/host@NO-SUCH-REALM.INVALID", str(keytab))
    text = str(raised.value)
    assert "kerberos: cannot get credentials for harvester/host@NO-SUCH-REALM.INVALID" in text
    assert "secret-place" not in text and "\n" not in text


def test_config_check_acquires_the_credentials_serve_would(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`config check` passing means `serve` starts: a principal/keytab pair that yields no
    credentials fails the check in one line (exit 2) that names rm.auth and not the keytab."""
    from harvester.cli import main

    keytab = tmp_path / "secret-place" / "h.keytab"
    keytab.parent.mkdir()
    keytab.write_bytes(b"\x05\x02")
    cfg = tmp_path / "h.yaml"
    cfg.write_text("server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\nembedded:\n  listen: 127.0.0.1:0\n"
                   f"store:\n  path: {tmp_path / 'h.db'}\n"
                   "cluster:\n  source: rm\nrm:\n  urls: [http://127.0.0.1:1]\n  auth: kerberos\n"
                   f"kerberos:\n  principal: harvester/host@NO-SUCH-REALM.INVALID\n  keytab: {keytab}\n")
    code = main(["config", "check", str(cfg)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "rm.auth: kerberos: cannot get credentials for harvester/host@NO-SUCH-REALM.INVALID" in err
    assert "secret-place" not in err and err.count("\n") == 1
