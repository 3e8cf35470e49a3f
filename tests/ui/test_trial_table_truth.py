"""The Search tab's trial table says what was true (review of round 33): the "why" line is the
one written when the config was proposed, not one rebuilt from later scores after a restart;
an estimated judge part counts in the score, so the judges column shows it too."""

from __future__ import annotations

import re

import pytest

from bracket.app.manager import SessionManager
from bracket.app.reading import REBUILT
from bracket.app.suggestion_reason import short_reasons, trial_attrs
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


def test_why_line_is_the_one_recorded_at_proposal_and_estimates_show_in_the_judges_column(
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

    # the judges column: an unrated run's human part is estimated from the rated ones, marked so,
    # and the column's parts add up to its score
    scores = again.session.scores()
    unrated = [r for r in again.snapshot().runs if r["config_name"] not in (measured_against, other)]
    for run in unrated:
        cell = frame.loc[run["config_name"], "judges"]
        part = scores[run["id"]].parts["human"]
        # the part the score counts, and the same estimate on the rating scale, as the leaderboard says it
        assert part.estimated and f"human ≈ {part.value:.3f} (est., ≈ rating {10 - 9 * part.value:.1f})" in cell, cell
        parts = re.sub(r"\([^)]*\)", "", cell)  # the parts, without what the brackets add
        shown = {name: float(value) for name, value in re.findall(r"(\w+) (?:≈ )?([0-9.]+)", parts)}
        weights = scores[run["id"]].weights_used
        assert sum(weights[name] * value for name, value in shown.items()) == pytest.approx(run["score"], abs=2e-3)
    # the leaderboard's raw figures say the estimate on the rating scale
    board = results_tab.refresh(again)[0].set_index("config")
    human = scores[unrated[0]["id"]].parts["human"].value
    assert f"human ≈ rating {10 - 9 * human:.1f} (est.)" in board.loc[unrated[0]["config_name"], "raw figures"]
    table_rating = re.search(r"≈ rating ([0-9.]+)\)", frame.loc[unrated[0]["config_name"], "judges"]).group(1)
    assert f"human ≈ rating {table_rating} (est.)" in board.loc[unrated[0]["config_name"], "raw figures"]
    again.close()

    # an older session, whose trials kept no line: today's rebuild, marked as such
    monkeypatch.setattr("bracket.app.suggestion_reason.trial_attrs", lambda session: {})
    old = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    old.open(folder)
    lines = old.reading.short_reasons()
    assert lines == {k: f"{v} {REBUILT}" for k, v in rebuilt_now(old).items()}
    old.close()
