"""Issue 25, settings seen on a fresh clone: a check that does not depend on what else runs,
clashing ports refused in validation, bad environment overrides named as such, passwords in
URLs never echoed, strict numbers, staleness below the poll interval, an empty file."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harvester.cli import main
from harvester.config import ConfigError, load_settings, parse_settings

LOOPBACK_ZERO = "server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\nembedded:\n  listen: 127.0.0.1:0\n"


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN", raising=False)


def _check(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["config", "check", *extra, str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _error(data: dict, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse_settings(data, where="h.yaml", environ=environ or {})
    return str(info.value)


# --- config check does not bind; --ports does -------------------------------------------------

def test_check_passes_a_valid_file_while_its_ports_are_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A running sidecar holds the ports: checking the file must still pass (it binds nothing);
    `--ports` adds the check `serve` makes."""
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        path = tmp_path / "h.yaml"
        path.write_text(LOOPBACK_ZERO.replace("admin_listen: 127.0.0.1:0", f"admin_listen: 127.0.0.1:{port}")
                        + f"store:\n  path: {tmp_path / 'h.db'}\n")
        code, out, err = _check(path, capsys)
        assert (code, err) == (0, ""), err
        assert "is valid" in out
        code, _, err = _check(path, capsys, "--ports")
        assert code == 2 and f"127.0.0.1:{port} is already in use (server.admin_listen)" in err


@pytest.mark.parametrize(("yaml_text", "keys"), [
    ("server:\n  admin_listen: 127.0.0.1:9999\n  grpc_listen: 127.0.0.1:9999\n", ("server.admin_listen", "server.grpc_listen")),
    ("server:\n  admin_listen: 0.0.0.0:9999\n  grpc_listen: 127.0.0.1:9999\n  allow_insecure_remote: true\n",
     ("server.admin_listen", "server.grpc_listen")),
    ("embedded:\n  listen: 127.0.0.1:9464\n", ("embedded.listen", "server.admin_listen")),
    ("embedded:\n  listen: localhost:50051\n", ("embedded.listen", "server.grpc_listen")),
    ("estimator:\n  enabled: true\n  listen: 127.0.0.1:9464\n", ("estimator.listen", "server.admin_listen")),
    ("estimator:\n  enabled: true\n  listen: 127.0.0.1:18088\n", ("estimator.listen", "embedded.listen")),
])
def test_two_listen_addresses_on_one_port_are_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml_text: str, keys: tuple[str, str]) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(yaml_text)
    code, _, err = _check(path, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert all(k in err for k in keys) and "same port" in err, err


def test_different_ports_and_an_unused_emulator_address_pass() -> None:
    parse_settings({"server": {"admin_listen": "127.0.0.1:0", "grpc_listen": "127.0.0.1:0"}}, environ={})
    parse_settings({"server": {"admin_listen": "10.0.0.1:9000", "grpc_listen": "10.0.0.2:9000",
                               "allow_insecure_remote": True}}, environ={})
    # cluster.source rm: the emulator is not started, its address takes nothing
    parse_settings({"cluster": {"source": "rm"}, "rm": {"urls": ["http://rm:8088"]},
                    "embedded": {"listen": "127.0.0.1:9464"}}, environ={})


# --- environment overrides are named ------------------------------------------------------------

def test_a_bad_environment_override_names_the_variable_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("logging:\n  level: INFO\n")
    env = {"HARVESTER_TELEMETRY__POLL_INTERVAL_S": "abc"}
    for where in (path, None):
        with pytest.raises(ConfigError) as info:
            load_settings(where, environ=env)
        msg = str(info.value)
        assert "environment HARVESTER_TELEMETRY__POLL_INTERVAL_S='abc': telemetry.poll_interval_s" in msg and "telemetry.poll_interval_s" in msg, msg
        assert str(path) not in msg and "embedded default" not in msg, msg


def test_file_and_environment_problems_are_each_told_where_they_are() -> None:
    msg = _error({"telemetry": {"poll_interval_s": "x"}}, {"HARVESTER_RM__MAX_RETRIES": "99"})
    assert "h.yaml: telemetry.poll_interval_s" in msg and "environment HARVESTER_RM__MAX_RETRIES='99': rm.max_retries" in msg, msg


def test_a_cross_field_problem_set_by_the_environment_names_it() -> None:
    msg = _error({}, {"HARVESTER_TELEMETRY__STALE_AFTER_S": "5"})
    assert "environment HARVESTER_TELEMETRY__STALE_AFTER_S='5'" in msg and "telemetry.poll_interval_s" in msg, msg


# --- URL passwords are never echoed --------------------------------------------------------------

MALFORMED = ["http://u:s3cret@rm:99999", "http://u:s3cret@[::1:8088", "ftp://u:s3cret@rm:8088",
             "http://u:s3cret@rm x:8088", "http://u:s3cret@:8088", "http://u:s3cret@rm:abc", "u:s3cret@rm:8088",
             "http://u:s3 cret@rm:8088"]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_rm_url_is_refused_without_its_password(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(f"cluster:\n  source: rm\nrm:\n  urls: [{url!r}]\n".replace("'", '"'))
    code, _, err = _check(path, capsys)
    assert code == 2 and "rm.urls" in err and "s3cret" not in err and "s3 cret" not in err, err
    empty = tmp_path / "e.yaml"
    empty.write_text("cluster:\n  source: rm\n")
    monkeypatch.setenv("HARVESTER_RM__URLS", url)
    code, _, err = _check(empty, capsys)
    assert code == 2 and "HARVESTER_RM__URLS=" in err and "s3cret" not in err and "s3 cret" not in err, err


def test_a_huge_bad_value_is_cut_in_the_message() -> None:
    msg = _error({"rm": {"user": ["x" * 50_000]}})
    assert "rm.user" in msg and len(msg) < 1000, len(msg)


# --- strict numbers, staleness, an empty file -----------------------------------------------------

@pytest.mark.parametrize(("data", "key"), [
    ({"telemetry": {"poll_interval_s": True}}, "telemetry.poll_interval_s"),
    ({"rm": {"max_retries": False}}, "rm.max_retries"),
    ({"store": {"retention_days": "35"}}, "store.retention_days"),
    ({"embedded": {"nodes_per_tenant": 2.5}}, "embedded.nodes_per_tenant"),
    ({"harvesting": {"actuate": 1}}, "harvesting.actuate"),
    ({"store": {"node_sample_rows": "yes"}}, "store.node_sample_rows"),
])
def test_numbers_and_booleans_are_strict(data: dict, key: str) -> None:
    assert key in _error(data)


def test_an_integer_is_still_a_float() -> None:
    s = parse_settings({"telemetry": {"poll_interval_s": 5, "stale_after_s": 20}}, environ={})
    assert s.telemetry.poll_interval_s == 5.0 and isinstance(s.telemetry.poll_interval_s, float)
    # environment values are YAML scalars: numbers and booleans parse as such
    s = parse_settings({}, environ={"HARVESTER_TELEMETRY__POLL_INTERVAL_S": "5", "HARVESTER_HARVESTING__ACTUATE": "false"})
    assert s.telemetry.poll_interval_s == 5.0 and s.harvesting.actuate is False


@pytest.mark.parametrize(("data", "key"), [
    ({"telemetry": {"stale_after_s": 5}}, "telemetry.stale_after_s"),
    ({"telemetry": {"poll_interval_s": 30, "stale_after_s": 30}}, "telemetry.stale_after_s"),
    ({"harvesting": {"guard": {"stale_after_s": 8}}}, "harvesting.guard.stale_after_s"),
])
def test_staleness_not_above_the_poll_interval_is_refused(data: dict, key: str) -> None:
    msg = _error(data)
    assert key in msg and "telemetry.poll_interval_s" in msg and "stale" in msg, msg


@pytest.mark.parametrize("text", ["", "# only a comment\n", "{}\n"])
def test_an_empty_file_is_valid_and_said_to_set_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         text: str) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(text)
    code, out, _ = _check(path, capsys)
    assert code == 0 and f"{path} sets nothing (empty or only comments): every setting takes its default" in out, out
