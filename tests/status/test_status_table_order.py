"""``status``'s run table in the leaderboard's order, and config names it cuts marked as cut.

Seen in review (issue 43): a finished SDXL LoRA session whose winner was the baseline (the one config
rated) printed that run ninth of ten — the table sorted by each run's own combined score while the
Results tab, the trial table's rank column and the report rank by the leaderboard — and names cut to
18 characters read as other configs ('prodigy-d-coef-hig')."""

from __future__ import annotations

from types import SimpleNamespace

from bracket.status import results_table


def _run(run_id: int, name: str, score: float | None, stage: str = "search") -> dict:
    return dict(id=run_id, stage=stage, kind="search", config_name=name, seed=42, status="done", score=score,
                params={}, failure_reason="", worker="")


def _order(text: str) -> list[int]:
    return [int(line.split()[0]) for line in text.splitlines()[2:] if line[:4].strip().isdigit()]


def test_runs_follow_their_configs_leaderboard_rank_then_their_own_score():
    runs = [_run(1, "loss-best", 0.10), _run(2, "rated-best", 0.40), _run(3, "rated-best", 0.35),
            _run(4, "unranked", 0.05), _run(5, "final-one", 0.9, stage="final")]
    ranks = {2: 1, 3: 1, 1: 2, 5: 1}
    assert _order(results_table(SimpleNamespace(runs=runs), ranks=ranks)) == [5, 3, 2, 1, 4]
    assert _order(results_table(SimpleNamespace(runs=runs))) == [5, 4, 1, 3, 2]  # no standings: by score


def test_a_cut_config_name_ends_in_an_ellipsis():
    text = results_table(SimpleNamespace(runs=[_run(1, "prodigy-d-coef-higher-2", 0.1), _run(2, "prodigy", 0.2)]))
    rows = text.splitlines()[2:]
    assert " prodigy-d-coef-hi… " in rows[0] and " prodigy " in rows[1]
