"""The apps still running at the jobs loop's last poll (schema version 9): one row per app,
updated in place, gone when the app finishes or is no longer alive."""

from __future__ import annotations

from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.job_history import JobRun, RunUsage


def _alive(app: str, seen: float, vcores: tuple[int, ...] | None = (2, 4, 4)) -> JobRun:
    usage = None if vcores is None else RunUsage(60.0, 1000.0, tuple(1024 * v for v in vcores), vcores, 5.0, 125.0)
    return JobRun("svc", app, 990.0, seen, 3, launched_at=1000.0, final_status="RUNNING", queue="default", usage=usage)


def test_running_apps_round_trip_with_and_without_a_skyline() -> None:
    st = SqliteHistoryStore(":memory:")
    assert st.running_apps() == []
    runs = [_alive("app_1", 1200.0), _alive("app_2", 1200.0, None)]
    assert st.replace_running_apps(runs) == 2
    assert st.running_apps() == runs


def test_a_row_is_updated_in_place_and_apps_no_longer_alive_are_dropped() -> None:
    st = SqliteHistoryStore(":memory:")
    st.replace_running_apps([_alive("app_1", 1200.0), _alive("app_2", 1200.0)])
    later = _alive("app_1", 1500.0, (2, 4, 4, 6, 6))
    st.replace_running_apps([later])
    assert st.running_apps() == [later]
    st.replace_running_apps([])
    assert st.running_apps() == []


def test_an_app_stored_finished_leaves_the_running_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "h.sqlite"
    st = SqliteHistoryStore(path)
    st.replace_running_apps([_alive("app_1", 1200.0), _alive("app_2", 1200.0)])
    st.append_job_runs([JobRun("svc", "app_1", 990.0, 1300.0, 3)])
    assert [r.app_id for r in st.running_apps()] == ["app_2"]
    st.close()
    again = SqliteHistoryStore(path)  # survives a restart
    assert [r.app_id for r in again.running_apps()] == ["app_2"] and again.schema_version() >= 9
