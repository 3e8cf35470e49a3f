"""Hedging the warm start (issue 46): the verdict's table, and what the controller does with it."""

from __future__ import annotations

from dataclasses import replace

import optuna
import pytest
from optuna.trial import TrialState

from bracket.search.configs import NamedConfig
from bracket.search.controller import SearchController
from bracket.search.hedge import HedgeRule, hedge_cut, hedge_draw, hedge_explores, hedge_probe, hedge_verdict
from bracket.search.space import CategoricalKnob, FloatKnob, SearchSpace
from bracket.search.types import ScoredConfig

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "Prodigy")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
})


def _done(value: float | None, kind: str, *, lr: float = 1e-4, diverged: bool = False,
          state: TrialState = TrialState.COMPLETE) -> ScoredConfig:
    return ScoredConfig({"optimizer_type": "AdamW", "learning_rate": lr}, value, state, kind,
                        diverged=diverged, name=kind, loss=value)


RUNNING = TrialState.RUNNING


@pytest.mark.parametrize("history, flat", [
    # two trained warm-start configs within 15 % of each other: flat
    ([_done(1.00, "baseline"), _done(1.10, "curated")], True),
    ([_done(1.00, "baseline"), _done(1.20, "curated")], False),  # 20 % apart: the bet tells something
    ([_done(1.00, "baseline")], False),  # one is no verdict
    # a diverged config does not count (its loss is the divergence, evidence about the rate)
    ([_done(3.0, "baseline", diverged=True), _done(1.0, "curated"), _done(1.05, "curated")], True),
    ([_done(3.0, "baseline", diverged=True), _done(1.0, "curated")], False),
    # only the first `look` trained configs decide: a later far-off one does not undo it
    ([_done(1.00, "baseline"), _done(1.05, "curated"), _done(3.0, "curated")], True),
    ([_done(1.00, "baseline"), _done(2.0, "curated"), _done(1.01, "curated")], False),
    # a running one is not evidence; sampler configs are not the warm start
    ([_done(1.00, "baseline"), _done(None, "curated", state=RUNNING), _done(1.0, "search")], False),
])
def test_the_flat_verdict(history, flat):
    rule = HedgeRule(bracket_held=False)
    assert (hedge_verdict(history, rule) is not None) is flat


def test_the_spread_is_read_on_the_raw_losses_not_the_normalised_scores():
    rule = HedgeRule(bracket_held=False)
    # normalised across the session's runs, two configs 3 % apart in loss score 0 and 1
    close = [replace(_done(0.0, "baseline"), loss=0.100), replace(_done(1.0, "curated"), loss=0.103)]
    assert hedge_verdict(close, rule) is not None
    far = [replace(_done(0.4, "baseline"), loss=0.100), replace(_done(0.45, "curated"), loss=0.200)]
    assert hedge_verdict(far, rule) is None
    unknown = [replace(h, loss=None) for h in close]  # no raw loss (a halving rung view): no verdict
    assert hedge_verdict(unknown, rule) is None


@pytest.mark.parametrize("sides, held", [
    ([1.2, 1.3], True),  # neither side beat the best warm-start config (1.0)
    ([0.9, 1.3], False),  # a side won: the rate was off, the bet goes on (shape draws at the new step)
    ([1.2], False),  # one side is not a bracket yet
    ([1.2, None], False),  # the other side still running
])
def test_the_bracket_held_verdict(sides, held):
    warm = [_done(1.0, "baseline"), _done(2.0, "curated")]  # 100 % apart: never flat
    bracket = [_done(v, "bracket", state=TrialState.COMPLETE if v is not None else RUNNING) for v in sides]
    assert (hedge_verdict(warm + bracket, HedgeRule(bracket_held=True)) is not None) is held
    assert hedge_verdict(warm + bracket, HedgeRule(bracket_held=False)) is None


def test_the_verdict_buys_a_few_random_proposals_then_the_model():
    rule = HedgeRule(look=2, flat=0.15, explore=2, bracket_held=False)
    flat = [_done(1.0, "baseline"), _done(1.02, "curated")]
    assert hedge_explores(flat, rule)
    assert hedge_explores([*flat, _done(1.1, "search")], rule)
    assert not hedge_explores([*flat, _done(1.1, "search"), _done(1.2, "search")], rule)
    assert not hedge_explores([_done(1.0, "baseline"), _done(2.0, "curated")], rule)
    assert hedge_verdict(flat, None) is None and not hedge_explores(flat, None)


def _controller(history: list[ScoredConfig], **options) -> SearchController:
    study = optuna.create_study(direction="minimize")
    warm = [("baseline", NamedConfig("baseline", {"optimizer_type": "AdamW", "learning_rate": 1e-4})),
            ("curated", NamedConfig("c1", {"optimizer_type": "AdamW", "learning_rate": 3e-4})),
            ("curated", NamedConfig("c2", {"optimizer_type": "Prodigy", "learning_rate": 3e-3})),
            ("curated", NamedConfig("c3", {"optimizer_type": "AdamW", "learning_rate": 1e-3}))]
    SearchController.enqueue_warm_start(study, SPACE, warm)
    return SearchController(study=study, space=SPACE, seed=3, history=lambda: history, **options)


def _train(controller: SearchController, history: list[ScoredConfig], value: float) -> str:
    proposal = controller.next()
    history.append(ScoredConfig(SPACE.searched_params(proposal.config), value, TrialState.COMPLETE,
                                proposal.kind, name=proposal.name, loss=value))
    controller.finish(proposal.trial_number, value)
    return proposal.kind


def _flat(first: tuple[str, float, float], second: tuple[str, float, float]) -> list[ScoredConfig]:
    return [ScoredConfig({"optimizer_type": opt, "learning_rate": lr}, value, TrialState.COMPLETE, kind,
                         name=kind, loss=value)
            for kind, (opt, lr, value) in zip(("baseline", "curated"), (first, second), strict=True)]


@pytest.mark.parametrize("first, second, rate", [
    # the higher rate did worse: the best one a decade down the slope
    (("AdamW", 1e-4, 1.00), ("AdamW", 3e-4, 1.05), 1e-5),
    (("AdamW", 3e-4, 1.05), ("AdamW", 1e-4, 1.00), 1e-5),  # whatever the order they trained in
    # the lower rate did worse: a decade up
    (("AdamW", 1e-4, 1.05), ("AdamW", 3e-4, 1.00), 3e-3),
    # clamped into the knob's bounds (1e-5 .. 3e-2)
    (("AdamW", 3e-5, 1.00), ("AdamW", 1e-4, 1.05), 1e-5),
    # already at the bound: nothing along the slope
    (("AdamW", 1e-5, 1.00), ("AdamW", 3e-5, 1.05), None),
    # two families, or one rate: no slope, no probe
    (("AdamW", 1e-4, 1.00), ("Prodigy", 1e-4, 1.05), None),
    (("AdamW", 1e-4, 1.00), ("AdamW", 1e-4, 1.05), None),
    # not flat (20 % apart): no verdict, the bet goes on, no probe
    (("AdamW", 1e-4, 1.00), ("AdamW", 3e-4, 1.20), None),
])
def test_the_probe_after_a_flat_verdict_follows_the_slope_of_the_rate(first, second, rate):
    probe = hedge_probe(_flat(first, second), SPACE, HedgeRule())
    assert (probe.params["learning_rate"] if probe else None) == (pytest.approx(rate) if rate else None)
    if probe is not None:
        best = min((first, second), key=lambda c: c[2])
        assert probe.params["optimizer_type"] == best[0] and "reads flat" in probe.source
    assert hedge_probe(_flat(first, second), SPACE, HedgeRule(probe_decades=0)) is None
    assert hedge_probe(_flat(first, second), SPACE, None) is None


def test_no_second_probe_once_a_bracket_config_exists():
    history = [*_flat(("AdamW", 1e-4, 1.0), ("AdamW", 3e-4, 1.05)), _done(1.0, "bracket", lr=1e-5)]
    assert hedge_probe(history, SPACE, HedgeRule()) is None


def test_a_flat_warm_start_skips_the_rest_of_it_and_the_bracket():
    history: list[ScoredConfig] = []
    controller = _controller(history)
    assert [_train(controller, history, v) for v in (1.0, 1.05)] == ["baseline", "curated"]
    kinds = [_train(controller, history, 1.1) for _ in range(3)]
    # no curated c2, c3, no bracket: one probe down the rate's slope (3e-4 did worse than 1e-4), then the sampler
    assert kinds == ["bracket", "search", "search"]
    probe = history[2]
    assert probe.params == {"optimizer_type": "AdamW", "learning_rate": pytest.approx(1e-5)}
    assert probe.name == "lr-lower-1e-05"
    # then hedge draws: the family tried least first (Prodigy: AdamW trained three times), named hedge-N
    # (N the trial number + 1: the skipped c2, c3 and the probe were trials 3-5)
    assert [h.name for h in history[3:]] == ["hedge-6", "hedge-7"]
    assert history[3].params["optimizer_type"] == "Prodigy"
    assert controller.study.trials[-1].user_attrs["source"].startswith("hedge draw")
    pruned = controller.study.get_trials(states=(TrialState.PRUNED,))
    assert sorted(t.user_attrs["name"] for t in pruned) == ["c2", "c3"]
    assert all("reads flat" in t.user_attrs["bracket_note"] for t in pruned)


def test_a_warm_start_that_disagrees_is_trained_as_before():
    history: list[ScoredConfig] = []
    controller = _controller(history)
    kinds = [_train(controller, history, v) for v in (1.0, 1.5, 2.0, 2.5, 1.2, 1.3)]
    assert kinds == ["baseline", "curated", "curated", "curated", "bracket", "bracket"]
    assert not any(h.name.startswith("lr-lower-1e-05") for h in history)  # no hedge probe without a verdict
    without = _controller(history := [], hedge=None)
    assert [_train(without, history, v) for v in (1.0, 1.05, 1.1)] == ["baseline", "curated", "curated"]


def _train_diverged(controller: SearchController, history: list[ScoredConfig]) -> ScoredConfig:
    proposal = controller.next()
    history.append(ScoredConfig(SPACE.searched_params(proposal.config), 3.0, TrialState.COMPLETE, proposal.kind,
                                diverged=True, name=proposal.name, loss=3.0))
    controller.finish(proposal.trial_number, 3.0)
    return history[-1]


def test_a_diverged_baseline_skips_other_families_curated_configs_so_the_rescue_comes_next():
    history: list[ScoredConfig] = []
    controller = _controller(history, skip_diverged=False)  # the divergence skip rule alone would keep c2
    assert _train_diverged(controller, history).kind == "baseline"
    names = [history[-1].name for value in (1.2, 2.0, 1.5) if _train(controller, history, value)]
    # c1 and c3 (AdamW, the baseline's family) stay; c2 (Prodigy) is skipped; then the bracket, down
    # (its family diverged at or below its best config's rate: a decade down, lr_bracket)
    assert names == ["c1", "c3", "lr-lower-3e-05"] and history[-1].kind == "bracket"
    pruned = controller.study.get_trials(states=(TrialState.PRUNED,))
    assert [t.user_attrs["name"] for t in pruned] == ["c2"]
    assert "baseline diverged" in pruned[0].user_attrs["bracket_note"]


def test_without_the_cut_a_diverged_baseline_trains_the_warm_start_as_queued():
    history: list[ScoredConfig] = []
    controller = _controller(history, skip_diverged=False, hedge=HedgeRule(diverged_cut=False))
    _train_diverged(controller, history)
    assert [history[-1].name for v in (1.2, 2.0, 1.5) if _train(controller, history, v)] == ["c1", "c2", "c3"]


PRODIGY = {"optimizer_type": "Prodigy", "learning_rate": 1e-4}


@pytest.mark.parametrize("history, kind, params, cut", [
    ([_done(3.0, "baseline", diverged=True)], "curated", PRODIGY, True),
    ([_done(3.0, "baseline", diverged=True)], "curated", {"optimizer_type": "AdamW", "learning_rate": 1e-5}, False),
    ([_done(3.0, "baseline", diverged=True)], "past", PRODIGY, False),  # an earlier session's config: measured
    ([_done(1.0, "baseline")], "curated", PRODIGY, False),  # the baseline trained
    ([_done(None, "baseline", state=RUNNING)], "curated", PRODIGY, False),  # not known yet
    ([_done(1.0, "baseline"), _done(3.0, "curated", diverged=True)], "curated", PRODIGY, False),  # not the baseline
    ([], "curated", PRODIGY, False),
])
def test_the_cut_after_a_diverged_baseline(history, kind, params, cut):
    assert (hedge_cut(history, kind, params) is not None) is cut
    assert hedge_cut(history, kind, params, None) is None
    assert hedge_cut(history, kind, params, HedgeRule(diverged_cut=False)) is None


def test_the_model_is_checked():
    with pytest.raises(ValueError, match="model must be one of"):
        _controller([], model="cma")


THREE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "AdamW8bit", "Prodigy", "Adafactor")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
})


def _of(optimizer: str, kind: str = "search", value: float = 1.2) -> ScoredConfig:
    return ScoredConfig({"optimizer_type": optimizer, "learning_rate": 1e-4}, value, TrialState.COMPLETE, kind,
                        name=kind, loss=value)


FLAT = [_of("AdamW", "baseline", 1.0), _of("AdamW8bit", "curated", 1.05)]


@pytest.mark.parametrize("after, families", [
    ([], {"Prodigy", "Adafactor"}),  # both AdamW implementations are one family, tried twice
    ([_of("Prodigy")], {"Adafactor"}),
    ([_of("Prodigy"), _of("Adafactor")], {"Prodigy", "Adafactor"}),
    # a running config counts as tried (so two workers spread over the families)
    ([replace(_of("Adafactor", value=None), state=RUNNING)], {"Prodigy"}),
    # every family tried twice: any choice
    ([_of("Prodigy"), _of("Adafactor"), _of("Prodigy"), _of("Adafactor")], {"AdamW", "AdamW8bit", "Prodigy",
                                                                             "Adafactor"}),
])
def test_a_hedge_draw_takes_the_optimizer_family_tried_least(after, families):
    drawn = {hedge_draw([*FLAT, *after], THREE, HedgeRule(), seed)["optimizer_type"] for seed in range(12)}
    assert drawn == families


@pytest.mark.parametrize("history, rule", [
    ([_of("AdamW", "baseline", 1.0), _of("AdamW8bit", "curated", 1.5)], HedgeRule()),  # no verdict
    (FLAT, HedgeRule(families=False)),  # uniform random draws instead (the sampler's)
    (FLAT, None),
    ([*FLAT, *(_of("Prodigy") for _ in range(6))], HedgeRule()),  # the explore phase is over: TPE
])
def test_no_hedge_draw(history, rule):
    assert hedge_draw(history, THREE, rule, 0) is None


def test_a_hedge_draw_says_so_in_the_trial_table_and_the_why_panel():
    from bracket.app.suggestion_reason import origin
    from bracket.search.why_line import short_reasons

    configs = [{"id": 1, "name": "baseline", "kind": "baseline", "params": {"optimizer_type": "AdamW"}},
               {"id": 2, "name": "hedge-6", "kind": "search", "params": {"optimizer_type": "Prodigy"}}]
    lines = short_reasons(configs, {1: 1.0}, SPACE)
    assert lines[2].startswith("hedge draw: the family tried least")  # not "TPE from 1 scored"
    assert "hedge draw" in origin("search", "hedge-6", "", seen=3)
    assert "hedge draw" not in origin("search", "search-6", "", seen=3)
