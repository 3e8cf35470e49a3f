"""Issue 42 items 4–6 through the app's services and the CLI on a real (fake-trainer) session with
planted image-judge records: the front and the pick (status --json, the report and export follow
it), agreement with the person's ratings and choices, a judge's weight set to 0 the CLI's way, and
Compare's scores per image and order by a judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bracket.cli import main as cli_main
from bracket.errors import BracketError
from tests.fakes.image_judges import judged_manager

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(autouse=True)
def _skip_torch_probe(monkeypatch):
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


@pytest.fixture
def judged(tmp_path, runs_dir):
    manager, planted = judged_manager(tmp_path, runs_dir)
    yield manager, planted
    manager.close()


def _status_json(folder: Path, capsys) -> dict:
    capsys.readouterr()
    assert cli_main(["status", str(folder), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_front_pick_and_what_follows_it(judged, capsys):
    manager, planted = judged
    front = manager.results.front()
    assert front is not None
    assert sorted(p.name for p in front.on_front) == sorted(planted.front)
    winner = manager.standings().winner.config_name
    assert front.point(front.best_id).name == winner and winner in front.why
    other = next(name for name in planted.front if name != winner)
    message = manager.results.pick(other)
    assert other in message and manager.standings().winner.config_name == other
    answer = _status_json(manager.session.folder, capsys)
    assert answer["front"]["pick"] == other and answer["front"]["answer"] == other
    assert answer["winner"]["config"] == other and sorted(answer["front"]["front"]) == sorted(planted.front)
    exported = manager.results.export_winner()
    assert exported.config_name == other  # the export trains the picked config
    report = manager.results.report_markdown()
    assert f"your pick '{other}'" in report and "## Fidelity against flexibility" in report
    assert "report-front.png" in report or "report-front" in report
    beaten = planted.beaten[0]
    with pytest.raises(BracketError, match="not on the front"):
        manager.results.pick(beaten)
    assert "winner" in manager.results.pick(None) and manager.standings().winner.config_name == winner
    assert _status_json(manager.session.folder, capsys)["front"]["pick"] is None
    # the CLI's way: the same stored pick
    folder = str(manager.session.folder)
    assert cli_main(["pick", folder, other]) == 0 and other in capsys.readouterr().out
    assert _status_json(manager.session.folder, capsys)["winner"]["config"] == other
    assert cli_main(["pick", folder]) == 2 and "error: pick: name one config" in capsys.readouterr().err
    assert cli_main(["pick", folder, beaten]) == 2 and "not on the front" in capsys.readouterr().err
    assert cli_main(["pick", folder, "--winner"]) == 0
    assert _status_json(manager.session.folder, capsys)["winner"]["config"] == winner


def test_agreement_and_the_one_click_weight(judged, capsys):
    manager, planted = judged
    assert all(not t.known for t in manager.results.trust())  # nobody rated: no agreement is known
    assert "No agreement is known" in manager.results.report_markdown()
    session = manager.session
    runs = planted.order  # best likeness first: ratings and choices planted to agree with likeness
    for rank, run_id in enumerate(runs):
        manager.compare.rate(run_id, 9 - 2 * rank)
    manager.compare.choose(runs[0], runs[-1], "left")
    manager.compare.choose(runs[-1], runs[1], "right")
    trust = {t.judge: t for t in manager.results.trust()}
    likeness = trust["likeness"]
    assert (likeness.ratings.agree, likeness.ratings.n) == (6, 6) and likeness.choices.n == 2
    assert likeness.choices.agree == 2
    assert "loss" in trust and trust["loss"].weight == 1.0
    answer = _status_json(session.folder, capsys)
    assert {a["judge"] for a in answer["agreement"]} >= {"loss", "likeness", "prompt_following"}
    report = manager.results.report_markdown()
    section = report.split("## How far each judge agrees with you")[1].split("\n## ")[0]
    assert "| likeness |" in section and "6 of 6 (100%" in section and "2 of 2" in section
    weights = manager.results.set_weight("loss", 0)
    assert weights["loss"] == 0.0 and session.settings.weights["loss"] == 0.0
    judges = _status_json(session.folder, capsys)["winner"]["judges"]
    assert "loss" not in judges and "human" in judges
    # the CLI's way, on the same stored settings
    assert cli_main(["weights", str(session.folder), "loss=1"]) == 0
    assert "loss=1" in capsys.readouterr().out
    manager.results.set_weight("loss", 0)
    with pytest.raises(BracketError, match="weighs 0"):
        manager.results.set_weight("human", 0)  # no judge that can score the session would be left
    assert session.settings.weights["human"] == 2.0


def test_compare_shows_scores_per_image_and_orders_by_a_judge(judged):
    manager, planted = judged
    ids = planted.order[::-1]
    assert manager.compare.order_by(ids, "likeness") == planted.order
    assert manager.compare.order_by(ids, "prompt_following") == sorted(
        ids, key=lambda i: -planted.flexibility[i])
    loss_order = manager.compare.order_by(ids, "loss")
    assert sorted(loss_order) == sorted(ids)
    assert "likeness" in manager.compare.judge_keys() and "loss" in manager.compare.judge_keys()
    grid = manager.compare.grid(ids)
    cell = grid.rows[0][0]
    assert cell.kind == "image" and cell.scores["likeness"] == pytest.approx(planted.image_likeness[ids[0]])
