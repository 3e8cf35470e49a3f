"""Issue 42 items 4–6 in the UI's handlers (no browser): the Results section's plot, answer list,
trust table and one-click weight, and Compare's order by a judge and scores per image."""

from __future__ import annotations

import pytest

from tests.fakes.image_judges import judged_manager
from ui import results_judges
from ui.compare_order import JUDGE_PREFIX, sort_choices, sort_runs
from ui.render import grid_html

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("no_torch_probe")]


@pytest.fixture
def judged(tmp_path, runs_dir):
    manager, planted = judged_manager(tmp_path, runs_dir)
    yield manager, planted
    manager.close()


def test_results_section_shows_the_front_the_answer_list_and_trust(judged):
    manager, planted = judged
    figure, why, answer, table, note, chance = results_judges.refresh(manager)
    names = {trace.name for trace in figure.data}
    assert {"front", "beaten on both", "the answer", "best combined score"} <= names
    front_trace = next(t for t in figure.data if t.name == "front")
    assert sorted(front_trace.x) == sorted(planted.likeness[i] for i in (planted.order[0], planted.order[1],
                                                                           planted.order[3]))
    winner = manager.standings().winner.config_name
    assert winner in why
    offered = [value for _label, value in answer.choices]
    assert offered[0] == "" and sorted(offered[1:]) == sorted(n for n in planted.front if n != winner)
    assert "No agreement is known" in note and chance == []
    assert list(table["judge"]) == ["loss", "likeness", "prompt_following", "image_quality"]
    # the one click: rate against the loss's order, and the loss no better than chance can go to 0
    losses = {r.run_id: r.score for b in manager.standings().boards.values() for row in b.rows for r in row.runs}
    worst_first = sorted(losses, key=lambda i: -losses[i])
    for rank, run_id in enumerate(worst_first):
        manager.compare.rate(run_id, 9 - 2 * rank)
    *_, table, note, chance = results_judges.refresh(manager)
    row = table[table["judge"] == "loss"].iloc[0]
    assert row["verdict"] == "no better than chance" and "loss" in note and "loss" in chance
    assert all(t in set(table["judge"]) for t in chance)  # a button only for a judge the table names
    assert "weight is 0" in results_judges.zero(manager, "loss")
    assert manager.session.settings.weights["loss"] == 0.0
    assert "loss" not in results_judges.refresh(manager)[-1]  # weighs 0: no button left for it
    other = next(n for n in planted.front if n != manager.standings().winner.config_name)
    assert other in results_judges.pick(manager, other)
    assert manager.standings().winner.config_name == other
    assert results_judges.refresh(manager)[2].value == other
    assert results_judges.pick(manager, "").startswith("The answer is the winner")
    assert results_judges.pick(manager, planted.beaten[0]).startswith("⚠")  # inline, nothing changed


def test_one_rating_is_not_called_nobody_rated(judged):
    """Seen in review (issue 43): with one run rated, Results said "nobody rated or compared runs yet"."""
    manager, _ = judged
    assert "nobody rated" in results_judges.refresh(manager)[4]
    run_id = next(r.run_id for b in manager.standings().boards.values() for row in b.rows for r in row.runs)
    manager.compare.rate(run_id, 4)
    note = results_judges.refresh(manager)[4]
    assert "nobody rated" not in note and "1 run rated" in note and "Compare" in note


def test_compare_orders_by_a_judge_and_shows_scores_on_demand(judged):
    manager, planted = judged
    choices = sort_choices(manager)
    assert JUDGE_PREFIX + "likeness" in choices and JUDGE_PREFIX + "loss" in choices
    shuffled = planted.order[::-1]
    assert sort_runs(manager, shuffled, JUDGE_PREFIX + "likeness") == planted.order
    assert sort_runs(manager, shuffled, "") == shuffled
    html = grid_html(manager.compare.grid(planted.order))
    assert 'class="bk-scores"' in html and "likeness 0.9" in html and 'title="likeness 0.9' in html
    blind = grid_html(manager.compare.grid(planted.order[:2], blind=True), blind=True)
    assert "bk-scores" not in blind and "likeness" not in blind  # a blind pair shows no judge
