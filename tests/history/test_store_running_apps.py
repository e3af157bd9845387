"""The apps still running at the jobs loop's last poll (schema version 10): one row per app,
updated in place, gone when the app finishes or is no longer alive."""

from __future__ import annotations

from pathlib import Path

from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.job_history import JobRun, RunningApp


def _alive(app: str, containers: int = 7, vcores: int = 13, preempted: int | None = 0) -> RunningApp:
    return RunningApp("svc", app, f"svc {app}", "default", "RUNNING", 990.0, containers, 1024 * vcores, vcores,
                      preempted)


def test_running_apps_round_trip_with_when_they_were_seen() -> None:
    st = SqliteHistoryStore(":memory:")
    assert st.running_apps() == []
    apps = [_alive("app_1"), _alive("app_2", 0, 0, None)]
    assert st.replace_running_apps(apps, 1200.0) == 2
    assert st.running_apps() == [(a, 1200.0) for a in apps]
    assert st.running_apps(since=1200.5) == []


def test_a_row_is_updated_in_place_and_apps_no_longer_alive_are_dropped() -> None:
    st = SqliteHistoryStore(":memory:")
    st.replace_running_apps([_alive("app_1"), _alive("app_2")], 1200.0)
    later = _alive("app_1", 6, 11, 1)
    st.replace_running_apps([later], 1500.0)
    assert st.running_apps() == [(later, 1500.0)]
    st.replace_running_apps([], 1800.0)
    assert st.running_apps() == []


def test_an_app_stored_finished_leaves_the_running_table(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    st = SqliteHistoryStore(path)
    st.replace_running_apps([_alive("app_1"), _alive("app_2")], 1200.0)
    st.append_job_runs([JobRun("svc", "app_1", 990.0, 1300.0, 3)])
    assert [a.app_id for a, _ in st.running_apps()] == ["app_2"]
    st.close()
    again = SqliteHistoryStore(path)  # survives a restart
    assert [a.app_id for a, _ in again.running_apps()] == ["app_2"] and again.schema_version() >= 10
