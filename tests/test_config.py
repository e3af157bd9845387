from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harvester.cli import main
from harvester.config import ConfigError, Settings, load_settings, parse_settings, schema_paths

EXAMPLE = Path(__file__).resolve().parents[1] / "deploy" / "harvester.yaml"


def _lookup(doc: dict, dotted: str) -> bool:
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_example_validates() -> None:
    settings = load_settings(EXAMPLE, environ={})
    assert isinstance(settings, Settings)
    assert settings.server.grpc_listen.startswith("127.0.0.1:"), "listen addresses default to loopback"


def test_every_schema_key_is_in_the_example_with_a_comment() -> None:
    text = EXAMPLE.read_text()
    doc = yaml.safe_load(text)
    lines = text.splitlines()
    for path in schema_paths():
        assert _lookup(doc, path), f"{path} is missing from deploy/harvester.yaml"
        key = path.rsplit(".", 1)[-1]
        idx = next(i for i, line in enumerate(lines) if re.match(rf"\s*{re.escape(key)}:", line))
        above = lines[idx - 1].strip()
        # a key is documented by the comment just above it, or shares the comment of the key
        # group it belongs to (consecutive keys under one comment, e.g. the two timeouts)
        j = idx - 1
        while j >= 0 and re.match(r"\s*\w+:", lines[j]) and not lines[j].strip().startswith("#"):
            j -= 1
        assert above.startswith("#") or lines[j].strip().startswith("#"), f"{path} has no comment"


def test_every_schema_field_has_a_description() -> None:
    def walk(model: type) -> list[str]:
        missing = []
        for name, field in model.model_fields.items():
            if not field.description:
                missing.append(f"{model.__name__}.{name}")
            ann = field.annotation
            if isinstance(ann, type) and hasattr(ann, "model_fields"):
                missing += walk(ann)
        return missing

    assert walk(Settings) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("server:\n  bogus: 1\n", "server.bogus: unknown key"),
        ("telemetry:\n  poll_interval_s: often\n", "telemetry.poll_interval_s"),
        ("cluster:\n  source: rm\n", "rm.urls: missing value"),
        ("rm:\n  urls: [ftp://rm:8088]\n", "rm.urls[0]"),
        ("rm:\n  urls: [not a url]\n", "rm.urls[0]"),
        ("server:\n  grpc_listen: nowhere\n", "server.grpc_listen: expected host:port"),
        ("rm:\n  ca_bundle: /no/such/file.pem\n", "rm.ca_bundle: cannot read"),
        ("server: [1, 2]\n", "server"),
        ("- just\n- a list\n", "top level must be a mapping"),
        ("server:\n  grpc_listen: [unclosed\n", "invalid YAML"),
        ("logging:\n  format: xml\n", "logging.format"),
    ],
)
def test_bad_files_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, f"expected exactly one line, got: {err!r}"
    assert expected in err
    assert "Traceback" not in err


def test_unreadable_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", str(tmp_path / "absent.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_broken_copy_of_the_example_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "harvester.yaml"
    broken.write_text(EXAMPLE.read_text().replace("max_retries: 3", "max_retries: lots"))
    assert main(["config", "check", str(broken)]) == 2
    assert "rm.max_retries" in capsys.readouterr().err


def test_environment_overrides_urls_and_secrets() -> None:
    env = {"HARVESTER_RM__URLS": "http://rm1:8088, http://rm2:8088", "HARVESTER_RM__USER": "yarn",
           "HARVESTER_CLUSTER__SOURCE": "rm", "HARVESTER_TEST_RM_URL": "ignored: no double underscore"}
    s = parse_settings({}, environ=env)
    assert [str(u) for u in s.rm.urls] == ["http://rm1:8088/", "http://rm2:8088/"]
    assert s.rm.user == "yarn" and s.cluster.source == "rm"


def test_environment_override_wins_over_the_file(tmp_path: Path) -> None:
    f = tmp_path / "h.yaml"
    f.write_text("rm:\n  urls: [http://file:8088]\n  max_retries: 1\n")
    s = load_settings(f, environ={"HARVESTER_RM__MAX_RETRIES": "7"})
    assert s.rm.max_retries == 7 and str(s.rm.urls[0]) == "http://file:8088/"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HARVESTER_RM__NOPE": "1"}, "HARVESTER_RM__NOPE: unknown key"),
        ({"HARVESTER_NOSECTION__X": "1"}, "unknown section"),
        ({"HARVESTER_RM__MAX_RETRIES": "many"}, "rm.max_retries"),
        ({"HARVESTER_RM__URL": "http://rm:8088"}, "unknown key 'url' (did you mean 'urls'?)"),
        ({"HARVESTER_HARVESTNG__ACTUATE": "false"}, "unknown section 'harvestng' (did you mean 'harvesting'?)"),
    ],
)
def test_bad_environment_overrides_are_named(env: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        parse_settings({}, environ=env)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rm:\n  url: [http://rm:8088]\n", "rm.url: unknown key (did you mean 'urls'?)"),
        ("harvestng:\n  actuate: false\n", "harvestng: unknown key (did you mean 'harvesting'?)"),
        ("harvesting:\n  guard:\n    kill_mechanisms: signals\n",
         "harvesting.guard.kill_mechanisms: unknown key (did you mean 'kill_mechanism'?)"),
        ("harvesting:\n  tenants:\n    - tenant: web\n      hostname_patern: ^web-\n",
         "harvesting.tenants[0].hostname_patern: unknown key (did you mean 'hostname_pattern'?)"),
        ("server:\n  zzz: 1\n", "server.zzz: unknown key"),
    ],
)
def test_unknown_keys_get_a_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                         expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1, err
    if "zzz" in text:
        assert "did you mean" not in err, "no suggestion when nothing is close"


def test_the_default_store_does_not_depend_on_the_current_directory(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    paths = set()
    for cwd in (tmp_path, tmp_path.parent):
        monkeypatch.chdir(cwd)
        paths.add(load_settings(None, environ={}).store.path)
    assert paths == {tmp_path / "state" / "harvester" / "harvester.db"}
    monkeypatch.delenv("XDG_STATE_HOME")
    assert load_settings(None, environ={}).store.path == Path.home() / ".local" / "state" / "harvester" / "harvester.db"


def test_a_relative_store_path_is_relative_to_the_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "etc" / "h.yaml"
    conf.parent.mkdir()
    conf.write_text("store:\n  path: var/h.db\n")
    for cwd in (tmp_path, conf.parent):
        monkeypatch.chdir(cwd)
        assert load_settings(conf, environ={}).store.path == conf.parent / "var" / "h.db"
    conf.write_text("store:\n  path: ~/h.db\n")
    assert load_settings(conf, environ={}).store.path == Path.home() / "h.db"
