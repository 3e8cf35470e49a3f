"""The functions behind the UI's listeners, called without a browser (and the Blocks built)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from bracket.app.forms import plan_text
from bracket.app.grid import GridCell, GridColumn, GridData, build_grid
from bracket.app.manager import SessionManager
from bracket.app.thumbs import ThumbnailCache
from bracket.registry import PRESETS, get_preset
from tests.fakes.setup_slots import box_values, change, type_into
from tests.fakes.waiting import wait_until
from ui import compare_tab, results_tab, search_tab, setup_tab
from ui.blocks import build_app, launch_options
from ui.loss_plot import plot_json
from ui.render import grid_html, loss_figure, runs_frame
from ui.setup_fields import slot_name, slot_updates
from ui.setup_preset import field_message, preflight_text

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]
SKIP = gr.skip()


def start(manager: SessionManager, fields: dict[str, str], budget: int = 2, **overrides):
    """Start's handler with the form's values by name (``overrides``: any of ``setup_tab.START_INPUTS``)."""
    values = dict(preset_id="demo-cpu", fields=fields, budget=budget, steps=20, seeds=1,
                  prompts="a red circle --d 1\na blue square --d 2", sample_every=10, algorithm="tpe",
                  space=None, name="ui-test")  # space: the search-space table (None: as is)
    return setup_tab.start_search(manager, **{**values, **overrides})


def test_blocks_build_with_only_private_listeners(runs_dir):
    demo = build_app(SessionManager(runs_dir, allow_custom_executables=True))
    assert demo.fns and all(f.api_visibility == "private" for f in demo.fns.values())
    # the warm-start list is read again on "Refresh list" (a session just finished) and on a preset change
    past = [f for f in demo.fns.values() if getattr(f.fn, "func", None) is setup_tab.past_choices]
    assert sorted(event for f in past for _, event in f.targets) == ["click"]
    # a preset change is one server event (switch_preset: the warm-start list among what it fills)
    # and the browser's blanking (issue 43, item 6: a chain of ~20 events took 19–48 s under load)
    preset = next(c for c in demo.blocks.values() if getattr(c, "elem_id", None) == "bk-preset")
    on_change = [f for f in demo.fns.values() if (preset._id, "change") in f.targets]
    assert len(on_change) == 2 and sum(f.fn is None and f.js is not None for f in on_change) == 1, on_change
    switch = next(f for f in on_change if f.fn is not None)
    assert getattr(switch.fn, "__wrapped__", None).func is setup_tab.switch_preset
    options = launch_options(runs_dir)
    assert options["allowed_paths"] == [str(runs_dir.resolve())]
    assert options["run_history"] is False


def field_change(preset_id: str, name: str, value: str, fields: dict[str, str]):
    """What one field's change event of ``preset_id``'s form (the one shown) gets back: every box
    of the form as ``fields`` has them, ``name`` now ``value``."""
    before = {s.name: fields.get(s.name, s.resolved_default()) for s in get_preset(preset_id).fields}
    shown = slot_updates(preset_id, before, True)
    got = change(preset_id, before, type_into(preset_id, box_values(shown), name, value))
    message = slot_name(next(i for i, s in enumerate(get_preset(preset_id).fields) if s.name == name), "message")
    if value == before[name]:  # the value the form shows already: the listener changes nothing
        assert got == {}
        return shown[message], before, preflight_text(preset_id, before) if name == "dataset" else SKIP
    return got[message], got["fields"], got.get("preflight", SKIP)


def test_preset_form_and_field_checks(tmp_path, demo_fields):
    choices = setup_tab.preset_choices()
    assert {value for _, value in choices} == {p.id for p in PRESETS}
    assert all(" › " in label for label, _ in choices)
    notes, fields, _, budget, steps = setup_tab.on_preset("demo-cpu")
    assert "TPE" in plan_text(budget, 1, None, "demo-cpu")  # the quick start reaches the sampler
    assert "Demo" in notes and set(fields) == {s.name for s in PRESETS[0].fields}
    message, fields, preflight = field_change("demo-cpu", "train_script", str(tmp_path / "nope.py"), fields)
    assert message.startswith("⚠") and "does not exist" in message and preflight == SKIP
    assert fields["train_script"] == str(tmp_path / "nope.py")
    message, fields, preflight = field_change("demo-cpu", "dataset", demo_fields["dataset"], fields)
    assert message == "✓" and preflight.startswith("✓ Dataset pre-flight: 6 images")
    empty = tmp_path / "empty"
    empty.mkdir()
    _, _, preflight = field_change("demo-cpu", "dataset", str(empty), fields)
    assert preflight.startswith("✗") and "no images" in preflight


def test_a_missing_default_demo_dataset_reads_as_made_on_start_not_as_an_error(tmp_path, monkeypatch):
    """A fresh clone has no demo dataset yet, and Start makes it: the form says so (ℹ), while a
    missing path typed elsewhere is still a ⚠ — and neither check writes anything."""
    default = tmp_path / "runs" / "demo-data"
    monkeypatch.setenv("BRACKET_DEMO_DATA_DIR", str(default))
    _, fields, preflight, _, _ = setup_tab.on_preset("demo-cpu")
    preset = get_preset("demo-cpu")
    spec = next(s for s in preset.fields if s.name == "dataset")
    # said once, beside the dataset field (seen in review: the pre-flight line below said it again)
    said = field_message(preset, spec, fields["dataset"], fields)
    assert said == f"ℹ The demo dataset {default} is made when the search starts." and preflight == ""
    message, fields, preflight = field_change("demo-cpu", "dataset", str(default / "dataset.toml"), fields)
    assert message.startswith("ℹ The demo dataset") and "made when the search starts" in message
    assert preflight == ""
    message, _, preflight = field_change("demo-cpu", "dataset", str(tmp_path / "typo" / "dataset.toml"), fields)
    assert message.startswith("⚠") and "does not exist" in message and not preflight.startswith("ℹ")
    assert not default.exists() and not (tmp_path / "typo").exists()


def inline_error(result, at: int = 0) -> str:
    """The ⚠ line an inline error puts in its message output; every other output is skipped."""
    result = result if isinstance(result, tuple) else (result,)
    assert all(v == SKIP for i, v in enumerate(result) if i != at), "an error touches only its message box"
    assert str(result[at]).startswith("⚠ ")
    return result[at]


def test_start_errors_are_inline_and_create_nothing(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    assert "whole number" in inline_error(start(manager, demo_fields, budget="two"))
    assert "does not exist" in inline_error(start(manager, demo_fields | {"train_script": "/nonexistent/train.py"}))
    assert "Pick 2 to 8 runs" in inline_error(compare_tab.show_grid(manager, [1]), at=4)
    assert "No search is open" in inline_error(compare_tab.show_grid(manager, [1, 2]), at=4)
    assert "No search is open" in inline_error(compare_tab.next_unrated(manager, 4), at=5)
    assert "No search is open" in inline_error(search_tab.toggle_pause(manager))
    assert manager.session is None and list(runs_dir.iterdir()) == []


def test_search_poll_skips_what_did_not_change(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    message, tabs, _, on_search = start(manager, demo_fields)
    assert "Started **ui-test**" in message and tabs.selected == "search" and on_search == message
    assert "One search runs at a time" in inline_error(start(manager, demo_fields))
    assert manager.session.wait(60)
    first = search_tab.poll(manager, {}, 0.5)
    status, progress, plot, log, table, *buttons, sent = first
    assert "finished" in status and "2 / 2 runs" in progress
    assert (len(plot_json(plot)["data"]) == 2 and list(table["status"]) == ["done", "done"]
            and "fake trainer: done" in log)
    time.sleep(1.1)
    again = search_tab.poll(manager, sent, 0.5)
    assert all(value == SKIP for value in again[:-1])
    smoother = search_tab.poll(manager, again[-1], 0.9)
    assert smoother[2] != SKIP and all(v == SKIP for i, v in enumerate(smoother[:-1]) if i != 2)
    assert setup_tab.estimate_text(manager, 10).startswith("Estimated wall time")
    assert manager.session.settings.lr_bracket is True  # the form's default when the checkbox is not sent


def test_the_learning_rate_bracket_checkbox_reaches_the_session(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields, 1, lr_bracket=False)
    assert manager.session.settings.lr_bracket is False
    assert manager.session.wait(60)


def test_past_sessions_of_the_preset_are_offered_and_reach_the_new_session(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    assert setup_tab.past_choices(manager, "demo-cpu").choices == []
    start(manager, demo_fields, 1)
    assert manager.session.wait(60)
    first = manager.session
    (label, folder), = setup_tab.past_choices(manager, "demo-cpu").choices
    assert folder == str(first.folder) and label.startswith(first.name) and "winner " in label
    assert ", 1 run, 1 config, " in label, label  # budget 1: in the singular
    assert setup_tab.past_choices(manager, "sdxl-lora").choices == []
    start(manager, demo_fields, 1, lr_bracket=True, warm_start_from=[folder], name="ui-test-2")
    assert manager.session.settings.warm_start_from == [folder]
    assert manager.session.wait(60)


def test_compare_rate_pairwise_and_results(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields, budget=3)
    assert manager.session.wait(60)
    dropdown, html, slider, shown, scope, note = compare_tab.next_unrated(manager, 4)
    assert sorted(shown) == sorted(dropdown.value) and len(shown) == 3
    assert note.startswith(f"Why these runs: #{shown[0]} ") and note.count("#") == 2, note  # one line: why these
    assert html.count("<img") == 3 * 2 and "gradio_api/file=" in html and str(runs_dir) in html
    assert slider.value == 20 and slider.step == 10 and slider.minimum == 0
    assert [value for _, value in scope.choices] == [compare_tab.WHOLE_RUN, 0, 1]
    ladder, *_ = compare_tab.show_sorted(manager, shown, "learning_rate")  # columns by learning rate
    rates = {r["id"]: r["params"]["learning_rate"] for r in manager.compare.scorable_runs()}
    heads = re.findall(r'<th title="[^"]*">([^<]*)</th>', ladder)
    order = [int(h.split()[0].lstrip("#")) for h in heads]
    assert [rates[i] for i in order] == sorted(rates[i] for i in shown)
    assert all("learning_rate=" in h and "batch_size=" not in h for h in heads)  # only what differs
    earlier = compare_tab.change_step(manager, shown, 10)
    assert 'data-step="10"' in earlier[0] and earlier[0] != html
    first_heads = re.findall(r'<th title="[^"]*">([^<]*)</th>', html)
    assert len(first_heads) == 3 and all("· unrated" in h for h in first_heads)
    assert compare_tab.rate(manager, shown[0], "7", compare_tab.WHOLE_RUN).startswith(
        f"Saved. Run #{shown[0]} rated 7: ")
    assert "prompt 1" in compare_tab.rate(manager, shown[1], "3", 1)
    # the shown grid's headers say the new rating at once (a per-prompt rating is not a run's)
    relabelled = re.findall(r'<th title="[^"]*">([^<]*)</th>', compare_tab.relabel(manager, html, shown))
    assert [h.split(" · ")[2] for h in relabelled] == ["rated 7", "unrated", "unrated"], relabelled
    assert relabelled[0].replace("rated 7", "unrated") == first_heads[0]
    *_, lone, _, _ = compare_tab.next_unrated(manager, 4)
    assert lone == [shown[2]], "never a rated run while an unrated one remains; a lone run is shown alone"
    pair, pair_html, *buttons = compare_tab.next_pair(manager)
    assert len(pair) == 2 and 'id="bk-pair"' in pair_html and all(b.interactive for b in buttons)
    names = {r["config_name"] for r in manager.compare.scorable_runs()}
    assert not any(name in pair_html for name in names)  # blind: no config names
    said, new_pair, *_ = compare_tab.choose(manager, pair, "tie")
    assert said == "Saved: a tie." and new_pair != pair
    assert "Next pair" in inline_error(compare_tab.choose(manager, None, "left"))
    said, back, *_ = compare_tab.undo_vote(manager)  # the tie is taken back and its pair shown again
    assert said.startswith("Undone") and sorted(back) == sorted(pair) and not manager.compare.comparisons()
    assert "no pairwise vote to undo" in inline_error(compare_tab.undo_vote(manager))
    said, *_ = compare_tab.choose(manager, back, "tie")
    board, verdict, command, files, history, importance, report, dashboard, runs_dd, _steps = results_tab.refresh(
        manager)
    assert report == results_tab.REPORT_PENDING and importance is None  # the leaderboard first, then:
    history, importance, report, verdict, _steps = results_tab.refresh_report(manager)
    assert list(board["rank"]) == [1, 2, 3] and board["ratings"].sum() == 2 and board["comparisons"].sum() == 2
    assert "Winner:" in verdict and "--learning_rate" in command
    assert [Path(f).name for f in files] == ["config.json", "config.toml"]
    assert all(Path(f).is_relative_to(runs_dir) for f in files)
    assert dashboard.startswith("optuna-dashboard sqlite:///") and history is not None
    # the report lives in one place: report.html, linked; the tab does not embed a second copy of it
    assert "# Bracket report" not in report and f"[report.html](gradio_api/file={runs_dir}" in report
    assert runs_dd.value and results_tab.overlay(manager, runs_dd.value, 0.3) is not None
    assert f"[report.html](gradio_api/file={runs_dir}" in verdict  # served from the runs folder only
    exported = results_tab.export(manager, 0)
    assert "[train.sh](gradio_api/file=" in exported and "[config.json](" in exported
    assert "must be a whole number" in inline_error(results_tab.export(manager, "many"))
    # finals shorter than the search runs: an input error saying what to give, and no job started
    too_short = inline_error(results_tab.start_job(manager, "finals", 1))
    assert "is shorter. Give" in too_short and manager.job is None
    assert results_tab.start_job(manager, "finals", 20).startswith("finals: started")
    assert "are training" in inline_error(results_tab.start_job(manager, "promote", 0))
    assert manager.job.wait(120) and results_tab.job_progress(manager).startswith("finals: done")
    finals = [r for r in manager.snapshot().runs if r["stage"] == "final"]
    assert len(finals) == 3 * 2 and {r["max_steps"] for r in finals} == {20}
    assert "outside the runs folder" in results_tab.served_link(manager, Path(__file__), "x")
    later = Path(manager.runs_dir) / "later" / "report.html"
    missing = results_tab.served_link(manager, later, "report.html")
    assert "being written" in missing and "outside" not in missing, missing  # not written yet, not "outside"


def test_open_and_resume_past_session(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields)
    manager.session.wait(60)
    other = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    dropdown = setup_tab.refresh_sessions(other)
    assert dropdown.value == str(runs_dir / "ui-test")
    message, tabs, on_search = setup_tab.open_session(other, dropdown.value)
    assert "Opened **ui-test**" in message and other.snapshot().runs_spent == 2 and on_search == message
    assert "Pick a past session" in inline_error(setup_tab.resume_session(other, None))
    message, tabs, on_search = setup_tab.resume_session(other, dropdown.value)
    assert other.session.wait(30) and other.snapshot().status == "finished"
    # seen in review: resuming a search that had spent its budget said "Resumed", and only on
    # Setup, while the Search tab came up silent; it says so where the person now looks
    assert tabs.selected == "search" and on_search == message and "Resumed" not in message, message
    assert "already trained its whole budget (2/2 runs)" in message and "+N runs" in message, message
    assert "already trained its whole budget (2/2 runs)" in search_tab.resume(other)
    assert other.session.wait(30) and other.snapshot().runs_spent == 2
    stopped = SimpleNamespace(name="s", spent_runs=lambda: 1, total_runs=lambda: 3,  # a search stopped early
                              budget_spent=lambda: False)
    assert search_tab.resumed_text(stopped) == "Resumed **s**: 2 of 3 runs left to train."


def test_the_search_tab_message_line_is_the_one_setup_writes_to(runs_dir):
    """Start, Open and Resume on Setup bring up the Search tab: their message must reach its
    line (elem bk-control-status), the very component the Search tab's own buttons write to."""
    demo = build_app(SessionManager(runs_dir, allow_custom_executables=True))
    wanted = {setup_tab.start_search, setup_tab.open_session, setup_tab.resume_session, search_tab.resume}
    targets = {getattr(f.fn, "func", None): [getattr(o, "elem_id", None) for o in f.outputs]
               for f in demo.fns.values() if getattr(f.fn, "func", None) in wanted}
    assert set(targets) == wanted
    assert all(outputs[-1] == "bk-control-status" for outputs in targets.values()), targets
    lines = {id(o) for f in demo.fns.values() for o in f.outputs if getattr(o, "elem_id", None) == "bk-control-status"}
    assert len(lines) == 1, "one message line, not a copy on each tab"


def test_grid_html_escapes_and_renders_every_kind(tmp_path):
    columns = [GridColumn(1, "#1 <b>x</b>", "x", 1, "done"), GridColumn(2, "#2 y", "y", 1, "done")]
    cells = [GridCell(1, 0, "text", text="<script>alert(1)</script>"), GridCell(2, 0, "video", "/r/a.mp4", step=5)]
    html = grid_html(GridData(columns, ["<img src=x onerror=alert(1)>"], [5], 5, [cells]))
    assert "<script>alert" not in html and "<img src=x" not in html and "&lt;b&gt;" in html
    assert '<video src="gradio_api/file=/r/a.mp4"' in html and 'data-row="0" data-col="1"' in html
    missing = grid_html(GridData(columns, ["p"], [], None, [[GridCell(1, 0, "missing"), cells[0]]]))
    assert "no sample yet" in missing


def test_grid_of_8_runs_and_6_prompts_writes_each_thumbnail_once(tmp_path):
    """The Compare grid is built from paths: thumbnails are made once, then only looked up.

    Its latency is measured by ``python -m bench ui`` (docs/BENCHMARKS.md), not here.
    """
    from tests.fakes.sample_grid import grid_fixture

    runs, prompts, runs_dir = grid_fixture(tmp_path)
    thumbs = ThumbnailCache(runs_dir / "s")
    html = grid_html(build_grid(runs, prompts, thumbs=thumbs, runs_dir=runs_dir))
    assert html.count("<img") == 48
    written = sorted(p for p in (runs_dir / "s").rglob("*") if p.is_file() and "thumb" in str(p.parent))
    assert len(written) == 48
    stamps = {p: p.stat().st_mtime_ns for p in written}
    fresh = ThumbnailCache(runs_dir / "s")  # a new app process: the thumbnails on disk are reused
    again = grid_html(build_grid(runs, prompts, thumbs=fresh, runs_dir=runs_dir, step=100))
    assert again.count("<img") == 48
    assert {p: p.stat().st_mtime_ns for p in written} == stamps


def test_search_tab_renders_200_trials(capsys):
    """Trial table and loss chart of 200 finished trials, as the poll builds them (its time:
    ``python -m bench ui``, docs/BENCHMARKS.md)."""
    from types import SimpleNamespace

    runs = [{"id": i, "config_name": f"search-{i}", "kind": "search", "status": "done", "seed": 42,
             "last_step": 500, "max_steps": 500, "score": i / 200, "judges": {"loss": i / 200},
             "params": {"learning_rate": 1e-4 * i, "optimizer_type": "AdamW"}, "duration_s": 60.0,
             "failure_reason": ""} for i in range(1, 201)]
    snap = SimpleNamespace(runs=runs)
    series = {i: [(s, 1.0 / (s + i)) for s in range(1, 501)] for i in range(171, 201)}
    frame = runs_frame(snap)
    figure = loss_figure(series, {}, smoothing=0.6)
    assert len(frame) == 200 and len(figure.data) == 30
    # each run reads as its config's place on the leaderboard (issue 43: no 1–10 rescale within the
    # session; the places themselves: tests/ui/test_trial_table_truth.py)
    places = {r["id"]: f"{r['id']} of 200" for r in runs}
    assert list(runs_frame(snap, places=places)["rank"])[-2:] == ["2 of 200", "1 of 200"]
    # status, step and rank come right after the run's name, before the long "why"
    assert list(frame.columns[:5]) == ["run", "config", "status", "step", "rank"]


def test_status_says_what_the_divergence_stop_saved_and_when_only_loss_scores():
    from types import SimpleNamespace

    from ui.render import status_markdown

    snapshot = SimpleNamespace(name="s", preset_id="hunyuan-video-full", status="running", phase="search 2/4",
                               plan="budget 4 = 4 configs × 1 seed", error="", notes=[], stopped_early=2,
                               time_saved_s=125.0, writes_samples=False)
    text = status_markdown(snapshot)
    assert "2 run(s) stopped early, about 2m 05s of training saved" in text
    assert "scored by loss only" in text


def test_pause_shows_paused_with_resume_and_stops_the_clock(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields, budget=2)
    wait_until(lambda: manager.snapshot().current, 60, "a run in progress")
    assert search_tab.toggle_pause(manager).startswith("Paused")  # the run in progress finishes first
    wait_until(lambda: manager.snapshot().runs_spent == 1 and not manager.snapshot().current, 60, "the run's end")
    snap = manager.snapshot()
    assert snap.status == "paused" and snap.runs_spent == 1 and snap.current is None  # waits after the run
    assert manager.session.store.get_session("ui-test")["status"] == "paused"  # the report header says the same
    *_, start_btn, stop_btn, stop_after_btn, pause_btn, sent = search_tab.poll(manager, {}, 0.5)
    assert pause_btn.value == "Resume" and pause_btn.interactive and not start_btn.interactive
    progress = search_tab.poll(manager, {}, 0.5)[1]
    assert "paused" in progress
    time.sleep(1.2)
    assert search_tab.poll(manager, {}, 0.5)[1] == progress  # ETA and elapsed stand still while paused
    assert search_tab.toggle_pause(manager).startswith("Resumed")
    assert manager.session.wait(60) and manager.snapshot().status == "finished"
    assert manager.snapshot().runs_spent == 2


def test_the_leaderboard_shows_each_configs_headline_not_a_number_that_moves():
    """Issue 43 item 1: "quality 1–10" was a rescale within the session; the leaderboard shows the
    headline (``bracket.standings.headline``), as ``status`` and the report do."""
    from types import SimpleNamespace

    from ui.render import leaderboard_frame

    line = SimpleNamespace(text="12 % lower validation loss than your baseline, ± 3 %; rated 8/10 by you")
    row = SimpleNamespace(rank=1, name="radam", kind="curated", mean=0.78841, ci_low=-1.9, ci_high=3.477,
                          raw_text="loss 0.33", seeds=2, best_step=None, best_step_basis="", loss_basis="validation",
                          ratings=0, comparisons=0, run_ids=[7, 8], params={}, headline=line)
    unscored = SimpleNamespace(**{**vars(row), "rank": None, "mean": None, "name": "later"})
    frame = leaderboard_frame([SimpleNamespace(stage="final", rows=[row, unscored])])
    assert list(frame["headline"]) == [line.text, ""]
    assert not any("quality" in str(c) or "CI" in str(c) for c in frame.columns)

