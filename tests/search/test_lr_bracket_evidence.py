"""The learning-rate bracket follows the warm start's evidence (issue 19): which way and how
far it steps, and a decade down for an optimizer that diverged at every rate tried."""

from __future__ import annotations

import math

import optuna
import pytest
from optuna.trial import TrialState

from bracket.search.controller import ScoredConfig, SearchController
from bracket.search.lr_bracket import bracket_offsets, next_bracket
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "AdamW8bit", "Prodigy")),
    "learning_rate": FloatKnob(1e-6, 1e-2, log=True, when={"optimizer_type": ("AdamW", "AdamW8bit")}),
    "adaptive_learning_rate": FixedKnob(1.0, when={"optimizer_type": ("Prodigy",)}),
    "prodigy_d_coef": FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": ("Prodigy",)}),
    "network_dim": IntKnob(4, 64, step=4),
    "network_alpha": IntKnob(1, 64),
    "batch_size": CategoricalKnob((1, 2)),
})
QUARTER, HALF = 10 ** 0.25, 10 ** 0.5


def _adam(rate: float, *, optimizer: str = "AdamW", dim: int = 16, alpha: int = 16, batch: int = 1) -> dict:
    return {"optimizer_type": optimizer, "learning_rate": rate, "network_dim": dim, "network_alpha": alpha,
            "batch_size": batch}


def _prodigy(d_coef: float = 1.0) -> dict:
    return {"optimizer_type": "Prodigy", "prodigy_d_coef": d_coef, "network_dim": 16, "network_alpha": 16,
            "batch_size": 1}


def _done(params: dict, value: float, kind: str = "curated", *, diverged: bool = False) -> ScoredConfig:
    return ScoredConfig(params, value, TrialState.COMPLETE, kind, diverged=diverged)


def _both(warm: list[ScoredConfig], **options) -> list[dict]:
    """The two bracket configs, each scored worse than the centre as it comes."""
    history, made = list(warm), []
    while (step := next_bracket(history, SPACE, **options)).params is not None:
        made.append(step)
        history.append(_done(step.params, 0.9, "bracket"))
    assert len(made) <= 2
    return [s.params for s in made]


def test_centred_or_no_evidence_keeps_half_a_decade_each_way():
    centred = [_done(_adam(1e-4), 0.1, "baseline"), _done(_adam(2e-5), 0.3), _done(_adam(4e-4), 0.4)]
    rates = [p["learning_rate"] for p in _both(centred)]
    assert rates == pytest.approx([1e-4 / HALF, 1e-4 * HALF], rel=1e-2)
    assert _both(centred) == _both(centred, rule="fixed")
    # far away (more than a decade off), another optimizer or another batch is no evidence
    unrelated = [_done(_adam(1e-4), 0.1, "baseline"), _done(_adam(3e-3), 0.5), _done(_prodigy(), 0.3),
                 _done(_adam(3e-4, batch=2), 0.4)]
    assert _both(unrelated) == _both(unrelated, rule="fixed")


def test_a_centre_at_the_lowest_step_its_optimizer_tried_steps_down_twice():
    # the baseline is best; the same optimizer at a higher effective step (AdamW8bit is AdamW) was worse
    warm = [_done(_adam(1e-4), 0.1, "baseline"), _done(_adam(4e-4, optimizer="AdamW8bit"), 0.5)]
    first, second = _both(warm)
    assert first["learning_rate"] == pytest.approx(1e-4 / QUARTER, rel=1e-2)
    assert second["learning_rate"] == pytest.approx(1e-4 / HALF, rel=1e-2)
    assert first == {**_adam(1e-4), "learning_rate": first["learning_rate"]}  # the centre's shape kept
    step = next_bracket(warm, SPACE)
    assert step.name.startswith("lr-lower-") and "the best warm-start config" in step.source


def test_the_effective_step_counts_not_the_rate():
    # 2e-4 at alpha/rank 1/4 is a *lower* effective step (5e-5) than 1e-4 at 1: the evidence lies below
    warm = [_done(_adam(1e-4), 0.1, "baseline"), _done(_adam(2e-4, alpha=4), 0.5)]
    rates = [p["learning_rate"] for p in _both(warm)]
    assert rates == pytest.approx([1e-4 * QUARTER, 1e-4 * HALF], rel=1e-2)


def test_a_diverged_higher_rate_pushes_the_bracket_down():
    warm = [_done(_adam(1e-4), 0.2, "baseline"), _done(_adam(5e-4), 1.0, diverged=True)]
    assert bracket_offsets(warm, warm[0], SPACE) == pytest.approx([-0.25, -0.5])
    assert all(p["learning_rate"] < 1e-4 for p in _both(warm))


def test_an_optimizer_that_diverged_at_every_rate_is_tried_a_decade_lower():
    # Prodigy survives, every AdamW config diverged: the lowest-step AdamW config, a decade lower,
    # in place of the Prodigy bracket's upper side
    warm = [_done(_adam(1e-4, alpha=8), 1.0, "baseline", diverged=True), _done(_prodigy(), 0.3),
            _done(_adam(4e-4, optimizer="AdamW8bit", alpha=8), 1.0, diverged=True),
            _done(_adam(1e-4, dim=4, alpha=4), 1.0, diverged=True)]
    first, second = _both(warm)
    assert first == _prodigy(1.0 / HALF) | {"prodigy_d_coef": 0.5}  # clamped into 0.5–2.0
    assert second == _adam(1e-5, alpha=8)
    step = next_bracket([*warm, _done(first, 0.4, "bracket")], SPACE)
    assert step.name == "lr-lower-1e-05" and "diverged at every rate tried" in step.source
    # one AdamW config that trained is evidence the family can: no rescue, Prodigy both ways
    survived = [*warm[:3], _done(_adam(3e-5, alpha=8), 0.6)]
    assert [p["optimizer_type"] for p in _both(survived)] == ["Prodigy", "Prodigy"]
    assert _both(warm, rule="fixed") == [_prodigy(0.5), _prodigy(2.0)]


def test_every_step_stays_inside_the_knob_bounds():
    narrowed = SPACE.narrow({"learning_rate": (6e-5, 1e-2)})
    warm = [_done(_adam(1e-4), 0.1, "baseline"), _done(_adam(4e-4), 0.5)]
    history, rates = list(warm), []
    while (step := next_bracket(history, narrowed)).params is not None:
        rates.append(step.params["learning_rate"])
        assert narrowed.problems(narrowed.complete(step.params)) == []
        history.append(_done(step.params, 0.9, "bracket"))
    # a quarter decade down is 5.62e-5, below the bound: clamped to 6e-5; half a decade clamps to the
    # same rate, so it is skipped: one config
    assert rates == [6e-5]
    rescue = [_done(_prodigy(), 0.3), _done(_adam(1e-5), 1.0, "baseline", diverged=True)]
    assert next_bracket([*rescue, _done(_prodigy(0.5), 0.4, "bracket")], SPACE).params == _adam(1e-6)


def test_d_coef_follows_the_evidence_too():
    warm = [_done(_prodigy(1.0), 0.1), _done(_prodigy(2.0), 0.3)]
    assert [p["prodigy_d_coef"] for p in _both(warm)] == pytest.approx([1 / QUARTER, 0.5], rel=1e-2)


def test_a_centre_that_diverged_itself_goes_a_decade_down_first():
    warm = [_done(_adam(1e-4), 1.0, "baseline", diverged=True), _done(_adam(3e-4), 1.01, diverged=True)]
    assert [p["learning_rate"] for p in _both(warm)] == pytest.approx([1e-5, 1e-4 / HALF], rel=1e-2)


def test_when_every_config_diverged_the_lowest_step_is_the_centre_not_the_best_score():
    # a stopped run's loss says nothing about how close its rate came: 3e-4 scored a little better
    # than 1e-4 at alpha/rank 1/2 (an effective 5e-5, the lowest), which is the one tried lower
    warm = [_done(_adam(3e-4), 1.0, "baseline", diverged=True), _done(_adam(1e-4, alpha=8), 1.02, diverged=True),
            _done(_adam(2e-4), 1.01, diverged=True)]
    first, second = _both(warm)
    assert first == _adam(1e-5, alpha=8) and second["learning_rate"] == pytest.approx(1e-4 / HALF, rel=1e-2)
    assert _both(warm, rule="fixed")[0]["learning_rate"] == pytest.approx(3e-4 / HALF, rel=1e-2)  # as before


def test_a_centre_whose_optimizer_diverged_at_its_step_or_below_goes_a_decade_down_first():
    # the best config survived at 2e-4 (batch 2); the same optimizer diverged at that step at batch 1:
    # the centre trains at the edge of divergence, whatever the batch
    warm = [_done(_adam(2e-4, batch=2), 0.3, "baseline"), _done(_adam(2e-4), 1.0, diverged=True),
            _done(_adam(1e-3, batch=2), 1.0, diverged=True)]
    assert bracket_offsets(warm, warm[0], SPACE) == pytest.approx([-1.0, -0.5])
    assert [p["learning_rate"] for p in _both(warm)] == pytest.approx([2e-5, 2e-4 / HALF], rel=1e-2)
    # a divergence only above it, or of another optimizer, leaves the bracket as it was
    above = [_done(_adam(2e-4, batch=2), 0.3, "baseline"), _done(_adam(1e-3), 1.0, diverged=True)]
    assert bracket_offsets(above, above[0], SPACE) == pytest.approx([-0.5, 0.5])
    other = [_done(_prodigy(), 0.3, "baseline"), _done(_adam(1e-6), 1.0, diverged=True)]
    assert bracket_offsets(other, other[0], SPACE) == pytest.approx([-0.5, 0.5])


def test_the_controller_passes_its_rule_and_refuses_an_unknown_one():
    warm = [_done(_adam(1e-4), 0.1, "baseline"), _done(_adam(4e-4), 0.5)]
    study = optuna.create_study(direction="minimize")
    controller = SearchController(study=study, space=SPACE, history=lambda: warm, bracket_rule="fixed")
    assert controller.next().config["learning_rate"] == pytest.approx(1e-4 / HALF, rel=1e-2)
    with pytest.raises(ValueError, match="rule must be one of"):
        next_bracket(warm, SPACE, rule="wide")
    assert math.isclose(bracket_offsets(warm, warm[0], SPACE, rule="fixed")[1], 0.5)


@pytest.mark.parametrize("adam, rescued", [
    # every higher AdamW rate did worse (over-fit): the lowest-rate AdamW config, a decade lower
    ([(1e-4, 0.6), (2e-4, 0.8), (4e-4, 0.9)], 1e-5),
    ([(1e-4, 0.6), (4e-4, 0.9), (8e-4, 1.0, True)], 1e-5),  # a diverged higher one is worse too
    ([(1e-4, 0.6), (4e-4, 0.5)], None),  # the higher rate did better: no sign the family goes lower
    ([(1e-4, 0.6), (1.2e-4, 0.9)], None),  # 0.08 decades apart: one rate, noise
    ([(1e-4, 0.6), (4e-4, 1.0, True)], None),  # only divergences above: the family trains at its rate
    ([(1e-4, 0.6), (1.1e-4, 0.5), (4e-4, 0.9)], None),  # at its lowest step another config did better
])
def test_an_optimizer_whose_higher_rates_did_worse_is_tried_a_decade_lower(adam, rescued):
    warm = [_done(_prodigy(), 0.3, "baseline")] + [
        _done(_adam(rate, optimizer="AdamW8bit" if i % 2 else "AdamW"), value, diverged=bool(rest))
        for i, (rate, value, *rest) in enumerate(adam)]
    first, second = _both(warm)
    assert first["optimizer_type"] == "Prodigy"  # the centre's lower side first
    if rescued is None:
        assert second["optimizer_type"] == "Prodigy"
    else:
        assert second == _adam(rescued)
        step = next_bracket([*warm, _done(first, 0.4, "bracket")], SPACE)
        assert "every higher rate did worse" in step.source
