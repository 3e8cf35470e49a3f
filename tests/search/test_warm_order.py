"""The warm start's order: a curated config that repeats an earlier config's optimizer
family, effective step (rate × alpha/rank) and batch, differing only in secondary knobs
(rank, dropout, weight decay), waits behind the other curated ones."""

from __future__ import annotations

import math

from bracket.search.configs import NamedConfig
from bracket.search.lr_bracket import optimizer_family, step_of
from bracket.search.space import CategoricalKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.warm_order import order_warm_start

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "AdamW8bit", "PagedAdamW8bit", "Adafactor", "prodigyopt.Prodigy")),
    "learning_rate": FloatKnob(1e-6, 1e-2, log=True,
                               when={"optimizer_type": ("AdamW", "AdamW8bit", "PagedAdamW8bit", "Adafactor")}),
    "prodigy_d_coef": FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": ("prodigyopt.Prodigy",)}),
    "network_dim": IntKnob(4, 64),
    "network_alpha": IntKnob(1, 64),
    "timestep_sampling": CategoricalKnob(("sigma", "shift", "logsnr")),
})


def _c(name: str, optimizer: str, rate: float | None, dim: int, alpha: int, kind: str = "curated",
       sampling: str = "sigma"):
    knobs = {"optimizer_type": optimizer, "network_dim": dim, "network_alpha": alpha, "timestep_sampling": sampling}
    knobs.update({"learning_rate": rate} if rate else {"prodigy_d_coef": 1.0})
    return kind, NamedConfig(name, knobs)


def _names(configs) -> list[str]:
    return [named.name for _, named in configs]


def test_implementations_of_one_algorithm_are_one_family():
    assert {optimizer_family(n) for n in ("AdamW", "AdamW8bit", "paged_adamw_8bit", "adamw_torch_fused",
                                          "PagedAdamW8bit", "adamw_8bit")} == {"adamw"}
    assert optimizer_family("prodigyopt.Prodigy") == "prodigy" and optimizer_family("Adafactor") == "adafactor"


def test_the_effective_step_is_the_rate_times_alpha_over_rank():
    (_, a), (_, b) = _c("a", "AdamW", 1e-4, 32, 16), _c("b", "AdamW8bit", 2e-4, 16, 4)
    family, knob, step, _ = step_of(SPACE.complete(a.knobs), SPACE)
    assert (family, knob) == ("adamw", "learning_rate") and abs(step - math.log10(5e-5)) < 1e-9
    assert abs(step_of(SPACE.complete(b.knobs), SPACE)[2] - step) < 1e-9
    (_, p) = _c("p", "prodigyopt.Prodigy", None, 32, 32)
    assert step_of(SPACE.complete(p.knobs), SPACE)[:2] == ("prodigy", "prodigy_d_coef")


def test_a_curated_config_repeating_an_earlier_step_moves_behind_the_other_curated_ones():
    configs = [
        _c("baseline", "AdamW8bit", 1e-4, 32, 16, kind="baseline"),
        _c("same-step", "AdamW", 2e-4, 16, 4),      # 2e-4 x 1/4 = 5e-5 = the baseline's 1e-4 x 1/2
        _c("logsnr", "AdamW", 1e-4, 32, 16, sampling="logsnr"),  # same step, a bet on the sampling: kept
        _c("prodigy", "prodigyopt.Prodigy", None, 32, 32),
        _c("adafactor", "Adafactor", 1e-4, 32, 16),  # same step, another algorithm: kept in place
        _c("higher", "AdamW8bit", 4e-4, 16, 8),
        _c("same-as-higher", "PagedAdamW8bit", 2e-4, 8, 8),
        _c("bracket-like", "AdamW", 1e-3, 8, 8, kind="bracket"),  # not curated: never moved
    ]
    notes: list[str] = []
    ordered = order_warm_start(configs, SPACE, notes)
    assert _names(ordered) == ["baseline", "logsnr", "prodigy", "adafactor", "higher", "same-step",
                               "same-as-higher", "bracket-like"]
    assert [n.split(":")[0] for n in notes] == ["curated 'same-step' comes after the other curated configs",
                                                "curated 'same-as-higher' comes after the other curated configs"]
    assert notes[0].endswith("repeats the optimizer, effective step (rate x alpha/rank) and schedule of 'baseline'")
    assert notes[1].endswith("of 'higher'")
    assert sorted(_names(ordered)) == sorted(_names(configs))  # nothing dropped


def test_the_presets_order_holds_when_nothing_repeats_and_past_configs_are_never_moved():
    distinct = [_c("baseline", "AdamW", 1e-4, 32, 16, kind="baseline"), _c("x", "AdamW", 1e-3, 32, 16),
                _c("y", "Adafactor", 1e-4, 32, 16)]
    assert _names(order_warm_start(distinct, SPACE)) == ["baseline", "x", "y"]
    past = [distinct[0], _c("past-s-1", "AdamW", 1e-4, 32, 16, kind="past"), distinct[1]]
    assert _names(order_warm_start(past, SPACE)) == ["baseline", "past-s-1", "x"]
    # a curated config repeating an earlier session's config waits too
    repeat = [*past, _c("z", "AdamW8bit", 1e-3, 16, 8), _c("w", "Adafactor", 3e-4, 32, 16)]
    assert _names(order_warm_start(repeat, SPACE)) == ["baseline", "past-s-1", "x", "w", "z"]
