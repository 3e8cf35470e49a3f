"""The Search tab's poll costs what changed, not the size of the session (issue 24).

A session with many finished runs is written straight into the store (as a search writes
them); the statements the poll sends to the store are counted with a SQLAlchemy event.
"""

from __future__ import annotations

import time
from pathlib import Path

import gradio as gr
import pytest
import sqlalchemy as sa

from bracket.app.manager import SessionManager
from bracket.session import SearchSettings, Session
from ui import search_tab
from ui.loss_plot import plot_json

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]
SKIP = gr.skip()
NAMES = ("status", "progress", "plot", "log", "table")
RUNS = 40


def filled_session(runs_dir: Path, fields: dict[str, str], count: int = RUNS) -> Path:
    session = Session.create("demo-cpu", fields, SearchSettings(budget=count + 5, sample_prompts=""),
                             out_dir=runs_dir, name="cost")
    now = time.time()
    for index in range(count):
        params = {"learning_rate": 1e-4 * (index + 1)}
        config_id = session.store.add_config(session.name, trial_number=index, kind="search",
                                             name=f"search-{index}", params=params)
        session.store.update_config(config_id, status="done", value=index / count)
        session.store.add_run(session.name, config_id=config_id, kind="search", stage="search",
                              label=f"search-{index}", seed=42, seed_index=0, params=params, status="done",
                              max_steps=20, last_step=20, started_at=now, finished_at=now, duration_s=1.0,
                              loss=[[s, 1.0 / (s + index)] for s in range(1, 21)])
    folder = session.folder
    session.close()
    return folder


class Clock:
    """``time.monotonic`` of the snapshot cache, moved on by hand: one call of ``tick`` = one second."""

    def __init__(self, monkeypatch) -> None:
        self.now = 1000.0
        monkeypatch.setattr("bracket.app.snapshot_cache.time.monotonic", lambda: self.now)

    def tick(self) -> None:
        self.now += 1.0


def count_statements(engine: sa.engine.Engine) -> list[str]:
    seen: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    return seen


def skipped(value: object) -> bool:
    return isinstance(value, dict) and value == SKIP


def by_name(result: tuple) -> dict[str, object]:
    return dict(zip(NAMES, result[:5]))


@pytest.fixture
def watched(runs_dir, demo_fields, monkeypatch):
    clock = Clock(monkeypatch)
    manager = SessionManager(runs_dir, snapshot_ttl=0.5)
    session = manager.open(filled_session(runs_dir, demo_fields))
    yield manager, session, clock
    manager.close()


def test_three_tabs_with_nothing_changed_read_the_store_once_and_get_skips(watched):
    manager, session, clock = watched
    tabs = [search_tab.poll(manager, {}, 0.6)[-1] for _ in range(3)]
    statements = count_statements(session.store.engine)
    clock.tick()
    results = [search_tab.poll(manager, sent, 0.6) for sent in tabs]
    assert len(statements) == 1 and "count" in statements[0].lower()  # the change marker, nothing else
    assert all(skipped(value) for result in results for value in result[:-1])


def test_a_new_loss_point_sends_only_the_chart_and_the_progress(watched):
    manager, session, clock = watched
    run_id = session.store.add_run(session.name, kind="search", stage="search", label="live", seed=42,
                                   status="running", max_steps=20, last_step=0)
    live = {"run_id": run_id, "label": "live", "step": 1, "max_steps": 20, "loss": [[1, 0.9]], "samples": [],
            "log_path": "", "started_at": time.time()}
    session.executor.current = live
    sent = search_tab.poll(manager, {}, 0.6)[-1]
    statements = count_statements(session.store.engine)
    clock.tick()
    live["step"], live["loss"] = 2, [[1, 0.9], [2, 0.8]]
    polled = search_tab.poll(manager, sent, 0.6)
    result = by_name(polled)
    # the live run's step cell moves with its progress bar (seen in review: the table said "…/50")
    assert {name for name, value in result.items() if not skipped(value)} == {"plot", "progress", "table"}
    assert "step 2 / 20" in result["progress"] and len(plot_json(result["plot"])["data"]) == search_tab.RECENT_RUNS + 1
    assert result["table"].set_index("run").loc[run_id, "step"] == "2/20"
    assert len(statements) == 1  # the change marker: the snapshot is patched, not rebuilt
    statements.clear()
    clock.tick()
    session.store.update_run(run_id, last_step=2, loss=[[1, 0.9], [2, 0.8]])  # what the executor stores every 3 s
    statements.clear()
    result = by_name(search_tab.poll(manager, polled[-1], 0.6))
    assert all(skipped(value) for value in result.values()) and len(statements) == 2  # + the running rows


def test_a_finished_run_in_the_store_sends_its_row(watched):
    manager, session, clock = watched
    sent = search_tab.poll(manager, {}, 0.6)[-1]
    clock.tick()
    run_id = session.store.add_run(session.name, kind="search", stage="search", label="new", seed=7,
                                   status="failed", max_steps=20, last_step=3, failure_reason="boom")
    statements = count_statements(session.store.engine)
    result = by_name(search_tab.poll(manager, sent, 0.6))
    # a rebuild reads each table once (+ the marker of each per-change view, and the ratings and
    # choices the standings rank by: the trial table's rank and raw figures are the leaderboard's),
    # none per run
    assert 1 < len(statements) <= 15 < RUNS
    assert not skipped(result["table"]) and list(result["table"]["run"])[0] == run_id
    assert skipped(result["status"]) and skipped(result["log"])


def test_standings_are_computed_once_per_store_change(watched, monkeypatch):
    manager, session, clock = watched
    calls = []
    real = __import__("bracket.app.manager", fromlist=["standings"]).standings
    monkeypatch.setattr("bracket.app.manager.standings", lambda s: calls.append(1) or real(s))
    for _ in range(3):
        manager.results.leaderboard()
        manager.compare.run_labels()
        clock.tick()
    assert len(calls) == 1
    run_id = next(r["id"] for r in manager.snapshot().runs)
    manager.compare.rate(run_id, 4.0)
    clock.tick()
    manager.results.leaderboard()
    assert len(calls) == 2


def test_the_trial_table_pages_newest_first():
    from types import SimpleNamespace

    from ui.render import runs_frame

    runs = [{"id": i, "config_name": f"c{i}", "kind": "search", "status": "running" if i == 700 else "done",
             "seed": 1, "last_step": 5, "max_steps": 5, "score": None, "judges": {}, "params": {},
             "duration_s": None, "failure_reason": ""} for i in range(1, 701)]
    snap = SimpleNamespace(runs=runs, current={"run_id": 700, "step": 3, "max_steps": 5})
    first = runs_frame(snap, page=1, page_rows=300)
    assert list(first["run"])[0] == 700 and list(first["run"])[-1] == 401 and list(first["step"])[:2] == ["3/5", "5/5"]
    assert list(runs_frame(snap, page=3, page_rows=300)["run"]) == list(range(100, 0, -1))
    runs[-1].update(stage="final")  # a finals run says its stage as its kind, not the config's "search"
    assert runs_frame(snap, page=1, page_rows=300)["kind"].iloc[0] == "final"
    assert runs_frame(snap, page=9, page_rows=300).empty
