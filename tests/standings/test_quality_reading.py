"""Issue 34 item 8: one reading of a score for people — quality on the 1–10 rating scale, higher
is better — on every screen, in ``status`` and in the report; and the log tail without
accelerate's launch defaults."""

from __future__ import annotations

from types import SimpleNamespace

from bracket.app.log_view import LogTail, without_launch_noise
from bracket.judge.human import RATING_MAX, RATING_MIN
from bracket.standings.parts import as_rating
from bracket.standings.quality import quality, quality_interval, quality_text
from bracket.status import best_step_lines, results_table, winner_lines

ACCELERATE = [
    "The following values were not passed to `accelerate launch` and had defaults used instead:",
    "\t`--num_processes` was set to a value of `1`",
    "\t`--num_machines` was set to a value of `1`",
    "\t`--mixed_precision` was set to a value of `'no'`",
    "\t`--dynamo_backend` was set to a value of `'no'`",
    "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.",
]


def test_quality_is_the_rating_scale_higher_is_better():
    # the best score is a 10, the worst (a disqualified run's 1.0) a 1: as a rating of the human judge
    assert (quality(0.0), quality(1.0)) == (RATING_MAX, RATING_MIN) == (10.0, 1.0)
    assert quality(0.3) > quality(0.4)  # a lower (better) score reads higher
    assert as_rating(0.407) == quality(0.407)  # the human estimate reads on the same scale
    assert quality_text(0.005) == "9.96" and quality_text(None, "-") == "-"
    # an interval's ends swap (the lower score is the higher quality), clipped where scores live
    assert quality_interval(0.18, 0.24) == "7.84 – 8.38" and quality_interval(-1.0, 2.0) == "1.00 – 10.00"


def _row(mean: float) -> SimpleNamespace:
    return SimpleNamespace(name="adamw-fast", rank=1, best_step=30, best_step_basis="validation", mean=mean, seeds=2,
                           loss_basis="validation")


def test_status_prints_quality_not_the_internal_score():
    runs = [{"id": 1, "stage": "search", "kind": "baseline", "config_name": "baseline", "seed": 1, "status": "done",
             "score": 1.0, "params": {}, "failure_reason": ""},
            {"id": 2, "stage": "search", "kind": "search", "config_name": "search-1", "seed": 1, "status": "done",
             "score": 0.0, "params": {}, "failure_reason": ""}]
    table = results_table(SimpleNamespace(runs=runs)).splitlines()
    assert "quality" in table[0] and " score " not in table[0]
    best, worst = table[2], table[3]  # best first
    assert best.split()[0] == "2" and "10.00" in best and worst.split()[0] == "1" and " 1.00 " in worst
    board = SimpleNamespace(rows=[_row(0.12)])
    lines = best_step_lines(SimpleNamespace(board=lambda stage: board))
    assert lines == ["best step of adamw-fast: 30 (validation), mean quality 8.92 over 2 seeds, validation loss"]
    winner = SimpleNamespace(seeds=[1], figures={}, step=None, step_basis="", config_name="a", stage="search",
                             run_id=2, steps=40, mean=0.12, judges=["loss"], estimated=[], rated=False)
    line = winner_lines(SimpleNamespace(winner=winner, verdict="v", warnings=[]))[0]
    assert "quality 8.92" in line and "score" not in line


def test_log_tail_leaves_out_accelerates_launch_defaults(tmp_path):
    log = tmp_path / "stdout.log"
    lines = ACCELERATE + [f"steps: {i}%" for i in range(1, 30)]
    log.write_text("\n".join(lines) + "\n")
    assert without_launch_noise(ACCELERATE + ["import network module: networks.lora"]) == [
        "import network module: networks.lora"]
    snap = SimpleNamespace(current={"log_path": str(log)}, runs=[])
    tail = LogTail().read(snap, memo=None, lines=35)  # more lines than the log has past the warnings
    assert tail[0] == "steps: 1%" and tail[-1] == "steps: 29%" and len(tail) == 29
    assert LogTail().read(snap, memo=None, lines=5) == [f"steps: {i}%" for i in range(25, 30)]
