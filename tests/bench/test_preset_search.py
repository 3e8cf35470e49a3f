"""The preset-space search benchmark (issue 19): landscapes and one tiny run of every strategy."""

from __future__ import annotations

import math

from bench.preset_landscapes import LANDSCAPES, Landscape, optimum, quality, shifted
from bench.preset_search import Plan, preset_space, preset_trainer, run


def test_landscapes_cover_three_real_preset_families_and_follow_their_story():
    presets = {land.preset for land in LANDSCAPES}
    assert {"sdxl-lora", "flux1-lora", "axolotl-lora"} <= presets and any(p.startswith("wan") for p in presets)
    land = next(land for land in LANDSCAPES if land.name == "sdxl-prodigy-decay")
    space = preset_space(preset_trainer(land.preset))
    best, share = optimum(space, land, samples=4000)
    assert 0 < share < 0.2
    prodigy = {"optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 0.7,
               "lr_scheduler": "cosine", "lr_warmup_steps": 0, "network_dim": 32, "network_alpha": 32,
               "batch_size": 1}
    assert quality(prodigy, land) <= 1.05 * best  # Prodigy with a decay near d_coef 0.7 is optimal there
    assert quality({**prodigy, "lr_scheduler": "constant"}, land) > 1.05 * best
    # the effective LoRA step: halving alpha/rank moves the best Adam rate up by 2x
    adam = {"optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_scheduler": "constant", "network_dim": 32,
            "network_alpha": 16, "batch_size": 1}
    flat = Landscape("t", "sdxl-lora", "", step_star=5e-5)
    assert math.isclose(quality(adam, flat), quality({**adam, "learning_rate": 2e-4, "network_alpha": 8}, flat))
    assert shifted(flat).step_star > flat.step_star


def test_every_strategy_runs_and_is_summarised():
    land = next(land for land in LANDSCAPES if land.name == "llm-rate-high")
    data = run(Plan(repetitions=1, budget=8), landscapes=(land,), variants={"s10": {"n_startup_trials": 10}})
    row = data["landscapes"]["llm-rate-high"]
    for name in ("bracket", "bracket@no-shapes", "bracket@no-skip", "bracket@fixed-bracket", "bracket@preset-order",
                 "bracket+past", "optuna-tpe", "random", "s10"):
        assert 1 <= row[name]["median"] <= 8 * (2 if name == "random" else 1) + 1
    assert set(data["summary"]) == {"bracket", "bracket@no-shapes", "bracket@no-skip", "bracket@fixed-bracket",
                                    "bracket@preset-order", "bracket+past", "optuna-tpe", "s10", "baseline-first floor"}
    assert data["summary"]["optuna-tpe"]["vs_tpe_geomean"] == 1.0
    # the axolotl baseline (2e-4 at alpha = 2 r, batch 4) is 1.016x the optimum there: a hit at trial 1
    assert row["floor"] == 1 and data["summary"]["baseline-first floor"]["vs_random_expected_max"] == 1 / 6


def test_the_floor_is_two_trials_where_the_baseline_misses():
    from bench.preset_search import baseline_floor

    land = next(land for land in LANDSCAPES if land.name == "llm-dead-knobs")
    space = preset_space(preset_trainer(land.preset))
    best, _ = optimum(space, land, samples=4000)
    assert baseline_floor(land, space, best) == 2  # its baseline is 1.34x the optimum there


def test_a_config_past_the_divergence_limit_is_marked_diverged_and_costs_3x():
    from bench.preset_landscapes import diverges

    land = next(land for land in LANDSCAPES if land.name == "sdxl-rate-low")
    adam = {"optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant", "network_dim": 32,
            "network_alpha": 16, "batch_size": 1}  # the sdxl-lora baseline: 0.85 decades too high there
    assert diverges(adam, land) and quality(adam, land) == 0.3
    lower = {**adam, "learning_rate": 1e-5}
    assert not diverges(lower, land) and quality(lower, land) < 0.105


def _warm_start(land):
    from bracket.search.warm_order import order_warm_start
    from bracket.session.create import fit_warm_start

    trainer = preset_trainer(land.preset)
    space = preset_space(trainer)
    warm, _ = fit_warm_start(trainer, space)
    return space, [space.complete(named.knobs) for _, named in order_warm_start(warm, space)]


def test_the_four_newer_landscapes_hold_the_cases_they_were_added_for():
    """Each optimum was placed from a published recipe; these are the cases it gives against the
    presets' own warm starts (docs/BENCHMARKS.md section 1b)."""
    from bench.preset_landscapes import diverges, step_offset

    lands = {land.name: land for land in LANDSCAPES}
    assert list(lands)[-4:] == ["hv-between-rates", "sd35-near-curated", "llm-qlora-rate-low",
                                "llm-qlora-33b"]  # appended: the first eleven keep their order
    assert {"hunyuan-video-lora", "sd35-lora", "torchtune-lora"} <= {land.preset for land in LANDSCAPES}
    # QLoRA's 33B step: every axolotl warm-start config far too high, three of the five diverge
    land = lands["llm-qlora-33b"]
    _, configs = _warm_start(land)
    assert [diverges(c, land) for c in configs] == [True, False, True, False, True]
    assert all(step_offset(c, land)[0] > 0.85 for c in configs)
    # torchtune's curated rates are all too high for QLoRA's 7B/13B step, and miss the window
    land = lands["llm-qlora-rate-low"]
    space, configs = _warm_start(land)
    best, _ = optimum(space, land, samples=4000)
    assert all(step_offset(c, land)[0] > 0.5 and quality(c, land) > 1.2 * best for c in configs)
    # SD3.5: the curated shift-3 config (1e-4 at alpha = rank) is within 5 %; the baseline is not
    land = lands["sd35-near-curated"]
    space, configs = _warm_start(land)
    best, _ = optimum(space, land, samples=4000)
    hits = [c for c in configs if quality(c, land) <= 1.05 * best]
    assert len(hits) == 1 and hits[0]["lr_scheduler"] == "cosine" and quality(configs[0], land) > 1.05 * best
    # HunyuanVideo: the optimum lies between the curated Adam steps, none within 5 %
    land = lands["hv-between-rates"]
    space, configs = _warm_start(land)
    best, _ = optimum(space, land, samples=4000)
    offsets = sorted(step_offset(c, land)[0] for c in configs if c["optimizer_type"] != "prodigyopt.Prodigy")
    assert offsets[0] < -0.4 and offsets[-1] > 0.4 and all(quality(c, land) > 1.05 * best for c in configs)
