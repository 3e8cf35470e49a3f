"""Search space: knobs, validation messages, conditional knobs, Optuna distributions, bounds."""

from __future__ import annotations

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from bracket.errors import SearchSpaceError
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace


def make_space() -> SearchSpace:
    return SearchSpace({
        "optimizer_type": CategoricalKnob(("AdamW8bit", "Prodigy")),
        "learning_rate": FloatKnob(1e-5, 1e-3, log=True, when={"optimizer_type": ("AdamW8bit",)}),
        "prodigy_d_coef": FloatKnob(0.5, 2.0, when={"optimizer_type": ("Prodigy",)}),
        "network_dim": IntKnob(8, 64, step=8),
        "batch_size": FixedKnob(1),
    })


def test_validate_names_every_offending_knob_and_why():
    space = make_space()
    with pytest.raises(SearchSpaceError) as info:
        space.validate({"optimizer_type": "Lion", "learning_rate": 5.0, "network_dim": 12, "batch_size": 2,
                        "bogus": 1})
    message = str(info.value)
    assert "optimizer_type: 'Lion' is not one of" in message
    assert "network_dim: 12 is not on the grid" in message
    assert "batch_size: is fixed at 1" in message
    assert "bogus: not a knob" in message


def test_conditional_knob_only_in_matching_configs():
    space = make_space()
    prodigy = space.complete({"optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_dim": 16})
    assert prodigy == {"optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_dim": 16, "batch_size": 1}
    space.validate(prodigy)
    with pytest.raises(SearchSpaceError, match="learning_rate: only used when optimizer_type"):
        space.validate({**prodigy, "learning_rate": 1e-4})
    with pytest.raises(SearchSpaceError, match="prodigy_d_coef: missing"):
        space.validate({"optimizer_type": "Prodigy", "network_dim": 16, "batch_size": 1})


def test_distributions_and_define_by_run_suggest():
    space = make_space()
    dists = space.distributions()
    assert dists["learning_rate"] == FloatDistribution(1e-5, 1e-3, log=True)
    assert dists["network_dim"] == IntDistribution(8, 64, step=8)
    assert dists["optimizer_type"] == CategoricalDistribution(("AdamW8bit", "Prodigy"))
    assert "batch_size" not in dists
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    seen = set()
    for _ in range(30):
        config = space.suggest(study.ask())
        space.validate(config)
        seen.add(config["optimizer_type"])
        assert ("learning_rate" in config) == (config["optimizer_type"] == "AdamW8bit")
    assert seen == {"AdamW8bit", "Prodigy"}


def test_bounds_narrow_clamp_and_drop_with_notes():
    space = make_space().narrow({"learning_rate": (1e-4, 5e-4), "optimizer_type": ["AdamW8bit"],
                                 "batch_size": [1, 2]})
    assert space["learning_rate"].low == 1e-4 and space["learning_rate"].high == 5e-4
    assert space["batch_size"] == CategoricalKnob((1, 2))
    clamped = space.fit({"optimizer_type": "AdamW8bit", "learning_rate": 1e-3, "network_dim": 16, "batch_size": 1},
                        label="curated 'x'")
    assert clamped.config["learning_rate"] == 5e-4
    assert any("clamped to 0.0005" in n for n in clamped.notes)
    dropped = space.fit({"optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_dim": 16, "batch_size": 1},
                        label="curated 'prodigy'")
    assert dropped.config is None
    assert "dropped" in dropped.notes[0] and "Prodigy" in dropped.notes[0]
    moved = space.fit({"optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "network_dim": 16, "batch_size": 8},
                      label="baseline")
    assert moved.config is not None and moved.config["batch_size"] == 2, "a narrowed-away batch size moves, not drops"
    assert any("batch_size 8 moved to 2" in n for n in moved.notes)


def test_a_bound_naming_an_unknown_choice_is_refused_not_ignored():
    with pytest.raises(SearchSpaceError, match="'Nope'|Nope is not among"):
        make_space().narrow({"optimizer_type": ["Nope", "AdamW8bit"]})


def test_bad_bounds_are_refused_with_what_to_do():
    space = make_space()
    with pytest.raises(SearchSpaceError, match="reversed"):
        space.narrow({"learning_rate": (1e-3, 1e-5)})
    with pytest.raises(SearchSpaceError, match="does not overlap"):
        space.narrow({"learning_rate": (1.0, 2.0)})
    with pytest.raises(SearchSpaceError, match=r"Lock for 'learning_rate' at 5 is outside the trainer's range .*; "
                                               r"pick a value inside it\."):
        space.narrow({"learning_rate": (5.0, 5.0)})  # a lock is not a range to widen
    with pytest.raises(SearchSpaceError, match="no such knob"):
        space.narrow({"momentum": (0.1, 0.9)})
    with pytest.raises(SearchSpaceError, match="reversed"):
        FloatKnob(2.0, 1.0)
    with pytest.raises(SearchSpaceError, match="low > 0"):
        FloatKnob(0.0, 1.0, log=True)


def test_condition_must_refer_to_an_earlier_categorical_knob():
    with pytest.raises(SearchSpaceError, match="must come before"):
        SearchSpace({"lr": FloatKnob(0.1, 1.0, when={"opt": ("a",)}), "opt": CategoricalKnob(("a",))})
    with pytest.raises(SearchSpaceError, match="categorical or fixed"):
        SearchSpace({"dim": IntKnob(1, 4), "lr": FloatKnob(0.1, 1.0, when={"dim": (1,)})})
