"""Shape draws (issue 19): the sampler's first proposals after the warm start keep the best
config's optimizer family and effective step and spread every other knob."""

from __future__ import annotations

import math

import optuna
from optuna.trial import TrialState

from bracket.search.controller import SearchController
from bracket.search.lr_bracket import step_of
from bracket.search.shapes import ShapeRule, shape_draw
from bracket.search.types import ScoredConfig
from tests.search.lora_space import ADAM, BASE, SPACE


def _scored(params: dict, value: float, kind: str, *, diverged: bool = False) -> ScoredConfig:
    return ScoredConfig(SPACE.searched_params(SPACE.complete(params)), value, TrialState.COMPLETE, kind,
                        diverged=diverged)


WARM = [
    _scored(BASE, 0.50, "baseline"),
    _scored({**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_alpha": 32}, 0.45, "curated"),
    _scored({**BASE, "lr_scheduler": "cosine", "lr_warmup_steps": 20, "learning_rate": 4e-4}, 0.9, "curated",
            diverged=True),
    _scored({**BASE, "learning_rate": 3.2e-5}, 0.40, "bracket"),  # the best: effective step 1.6e-5
    _scored({**BASE, "learning_rate": 3.2e-4}, 0.60, "bracket"),
]


def _draws(history: list[ScoredConfig], rule: ShapeRule, n: int) -> list[dict]:
    out = []
    for _ in range(n):
        config = shape_draw(history, SPACE, rule, seed=3)
        if config is None:
            break
        out.append(config)
        history = [*history, ScoredConfig(SPACE.searched_params(config), 0.7, TrialState.COMPLETE, "search")]
    return out


def test_draws_keep_the_best_configs_optimizer_family_and_effective_step_and_spread_the_rest():
    draws = _draws(list(WARM), ShapeRule(trials=4), 10)
    assert len(draws) == 4  # then TPE
    for config in draws:
        assert SPACE.problems(config) == []
        family, knob, step, _ = step_of(config, SPACE)  # type: ignore[misc]
        # alpha/rank 1/2 is on offer at every rank but 4 (alpha 1, 4, 8, 16, 32): then the rate makes up for it
        assert (family, knob) == ("adamw", "learning_rate") or config["optimizer_type"] == "Adafactor"
        assert math.isclose(step, math.log10(1.6e-5), abs_tol=1e-9)
    # the scheduler: never the best config's own (constant) while others are untried, the least tried first
    # (the warm start tried constant 4 times, cosine once, the other two never)
    schedulers = [c["lr_scheduler"] for c in draws]
    assert set(schedulers[:2]) == {"linear", "constant_with_warmup"} and "constant" not in schedulers
    # the optimizer varies among those the learning rate drives, never to Prodigy (another step knob)
    assert {c["optimizer_type"] for c in draws} <= set(ADAM) and draws[0]["optimizer_type"] != "AdamW8bit"
    # the rank is spread too (the best one's own, 32, comes last), alpha following it
    assert {c["network_dim"] for c in draws} == {4, 8, 16, 64}


def test_alpha_follows_the_rank_and_the_rate_makes_up_for_what_rounding_alpha_changed():
    best = _scored({**BASE, "learning_rate": 2e-4, "network_dim": 32, "network_alpha": 1}, 0.3, "baseline")
    for config in _draws([best], ShapeRule(trials=4), 4):
        # alpha/rank 1/32 exists only at rank 32: at rank 8 the nearest alpha is 1 (1/8), the rate 4x lower
        assert config["network_dim"] != 32 and config["network_alpha"] == 1
        assert math.isclose(config["learning_rate"] / config["network_dim"], 2e-4 / 32)


def test_an_adaptive_centre_keeps_its_coefficient_and_its_optimizer():
    prodigy = {**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 0.7, "network_alpha": 32}
    draws = _draws([_scored(BASE, 0.5, "baseline"), _scored(prodigy, 0.3, "curated")], ShapeRule(trials=3), 3)
    assert [c["optimizer_type"] for c in draws] == ["Prodigy"] * 3
    assert all(c["prodigy_d_coef"] == 0.7 and c["network_alpha"] == min(c["network_dim"], 32) for c in draws)


def test_no_draw_without_a_warm_start_a_rule_or_a_centre_that_trained():
    cold = [ScoredConfig(SPACE.searched_params(SPACE.complete(BASE)), 0.4, TrialState.COMPLETE, "search")]
    assert shape_draw(cold, SPACE, ShapeRule(), seed=0) is None  # TPE's own start-up explores
    assert shape_draw(WARM, SPACE, None, seed=0) is None
    every_one_diverged = [_scored(BASE, 0.9, "baseline", diverged=True)]
    assert shape_draw(every_one_diverged, SPACE, ShapeRule(), seed=0) is None
    assert shape_draw(WARM, SPACE, ShapeRule(trials=0), seed=0) is None


def test_the_controller_hands_out_the_draws_then_tpe():
    history: list[ScoredConfig] = []
    study = optuna.create_study(direction="minimize")
    controller = SearchController(study=study, space=SPACE, seed=5, history=lambda: history, lr_bracket=False,
                                  shapes=ShapeRule(trials=2), hedge=None)  # the draws alone (WARM reads flat)
    history.extend(WARM)
    proposals = []
    for _ in range(3):
        proposal = controller.next()
        assert proposal.kind == "search"
        proposals.append(proposal.config)
        if len(proposals) <= 2:  # a draw: named shape-N, its origin stored with the trial (the "why")
            assert proposal.config == shape_draw(history, SPACE, ShapeRule(trials=2), seed=5)
            assert proposal.name == f"shape-{len(proposals)}"
            assert study.trials[-1].user_attrs["source"].startswith("shape draw")
        else:
            assert proposal.name == "search-3" and "source" not in study.trials[-1].user_attrs
        history.append(ScoredConfig(SPACE.searched_params(proposal.config), 0.7, TrialState.COMPLETE, "search"))
        controller.finish(proposal.trial_number, 0.7)
    assert shape_draw(history[:-1], SPACE, ShapeRule(trials=2), seed=5) is None  # the third was TPE's
    assert study.trials[0].params == SPACE.searched_params(proposals[0])  # the stored study logs the draw


def test_the_why_column_says_a_shape_draw_is_one():
    from bracket.app.suggestion_reason import origin, short_reasons

    configs = [{"id": 1, "kind": "baseline", "name": "baseline", "params": SPACE.searched_params(SPACE.complete(BASE))},
               {"id": 2, "kind": "search", "name": "shape-2", "params": SPACE.searched_params(SPACE.complete(
                   {**BASE, "lr_scheduler": "linear", "lr_warmup_steps": 10}))},
               {"id": 3, "kind": "search", "name": "search-3", "params": {}}]
    lines = short_reasons(configs, {1: 0.5, 2: 0.4}, SPACE, n_startup=1)
    assert lines[2].startswith("shape draw") and "lr_scheduler linear" in lines[2]
    assert lines[3].startswith("TPE from 2 scored")
    assert "shape draw" in origin("search", "shape-2", "", seen=5) and "TPE" in origin("search", "search-2", "", seen=5)
