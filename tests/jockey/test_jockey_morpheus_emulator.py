"""Jockey and Morpheus on one plan queue, against the emulator over real HTTP: Morpheus plans and
submits the recurring job's reservation for the window; when the job's run is a deadline job,
Jockey drives that very reservation. One owner per reservation: while the run lasts Morpheus
follows the size Jockey gave it (no drift correction, no re-plan), and Jockey's resizes pass
LowCost's admission in Morpheus's plan, which here holds 6 containers (plan.capacity_fraction
0.375 of 16), so a wish for more is cut to what the plan admits. Afterwards it is handed back.
"""

from __future__ import annotations

from pathlib import Path

from harvester.emulator.demo_recurring import RecurringJob

from jockey_rig import JockeyRig

JOB = RecurringJob("it-etl", 300.0, 30.0, 2, 120.0, 10.0, 270.0)  # window [60 s, 240 s) of each 5-minute period


def test_jockey_drives_morpheus_reservation_within_lowcost_admission(tmp_path: Path) -> None:
    rig = JockeyRig(tmp_path, deadline_s=100.0, reservation_name=None, name=JOB.name, maps=8, map_s=40.0,
                    history=JOB, morpheus={"enabled": True, "plan": {"capacity_fraction": 0.375},
                                           "dra": {"enabled": False},
                                           "reservations": {"mode": "one_off", "renew_lead_s": 120,
                                                            "control_period_s": 5}})
    try:
        c = rig.cluster
        rig.step(2)
        arrival = (c.clock.now() // 300.0 + 1) * 300.0 + 60.0
        rig.step(int(arrival + 1 - c.clock.now()))
        res = rig.admin(f"/v1/morpheus/slo?job={JOB.name}")["reservation"]
        assert res["state"] == "ACTIVE"
        rid = res["reservation_id"]
        app = rig.submit_job(rid)
        rig.step(5)
        doc = rig.admin(f"/v1/jockey/job?name={JOB.name}")
        assert doc["reservation_id"] == rid and doc["state"] == "running"
        assert doc["decided"] > 6 and doc["admitted"] == 6, doc
        assert doc["update"] == "sent" and "LowCost admission" in doc["reason"]
        (listed,) = [r for r in c.client.list_reservations(queue="root.default") if r.reservation_id == rid]
        assert listed.definition.requests[-1].num_containers == 6
        rig.step(15)  # three Morpheus ticks: the resized reservation is Jockey's, not drift
        view = rig.admin("/v1/morpheus/reservations")
        assert view["handed_over"] == {rid: f"jockey:{JOB.name}"}
        (rec,) = [r for r in view["reservations"] if r["reservation_id"] == rid]
        assert rec["state"] == "ACTIVE", rec
        assert not [a for a in view["actions"] if a["kind"] == "update" and rid in a["key"]], "Morpheus left it alone"
        (listed,) = [r for r in c.client.list_reservations(queue="root.default") if r.reservation_id == rid]
        assert max(r.num_containers for r in listed.definition.requests) >= 6
        got = c.client.get_app(app.app_id)
        assert got.running_containers == 7, "AM + 6 maps: the admitted size (+ one container, the user limit)"
        for _ in range(40):
            rig.step(5)
            if c.client.get_app(app.app_id).state == "FINISHED":
                break
        rig.step(10)
        assert rig.admin(f"/v1/jockey/job?name={JOB.name}")["state"] == "idle"
        assert rig.admin("/v1/morpheus/reservations")["handed_over"] == {}, "handed back after the run"
    finally:
        rig.close()
