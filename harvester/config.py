"""Settings schema; `deploy/harvester.yaml` is its commented example (DESIGN.md principle 10).

One YAML file is loaded into typed, validated settings. A bad file never produces a
traceback: `load_settings` raises `ConfigError` whose `str()` is ONE line naming the key and
the problem, and the CLI turns it into exit status 2.

Environment overrides: `HARVESTER_<SECTION>__<KEY>=value` (double underscore between levels,
e.g. `HARVESTER_RM__URLS=http://rm1:8088,http://rm2:8088`, `HARVESTER_RM__USER=yarn`) replaces
one key after the file is read; list values are comma-separated or a YAML list. This is how
URLs and secrets reach a container without editing the file. Variables without `__`
(such as the tests' `HARVESTER_TEST_RM_URL`) are not config overrides.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import AnyHttpUrl, BaseModel, Field, ValidationError, ValidationInfo, field_validator, model_validator

from harvester.config_base import MAX_PERIOD_S, MAX_TIMEOUT_S, FilePath, Section, check_listen, listens_clash
from harvester.config_estimator import EstimatorSettings
from harvester.config_harvesting import HarvestingSettings
from harvester.config_hdfs import HdfsSettings
from harvester.config_jockey import JockeySettings
from harvester.config_morpheus import MorpheusSettings
from harvester.config_placement import PlacementSettings
from harvester.config_server import ServerSettings
from harvester.paths import state_dir
from harvester.textfile import read_text


class ConfigError(Exception):
    """A configuration problem, rendered as one line: `<where>: <key>: <problem>`."""


_Section = Section  # the shared base (config_base.py): finite numbers, unknown keys refused


class LoggingSettings(_Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    format: Literal["text", "json"] = Field("text", description="text for people, json for log shippers.")


def default_store_path() -> Path:
    """The history store when the settings name none: `$XDG_STATE_HOME/harvester/harvester.db`
    (`~/.local/state/harvester/harvester.db` without it) — one file per user, whatever the
    current directory, so `harvester tenants` finds what `harvester serve` wrote."""
    return state_dir() / "harvester.db"


class StoreSettings(_Section):
    backend: Literal["sqlite", "memory"] = Field("sqlite", description="History store: sqlite (WAL file) or memory (SQLite :memory:; tests, demos).")
    path: FilePath = Field(default_factory=default_store_path, description="SQLite file (created with its folder); default $XDG_STATE_HOME/harvester/harvester.db (~/.local/state/...); a relative path is relative to the settings file's folder.")
    retention_days: float = Field(35.0, gt=0, le=3650, description="Per-tenant 2-minute slots older than this are pruned (the models use a 30-day window); job runs too, unless harvesting.job_length.history_days is longer.")
    raw_samples_retention_days: float = Field(2.0, gt=0, le=365, description="Raw per-poll samples older than this are pruned: the node rows (diagnosis) and each poll's primary vector (the reaction-time reserve's input: folded into its per-day summary at each refit, so it must exceed harvesting.refit_interval_s; 116 KB per node-day at 3-s polls, 35 KB at 10 s).")
    node_sample_rows: bool = Field(True, description="Write every poll's full per-node rows (diagnosis); false keeps only the compact primary vectors (large clusters, the simulator).")
    prune_interval_s: float = Field(3600.0, ge=60, le=MAX_PERIOD_S, description="How often the retention loop prunes old rows.")
    decision_log_days: float = Field(7.0, ge=0, le=3650, description="The guard's actions (formula, inputs, data time, fate) are kept this many days for `harvester explain` without a running sidecar; 0 = not stored.")
    model_versions_kept: int = Field(30, ge=1, le=10000, description="Fitted model versions kept (class models, margins, HDFS grids); older ones are pruned.")

    @field_validator("path")
    @classmethod
    def _path_writable(cls, v: Path, info: ValidationInfo) -> Path:
        v = v.expanduser()
        if info.data.get("backend", "sqlite") == "sqlite":
            if v.is_dir():
                raise ValueError(f"{v} is a directory; name the SQLite file")
            probe = v.resolve().parent
            while not probe.exists():
                probe = probe.parent
            # nothing of the folder exists here (e.g. a container's volume, /srv/...): the file is
            # for another machine, and opening the store says so where it runs
            if probe.parent != probe and (not probe.is_dir() or not os.access(probe, os.W_OK)):
                raise ValueError(f"folder {probe} is not writable")
        return v


class KerberosSettings(_Section):
    principal: str | None = Field(None, description="Principal Harvester authenticates as (e.g. harvester/host@REALM); null = the default credential cache (kinit).")
    keytab: FilePath | None = Field(None, description="Keytab holding the principal's key; null = the credential cache. Never shown in logs or /status.")

    @field_validator("keytab")
    @classmethod
    def _keytab(cls, v: Path | None) -> Path | None:
        if v is not None and (not v.is_file() or not os.access(v, os.R_OK)):
            raise ValueError("the keytab file is missing or unreadable")  # its path is not echoed
        return v


class RMEndpointSettings(_Section):
    """One ResourceManager (or HA set of them): the `rm:` section's own keys, and the type of each
    `rm.clusters` entry (with its `name`)."""

    urls: list[AnyHttpUrl] = Field(default_factory=list, description="ResourceManager REST base URLs; several = HA, the active one is found.")
    user: str | None = Field(None, description="Simple-auth user sent as ?user.name= (writes run as dr.who otherwise).")
    auth: Literal["simple", "kerberos"] = Field("simple", description="simple, or kerberos (SPNEGO, mutual authentication required; kerberos: section; needs the 'kerberos' extra).")
    tls_verify: bool = Field(True, description="Verify the RM's TLS certificate.")
    ca_bundle: FilePath | None = Field(None, description="CA bundle file for TLS verification (implies tls_verify).")
    connect_timeout_s: float = Field(3.0, gt=0, le=MAX_TIMEOUT_S, description="Connect timeout per request.")
    read_timeout_s: float = Field(10.0, gt=0, le=MAX_TIMEOUT_S, description="Read timeout per request.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries for idempotent calls (exponential backoff with jitter).")
    backoff_base_s: float = Field(0.2, gt=0, le=60, description="First retry delay; doubles each retry.")
    backoff_max_s: float = Field(5.0, gt=0, le=600, description="Largest retry delay.")
    max_response_mb: float = Field(64.0, ge=1, le=2048, description="Largest RM answer read (MB; a 10,000-node /nodes is ~20 MB); larger ones fail the call.")

    @field_validator("ca_bundle")
    @classmethod
    def _readable(cls, v: Path | None) -> Path | None:
        if v is not None and not os.access(v, os.R_OK):
            raise ValueError(f"cannot read {v}")
        return v

    @model_validator(mode="after")
    def _backoff(self) -> RMEndpointSettings:
        at = "" if isinstance(self, SubClusterSettings) else "rm."  # an entry's error carries its place
        if self.backoff_base_s > self.backoff_max_s:
            raise ValueError(f"{at}backoff_base_s ({self.backoff_base_s:g}) is above {at}backoff_max_s ({self.backoff_max_s:g})")
        return self


#: A sub-cluster's name: it prefixes its node ids (`name/host:port`), labels metrics and routes
#: the RM plug-in's `?subcluster=`; Hadoop node ids never hold a "/".
SUBCLUSTER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"


class SubClusterSettings(RMEndpointSettings):
    """One `rm.clusters` entry: a YARN Federation sub-cluster or a separate cluster (its RM(s),
    HA, auth); keys it leaves out take the `rm:` section's values (harvester/subclusters.py)."""

    name: str = Field(description="The sub-cluster's name (letters, digits, . _ -): node ids become name/host:port, metrics and explain carry it, the RM plug-in asks ?subcluster=name.")


    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.match(SUBCLUSTER_NAME, v):
            raise ValueError("a sub-cluster's name is 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit")
        return v


class RMSettings(RMEndpointSettings):
    clusters: list[SubClusterSettings] = Field(default_factory=list, max_length=64, description="Several ResourceManagers (YARN Federation sub-clusters or separate clusters), each {name, urls, ...rm keys}; empty = one cluster, rm.urls, named 'default'.")

    @model_validator(mode="before")
    @classmethod
    def _inherit(cls, data: Any) -> Any:
        """An entry's keys it leaves out are the `rm:` section's (user, auth, timeouts, ...), so
        shared settings are written once; `urls` never is."""
        if not isinstance(data, dict) or not isinstance(data.get("clusters"), list):
            return data
        shared = {k: v for k, v in data.items() if k not in ("urls", "clusters")}
        entries = [{**shared, **c} if isinstance(c, dict) else c for c in data["clusters"]]
        return {**data, "clusters": entries}

    @model_validator(mode="after")
    def _clusters(self) -> RMSettings:
        from rm_client.redact import redact_url

        if not self.clusters:
            return self
        if self.urls:
            raise ValueError("urls and clusters are both set: give each sub-cluster's urls in its clusters entry")
        seen: dict[str, int] = {}
        owner: dict[str, str] = {}
        for i, c in enumerate(self.clusters):
            if c.name in seen:
                raise ValueError(f"clusters[{i}].name: {c.name!r} is also clusters[{seen[c.name]}]'s name: names must be unique")
            seen[c.name] = i
            if not c.urls:
                raise ValueError(f"clusters[{i}].urls: missing value (sub-cluster {c.name!r})")
            for u in c.urls:
                key = str(u).rstrip("/").lower()
                if key in owner:
                    raise ValueError(f"clusters[{i}].urls: {redact_url(str(u))} is also in sub-cluster {owner[key]!r}: "
                                     "one RM belongs to one sub-cluster")
                owner[key] = c.name
        return self


class ClusterSettings(_Section):
    source: Literal["embedded", "rm"] = Field("embedded", description="embedded: the built-in YARN emulator with a demo cluster, polled over HTTP; rm: a real ResourceManager (rm.urls).")


class EmbeddedSettings(_Section):
    listen: str = Field("127.0.0.1:18088", description="Where the built-in YARN emulator serves the RM REST API (host:port; 0 = any free port).")
    speed: float = Field(1.0, gt=0, le=3600, description="Emulated seconds per real second (the whole sidecar runs on this clock).")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of the demo cluster's primary-tenant patterns and batch arrivals.")
    nodes_per_tenant: int = Field(3, ge=1, le=2500, description="NodeManagers in each of the demo's four primary tenants.")

    _listen = field_validator("listen")(check_listen)


class TelemetrySettings(_Section):
    poll_interval_s: float = Field(10.0, ge=0.1, le=3600, description="How often the RM is polled.")
    stale_after_s: float = Field(30.0, gt=0, le=3600, description="Telemetry older than this is stale: no new capacity, no kills.")
    failure_backoff_max_s: float = Field(120.0, ge=0.1, le=3600, description="While polls fail, the next poll waits poll_interval_s × 2^failures with jitter, at most this long (never less than poll_interval_s).")

    @model_validator(mode="after")
    def _fresh_enough(self) -> TelemetrySettings:
        stale_before_next_poll(self.stale_after_s, "telemetry.stale_after_s", self.poll_interval_s)
        return self


def stale_before_next_poll(stale_after_s: float, key: str, poll_interval_s: float) -> None:
    """Refuse a staleness limit that is not above the poll interval: every snapshot would be
    stale before the next one arrives, so the guard would never give capacity (issue 25)."""
    if stale_after_s <= poll_interval_s:
        raise ValueError(f"{key} ({stale_after_s:g}) must be above telemetry.poll_interval_s ({poll_interval_s:g}): "
                         "every snapshot would be stale before the next one arrives (no capacity, no kills)")


class Settings(_Section):
    """All of Harvester's settings; every field is documented in deploy/harvester.yaml."""

    server: ServerSettings = Field(default_factory=ServerSettings, description="Listen addresses and shutdown.")
    logging: LoggingSettings = Field(default_factory=LoggingSettings, description="Log level and format.")
    store: StoreSettings = Field(default_factory=StoreSettings, description="History store.")
    cluster: ClusterSettings = Field(default_factory=ClusterSettings, description="Which cluster to advise.")
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings, description="The built-in cluster (cluster.source: embedded).")
    rm: RMSettings = Field(default_factory=RMSettings, description="ResourceManager REST client.")
    kerberos: KerberosSettings = Field(default_factory=KerberosSettings, description="Kerberos identity (rm.auth / hdfs.auth: kerberos).")
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings, description="Polling the cluster.")
    harvesting: HarvestingSettings = Field(default_factory=HarvestingSettings, description="YARN-H: tenant classes, Algorithm 1, the guard.")
    hdfs: HdfsSettings = Field(default_factory=HdfsSettings, description="HDFS-H: NameNode JMX, grid refit, placement table.")
    placement: PlacementSettings = Field(default_factory=PlacementSettings, description="Phoenix: constraint-aware placement (ConstrainedPlacement).")
    morpheus: MorpheusSettings = Field(default_factory=MorpheusSettings, description="Morpheus: SLOs, skylines, LowCost reservations, DRA.")
    jockey: JockeySettings = Field(default_factory=JockeySettings, description="Jockey: deadline jobs kept on time by resizing their reservation.")
    estimator: EstimatorSettings = Field(default_factory=EstimatorSettings, description="The Hadoop Resource Estimator 3.3.6 REST API, served from the history store.")

    @model_validator(mode="after")
    def _rm_needed(self) -> Settings:
        if self.cluster.source == "rm" and not self.rm.urls and not self.rm.clusters:
            raise ValueError("rm.urls: missing value (required when cluster.source is rm; or rm.clusters)")
        if self.cluster.source == "embedded" and self.rm.clusters:
            raise ValueError("rm.clusters is set but cluster.source is embedded (one demo cluster): set cluster.source: rm")
        if len(self.rm.clusters) > 1:
            for key, on in (("morpheus.enabled", self.morpheus.enabled), ("jockey.enabled", self.jockey.enabled)):
                if on:
                    raise ValueError(f"{key}: true is not supported with several rm.clusters yet "
                                     "(reservations and deadline jobs are one RM's)")
        return self

    @model_validator(mode="after")
    def _cross_sections(self) -> Settings:
        guard_stale = self.harvesting.guard.stale_after_s
        if guard_stale is not None:
            stale_before_next_poll(guard_stale, "harvesting.guard.stale_after_s", self.telemetry.poll_interval_s)
        # server.admin_listen vs grpc_listen is the server section's own rule (config_server.py).
        others = [("server.admin_listen", self.server.admin_listen), ("server.grpc_listen", self.server.grpc_listen)]
        extra = []
        if self.cluster.source == "embedded":
            extra.append(("embedded.listen", self.embedded.listen))
        if self.estimator.enabled:
            extra.append(("estimator.listen", self.estimator.listen))
        for i, (key, listen) in enumerate(extra):
            for other_key, other in others + extra[:i]:
                if listens_clash(listen, other):
                    raise ValueError(f"{key} ({listen}) and {other_key} ({other}) take the same port: give each its own")
        return self


# --- loading -------------------------------------------------------------------------------

ENV_PREFIX = "HARVESTER_"


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part)
            out += ("." if out else "") + (text if text.isprintable() and text.strip() == text and text else repr(text))
    return out


def _section_model(ann: Any) -> type[BaseModel] | None:
    """The settings model a field holds (itself, or the item of a list / optional of one)."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()):
        found = _section_model(arg)
        if found is not None:
            return found
    return None


def did_you_mean(model: type[BaseModel] | None, key: str) -> str:
    """" (did you mean 'x'?)" for an unknown `key` of `model` close to a known one, else ""."""
    import difflib

    if model is None:
        return ""
    close = difflib.get_close_matches(key.lower(), list(model.model_fields), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The settings model holding the key at `loc` (list indexes are skipped)."""
    model: type[BaseModel] | None = Settings
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        model = _section_model(model.model_fields[part].annotation)
    return model


#: Where each environment override put its value: settings path -> (variable, raw value).
EnvSources = dict[tuple[str, ...], tuple[str, str]]


def _describe(err: Mapping[str, Any], *, echo: bool = True) -> str:
    """One problem as "<key>: <problem> (got <value>)"; the value is shown cut and without URL
    userinfo (harvester/echo.py), and not at all with `echo=False` (the caller shows it)."""
    from harvester.echo import shown
    from rm_client.redact import redact_text

    kind, loc = err["type"], _loc(tuple(err["loc"]))
    if kind == "extra_forbidden":
        key = err["loc"][-1]
        return f"{loc}: unknown key" + did_you_mean(_model_at(tuple(err["loc"][:-1])), str(key))
    if kind == "missing":
        return f"{loc}: missing value"
    msg = redact_text(str(err["msg"]).removeprefix("Value error, "))
    if not loc:  # model-level validators name their key themselves
        return msg
    got = err.get("input")
    simple = isinstance(got, (str, int, float, bool)) or got is None
    is_url = any("url" in str(part) for part in err["loc"])
    shown_got = shown(got, url=is_url) if echo and simple else ""
    return f"{loc}: {msg}" + (f" (got {shown_got})" if shown_got and shown_got not in msg else "")


def _env_source(err: Mapping[str, Any], sources: EnvSources) -> list[str]:
    """The environment overrides an error is about: the one that set the value (or a list
    holding it), else those whose key a section's or cross-field rule names in its message."""
    loc = tuple(str(part) for part in err["loc"] if not isinstance(part, int))
    for path, (name, raw) in sources.items():
        if loc[:len(path)] == path:
            return [f"{name}={_env_shown(name, raw)}"]
    msg = str(err["msg"])
    return [f"{name}={_env_shown(name, raw)}" for path, (name, raw) in sources.items()
            if path[:len(loc)] == loc and ".".join(path) in msg]


def _env_shown(name: str, raw: str) -> str:
    from harvester.echo import shown

    return shown(raw, url="URL" in name)


def _problems(errors: list[Any], where: str, sources: EnvSources) -> str:
    """Every problem on one line: those of the file (or the embedded default) after `where`, each
    one an environment override caused after the variable, since the file is not to blame."""
    in_file, in_env = [], []
    for err in errors:
        names = _env_source(err, sources)
        if names:
            in_env.append(f"environment {', '.join(names)}: {_describe(err, echo=False)}")
        else:
            in_file.append(_describe(err))
    parts = ([f"{where}: " + "; ".join(in_file)] if in_file else []) + in_env
    return "; ".join(parts).replace("\n", "\\n")  # one line, always


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
        if any(not p for p in path):
            raise ConfigError(f"environment {name}: malformed override name")
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = (name, raw)
    return tree


def _coerce_env(model: type[BaseModel], key: str, env_name: str, raw: str) -> Any:
    field = model.model_fields.get(key)
    if field is None:
        raise ConfigError(f"environment {env_name}: unknown key {key!r}{did_you_mean(model, key)}")
    if getattr(field.annotation, "__origin__", None) is list and not raw.lstrip().startswith("["):
        return [s.strip() for s in raw.split(",") if s.strip()]
    try:
        return yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        return raw


def _apply_env(model: type[BaseModel], data: dict[str, Any], overrides: dict[str, Any],
               sources: EnvSources, at: tuple[str, ...] = ()) -> None:
    for key, value in overrides.items():
        field = model.model_fields.get(key)
        if isinstance(value, tuple):
            env_name, raw = value
            data[key] = _coerce_env(model, key, env_name, raw)
            sources[(*at, key)] = (env_name, raw)
            continue
        sub = field.annotation if field is not None else None
        if not (isinstance(sub, type) and issubclass(sub, BaseModel)):
            raise ConfigError(f"environment {ENV_PREFIX}{key.upper()}__…: unknown section {key!r}"
                              f"{did_you_mean(model, key)}")
        section = data.get(key)
        if section is None:
            section = {}
        if not isinstance(section, dict):
            raise ConfigError(f"{key}: expected a mapping")
        data[key] = section
        _apply_env(sub, section, value, sources, (*at, key))


def _relative_to(data: dict[str, Any], base_dir: Path) -> None:
    """A relative `store.path` (or `estimator.data_dir`) in a settings file names a file (folder)
    beside that settings file."""
    for section, key in (("store", "path"), ("estimator", "data_dir")):
        node = data.get(section)
        path = node.get(key) if isinstance(node, dict) else None
        if isinstance(path, str) and path and not Path(path).expanduser().is_absolute():
            node[key] = str(base_dir / path)


def parse_settings(data: Any, *, where: str = "config", environ: Mapping[str, str] | None = None,
                   base_dir: Path | None = None) -> Settings:
    """Validate already-parsed YAML data (plus environment overrides) into `Settings`; relative
    paths of the data resolve against `base_dir` (the settings file's folder) when given."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the top level must be a mapping of sections, got {type(data).__name__}")
    if base_dir is not None:
        _relative_to(data, base_dir)
    sources: EnvSources = {}
    _apply_env(Settings, data, _env_overrides(os.environ if environ is None else environ), sources)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_problems(exc.errors(), where, sources)) from None


#: Settings files are small; these bounds make a hostile or broken one fail in one line.
MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_NODES = 100_000


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (YAML 1.2 forbids it; PyYAML
    silently keeps the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: let PyYAML report it
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first.start_mark.line + 1})", key_node.start_mark)
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def _check_shape(text: str, where: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH and aliases that expand past MAX_NODES (a "billion
    laughs" document), by scanning parse events: iterative, so a 1,000-deep file costs no
    recursion, and nothing is constructed yet."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [anchor, expanded size] per open collection
    total = 0

    def done(anchor: str | None, size: int) -> None:
        nonlocal total
        if anchor:
            sizes[anchor] = size
        if stack:
            stack[-1][1] += size
        else:
            total += size

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 1])
            if len(stack) > MAX_DEPTH:
                mark = event.start_mark
                raise ConfigError(f"{where}: line {mark.line + 1} column {mark.column + 1}: invalid YAML: "
                                  f"nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = stack.pop()
            done(anchor, size)
        elif isinstance(event, yaml.ScalarEvent):
            done(event.anchor, 1)
        elif isinstance(event, yaml.AliasEvent):
            done(None, sizes.get(event.anchor or "", 1))
        if total + sum(size for _, size in stack) > MAX_NODES:
            mark = event.start_mark
            raise ConfigError(f"{where}: line {mark.line + 1}: invalid YAML: more than {MAX_NODES:,} values once "
                              "aliases are expanded")


def parse_yaml(text: str, where: str) -> Any:
    """The YAML document of a settings file, or `ConfigError` in one line (size, depth,
    duplicate keys, syntax)."""
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_FILE_BYTES // 1024} KB: not a settings file")
    try:
        _check_shape(text, where)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f": line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}{at}: invalid YAML: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{where}: invalid YAML: nested too deeply") from None


def empty_file_note(path: str | Path | None, settings: Settings) -> str:
    """"" unless the settings file holds no setting (empty, only comments, `{}`): then what that
    means, for `config check` and `serve` to say (issue 25: an empty file is valid — all defaults
    — and said to be, since it is more often a mistake than a choice)."""
    if path is None:
        return ""
    try:
        data = parse_yaml(read_text(Path(path), ConfigError), str(path))
    except ConfigError:
        return ""
    if data not in (None, {}):
        return ""
    rest = "every setting takes its default" if not settings.model_fields_set else "only the environment's overrides apply"
    return f"{path} sets nothing (empty or only comments): {rest}"


def load_settings(path: str | Path | None, *, environ: Mapping[str, str] | None = None) -> Settings:
    """Read and validate a YAML file; `None` means the embedded default (all defaults)."""
    if path is None:
        return parse_settings({}, where="embedded default", environ=environ)
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{p}: is a directory, not a settings file")
    text = read_text(p, ConfigError)
    return parse_settings(parse_yaml(text, str(p)), where=str(p), environ=environ, base_dir=p.resolve().parent)


def schema_paths(model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    """Every leaf key of the schema as a dotted path (used to check the example documents all)."""
    out: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(schema_paths(ann, path + "."))
        else:
            out.append(path)
    return out
