"""The Search tab's trial table says what was true (review of round 33): the "why" line is the
one written when the config was proposed, not one rebuilt from later scores after a restart;
an estimated judge part counts in the score, so the raw figures column shows it too."""

from __future__ import annotations

import re

import pytest

from bracket.app.manager import SessionManager
from bracket.app.reading import REBUILT
from bracket.app.suggestion_reason import short_reasons, trial_attrs
from bracket.judge.neighbours import INFORMED
from bracket.search.controller import DEFAULT_N_STARTUP_TRIALS
from tests.ui.test_ui_handlers import start
from ui import results_tab, search_tab

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("no_torch_probe")]


def rebuilt_now(manager: SessionManager) -> dict[int, str]:
    """The lines as today's scores would write them (what the table showed after a restart)."""
    session, snap = manager.session, manager.snapshot()
    scores: dict[int, list[float]] = {}
    for run in snap.runs:
        if run["stage"] == "search" and run["score"] is not None:
            scores.setdefault(run["config_id"], []).append(run["score"])
    return short_reasons(session.store.configs(session.name, stage="search"),
                         {k: sum(v) / len(v) for k, v in scores.items()}, session.space,
                         ratings=session.store.ratings(session.name),
                         comparisons=session.store.comparisons(session.name),
                         algorithm=session.settings.algorithm, n_startup=DEFAULT_N_STARTUP_TRIALS)


def test_why_line_is_the_one_recorded_at_proposal_and_estimates_show_in_the_raw_figures(
        runs_dir, demo_fields, monkeypatch):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields, budget=7)
    assert manager.session.wait(120)
    session = manager.session
    configs = {c["name"]: c for c in session.store.configs(session.name, stage="search")}
    recorded = {c["id"]: trial_attrs(session)[c["trial_number"]].get("why") for c in configs.values()}
    assert all(recorded.values()), "every proposal keeps its line with its trial"
    last = max(configs.values(), key=lambda c: c["id"])["name"]  # the first config of the sampler's rules
    assert recorded[configs[last]["id"]].startswith(("shape draw: the best step, another shape · vs ",
                                                      "TPE from 6 scored · vs "))
    assert manager.reading.short_reasons() == recorded

    # ratings move the scores: the config TPE's line was measured against becomes the worst,
    # another earlier config the best
    measured_against = re.search(r" · vs ([^:]+):", recorded[configs[last]["id"]]).group(1)
    other = next(name for name in configs if name not in (measured_against, last))
    runs = {r["config_name"]: r["id"] for r in manager.snapshot().runs}
    manager.compare.rate(runs[measured_against], 1)
    manager.compare.rate(runs[other], 10)
    folder = session.folder
    manager.close()

    again = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)  # the app restarted
    again.open(folder)
    assert rebuilt_now(again) != recorded  # what the table said after a restart, before the fix
    frame = search_tab._table(again, 1)[1].set_index("config")
    assert frame.loc[last, "why"] == recorded[configs[last]["id"]]
    _, text = search_tab.why(again, configs[last]["id"])
    assert f"When it was proposed: {recorded[configs[last]['id']]}." in text

    # the raw figures column: an unrated run's human part is estimated from the rated ones; it is
    # shown, marked so and on the rating scale, where similar configs were rated (docs/SCORING.md,
    # "What you read of an estimate"), else the cell says nothing similar was rated — as the
    # leaderboard says it
    scores = again.session.scores()
    unrated = [r for r in again.snapshot().runs if r["config_name"] not in (measured_against, other)]
    board = results_tab.refresh(again)[0].set_index("config")
    for run in unrated:
        cell = frame.loc[run["config_name"], "raw figures"]
        part = scores[run["id"]].parts["human"]
        assert part.estimated, cell
        if part.evidence >= INFORMED:
            assert f"human ≈ rating {10 - 9 * part.value:.1f} (est.)" in cell, cell
        else:
            assert "not rated, nothing similar rated" in cell and "≈" not in cell, cell
        assert cell == board.loc[run["config_name"], "raw figures"]  # one run per config: the config's figures
    again.close()

    # an older session, whose trials kept no line: today's rebuild, marked as such
    monkeypatch.setattr("bracket.app.suggestion_reason.trial_attrs", lambda session: {})
    old = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    old.open(folder)
    lines = old.reading.short_reasons()
    assert lines == {k: f"{v} {REBUILT}" for k, v in rebuilt_now(old).items()}
    old.close()


def test_trial_table_ranks_and_figures_are_the_leaderboards_after_a_rating(runs_dir, demo_fields):
    """Seen in review (SDXL LoRA, a fake sd-scripts, runs rated in Compare): the trial table (and the
    score history and slice plots on Results) ranked
    configs by their mean combined score, estimates included, while Results, ``status`` and the
    report rank a person's own ratings above estimates — the rated config read "1st" on Results
    and "3 of 7" in the trial table; and its judges column showed each judge's normalised part as
    ``loss 0.000 · human 0.111`` where Results and ``status`` show ``loss 0.1534 · rating 9.0``."""
    from bracket.status.text import run_figures
    from tests.ui.test_poll_cost import filled_session
    from ui.render import history_figure, leaderboard_frame

    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    manager.open(filled_session(runs_dir, demo_fields, count=4))  # search-3 has the lowest loss, search-0 the highest
    runs = {r["config_name"]: r["id"] for r in manager.snapshot().runs}
    manager.compare.rate(runs["search-0"], 10)  # the worst loss, rated best: the person's verdict decides
    frame = search_tab._table(manager, 1)[1].set_index("config")
    board = leaderboard_frame(manager.results.leaderboard()[0]).set_index("config")  # what Results shows
    assert board.loc["search-0", "rank"] == 1  # Results: the rated config first ...
    # ... while by mean combined score an unrated config with a lower loss and an estimated rating leads
    scores = {r["config_name"]: r["score"] for r in manager.snapshot().runs}
    assert min(scores, key=scores.get) != "search-0", scores
    ranked = len(board)
    for name in runs:  # the trial table says the leaderboard's rank and raw figures
        assert frame.loc[name, "rank"] == f"{board.loc[name, 'rank']} of {ranked}", (name, frame.loc[name, "rank"])
        assert frame.loc[name, "raw figures"] == board.loc[name, "raw figures"], name
    rated = frame.loc["search-0", "raw figures"]
    assert rated.startswith("loss ") and "rating 10.0" in rated, rated
    # one rating says nothing of an unlike config: no estimate shown, and it says so (docs/SCORING.md)
    assert frame.loc["search-3", "raw figures"].endswith("not rated, nothing similar rated")
    # the score history and the slice plots on Results draw the same ranks
    history = {h["config"]: h["rank"] for h in manager.results.score_history()}
    assert history == {name: int(board.loc[name, "rank"]) for name in runs}
    assert list(history_figure(manager.results.score_history()).data[0].y) == list(history.values())
    # and status's table shows the same measured figures for each run
    cli = run_figures(manager.standings())
    for name, run_id in runs.items():
        measured = frame.loc[name, "raw figures"].split("; ")[0]
        assert measured in cli[run_id], (name, measured, cli[run_id])
    manager.close()
