"""The hedge benchmark (issue 46): its landscape kinds say what they claim, its metrics count GPU time."""

from __future__ import annotations

import pytest

from bench import hedge
from bench.halving_landscapes import FULL_STEPS, Curve
from bench.hedge_landscapes import KINDS
from bench.preset_landscapes import diverges, optimum, quality
from bench.preset_search import preset_space, preset_trainer
from bracket.search.warm_order import order_warm_start
from bracket.session.create import fit_warm_start

SPACE = preset_space(preset_trainer("sdxl-lora"))


def _warm() -> list[dict]:
    warm, _ = fit_warm_start(preset_trainer("sdxl-lora"), SPACE)
    return [SPACE.complete(named.knobs) for _, named in order_warm_start(warm, SPACE)]


def test_each_kind_is_the_kind_it_claims():
    optima = {kind: optimum(SPACE, land, samples=3000) for kind, land in KINDS.items()}
    warm = _warm()
    ratios = {kind: [quality(c, KINDS[kind]) / optima[kind][0] for c in warm] for kind in KINDS}
    # the curated configs miss everywhere (a search has to move off them)
    assert all(min(r) > 1.05 for r in ratios.values()), ratios
    # flat: a quarter to a third of the space within 5 %; the others narrow
    assert 0.2 <= optima["flat-noisy"][1] <= 0.4
    assert all(optima[k][1] < 0.08 for k in ("other-family", "slow-starter", "rate-alpha-dim"))
    # other family: the best curated config is Adam, the optimum Prodigy
    other = KINDS["other-family"]
    best_warm = min(warm, key=lambda c: quality(c, other))
    assert best_warm["optimizer_type"] != "Prodigy"
    prodigy = {**best_warm, "optimizer_type": "Prodigy", "prodigy_d_coef": 0.55, "lr_scheduler": "cosine",
               "lr_warmup_steps": 0}
    assert quality(prodigy, other) <= 1.01 * optima["other-family"][0]
    # slow starter: nothing curated diverges; the curated rates lead at 1/3 and over-fit by the end
    slow = KINDS["slow-starter"]
    assert not any(diverges(c, slow) for c in warm)
    low = {**warm[0], "learning_rate": 1.6e-5, "lr_scheduler": "cosine", "lr_warmup_steps": 10}
    best, curated = Curve(low, slow), [Curve(c, slow) for c in warm]
    assert all(c.validation([1 / 9])[0] < best.validation([1 / 9])[0] for c in curated)  # the best looks worst
    fast = Curve({**low, "learning_rate": 4e-5, "lr_scheduler": "constant"}, slow)  # 0.4 decades above
    assert fast.validation([1 / 3])[0] < best.validation([1 / 3])[0]  # a fast rate leads at 1/3
    assert best.final < fast.final and all(best.final < c.final for c in curated)  # and over-fits


def test_compute_counts_gpu_time_with_a_start_up_per_launch():
    full = {"steps": FULL_STEPS, "full": True, "diverged": False, "true": 2.0, "score": 2.0}
    stopped = dict(full, steps=FULL_STEPS // 10, diverged=True, true=9.0, score=9.0)
    hit = dict(full, true=1.02, score=1.0)
    events = [full, stopped, hit]
    assert hedge.spent([full]) == pytest.approx(1.0)
    assert hedge.spent([stopped]) == pytest.approx((0.1 + hedge.LAUNCH) / (1 + hedge.LAUNCH))
    compute, trials = hedge.to_target(events, best=1.0)
    assert trials == 3 and compute == pytest.approx((2.1 + 3 * hedge.LAUNCH) / (1 + hedge.LAUNCH))
    assert hedge.to_target([full, stopped], best=1.0) is None
    assert hedge.pick_ratio([full, hit]) == pytest.approx(1.0)
    assert hedge.pick_ratio([dict(full, score=0.5), hit]) == pytest.approx(2.0 / 1.02)


def test_a_session_stays_within_its_budget_of_gpu_time():
    for strategy in ("bracket", "optuna-tpe", "tpe-hyperband"):
        record = hedge.run_session("slow-starter", strategy, 0, 4, fresh=False)
        events = record["events"]
        assert hedge.spent(events[:-1]) < 4 <= hedge.spent(events) < 4 + 1.01
