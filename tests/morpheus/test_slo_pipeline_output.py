"""What `harvester slo list|show` print (cli_slo.render_*) from the admin documents
(advice/morpheus_documents.py) for a pipeline inferred from a synthetic audit log in the recorded
HDFS 3.3.6 format: its stages, their shared period, and each period's state (late vs missed)."""

from __future__ import annotations

from audit_synth import chain, generate
from rm_client.wire.apps import decode_apps

from harvester.advice.morpheus_documents import slo_detail, slos_doc
from harvester.board.morpheus import JobModel, MorpheusModel, ReservationsView
from harvester.cli_slo import render_list, render_show
from harvester.models.provenance import build_graph
from harvester.models.slo_contract import Proposal
from harvester.models.slo_inference import fit_slo
from harvester.telemetry.provenance_log import parse_audit_log, runs_from_apps


def board_model(period: float, **kw) -> tuple[MorpheusModel, list]:  # type: ignore[no-untyped-def]
    spec = chain("/etl", period, [10.0, 12.0, 8.0], submit_s=10.0, read_s=80.0, periods=40, **kw)
    lines, apps, (truth,) = generate([spec], seed=2)
    model = fit_slo(build_graph(parse_audit_log(lines).accesses, runs_from_apps(decode_apps(apps))))
    jobs = tuple(JobModel(s.job, s.runs, 0, 0, s, None, Proposal(s.job, s.period_s, s.earliest_start_s, s.deadline_s,
                                                                  s.grid_origin_s, s.problematic, s.reason, 60.0, None,
                                                                  None, "no skyline in this test"))
                 for s in model.jobs)
    return MorpheusModel(1, 0.0, jobs), [truth.app(n, k) for n in (5, 9) for k in range(3)]


def test_show_names_the_pipeline_and_tells_late_from_missed() -> None:
    model, (late1, late2, late3, slow1, slow2, slow3) = board_model(100.0, late={5: 25.0}, slow={9: (1, 5.0)})
    first = render_show(slo_detail(model.job("etl-s1"), None, ReservationsView(), 0.0))
    assert "pipeline: etl-s1 → etl-s2 → etl-s3 (stage 1 of 3; consumers of this stage: etl-s2)" in first
    assert "period 100 s (divides the LCM)" in first
    row = {ln.split()[2]: ln for ln in first.splitlines() if ln.startswith("    ") and "application_" in ln}
    # p5 started 25 s late and still met the consumer: late, not missed; p9's stage 2 was slow:
    # stage 1 ended on time (its share of the window was kept).
    assert row[late1].endswith("yes  late") and row[slow1].endswith("no  on time")
    assert "past periods missed 0%, late 2%" in first
    last = render_show(slo_detail(model.job("etl-s3"), None, ReservationsView(), 0.0))
    row = {ln.split()[2]: ln for ln in last.splitlines() if ln.startswith("    ") and "application_" in ln}
    assert row[late3].endswith("late") and row[slow3].endswith("missed") and "(client:CLI)" in row[slow3]
    assert "past periods missed 2%, late" in last


def test_list_prints_the_pipelines_and_fitted_periods_to_the_millisecond() -> None:
    model, _ = board_model(97.37)
    out = render_list(slos_doc(model, {}, ReservationsView(), 0.0))
    assert "pipeline etl-s1 → etl-s2 → etl-s3: one period and phase; each stage's deadline from the last one's" in out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("etl-s")]
    assert len(rows) == 3 and len({r[2] for r in rows}) == 1 and rows[0][2].startswith("97.3")
