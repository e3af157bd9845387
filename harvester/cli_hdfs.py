"""`harvester hdfs datanodes|table|choose|evaluate`: HDFS-H for operators (registered by cli.py).

- `datanodes`: read the NameNode's JMX now and show each DataNode with the primary tenant the
  `harvesting.tenants` rules give it — check the mapping before enabling HDFS-H;
- `table`: the placement table a running sidecar serves (GET /v1/hdfs/placement-table);
- `choose`: ask a running sidecar's gRPC ChooseTargets (Algorithm 2) for one block;
- `evaluate`: the durability/availability evaluation (harvester/sim/evaluate_hdfs.py).

The NameNode and the sidecar's addresses come from `--config` (hdfs.namenode_urls,
server.admin_listen, server.grpc_listen) unless given. Exit status 0 ok, 1 runtime failure
(one line), 2 bad configuration or arguments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def _fail(code: int, message: str) -> int:
    from harvester.cli_common import fail

    return fail(code, message)


def _settings(args: argparse.Namespace) -> Any:
    from harvester.config import load_settings

    return load_settings(args.config)


def cmd_datanodes(args: argparse.Namespace) -> int:
    from harvester.cli_rm import render_table
    from harvester.config import ConfigError
    from harvester.decisions.strategy import NodeIdentity, resolve_tenant
    from harvester.telemetry.namenode_jmx import NameNodeJmxClient, NameNodeJmxError
    from rm_client.tables import Table

    try:
        settings = _settings(args)
    except ConfigError as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    urls = args.nn_url or [str(u) for u in settings.hdfs.namenode_urls]
    if not urls:
        return _fail(EXIT_CONFIG, "no NameNode: give --nn-url or a --config whose hdfs.namenode_urls is set")
    client = NameNodeJmxClient(urls, connect_timeout_s=settings.hdfs.connect_timeout_s,
                               read_timeout_s=settings.hdfs.read_timeout_s)
    try:
        info = client.namenode_info()
    except NameNodeJmxError as exc:
        return _fail(EXIT_FAILURE, str(exc))
    finally:
        client.close()
    rows = []
    for dn in info.live:
        owner = resolve_tenant(settings.harvesting, NodeIdentity(dn.xfer_addr, dn.hostname))
        tenant, env = owner if owner else ("(no rule: own tenant, outside the grid)", "")
        rows.append({"datanode_id": dn.xfer_addr, "hostname": dn.hostname, "rack": dn.rack, "tenant": tenant,
                     "environment": env or tenant, "admin_state": dn.admin_state, "capacity_bytes": dn.capacity_bytes,
                     "remaining_bytes": dn.remaining_bytes, "blocks": dn.num_blocks})
    if args.json:
        print(json.dumps({"namenode": info.url, "datanodes": rows, "dead": [d.name for d in info.dead]}, indent=1))
        return EXIT_OK
    table = Table(("DATANODE", "HOST", "RACK", "TENANT", "ENV", "STATE", "FREE GB", "BLOCKS"),
                  tuple((r["datanode_id"], r["hostname"], r["rack"], r["tenant"], r["environment"], r["admin_state"],
                         f"{r['remaining_bytes'] / 1e9:.1f}", str(r["blocks"])) for r in rows))
    print(f"NameNode {info.url} (HDFS {info.version}): {len(info.live)} live, {len(info.dead)} dead DataNodes")
    print(render_table(table) if table.rows else "(none)")
    return EXIT_OK


def cmd_table(args: argparse.Namespace) -> int:
    from harvester.admin_token import TokenError
    from harvester.cli_common import AdminRefused, SidecarError, admin_base, cli_token, sidecar_json
    from harvester.cli_rm import render_table
    from harvester.config import ConfigError
    from hdfs_placement import PlacementTable
    from rm_client.tables import Table

    try:
        settings = _settings(args)
        base = admin_base(args.url, settings.server.admin_listen)
        token = cli_token(args.token_file, settings)  # reads may be closed (server.auth.public_reads)
    except (ConfigError, TokenError) as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    try:
        status, doc = sidecar_json(base, "/v1/hdfs/placement-table", token=token)
    except AdminRefused as exc:
        return _fail(EXIT_FAILURE, str(exc))
    except SidecarError as exc:
        return _fail(EXIT_FAILURE, str(exc))
    if status == 404 and _hdfs_off(base, token):
        return _fail(EXIT_FAILURE, f"HDFS-H is off on the sidecar at {base} (hdfs.enabled: false): set hdfs.enabled: "
                                   "true and hdfs.namenode_urls, then restart it (docs/hdfs.md)")
    if status != 200:
        return _fail(EXIT_FAILURE, f"GET {base}/v1/hdfs/placement-table: HTTP {status}: {doc.get('error', doc)}")
    if args.json:
        print(json.dumps(doc, indent=1))
        return EXIT_OK
    try:
        table = PlacementTable.from_json(doc)
    except ValueError as exc:
        return _fail(EXIT_FAILURE, f"GET {base}/v1/hdfs/placement-table: not a placement table: {exc}")
    print(f"placement table version {table.version} (grid {table.grid_version}), busy above "
          f"{table.busy_cpu_threshold:g} CPU, {len(table.datanodes)} DataNodes")
    cells = Table(("CELL", "TENANTS", "FREE TB"), tuple(
        (f"({c.row},{c.col})", str(c.tenants), f"{c.available_bytes / 1e12:.2f}") for c in table.cells))
    print(render_table(cells))
    nodes = Table(("DATANODE", "HOST", "RACK", "TENANT", "CELL", "FREE GB", "BUSY"), tuple(
        (e.datanode_id, e.hostname, e.rack, e.tenant, f"({e.row},{e.col})", f"{e.remaining_bytes / 1e9:.1f}",
         "busy" if e.busy else "") for e in table.datanodes))
    print(render_table(nodes) if nodes.rows else "(no DataNodes)")
    return EXIT_OK


def _hdfs_off(base: str, token: str | None) -> bool:
    """True when the sidecar's /status says HDFS-H is disabled (no placement-table route)."""
    from harvester.cli_common import SidecarError, sidecar_json

    try:
        _, doc = sidecar_json(base, "/status", token=token)
    except SidecarError:
        return False
    return isinstance(doc, dict) and doc.get("hdfs", {}).get("enabled") is False


def cmd_choose(args: argparse.Namespace) -> int:
    import grpc

    from harvester.config import ConfigError
    from harvester.v1 import hdfs_placement_pb2 as pb
    from harvester.v1 import hdfs_placement_pb2_grpc as pb_grpc

    try:
        address = args.grpc or _settings(args).server.grpc_listen
    except ConfigError as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    req = pb.ChooseTargetsRequest(writer=args.writer or "", replication=args.replication, existing=args.existing or [],
                                  excluded=args.excluded or [], block_size_bytes=args.block_size)
    if args.seed is not None:
        req.seed = args.seed
    with grpc.insecure_channel(address) as channel:
        try:
            res = pb_grpc.HdfsPlacementStub(channel).ChooseTargets(req, timeout=10)
        except grpc.RpcError as exc:
            code = EXIT_CONFIG if exc.code() == grpc.StatusCode.INVALID_ARGUMENT else EXIT_FAILURE
            return _fail(code, f"ChooseTargets at {address}: {exc.code().name}: {exc.details()}")
    print(f"table version {res.table_version}: {res.reason}")
    for t in res.targets:
        relaxed = f"  relaxed: {', '.join(t.relaxed)}" if t.relaxed else ""
        print(f"{t.datanode_id}  cell ({t.row},{t.col})  tenant {t.tenant}  env {t.environment}  rack {t.rack}{relaxed}")
    return EXIT_OK


def cmd_evaluate(args: argparse.Namespace) -> int:
    from harvester.sim.evaluate_hdfs import run
    from harvester.sim.evaluate_hdfs_report import write_report

    return run(args, write_report)


def add_evaluate_arguments(ap: argparse.ArgumentParser) -> None:
    """Arguments of `harvester hdfs evaluate` (kept here so that registering the CLI does not
    import the simulator)."""
    from harvester.arglists import add_number_list, add_processes
    from harvester.eval_paths import add_traces_and_out

    add_traces_and_out(ap, "hdfs", "bitbrains-rnd-7d/ and alibaba-2018-machines/")
    add_number_list(ap, "--levels", float, default=[0.25, 0.5, 0.75], help="mean primary CPU levels (default 0.25 0.5 0.75)")
    add_number_list(ap, "--seeds", int, default=[0, 1, 2], help="seeds (default 0 1 2)")
    ap.add_argument("--servers", type=int, default=None, help="servers per cluster (default 2000)")
    ap.add_argument("--blocks-per-server", type=int, default=None, help="blocks written per server (default 100)")
    ap.add_argument("--no-sensitivity", action="store_true", help="only the main level x seed grid")
    add_processes(ap, None)
    ap.add_argument("--trace-limit", type=int, default=None, help="rows read per trace file (quick runs)")
    ap.add_argument("--from-results", type=Path, default=None,
                    help="re-write the page and figures from a previous run's hdfs_grid_results.json (no simulation)")
    ap.add_argument("--quiet", action="store_true")


def register(sub: argparse._SubParsersAction) -> None:
    """Add `harvester hdfs …` to the top-level subparsers."""
    p = sub.add_parser("hdfs", help="HDFS-H: DataNode tenants, the placement table, ChooseTargets, the evaluation")
    hs = p.add_subparsers(dest="hdfs_command", required=True, metavar="ACTION")

    d = hs.add_parser("datanodes", help="DataNodes from the NameNode's JMX with their primary tenants")
    d.add_argument("--config", default=None, help="settings file (hdfs.namenode_urls, harvesting.tenants)")
    d.add_argument("--nn-url", action="append", help="NameNode HTTP base, e.g. http://nn:9870 (repeat for HA)")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_datanodes)

    t = hs.add_parser("table", help="the placement table a running sidecar serves")
    t.add_argument("--config", default=None, help="settings file (server.admin_listen)")
    t.add_argument("--url", default=None, help="the sidecar's admin base URL, e.g. http://127.0.0.1:9464")
    t.add_argument("--json", action="store_true", help="print the table's JSON as served")
    t.add_argument("--token-file", type=Path, default=None, help="file holding the admin bearer token, when the sidecar's "
                                                                 "reads are closed (default: $HARVESTER_ADMIN_TOKEN, else "
                                                                 "server.auth.token_file)")
    t.set_defaults(func=cmd_table)

    c = hs.add_parser("choose", help="ChooseTargets (Algorithm 2) for one block on a running sidecar")
    c.add_argument("--config", default=None, help="settings file (server.grpc_listen)")
    c.add_argument("--grpc", default=None, help="the sidecar's gRPC address host:port")
    c.add_argument("--replication", type=int, default=3, help="replicas wanted in total (3)")
    c.add_argument("--writer", default=None, help="the writing client's DataNode id, hostname or IP")
    c.add_argument("--existing", action="append", help="a replica the block already has (repeatable)")
    c.add_argument("--excluded", action="append", help="a DataNode to avoid (repeatable)")
    c.add_argument("--block-size", type=int, default=0, help="bytes (0 = hdfs.default_block_size)")
    c.add_argument("--seed", type=int, default=None, help="deterministic choice")
    c.set_defaults(func=cmd_choose)

    e = hs.add_parser("evaluate", help="durability/availability of Grid vs stock HDFS vs greedy (docs/evaluation)")
    add_evaluate_arguments(e)
    e.set_defaults(func=cmd_evaluate)
