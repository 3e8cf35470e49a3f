"""The successive-halving benchmark (issue 38): landscapes with time, the strategies, the metrics, the CLI."""

from __future__ import annotations

import json
import random
import statistics

from bench import halving
from bench.halving_landscapes import FULL_STEPS, Curve, RunLog, evidence_kind, spearman_table
from bench.halving_strategies import run_halving
from bench.preset_landscapes import LANDSCAPES
from bench.preset_search import preset_space, preset_trainer
from bracket.search.halving import Rungs

SDXL = ("sdxl-rate-low", "sdxl-prodigy-decay", "sdxl-short-warmup")
ADAM = {"optimizer_type": "AdamW", "lr_scheduler": "constant", "lr_warmup_steps": 0, "network_dim": 32,
        "network_alpha": 16, "batch_size": 8, "adaptive_learning_rate": None, "prodigy_d_coef": 1.0}


def _land(name):
    return next(land for land in LANDSCAPES if land.name == name)


def test_the_logged_loss_ranks_configs_as_the_issue_measured_and_better_at_a_third_than_at_a_ninth():
    rho = {name: spearman_table(_land(name), preset_space(preset_trainer("sdxl-lora")), (1 / 9, 1 / 3), samples=120,
                                kinds=("smoothed", "validation")) for name in SDXL}
    ninth = statistics.fmean(r["smoothed"]["1/9"] for r in rho.values())
    third = statistics.fmean(r["smoothed"]["1/3"] for r in rho.values())
    assert 0.1 <= ninth <= 0.5 and 0.5 <= third <= 0.85, (ninth, third)  # the issue: 0.2-0.4 and 0.55-0.8
    for r in rho.values():
        assert r["smoothed"]["1/3"] > r["smoothed"]["1/9"] and r["validation"]["1/3"] > r["validation"]["1/9"]
        assert r["validation"]["1/3"] >= r["smoothed"]["1/3"] - 0.05  # validation loss is the better evidence
    assert evidence_kind("sdxl-lora") == "validation" and evidence_kind("wan22-lora") == "smoothed"


def test_a_slow_starter_looks_bad_early_and_wins_late_and_a_high_rate_overfits_late():
    land = _land("sdxl-rate-low")  # best effective step 2e-5
    slow = Curve({**ADAM, "learning_rate": 4e-5, "lr_scheduler": "cosine", "lr_warmup_steps": 20}, land)
    fast = Curve({**ADAM, "learning_rate": 1.6e-4}, land)  # 0.6 decades above the best step
    assert slow.final < fast.final and not fast.diverged
    assert slow.validation([1 / 9])[0] > fast.validation([1 / 9])[0]
    assert abs(slow.validation([1.0])[0] - slow.final) < 1e-12 and abs(fast.validation([1.0])[0] - fast.final) < 1e-12
    val = fast.validation([0.3, 0.6, 1.0])
    train = fast.training([0.3, 0.6, 1.0])
    assert val[2] > val[1] and train[2] < train[1]  # validation shows the over-fit, training loss does not


def test_a_run_log_is_one_series_so_a_resumed_run_continues_what_the_paused_one_logged():
    land = _land("wan-rate-low")
    config = {**ADAM, "learning_rate": 1e-4, "optimizer_type": "AdamW"}
    log = RunLog(Curve(config, land), random.Random(3))
    early = log.evidence(100, "smoothed")
    assert log.evidence(300, "smoothed") != early and log.evidence(100, "smoothed") == early
    assert log.evidence(100, "validation") == log.evidence(100, "validation")


def test_a_promoted_config_trains_only_the_steps_between_its_rungs_and_restart_asha_trains_them_again():
    land = _land("flux-rate-high")
    rungs = Rungs(3, 1 / 3)
    steps = rungs.steps(FULL_STEPS)
    for restart in (False, True):
        events = run_halving(land, 5, 4, rungs=rungs, evidence="validation", restart=restart)
        first = {}
        for event in events:
            if event["cid"] in first and not restart:
                assert event["steps"] == steps[event["rung"]] - steps[event["rung"] - 1]
            elif event["cid"] in first:
                assert event["steps"] == steps[event["rung"]]
            first.setdefault(event["cid"], event)
        assert any(e["full"] and e["rung"] == 1 for e in events)  # promotions happened


def test_compute_counts_steps_and_start_ups_and_only_configs_trained_to_full_length():
    events = [{"steps": 300, "cid": 0, "rung": 0, "score": 0.1, "full": False, "true": 0.100},
              {"steps": 300, "cid": 1, "rung": 0, "score": 0.2, "full": False, "true": 0.200},
              {"steps": 600, "cid": 0, "rung": 1, "score": 0.1, "full": True, "true": 0.100}]
    assert halving.spent(events, 0.0) == [1 / 3, 2 / 3, 4 / 3]
    assert abs(halving.spent(events, 0.1)[-1] - (1200 + 3 * 90) / 990) < 1e-12
    assert halving.compute_to_target(events, 0.1, 0.0, cap=16) == 4 / 3  # the rung-0 event did not count
    assert halving.compute_to_target(events, 0.1, 0.0, cap=1) is None
    assert halving.pick_true(events[:2], 0.0, 1.0) == 0.100 and halving.pick_true(events, 0.0, 2.0) == 0.100


def test_every_strategy_runs_and_is_summarised(tmp_path):
    plan = halving.Plan(repetitions=1, cap=2, landscapes=("llm-rate-high",), spearman_samples=30)
    data = halving.run(plan, results_dir=tmp_path, log=lambda *_: None)
    row = data["landscapes"]["llm-rate-high"]
    for name in halving.STRATEGIES:
        assert row[name]["repetitions"] == 1 and row[name]["configs"] >= 1
        assert 0 < row[name]["compute@0.05"] <= 2 and row[name]["pick@1"] >= 1.0 - 1e-9
    assert data["summary"]["bracket"]["vs_bracket@0.05"] == 1.0
    assert set(row["_spearman"]) == {"validation", "smoothed", "trend"} and row["_evidence"] == "smoothed"


def test_the_cli_runs_the_quick_benchmark_and_writes_its_result(tmp_path, capsys):
    from bench.__main__ import main
    from bench.halving_report import landscape_table, spearman_rows, summary_table

    assert main(["halving", "--quick", "--results", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "halving.json").read_text(encoding="utf-8"))
    assert set(data["landscapes"]) == set(halving.QUICK.landscapes)
    assert "halving-3-1/9" in capsys.readouterr().out
    tables = summary_table(data) + landscape_table(data) + spearman_rows(data)
    assert "| halving-3-1/9 |" in tables and "sdxl-rate-low (validation)" in tables


def test_the_rank_view_puts_further_rungs_first_and_a_diverged_config_last():
    from bench.halving_strategies import Tried, history_view

    land = _land("flux-rate-high")
    configs = [Tried(i, i, dict(ADAM), {"learning_rate": 1e-4 * (i + 1)}, "search",
                       RunLog(Curve({**ADAM, "learning_rate": 1e-4}, land), random.Random(i)), reached=r)
               for i, r in enumerate((1, 0, 0, 0))]
    configs[3].diverged = True
    scores = {(0, 0): 0.2, (0, 1): 0.15, (1, 0): 0.1, (2, 0): 0.3, (3, 0): 0.3}
    values = [h.value for h in history_view(configs, scores, 3, 1, "lexi")]
    assert values[0] < values[1] < values[2] < values[3]
    top = history_view(configs, scores, 3, 1, "top")  # fewer than 3 at 1/3: every config by its 1/9 score
    assert [h.value for h in top[:3]] == [0.2, 0.1, 0.3]
