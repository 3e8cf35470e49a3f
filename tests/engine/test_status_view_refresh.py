"""The process that changes a store keeps ``status``'s view current (issue 24): a CLI search
after each run's trainer started and at its end, the app after a rating or a pairwise choice;
``status`` then answers from the kept view (the full command is never reached), and what it
answers equals a cold computation. A view that cannot be written never stops a search."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import pytest

from bracket import cli, cli_commands, status_refresh, status_view
from bracket.session.folder import open_session_store

pytestmark = pytest.mark.timeout(240)


def _sets(fields: dict[str, str]) -> list[str]:
    return [arg for name, value in fields.items() for arg in ("--set", f"{name}={value}")]


def _current(folder: Path) -> bool:
    """The kept view is the one ``status`` would answer from now."""
    store, name = open_session_store(folder)
    try:
        weights = ((store.get_session(name) or {}).get("settings") or {}).get("weights")
        return status_view.kept_view(folder, status_view.view_key(store, name, weights)) is not None
    finally:
        store.close()


def _status_from_kept_view(folder: Path, capsys, monkeypatch) -> tuple[str, str]:
    """(``status``, ``status --json``), failing if either needed the full command."""
    def full(_args):
        raise AssertionError("status opened the session: the kept view was not current")

    with monkeypatch.context() as patch:
        patch.setitem(cli_commands.COMMANDS, "status", full)
        outputs = []
        for extra in ([], ["--json"]):
            assert cli.main(["status", *extra, str(folder)]) == 0
            outputs.append(capsys.readouterr().out)
    return outputs[0], outputs[1]


def _cold(folder: Path, capsys, tmp_path: Path) -> tuple[str, str]:
    copy = tmp_path / f"cold-{time.monotonic_ns()}" / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("views"))
    outputs = []
    for extra in ([], ["--json"]):
        assert cli.main(["status", *extra, str(copy)]) == 0
        outputs.append(capsys.readouterr().out)
    return outputs[0], outputs[1]


def test_a_cli_search_leaves_the_view_current_during_and_after_it(capsys, demo_fields, runs_dir, tmp_path,
                                                                   monkeypatch):
    refreshed: list[bool] = []
    original = status_refresh.ViewRefresher._refresh

    def probe(self, session):  # right after each refresh: would status answer from the view?
        original(self, session)
        refreshed.append(_current(session.folder))

    monkeypatch.setattr(status_refresh.ViewRefresher, "_refresh", probe)
    code = cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "3", "--steps", "8",
                     "--seeds", "1", "--name", "kept", "--out", str(runs_dir), "--quiet"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert refreshed == [True] * 4  # once per run, while it trained, and once at the end
    folder = runs_dir / "kept"
    assert _status_from_kept_view(folder, capsys, monkeypatch) == _cold(folder, capsys, tmp_path)


def test_a_rating_and_a_choice_through_the_app_refresh_the_view(capsys, demo_fields, runs_dir, tmp_path,
                                                                 monkeypatch):
    from bracket.app.manager import SessionManager

    assert cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "3", "--steps", "8",
                     "--seeds", "1", "--name", "rated", "--out", str(runs_dir), "--quiet"]) == 0
    capsys.readouterr()
    folder = runs_dir / "rated"
    manager = SessionManager(runs_dir)
    try:
        manager.open(folder)
        runs = [r["id"] for r in manager.scorable_runs()]
        assert len(runs) == 3
        manager.rate(runs[0], 9.0)
        manager.wait_for_background(60)
        assert _current(folder)
        after_rating = _status_from_kept_view(folder, capsys, monkeypatch)
        assert after_rating == _cold(folder, capsys, tmp_path)
        manager.compare(runs[1], runs[2], "left")
        manager.wait_for_background(60)
        assert _current(folder)
        after_choice = _status_from_kept_view(folder, capsys, monkeypatch)
        assert after_choice == _cold(folder, capsys, tmp_path) and after_choice != after_rating
    finally:
        manager.close()


def test_a_view_that_cannot_be_written_never_stops_a_search(capsys, demo_fields, runs_dir, caplog):
    folder = runs_dir / "blocked"
    folder.mkdir(parents=True)
    (folder / "views").write_text("not a folder", encoding="utf-8")  # every write of the view fails
    with caplog.at_level(logging.WARNING, logger="bracket.status_refresh"):
        code = cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "2", "--steps", "8",
                         "--seeds", "1", "--out", str(runs_dir), "--name", "blocked", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "finished — 2/2 runs" in out
    warnings = [r for r in caplog.records if r.name == "bracket.status_refresh"]
    assert len(warnings) == 1 and "status computes it when asked" in warnings[0].getMessage()
    assert cli.main(["status", str(folder)]) == 0  # computed, as without a view
    assert "2/2 runs spent" in capsys.readouterr().out
