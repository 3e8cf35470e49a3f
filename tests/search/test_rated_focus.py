"""Focus draws (issue 43): once a person's ratings disagree with the loss, the search proposes
near the config they rated best; without ratings, or while they follow the loss, nothing changes."""

from __future__ import annotations

import math

import optuna
from optuna.trial import TrialState

from bracket.search.controller import SearchController
from bracket.search.lr_bracket import step_of
from bracket.search.rated_focus import FocusRule, focus_centre, focus_draw, ratings_disagree
from bracket.search.shapes import ShapeRule
from bracket.search.types import ScoredConfig
from tests.search.lora_space import ADAM, BASE, SPACE

#: what the person likes: rank 64 at a higher rate with a decay — the loss prefers Prodigy
LIKED = {**BASE, "learning_rate": 3e-4, "lr_scheduler": "cosine", "lr_warmup_steps": 10, "network_dim": 64,
         "network_alpha": 32}


def _config(params: dict, value: float, kind: str, *, measured: float | None = None, rated: bool = False,
            name: str = "") -> ScoredConfig:
    return ScoredConfig(SPACE.searched_params(SPACE.complete(params)), value, TrialState.COMPLETE, kind,
                        rated=rated, measured=measured, name=name, verdict=value if rated else None)


def _session(*, liked_rating: float = 0.0, rated: bool = True) -> list[ScoredConfig]:
    """A warm start, a bracket and the shape draws; the values the sampler sees are the person's
    verdicts (0 = rated 10) where ``rated``, else the loss's score. The loss ranks Prodigy best."""
    rows = [  # (params, verdict, measured score)
        (BASE, 4 / 9, 0.40, "baseline"),
        ({**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_alpha": 32}, 3 / 9, 0.10, "curated"),
        ({**BASE, "optimizer_type": "AdamW", "network_dim": 16, "network_alpha": 8}, 5 / 9, 0.45, "curated"),
        (LIKED, liked_rating, 0.60, "curated"),
        ({**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 0.5, "network_alpha": 32}, 3 / 9, 0.12, "bracket"),
        ({**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 2.0, "network_alpha": 32}, 4 / 9, 0.15, "bracket"),
    ]
    history = [_config(p, v if rated else m, kind, measured=m, rated=rated) for p, v, m, kind in rows]
    for i in range(4):  # the shape draws, made (unrated, as the sampler sees them: a predicted verdict)
        history.append(_config({**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_dim": 8 << i % 3,
                                "network_alpha": 8}, 0.5, "search", measured=0.2, name=f"shape-{7 + i}"))
    return history


def _changed(a: dict, b: dict) -> set[str]:
    return {k for k in set(a) | set(b) if a.get(k) != b.get(k)}


def test_ratings_that_disagree_with_the_loss_are_told_from_ratings_that_follow_it():
    assert ratings_disagree(_session(), FocusRule())  # the loss's best rated config (Prodigy) is rated 7
    assert not ratings_disagree(_session(liked_rating=3 / 9), FocusRule())  # a tie with the loss's best
    assert not ratings_disagree(_session(rated=False), FocusRule())  # nobody rated
    assert not ratings_disagree(_session(), None)
    assert not ratings_disagree(_session()[:2], FocusRule())  # too few rated configs for a verdict
    unmeasured = [ScoredConfig(h.params, h.value, h.state, h.kind, rated=h.rated) for h in _session()]
    assert not ratings_disagree(unmeasured, FocusRule())  # nothing to compare the verdicts with


def test_a_focus_draw_is_the_best_rated_config_with_its_step_moved_and_one_other_knob_changed():
    history = _session()
    assert focus_centre(history).params == SPACE.searched_params(SPACE.complete(LIKED))
    rule = FocusRule(every=1)
    centre = SPACE.complete(LIKED)
    draws = []
    for _ in range(8):
        config = focus_draw(history, SPACE, rule, seed=3)
        assert config is not None and SPACE.problems(config) == []
        draws.append(config)
        history = [*history, _config(config, 0.5, "search", measured=0.3)]
    for config in draws:
        family, _, log_step, _ = step_of(config, SPACE)
        assert family == step_of(centre, SPACE)[0]  # the optimizer only among those the rate drives
        # the step moves by at most step_decades, plus what a neighbouring rank or alpha moves it
        assert abs(log_step - step_of(centre, SPACE)[2]) <= rule.step_decades + math.log10(4) + 1e-9
        others = _changed(config, centre) - {"learning_rate"}
        assert len(others - {"lr_warmup_steps"}) <= 1  # one knob (a schedule may bring its warm-up)
        if "network_dim" in others:
            assert config["network_dim"] == 32  # a number moves to a neighbouring choice
    assert len({tuple(sorted(SPACE.searched_params(c).items())) for c in draws}) == len(draws)  # no repeats


def test_no_focus_draw_without_disagreement_and_only_every_other_proposal_with_it():
    assert focus_draw(_session(rated=False), SPACE, FocusRule(), seed=1) is None
    assert focus_draw(_session(liked_rating=3 / 9), SPACE, FocusRule(), seed=1) is None
    assert focus_draw(_session(), SPACE, None, seed=1) is None
    history = _session()  # 4 search proposals made: the fifth is a draw, the sixth is TPE's
    assert focus_draw(history, SPACE, FocusRule(every=2), seed=1) is not None
    history.append(_config(BASE, 0.5, "search", measured=0.3))
    assert focus_draw(history, SPACE, FocusRule(every=2), seed=1) is None


def _proposals(history: list[ScoredConfig], focus: FocusRule | None, n: int) -> list[tuple[str, dict]]:
    study = optuna.create_study(direction="minimize")
    controller = SearchController(study=study, space=SPACE, seed=5, history=lambda: history, lr_bracket=False,
                                  shapes=ShapeRule(trials=4), hedge=None, focus=focus)
    out = []
    for _ in range(n):
        proposal = controller.next()
        out.append((proposal.name, proposal.config))
        history.append(_config(proposal.config, 0.5, "search", measured=0.3))
        controller.finish(proposal.trial_number, 0.5)
    return out


def test_the_controller_proposes_near_the_best_rated_config_once_ratings_disagree_with_the_loss():
    proposals = _proposals(_session(), FocusRule(), 4)
    assert [name for name, _ in proposals] == ["focus-1", "focus-2", "focus-3", "focus-4"]  # numbered in this study
    every_other = _proposals(_session(), FocusRule(every=2), 4)
    assert [name for name, _ in every_other][::2] == ["focus-1", "focus-3"]
    assert not any(name.startswith("focus-") for name, _ in every_other[1::2])  # TPE's between the draws
    focus = [(name, config) for name, config in proposals + every_other if name.startswith("focus-")]
    centre = SPACE.complete(LIKED)
    for _, config in focus:  # the liked config's shape: Adam family, its schedule or rank kept
        assert config["optimizer_type"] in ADAM
        assert len(_changed(config, centre) - {"learning_rate", "lr_warmup_steps"}) <= 1


def test_without_ratings_the_proposals_are_the_same_as_without_the_rule():
    with_rule = _proposals(_session(rated=False), FocusRule(), 4)
    without = _proposals(_session(rated=False), None, 4)
    assert with_rule == without
    assert not any(name.startswith("focus-") for name, _ in with_rule)


def test_the_why_column_says_a_focus_draw_is_one():
    from bracket.app.suggestion_reason import origin
    from bracket.search.why_line import short_reasons

    configs = [{"id": 1, "kind": "baseline", "name": "baseline", "params": SPACE.searched_params(SPACE.complete(BASE))},
               {"id": 2, "kind": "search", "name": "focus-2", "params": SPACE.searched_params(SPACE.complete(LIKED))}]
    assert short_reasons(configs, {1: 0.5}, SPACE, n_startup=1)[2].startswith("focus draw")
    assert "focus draw" in origin("search", "focus-2", "", seen=5)
