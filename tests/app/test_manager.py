"""SessionManager: one search at a time, past sessions, grid data, thumbnails, scoring picks."""

from __future__ import annotations

import json
import time
import tomllib
from pathlib import Path

import pytest
from PIL import Image

from bracket.app.forms import parse_bounds, plan_text, settings_from_form
from bracket.app.grid import build_grid
from bracket.app.manager import NoSessionError, SessionManager
from bracket.app.thumbs import ThumbnailCache
from bracket.dataset.demo_data import make_demo_dataset
from bracket.errors import BracketError
from bracket.session import SearchSettings
from bracket.trainer.prompts import parse_prompt_lines
from tests.fakes import FAKE_TRAINER, make_fake_python

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _skip_torch_probe(monkeypatch):
    """The demo adapter checks that the trainer python imports torch (seconds); the fake needs none."""
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


def demo_fields(tmp_path: Path) -> dict[str, str]:
    toml = make_demo_dataset(tmp_path / "data", count=6)
    return {"dataset": str(toml), "trainer_python": str(make_fake_python(tmp_path / "bin")),
            "train_script": str(FAKE_TRAINER)}


def finished_manager(tmp_path: Path, runs_dir: Path, budget: int = 3) -> SessionManager:
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    session = manager.start_new("demo-cpu", demo_fields(tmp_path),
                                SearchSettings(budget=budget, steps=20, sample_every_n_steps=10), name="s1")
    assert session.wait(60)
    return manager


def test_no_session_errors_say_what_to_do(runs_dir):
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    assert manager.snapshot() is None and manager.list_sessions() == []
    with pytest.raises(NoSessionError, match="Setup tab"):
        manager.compare.grid([1])
    for needs_a_session in (manager.require_snapshot, lambda: manager.thumbs):  # never None to a caller
        with pytest.raises(NoSessionError, match="Setup tab"):
            needs_a_session()
    with pytest.raises(BracketError, match="not a Bracket session folder"):
        manager.open(runs_dir / "nothing")


def test_bad_input_creates_nothing(tmp_path, runs_dir):
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    fields = demo_fields(tmp_path) | {"train_script": str(tmp_path / "missing.py")}
    with pytest.raises(BracketError, match="does not exist"):
        manager.start_new("demo-cpu", fields, SearchSettings(budget=2, steps=5))
    assert manager.session is None and not any(runs_dir.iterdir())


def test_one_search_at_a_time_and_listing(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.05")
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    fields = demo_fields(tmp_path)
    session = manager.start_new("demo-cpu", fields, SearchSettings(budget=2, steps=40), name="first")
    with pytest.raises(BracketError, match="One search runs at a time"):
        manager.start_new("demo-cpu", fields, SearchSettings(budget=2, steps=5), name="second")
    listed = manager.list_sessions()
    assert [s.name for s in listed] == ["first"] and listed[0].status == "running"
    manager.stop(now=True)
    assert session.wait(30)
    assert manager.list_sessions()[0].status == "stopped"
    with pytest.raises(BracketError, match="not running"):
        manager.stop()
    resumed = manager.resume()
    assert resumed.wait(60) and manager.snapshot().status == "finished"
    assert manager.snapshot().runs_spent == 2


def test_grid_thumbnails_and_steps(tmp_path, runs_dir):
    manager = finished_manager(tmp_path, runs_dir)
    runs = manager.compare.scorable_runs()
    ids = [r["id"] for r in runs]
    grid = manager.compare.grid(ids)
    assert grid.steps == [0, 10, 20] and grid.step == 20
    assert len(grid.rows) == 4 and all(len(row) == len(ids) for row in grid.rows)
    for index, row in enumerate(grid.rows):
        for cell in row:
            assert cell.kind == "image" and cell.prompt_index == index and cell.step == 20
            assert cell.path.endswith(".png") and Path(cell.path).parent.name == "sample"
            assert cell.seed == index + 1  # the session's prompts carry --d 1..4: same seed in every column
            assert Path(cell.thumb).parent == runs_dir / "s1" / "thumbs"
            assert Image.open(cell.thumb).format == "PNG"
    # thumbnails are written once: a second build reads no image
    assert manager.compare.grid(ids, step=11).step == 10
    stamps = {p: p.stat().st_mtime_ns for p in (runs_dir / "s1" / "thumbs").iterdir()}
    grid_again = manager.compare.grid(ids)
    assert {p: p.stat().st_mtime_ns for p in (runs_dir / "s1" / "thumbs").iterdir()} == stamps
    assert grid_again.rows[0][0].thumb == grid.rows[0][0].thumb
    with pytest.raises(BracketError, match="not part of session"):
        manager.compare.grid([999])


def test_thumbnail_follows_a_changed_source(tmp_path):
    source = tmp_path / "a.png"
    Image.new("RGB", (600, 300), "red").save(source)
    cache = ThumbnailCache(tmp_path / "session")
    first = cache.path_for(source)
    assert Image.open(first).size == (256, 128)
    Image.new("RGB", (100, 100), "blue").save(source)
    import os
    os.utime(source, (time.time() + 5, time.time() + 5))
    second = cache.path_for(source)
    assert second != first and Image.open(second).size == (100, 100)
    assert cache.path_for(tmp_path / "missing.png") is None
    assert cache.path_for(tmp_path / "x.txt") is None


def test_text_samples_and_control_images(tmp_path):
    runs_dir = tmp_path / "runs"
    run_dir = runs_dir / "s" / "trials" / "0001"
    (run_dir / "output" / "sample").mkdir(parents=True)
    (run_dir / "output" / "sample" / "generations.json").write_text(json.dumps(
        [{"prompt_index": 0, "prompt": "Say hi", "seed": 1, "completion": "hi there"}]))
    runs = [{"id": 1, "config_name": "a", "seed": 42, "status": "done", "params": {}, "run_dir": str(run_dir),
             "samples": []}]
    grid = build_grid(runs, parse_prompt_lines("Say hi --d 1\nSay bye --d 2"), thumbs=ThumbnailCache(runs_dir / "s"),
                      runs_dir=runs_dir, sample_kind="text")
    assert grid.prompts == ["Say hi", "Say bye"]
    assert grid.rows[0][0].kind == "text" and grid.rows[0][0].text == "hi there"
    assert grid.rows[1][0].kind == "missing"
    control = tmp_path / "dataset" / "control.png"
    control.parent.mkdir()
    Image.new("RGB", (2000, 1000), "green").save(control)
    grid = build_grid(runs, parse_prompt_lines("edit it --d 1"), thumbs=ThumbnailCache(runs_dir / "s"),
                      runs_dir=runs_dir, control_image=str(control))
    small, large = grid.controls[0]
    assert Path(small).is_relative_to(runs_dir) and Path(large).is_relative_to(runs_dir)
    assert Image.open(large).size == (1024, 512)


def test_scoring_picks_and_results(tmp_path, runs_dir):
    manager = finished_manager(tmp_path, runs_dir, budget=3)
    ids = [r["id"] for r in manager.compare.scorable_runs()]
    assert sorted(manager.compare.next_unrated(8)) == sorted(ids)
    assert manager.compare.next_unrated(8)[0] == manager.standings().winner.run_id, "the winner's runs come first"
    said = manager.compare.rate(ids[0], 8)
    # what the rating changed: ranks, and the config's headline (issue 43: never the relative 1–10 quality)
    assert "it reads: " in said and "rated 8/10 by you" in said and "quality" not in said, said
    manager.compare.rate(ids[1], 3, prompt_index=2)
    assert manager.compare.next_unrated(8) == [ids[2]], "never a rated run while an unrated one exists"
    manager.compare.rate(ids[2], 5)
    assert sorted(manager.compare.next_unrated(8)) == sorted(ids), "all rated: the best runs are offered again"
    pair = manager.compare.next_pairs(1)[0]
    assert set(pair) <= set(ids) and pair[0] != pair[1]
    manager.compare.choose(pair[0], pair[1], "left")
    assert manager.compare.next_pairs(1)[0] not in (pair, pair[::-1])
    with pytest.raises(BracketError, match="from 1 to 10"):
        manager.compare.rate(ids[0], 11)
    boards, verdict = manager.results.leaderboard()
    assert [b.stage for b in boards] == ["search"]
    rows = boards[0].rows
    assert [r.rank for r in rows] == [1, 2, 3] and "Best config is" in verdict
    assert sum(r.ratings for r in rows) == 3 and sum(r.comparisons for r in rows) == 2
    assert all("loss " in r.raw_text for r in rows), "the raw figure behind each score"
    export = manager.results.winner_export()
    assert export.run_id == manager.standings().winner.run_id and export.steps == 20
    assert export.command[-1] != "" and "--learning_rate" in export.command
    assert json.loads(export.json_path.read_text())["config_name"] == rows[0].name
    knobs = tomllib.loads(export.toml_path.read_text())["knobs"]
    assert {k: knobs[k] for k in rows[0].params} == rows[0].params
    assert manager.results.dashboard_command().startswith("optuna-dashboard sqlite:///")
    importance, message = manager.results.param_importance()
    assert importance or message
    history = manager.results.score_history()
    assert len(history) == 3 and history[-1]["best"] == min(h["score"] for h in history)
    series = manager.reading.loss_series(ids[:1])
    assert list(series) == ids[:1] and len(series[ids[0]]) == 20
    assert manager.reading.estimate_seconds(10)[1] == 3


def test_open_past_session_while_idle(tmp_path, runs_dir):
    manager = finished_manager(tmp_path, runs_dir, budget=2)
    other = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    listed = other.list_sessions()
    assert listed[0].name == "s1" and listed[0].status == "finished" and listed[0].runs_spent == 2
    assert "s1 · demo-cpu · finished · 2/2 runs" in listed[0].label
    other.open("s1")
    assert other.snapshot().runs_spent == 2 and not other.running
    # a TTL set after the open reaches the open session's snapshots (the UI poll bench sets it so)
    slow = SessionManager(runs_dir, snapshot_ttl=3600.0, allow_custom_executables=True)
    slow.open("s1")
    seen, version = slow.snapshot(), slow.version
    manager.compare.rate(manager.compare.scorable_runs()[0]["id"], 5)  # the store changes under it
    assert slow.snapshot() is seen and slow.version == version  # within the TTL: not looked at
    slow.snapshot_ttl = 0.0
    assert slow.snapshot() is not seen and slow.version > version
    slow.close()
    manager.close()
    other.close()


def test_form_conversion():
    settings = settings_from_form(budget=4.0, steps=10, seeds=2, prompts="a cat --d 3", sample_every=None,
                                  bounds=parse_bounds("1e-5", "", "4, 1"), weights={"loss": 1, "human": 0},
                                  vlm_base_url="http://localhost:8000/v1", vlm_model="m", vlm_api_key="k")
    assert settings.n_configs == 2 and settings.bounds == {"learning_rate": (1e-5, 1e9), "batch_size": [1, 4]}
    assert settings.vlm == {"base_url": "http://localhost:8000/v1", "model": "m", "api_key": "k"}
    assert "api_key" not in settings.to_dict()["vlm"]
    with pytest.raises(BracketError, match="swap them"):
        parse_bounds("1e-3", "1e-5")
    with pytest.raises(BracketError, match="whole numbers"):
        parse_bounds(batch_sizes="a,b")
    with pytest.raises(BracketError, match="model name"):
        settings_from_form(budget=1, steps=1, seeds=1, vlm_base_url="http://x")
    with pytest.raises(BracketError, match="whole number"):
        settings_from_form(budget=2.5, steps=1, seeds=1)
    assert plan_text(8, 2) == "= 4 configs × 2 seeds"
    assert "raise the budget" in plan_text(1, 2)
