"""What watching a search and reading its results cost (issue 24): each caching rule, tested
by what it must (not) do — store statements, builds, imports — never by timing."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from bracket.app.manager import SessionManager
from bracket.session import Session
from tests.fakes.view_helpers import kept_row
from tests.ui.test_poll_cost import Clock, count_statements, skipped
from ui import loss_plot, results_tab, search_tab
from ui.render import loss_figure

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("no_torch_probe")]
ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("gradio", "plotly", "matplotlib", "pandas", "scipy.stats", "choix", "alembic", "tensorboard", "torch",
         "PIL", "yaml")  # the last two: drawing demo images, writing Axolotl configs


@pytest.fixture
def filled(filled_demo_session) -> Path:
    """A session of 12 finished search configs with full params, written as a search writes them."""
    return filled_demo_session(12, name="cost", budget=15)


def test_a_poll_reads_the_store_once_even_when_every_call_is_a_new_tick(runs_dir, filled, monkeypatch):
    Clock(monkeypatch)  # the clock stands still: only a zero TTL makes a look ask the store
    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    session = manager.open(filled)
    sent = search_tab.poll(manager, {}, 0.6)[-1]
    statements = count_statements(session.store.engine)
    result = search_tab.poll(manager, sent, 0.6)
    assert len(statements) == 1 and all(skipped(value) for value in result[:-1])  # the chart too: gr.skip
    manager.close()


def test_the_live_chart_is_the_figure_plotly_would_draw():
    series = {1: [[1, 0.9], [2, float("nan")], [3, 0.7]], 2: [[1, 0.5]], 3: [[s, 1.0 / s] for s in range(1, 900)]}
    labels = {1: "#1 a s1", 2: "#2 b s2"}
    fast = loss_plot.plot_json(loss_plot.loss_plot(series, labels, smoothing=0.6, highlight=3, scope="t"))
    slow = json.loads(loss_figure(series, labels, smoothing=0.6, highlight=3).to_json())
    assert fast["layout"] == slow["layout"]
    assert len(fast["data"]) == len(slow["data"]) == 3
    for mine, theirs in zip(fast["data"], slow["data"]):
        assert {k: v for k, v in mine.items() if k != "y"} == {k: v for k, v in theirs.items() if k != "y"}
        assert [None if v is None or not math.isfinite(v) else round(v, 12) for v in mine["y"]] == \
               [None if v is None or not math.isfinite(v) else round(v, 12) for v in theirs["y"]]


def test_a_tick_writes_only_the_live_runs_trace(monkeypatch):
    finished = {i: [[s, 1.0 / (s + i)] for s in range(1, 50)] for i in range(1, 31)}
    live = [[1, 0.9]]
    loss_plot.loss_plot({**finished, 99: live}, {}, smoothing=0.6, highlight=99, scope="tick")
    written = []
    real = loss_plot.trace_json
    monkeypatch.setattr(loss_plot, "trace_json", lambda *a, **k: written.append(a[1]) or real(*a, **k))
    live.append([2, 0.8])
    figure = loss_plot.plot_json(loss_plot.loss_plot({**finished, 99: live}, {}, smoothing=0.6, highlight=99,
                                                     scope="tick"))
    assert written == ["#99"] and len(figure["data"]) == 31 and figure["data"][-1]["x"] == [1, 2]
    loss_plot.loss_plot({**finished, 99: live}, {}, smoothing=0.6, highlight=99, scope="another session")
    assert len(written) == 1 + 31  # another session's run 1 is not this one's


def test_standings_are_computed_once_per_store_change_for_report_and_export(filled, monkeypatch):
    from bracket import standings as package
    from bracket.report import write_report

    calls = []
    real = package._compute_standings
    monkeypatch.setattr(package, "_compute_standings", lambda s: calls.append(1) or real(s))
    session = Session.open(filled, validate=False)
    write_report(session)  # the report, its export of the winner and importance all need them
    assert len(calls) == 1
    write_report(session)
    assert len(calls) == 1
    session.add_rating(session.store.runs(session.name)[0]["id"], 9.0)
    assert package.standings(session).winner is not None and len(calls) == 2
    session.close()


def test_the_verdict_study_is_rewritten_only_when_the_verdict_changed(filled, monkeypatch):
    from bracket.standings import study_sync

    session = Session.open(filled, validate=False)
    deleted = []
    real = study_sync.optuna.delete_study
    monkeypatch.setattr(study_sync.optuna, "delete_study", lambda **k: deleted.append(1) or real(**k))
    name = study_sync.record_verdict(session)
    trials = [t.number for t in study_sync.optuna.load_study(study_name=name, storage=session.store.storage).trials]
    study_sync.record_verdict(session)
    assert len(deleted) == 1 and len(trials) > 0  # the first call replaced nothing or once; the second none
    session.add_rating(session.store.runs(session.name)[0]["id"], 1.0)
    study_sync.record_verdict(session)
    assert len(deleted) == 2
    session.close()


def test_the_results_tab_does_not_wait_for_the_verdict_study(runs_dir, filled, monkeypatch):
    from bracket.standings import study_sync

    release, written = threading.Event(), []
    monkeypatch.setattr(study_sync, "record_verdict",
                        lambda *a, **k: release.wait(60) and written.append(1))
    manager = SessionManager(runs_dir)
    manager.open(filled)
    board, verdict, *_ = results_tab.refresh(manager)
    _history, _importance, report, _verdict, _steps = results_tab.refresh_report(manager)
    assert len(board) > 0 and "report.html" in report and not written  # built while the study is still written
    release.set()
    manager.wait_for_background(60)
    assert written == [1]
    manager.close()


def test_the_report_chart_draws_the_best_runs_only():
    from types import SimpleNamespace

    from bracket.report.charts import CHART_RUNS, chart_runs

    runs = [{"id": i} for i in range(1, 101)]
    scores = {i: SimpleNamespace(score=(i * 37 % 100) / 100) for i in range(1, 101)}
    drawn = chart_runs(runs, {i: s.score for i, s in scores.items()})  # plain data: charts know no report
    best = sorted(scores, key=lambda i: scores[i].score)[:CHART_RUNS]
    assert [r["id"] for r in drawn] == sorted(best)
    assert chart_runs(runs[:5], {i: s.score for i, s in scores.items()}) == runs[:5]


def test_status_imports_no_ui_or_plotting_module_and_opens_no_optuna_storage(filled):
    probe = (
        "import contextlib, io, runpy, sys\n"
        f"sys.argv = ['bracket', 'status', {str(filled)!r}]\n"
        "out = io.StringIO()\n"
        "try:\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        runpy.run_module('bracket', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as done:\n"
        "    assert not done.code, out.getvalue()\n"
        f"print(sorted(m for m in sys.modules if m in {HEAVY!r}))\n"
        "print('winner:' in out.getvalue())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    imported, printed = done.stdout.strip().splitlines()[-2:]
    assert imported == "[]" and printed == "True"


def test_status_again_imports_neither_the_preset_registry_nor_optuna(filled_demo_session):
    folder = filled_demo_session(80, name="many", budget=90)
    engine = ("optuna", "bracket.registry", "bracket.trainer.presets", "bracket.session.session", "numpy")
    probe = (
        "import contextlib, io, json, runpy, sys\n"
        "out = io.StringIO()\n"
        "for argv in (['status'], ['status', '--json']):\n"
        f"    sys.argv = ['bracket', *argv, {str(folder)!r}]\n"
        "    try:\n"
        "        with contextlib.redirect_stdout(out):\n"
        "            runpy.run_module('bracket', run_name='__main__', alter_sys=True)\n"
        "    except SystemExit as done:\n"
        "        assert not done.code, out.getvalue()\n"
        f"print(json.dumps([sorted(m for m in sys.modules if m in {engine!r}), out.getvalue()]))\n"
    )

    def status() -> tuple[list[str], str]:
        done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        imported, printed = json.loads(done.stdout.strip().splitlines()[-1])
        return imported, printed

    first_imports, first = status()  # no kept view yet: the session is opened in full to build it
    again_imports, again = status()
    assert "bracket.registry" in first_imports and again_imports == [] and again == first
    assert "optuna" not in first_imports  # even in full: Optuna is imported where a search or importance needs it
    assert "winner:" in again and '"all_params"' in again and '"fixed_knobs"' in again


def test_an_existing_store_opens_optunas_storage_only_when_used(filled):
    session = Session.open(filled, validate=False)
    assert not session.store.storage_opened
    session.snapshot()
    assert not session.store.storage_opened  # a look needs no Optuna storage
    session.store.study(session.name)
    assert session.store.storage_opened
    session.close()
    assert isinstance(session.store.engine, sa.engine.Engine)


def test_status_keeps_its_view_until_the_store_changes(filled, monkeypatch, capsys):
    from bracket import cli
    from bracket.status import refresh as status_refresh

    calls = []
    real = status_refresh.standings  # what status's view is built from
    monkeypatch.setattr(status_refresh, "standings", lambda s: calls.append(1) or real(s))
    assert cli.main(["status", str(filled)]) == 0
    first = capsys.readouterr().out
    assert cli.main(["status", str(filled)]) == 0 and capsys.readouterr().out == first
    assert len(calls) == 1 and kept_row(filled) is not None
    session = Session.open(filled, validate=False)
    run_id = session.store.runs(session.name)[0]["id"]
    session.add_rating(run_id, 10.0)
    session.close()
    assert cli.main(["status", str(filled)]) == 0
    again = capsys.readouterr().out
    assert len(calls) == 2 and again != first  # the rating shows (estimated parts, scores)
    assert cli.main(["status", "--json", str(filled)]) == 0
    assert json.loads(capsys.readouterr().out)["winner"] is not None and len(calls) == 2
