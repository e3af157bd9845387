"""`rm.clusters` (several ResourceManagers, issue 29): the old single-RM form keeps working as one
implicit sub-cluster named `default`; the new form parses, entries take the `rm:` section's keys
they leave out; every mistake is ONE line naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from harvester.config import ConfigError, parse_settings
from harvester.subclusters import DEFAULT, federated, subclusters


def _rm(rm: dict[str, Any], **more: Any) -> Any:
    return parse_settings({"cluster": {"source": "rm"}, "rm": rm, **more}, environ={})


def _error(rm: dict[str, Any], **more: Any) -> str:
    with pytest.raises(ConfigError) as err:
        _rm(rm, **more)
    text = str(err.value)
    assert "\n" not in text
    return text


TWO = [{"name": "east", "urls": ["http://rm-east:8088"]}, {"name": "west", "urls": ["http://rm-west-1:8088", "http://rm-west-2:8088"]}]


def test_the_old_single_rm_form_is_one_implicit_subcluster_named_default() -> None:
    s = _rm({"urls": ["http://rm1:8088", "http://rm2:8088"], "user": "yarn"})
    (only,) = subclusters(s)
    assert only.name == DEFAULT == "default"
    assert [str(u) for u in only.rm.urls] == ["http://rm1:8088/", "http://rm2:8088/"] and only.rm.user == "yarn"
    assert not federated(s)


def test_the_embedded_default_stays_one_cluster() -> None:
    s = parse_settings({}, environ={})
    assert [sc.name for sc in subclusters(s)] == ["default"] and not federated(s)


def test_clusters_parse_with_their_own_urls_ha_and_auth_and_inherit_the_rest() -> None:
    s = _rm({"user": "yarn", "read_timeout_s": 20, "clusters": [
        TWO[0], {**TWO[1], "user": "ops", "auth": "simple", "tls_verify": False}]})
    east, west = subclusters(s)
    assert (east.name, west.name) == ("east", "west") and federated(s)
    assert east.rm.user == "yarn" and east.rm.read_timeout_s == 20  # from rm:
    assert west.rm.user == "ops" and west.rm.tls_verify is False and west.rm.read_timeout_s == 20
    assert len(west.rm.urls) == 2  # an HA pair in one sub-cluster


def test_an_environment_override_gives_the_clusters_as_yaml() -> None:
    s = parse_settings({"cluster": {"source": "rm"}}, environ={
        "HARVESTER_RM__CLUSTERS": "[{name: a, urls: [http://a:8088]}, {name: b, urls: [http://b:8088]}]"})
    assert [sc.name for sc in subclusters(s)] == ["a", "b"]


@pytest.mark.parametrize("rm, more, expected", [
    ({"urls": ["http://x:8088"], "clusters": TWO}, {}, "rm: urls and clusters are both set"),
    ({"clusters": [TWO[0], {**TWO[1], "name": "east"}]}, {}, "clusters[1].name: 'east' is also clusters[0]'s name"),
    ({"clusters": [TWO[0], {**TWO[1], "urls": ["http://rm-east:8088/"]}]}, {}, "is also in sub-cluster 'east'"),
    ({"clusters": [{"name": "a/b", "urls": ["http://a:1"]}]}, {}, "rm.clusters[0].name: a sub-cluster's name is"),
    ({"clusters": [{"name": "a"}]}, {}, "clusters[0].urls: missing value"),
    ({"clusters": [{"urls": ["http://a:1"]}]}, {}, "rm.clusters[0].name: missing value"),
    ({"clusters": [{"name": "a", "urls": ["http://a:1"], "usr": "x"}]}, {}, "rm.clusters[0].usr: unknown key (did you mean 'user'?)"),
    ({"clusters": [{"name": "a", "urls": ["http://a:1"], "clusters": []}]}, {}, "rm.clusters[0].clusters: unknown key"),
    ({"clusters": [{"name": "a", "urls": ["http://a:1"], "backoff_base_s": 9}]}, {}, "rm.clusters[0]: backoff_base_s (9) is above"),
    ({"clusters": "east"}, {}, "rm.clusters: Input should be a valid list"),
    ({"clusters": TWO}, {"morpheus": {"enabled": True}}, "morpheus.enabled: true is not supported with several rm.clusters"),
    ({"clusters": TWO}, {"jockey": {"enabled": True}}, "jockey.enabled: true is not supported with several rm.clusters"),
])
def test_mistakes_are_one_line_naming_the_key(rm: dict[str, Any], more: dict[str, Any], expected: str) -> None:
    assert expected in _error(rm, **more)


def test_clusters_with_the_embedded_source_is_refused() -> None:
    with pytest.raises(ConfigError, match="rm.clusters is set but cluster.source is embedded"):
        parse_settings({"rm": {"clusters": TWO}}, environ={})


def test_no_rm_at_all_names_both_forms() -> None:
    with pytest.raises(ConfigError, match="rm.urls: missing value .*or rm.clusters"):
        parse_settings({"cluster": {"source": "rm"}}, environ={})
