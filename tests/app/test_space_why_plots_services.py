"""The app services behind +N runs, the search-space table, why-this-suggestion, the
Setup form from a session, config plots and the steps × prompts matrix (issue 20, items 7,
8, 10, 11, 12, 14) — as plain functions, and once on a real demo session (fake trainer)."""

from __future__ import annotations

import json

import pytest

from bracket.app.config_plots import parallel_coordinate, scored_study, slice_plot
from bracket.app.extend import extended_settings
from bracket.app.form_values import form_values
from bracket.app.forms import parse_bounds, settings_from_form
from bracket.app.manager import SessionManager
from bracket.app.progression import build_progression
from bracket.app.space_table import describe, preset_space_rows, space_rows
from bracket.app.suggestion_reason import after_feedback, changes, distance, explain, short_reasons
from bracket.app.thumbs import ThumbnailCache
from bracket.errors import BracketError
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.session import SearchSettings
from bracket.standings.rows import ConfigRow
from bracket.trainer.prompts import parse_prompt_lines

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "Adam")),
    "learning_rate": FloatKnob(1e-5, 1e-2, log=True),
    "warmup": IntKnob(0, 10),
    "batch_size": FixedKnob(4),
})


# -- the search-space table (item 7) -----------------------------------------------------
def test_space_rows_say_searched_or_fixed_and_what_a_bound_narrowed():
    narrowed = SPACE.narrow({"learning_rate": (1e-4, 1e-3), "batch_size": [2, 4]})
    rows = {r["knob"]: r for r in space_rows(narrowed, SPACE)}
    assert list(rows) == list(SPACE)
    assert rows["learning_rate"]["range / choices"] == "0.0001 … 0.001 (log) (narrowed)"
    assert rows["learning_rate"]["trainer's range"] == "1e-05 … 0.01 (log)"
    assert rows["batch_size"]["searched"] == "searched" and rows["batch_size"]["range / choices"].startswith("2, 4")
    assert rows["warmup"]["range / choices"] == "0 … 10" and "narrowed" not in rows["warmup"]["range / choices"]
    assert {r["searched"] for r in space_rows(SPACE)} == {"searched", "fixed"}
    assert describe(FixedKnob(16)) == "16"
    conditional = SearchSpace({"opt": CategoricalKnob(("AdamW", "Prodigy")),
                               "d_coef": FloatKnob(0.5, 2.0, when={"opt": ("Prodigy",)})})
    assert space_rows(conditional)[1]["only when"] == "opt = Prodigy"


def test_space_rows_say_locked_for_a_knob_locked_to_one_value_not_searched_and_narrowed():
    """Setup's lock cell (a bound V:V or one choice) shows as "locked" on Results too, not as a
    searched knob with a range of one value "0 … 0 (narrowed)"."""
    locked = SPACE.narrow({"warmup": (0, 0), "optimizer_type": ["Adam"], "batch_size": [8]})
    rows = {r["knob"]: r for r in space_rows(locked, SPACE)}
    assert (rows["warmup"]["searched"], rows["warmup"]["range / choices"]) == ("locked", "0")
    assert rows["warmup"]["trainer's range"] == "0 … 10"
    assert (rows["optimizer_type"]["searched"], rows["optimizer_type"]["range / choices"]) == ("locked", "Adam")
    assert (rows["batch_size"]["searched"], rows["batch_size"]["range / choices"]) == ("locked", "8")
    assert rows["learning_rate"]["searched"] == "searched"
    assert {r["searched"] for r in space_rows(SPACE.narrow({"batch_size": [4]}), SPACE)} == {"searched", "fixed"}


def test_preset_space_rows_use_the_form_bounds_and_refuse_a_bad_one():
    rows, space = preset_space_rows("demo-cpu", {}, {"learning_rate": (1e-4, 1e-3)}, steps=30, warmup_share=0.25)
    by_knob = {r["knob"]: r for r in rows}
    assert by_knob["learning_rate"]["range / choices"].startswith("0.0001 … 0.001")
    assert by_knob["batch_size"]["searched"] == "fixed" and space["learning_rate"].high == 1e-3
    with pytest.raises(BracketError, match="does not overlap"):
        preset_space_rows("demo-cpu", {}, {"learning_rate": (1.0, 2.0)})


# -- +N runs (item 10) --------------------------------------------------------------------
def test_extended_settings_give_every_new_run_to_the_search():
    settings = SearchSettings(budget=7)
    more = extended_settings(settings, 4)
    assert more.budget == 11 and more.n_configs == 11 and more.confirm_runs == 0  # the auto rung stays off
    ruled = SearchSettings(budget=24)  # automatic rung: 6 runs
    assert extended_settings(ruled, 8).confirm_runs == ruled.confirm_runs == 6
    assert extended_settings(ruled, 8).n_configs == ruled.n_configs + 8
    for bad in (0, -1, 1.5, True):
        with pytest.raises(BracketError, match="at least 1"):
            extended_settings(settings, bad)
    with pytest.raises(BracketError, match="2 seeds per config"):
        extended_settings(SearchSettings(budget=4, seeds=2), 1)


# -- why this suggestion (item 8) ---------------------------------------------------------
def _config(id_, kind, name, **params):
    return {"id": id_, "kind": kind, "name": name, "trial_number": id_ - 1, "params": params}


def test_distance_and_changes_scale_each_knob_to_its_range():
    a = {"optimizer_type": "AdamW", "learning_rate": 1e-4, "warmup": 0}
    assert distance(SPACE, a, a) == 0.0
    far = {"optimizer_type": "Adam", "learning_rate": 1e-2, "warmup": 10}
    assert distance(SPACE, a, far) > distance(SPACE, a, dict(a, learning_rate=3e-4)) > 0
    assert changes(SPACE, dict(a, learning_rate=3.2e-4), a) == ["learning_rate 0.00032 vs 0.0001 (×3.2, higher)"]
    assert changes(SPACE, dict(a, optimizer_type="Adam"), a) == ["optimizer_type Adam vs AdamW"]


def test_explain_names_the_origin_and_for_tpe_the_closest_scored_configs():
    base = _config(1, "baseline", "baseline", optimizer_type="AdamW", learning_rate=1e-4, warmup=0)
    cur = _config(2, "curated", "adam-low", optimizer_type="Adam", learning_rate=3e-5, warmup=5)
    past = _config(3, "curated", "past-old-1", optimizer_type="AdamW", learning_rate=5e-4, warmup=0)
    new = _config(4, "search", "search-4", optimizer_type="AdamW", learning_rate=2e-4, warmup=0)
    scores = {1: 0.4, 2: 0.9, 3: 0.2}
    assert "baseline" in explain(base, [], {}, SPACE, source="docs").origin
    assert "curated" in explain(cur, [base], scores, SPACE, source="a guide").origin
    assert "earlier session" in explain(past, [base, cur], scores, SPACE).origin
    assert "bracket" in explain(_config(5, "bracket", "lr-lower"), [], scores, SPACE).origin
    reason = explain(new, [base, cur, past], scores, SPACE)
    assert reason.seen == 3 and "while it still samples at random" in reason.origin  # 3 < TPE's 4 start-up configs
    assert [n.name for n in reason.neighbours] == ["baseline", "past-old-1", "adam-low"]
    assert reason.best_before == "past-old-1, 1st of 3"  # a rank, not the session-relative quality
    assert reason.changes == ["learning_rate 0.0002 vs 0.0005 (×0.4, lower)"]
    text = explain(new, [base, cur, past], scores, SPACE, n_startup=2).text()
    assert "from the 3 configs scored before it" in text
    assert "Closest finished configs: baseline (2nd of 3, distance" in text
    unscored = explain(new, [base], {}, SPACE)
    assert unscored.seen == 0 and not unscored.neighbours and "random" in explain(
        new, [base], {}, SPACE, algorithm="random").origin


# -- Setup from a session, clone (item 11) ---------------------------------------------------
def test_short_reasons_say_origin_changes_and_the_rating_a_tpe_proposal_came_after():
    base = dict(_config(1, "baseline", "baseline", optimizer_type="AdamW", learning_rate=1e-4, warmup=0),
                created_at=10.0)
    cur = dict(_config(2, "curated", "adam-low", optimizer_type="Adam", learning_rate=3e-5, warmup=5), created_at=20.0)
    new = dict(_config(3, "search", "search-3", optimizer_type="AdamW", learning_rate=3.2e-4, warmup=0),
               created_at=40.0)
    late = dict(_config(4, "search", "search-4", optimizer_type="Adam", learning_rate=1e-5, warmup=10),
                created_at=60.0)
    ratings = [{"run_id": 2, "value": 8.0, "created_at": 30.0}, {"run_id": 1, "value": 2.0, "created_at": 50.0}]
    votes = [{"left_run_id": 1, "right_run_id": 2, "winner": "right", "created_at": 35.0}]
    lines = short_reasons([base, cur, new, late], {1: 0.4, 2: 0.3, 3: 0.5}, SPACE, ratings=ratings,
                          comparisons=votes, n_startup=2)
    assert lines[1] == "baseline: the by-hand config" and lines[2] == "curated known-good config"
    # TPE saw the two scored configs: it moved from the best one (adam-low) and came after the vote;
    # the third change is counted as "+1 more" (seen in review: "×11 +1" read as eleven plus one)
    assert lines[3] == ("TPE from 2 scored · vs adam-low: optimizer_type AdamW, learning_rate ×11, +1 more · "
                        "after your vote #1 vs #2 (#2 better)")
    assert lines[4].startswith("TPE from 3 scored · vs adam-low: learning_rate ×0.33")
    assert lines[4].endswith("after your rating of run #1 (2)")
    assert short_reasons([new], {}, SPACE, n_startup=2)[3] == "TPE, still random: 0 of 2 scored"
    assert after_feedback(5.0, ratings, votes) == "" and after_feedback(None, ratings, votes) == ""
    full = explain(late, [base, cur, new], {1: 0.4, 2: 0.3, 3: 0.5}, SPACE, n_startup=2,
                   after=after_feedback(60.0, ratings, votes)).text()
    assert "Proposed after your rating of run #1 (2)." in full
    # seen in review: the panel named another "best before it" than the table's line (written
    # before a rating moved the scores) with the same words; it says it goes by the scores of now
    assert "Changed from the config before it that scores best now (adam-low, 1st of 3): " in full, full
    rated = explain(late, [base, cur, new], {1: 0.4, 2: 0.6, 3: 0.2}, SPACE, n_startup=2).text()
    assert "scores best now (search-3, 1st of 3): " in rated, rated


def test_form_values_give_back_the_same_settings():
    bounds = parse_bounds("1e-5", "", "2,4", {"lr_warmup_steps": "0:5", "optimizer_type": "AdamW, Adam",
                                              "lr_scheduler": "cosine"})
    settings = settings_from_form(budget=9, steps=40, seeds=1, prompts="a cat --d 3", sample_every=10,
                                  algorithm="random", bounds=bounds, weights={"loss": 2, "human": 1},
                                  lr_bracket=False, confirm=2, validation=False)
    assert settings.bounds["optimizer_type"] == ["AdamW", "Adam"] and settings.bounds["lr_warmup_steps"] == (0, 5)
    values = form_values("demo-cpu", {"dataset": "/d"}, settings, "old")
    assert values["bounds"] == settings.bounds
    assert values["preset_id"] == "demo-cpu" and values["fields"] == {"dataset": "/d"} and values["source"] == "old"
    form = {k: values[k] for k in ("budget", "steps", "seeds", "prompts", "sample_every", "algorithm", "bounds",
                                   "weights", "lr_bracket", "confirm", "validation")}
    again = settings_from_form(**form)
    assert again.to_dict() == settings.to_dict()
    stored = SearchSettings.from_dict(json.loads(json.dumps(settings.to_dict())))  # pairs come back as lists
    assert settings_from_form(**{**form, "bounds": form_values("demo-cpu", {}, stored)["bounds"]}).to_dict() == (
        json.loads(json.dumps(settings.to_dict())))


# -- plots (item 14) ----------------------------------------------------------------------------
def _row(cid, mean, rank=None, **params):
    return ConfigRow(rank=rank, config_id=cid, trial_number=cid, name=f"c{cid}", kind="search", stage="search",
                     mean=mean, ci_low=None, ci_high=None, seeds=1, disqualified=0, params=dict(params, batch_size=4),
                     runs=[])


def test_config_plots_are_optunas_figures_of_the_current_scores():
    # c2 is rated best: the leaderboard ranks it first though its mean combined score is the highest
    rows = [_row(1, 0.3, 3, optimizer_type="AdamW", learning_rate=1e-4, warmup=0),
            _row(2, 0.7, 1, optimizer_type="Adam", learning_rate=1e-3, warmup=5),
            _row(3, None, optimizer_type="Adam", learning_rate=1e-3, warmup=5),  # not scored: left out
            _row(4, 0.5, 2, optimizer_type="Adam", learning_rate=5.0, warmup=5)]  # outside the space: left out
    study = scored_study(rows, SPACE)
    # the plots read each config's rank on the leaderboard (1 = best; issue 43: not a 1–10 rescale
    # within the session; seen in review: a re-rank by mean score that disagreed with Results after a
    # rating), the one outside the space counted as the leaderboard counts it
    assert [t.value for t in study.trials] == [3.0, 1.0] and "batch_size" not in study.trials[0].params
    parallel, slices = parallel_coordinate(rows, SPACE), slice_plot(rows, SPACE)
    axes = list(parallel.layout.xaxis.ticktext)  # optuna 5 draws one line per config across the axes
    assert axes[0] == "rank among the scored configs (1 = best)"
    assert set(axes[1:]) == {"optimizer_type", "learning_rate", "warmup"}
    assert len([t for t in parallel.data if t.mode == "lines"]) == 2
    assert len([t for t in slices.data if t.type == "scatter"]) == 3
    assert parallel_coordinate(rows[:1], SPACE) is None and slice_plot([], SPACE) is None
    # labels slanted with room under them (they overlapped: issue 34)
    assert parallel.layout.xaxis.tickangle == -25 and parallel.layout.margin.b >= 100
    assert slices.layout.xaxis.tickangle == -45 and slices.layout.xaxis.nticks == 4


def test_the_slice_plot_of_many_knobs_fits_the_page():
    """Seen in review (SDXL LoRA, 7 searched knobs, a 1280-px window): Optuna sets the slice plot
    300 px wide per knob (2100 px), so Results cut it off after the fourth knob."""
    space = SearchSpace({f"k{i}": FloatKnob(0.0, 1.0) for i in range(7)})
    rows = [_row(1, 0.2, 1, **{f"k{i}": 0.1 for i in range(7)}), _row(2, 0.4, 2, **{f"k{i}": 0.8 for i in range(7)})]
    figure = slice_plot(rows, space)
    assert len([t for t in figure.data if t.type == "scatter"]) == 7
    assert figure.layout.width is None and figure.layout.autosize  # as wide as the tab, every knob in it


# -- steps × prompts (item 12) ------------------------------------------------------------------
def test_progression_has_a_column_per_saved_step(tmp_path):
    from PIL import Image

    samples = []
    for step in (0, 10, 20):
        for index in (0, 1):
            path = tmp_path / f"s{step}-{index}.png"
            Image.new("RGB", (16, 16), (step * 10, index * 100, 0)).save(path)
            samples.append({"path": str(path), "step": step, "prompt_index": index, "kind": "image", "seed": 1})
    samples = [s for s in samples if not (s["step"] == 10 and s["prompt_index"] == 1)]  # one missing
    run = {"id": 5, "config_name": "search-5", "seed": 42, "status": "done", "params": {}, "samples": samples}
    grid = build_progression(run, parse_prompt_lines("a cat --d 1\na dog --d 2"), thumbs=ThumbnailCache(tmp_path),
                             runs_dir=tmp_path)
    assert [c.label for c in grid.columns] == ["step 0", "step 10", "step 20"] and grid.prompts == ["a cat", "a dog"]
    assert [[c.kind for c in row] for row in grid.rows] == [["image"] * 3, ["image", "missing", "image"]]
    assert grid.rows[1][2].step == 20 and grid.rows[1][2].path.endswith("s20-1.png")
    text = build_progression(run, [], thumbs=ThumbnailCache(tmp_path), runs_dir=tmp_path, sample_kind="text")
    assert text.columns == [] and text.empty


# -- on a real demo session ----------------------------------------------------------------------
def test_services_on_a_demo_session_and_plus_n_runs(runs_dir, demo_fields, monkeypatch):
    # the demo adapter checks that the trainer python imports torch (seconds); the fake needs none
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    settings = SearchSettings(budget=5, steps=20, sample_prompts="a red circle --d 1\na blue square --d 2",
                              sample_every_n_steps=10, lr_bracket=False)
    with pytest.raises(BracketError, match="No search is open"):
        manager.results.space_table()
    manager.start_new("demo-cpu", demo_fields, settings, name="round2")
    with pytest.raises(BracketError, match="is running"):
        manager.extend(2)
    assert manager.session.wait(90) and manager.snapshot().status == "finished"
    table = {r["knob"]: r for r in manager.results.space_table()}
    assert table["learning_rate"]["searched"] == "searched" and table["batch_size"]["searched"] == "fixed"
    choices = manager.reading.config_choices()
    # newest first; the first proposals after the warm start are shape draws (bracket.search.shapes)
    assert len(choices) == 5 and choices[0][0].startswith("shape-5 · search")
    assert "baseline" in manager.reading.suggestion(choices[-1][1]).origin
    why = manager.reading.suggestion()
    assert why.name == "shape-5" and why.seen == 4 and len(why.neighbours) == 3
    assert "shape draw** after 4 scored configs" in why.text()
    parallel, slices = manager.results.config_figures()
    assert parallel is not None and slices is not None
    ids = [r["id"] for r in manager.compare.scorable_runs()][:2]
    matrices = manager.compare.progressions(ids)
    assert [[c.label for c in m.columns] for m in matrices] == [["step 0", "step 10", "step 20"]] * 2
    with pytest.raises(BracketError, match="not part of session"):
        manager.compare.progressions([999])
    values = manager.reading.setup_values()
    assert values["budget"] == 5 and values["fields"]["train_script"] == demo_fields["train_script"]
    other = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    assert other.reading.setup_values(str(runs_dir / "round2"))["steps"] == 20  # read without opening it
    assert other.session is None
    manager.extend(2)  # +2 runs: stored, then resumed
    assert manager.session.wait(90) and manager.snapshot().status == "finished"
    assert manager.snapshot().runs_spent == 7 and manager.session.settings.budget == 7
    assert manager.reading.suggestion().name == "shape-7"
    with pytest.raises(BracketError, match="at least 1"):
        manager.extend(0)
