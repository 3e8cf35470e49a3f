"""A halving search's sampler sees the person's verdicts at each rung, as a search of full runs does.

Seen on main (issue 43): the halving path fed the sampler the combined score at each rung, in
which an unrated config with a good loss and an estimated rating ranked above the config the
person rated 10. The rung scores (``rung_scores``) now also give what the sampler sees there
(``sampler_values`` of the runs cut at the rung), and ``scheduling.halving.sampler_history``
orders each rung's configs by it; checked on plain rows through the real scoring.
"""

from __future__ import annotations

import random

import optuna

from bracket.judge.human import rating_score
from bracket.search.controller import SearchController
from bracket.search.shapes import ShapeRule
from bracket.session.loop.rung_scores import StepRungs, rung_scores
from bracket.session.loop.search_view import SearchView
from bracket.session.scheduling.halving import sampler_history

WEIGHTS = {"loss": 1.0, "human": 2.0}
RUNGS = StepRungs(eta=2, steps=(4, 8, 16))
PARAMS = {1: {"optimizer_type": "AdamW", "learning_rate": 1e-4, "network_dim": 8},
          2: {"optimizer_type": "AdamW", "learning_rate": 1e-5, "network_dim": 8},
          3: {"optimizer_type": "Lion", "learning_rate": 1e-3, "network_dim": 16},
          4: {"optimizer_type": "Adam", "learning_rate": 3e-3, "network_dim": 4}}


def _rows(floors: dict[int, float], params: dict[int, dict]) -> tuple[list[dict], list[dict]]:
    """One config and one run per entry, every run paused at the first rung (step 4)."""
    configs = [{"id": cid, "name": f"search-{cid}", "kind": "search", "stage": "search", "status": "paused",
                "params": params[cid]} for cid in floors]
    runs = [{"id": cid, "config_id": cid, "status": "paused", "stage": "search", "kind": "search", "seed_index": 0,
             "pause_step": 4, "last_step": 4, "max_steps": 16, "launches": 1, "seed": 1, "finished_at": None,
             "params": params[cid], "loss": [(s, floor + (1.0 - floor) * 0.9 ** s) for s in range(1, 5)]}
            for cid, floor in floors.items()]
    return configs, runs


def _history(configs, runs, ratings, params) -> dict[int, object]:
    scored = rung_scores(configs, runs, RUNGS, seeds=1, ratings=ratings, weights=WEIGHTS, params=params)
    view = SearchView.build(configs, runs, seeds=1, full_steps=16, rungs=RUNGS, scores=scored)
    history = sampler_history(view, {}, lambda p: dict(p), rated=view.judged)
    return {int(h.name.split("-")[1]): h for h in history}


def test_at_a_rung_the_config_rated_best_leads_not_an_unrated_one_with_a_good_loss():
    """Table: at the first rung the person rated the lowest-loss config 2 and the highest-loss one
    10 (at step 4); config 3, unlike both, has a loss as low as the 2's. The combined score there
    puts config 3 first; the sampler sees the 10 first and config 3 no better than the mean verdict."""
    configs, runs = _rows({1: 0.10, 2: 0.40, 3: 0.11, 4: 0.30}, PARAMS)
    ratings = [{"run_id": 1, "prompt_index": None, "value": 2.0, "step": 4},
               {"run_id": 2, "prompt_index": None, "value": 10.0, "step": 4}]
    scored = rung_scores(configs, runs, RUNGS, seeds=1, ratings=ratings, weights=WEIGHTS, params=PARAMS)
    assert min(scored.scores, key=scored.scores.get) == (3, 0)  # what the sampler saw before
    assert scored.seen[(2, 0)] == rating_score(10.0) and scored.seen[(1, 0)] == rating_score(2.0)
    assert scored.seen[(3, 0)] >= (rating_score(2.0) + rating_score(10.0)) / 2 - 1e-9
    history = _history(configs, runs, ratings, PARAMS)
    assert min(history, key=lambda c: history[c].value) == 2
    assert history[2].value < history[3].value
    assert {c for c, h in history.items() if h.rated} == {1, 2}  # TPE's wide good share once judged


def test_without_a_judgement_a_rung_is_seen_at_its_combined_score():
    rng = random.Random(3)
    for _ in range(20):
        floors = {cid: rng.uniform(0.05, 0.5) for cid in PARAMS}
        configs, runs = _rows(floors, PARAMS)
        scored = rung_scores(configs, runs, RUNGS, seeds=1, weights=WEIGHTS, params=PARAMS)
        assert scored.seen == scored.scores and not scored.judged
        history = _history(configs, runs, [], PARAMS)
        assert sorted(history, key=lambda c: history[c].value) == sorted(floors, key=floors.get)
        assert not any(h.rated for h in history.values())


def test_at_a_rung_an_estimate_never_looks_better_than_the_best_verdict():
    """Property, on seeded random rungs: at a rung where some configs are rated, every unrated
    config's value lies within the verdicts given there, and the rated ones sit at their verdict."""
    rng = random.Random(11)
    for _ in range(40):
        params = {cid: {"optimizer_type": rng.choice(("AdamW", "Lion")), "learning_rate": 10 ** rng.uniform(-5, -3),
                        "network_dim": rng.choice((4, 8, 16))} for cid in range(1, rng.randint(3, 8))}
        configs, runs = _rows({cid: rng.uniform(0.05, 0.5) for cid in params}, params)
        rated = rng.sample(sorted(params), rng.randint(1, len(params) - 1))
        ratings = [{"run_id": cid, "prompt_index": None, "value": float(rng.randint(1, 10)), "step": 4}
                   for cid in rated]
        seen = rung_scores(configs, runs, RUNGS, seeds=1, ratings=ratings, weights=WEIGHTS, params=params).seen
        verdicts = {g["run_id"]: rating_score(g["value"]) for g in ratings}
        for (cid, _rung), value in seen.items():
            if cid in verdicts:
                assert abs(value - verdicts[cid]) < 1e-9
            else:
                assert min(verdicts.values()) - 1e-9 <= value <= max(verdicts.values()) + 1e-9


def _lora_rows(floors: dict[int, float]) -> tuple[list[dict], list[dict], dict[int, dict]]:
    from tests.search.lora_space import BASE, SPACE

    shapes = {1: BASE, 2: {**BASE, "learning_rate": 3e-4, "lr_scheduler": "cosine", "lr_warmup_steps": 10,
                           "network_dim": 64, "network_alpha": 32},
              3: {**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "network_alpha": 32},
              4: {**BASE, "optimizer_type": "AdamW", "network_dim": 16, "network_alpha": 8},
              5: {**BASE, "optimizer_type": "Prodigy", "prodigy_d_coef": 0.5, "network_alpha": 32}}
    params = {cid: SPACE.searched_params(SPACE.complete(shapes[cid])) for cid in floors}
    configs, runs = _rows(floors, params)
    return configs, runs, params


def _lora_history(configs, runs, ratings, params, *, judged: bool = True) -> dict[int, object]:
    from bracket.session.loop.proposing import judged_rung

    scored = rung_scores(configs, runs, RUNGS, seeds=1, ratings=ratings, weights=WEIGHTS, params=params)
    view = SearchView.build(configs, runs, seeds=1, full_steps=16, rungs=RUNGS, scores=scored)
    history = sampler_history(view, {}, lambda p: dict(p), rated=view.judged,
                              judged=judged_rung(view, {}, {}) if judged else None)
    return {int(h.name.split("-")[1]): h for h in history}


def test_a_halving_search_makes_focus_draws_once_the_ratings_at_a_rung_disagree_with_the_loss():
    """Issue 43: a halving search's history carried no measured score, so the focus draws never came.
    At the first rung the person rates the two lowest-loss configs (Prodigy) 3 and 4 and an Adam
    config with a high loss 10: each rated config now carries its verdict and measured score there,
    the ratings read as disagreeing with the loss, and the next proposal is a focus draw near the 10."""
    from bracket.search.lr_bracket import step_of
    from bracket.search.rated_focus import focus_centre, focus_draw, ratings_disagree
    from tests.search.lora_space import SPACE

    configs, runs, params = _lora_rows({1: 0.30, 2: 0.45, 3: 0.10, 4: 0.35, 5: 0.12})
    ratings = [{"run_id": cid, "prompt_index": None, "value": value, "step": 4}
               for cid, value in ((3, 3.0), (5, 4.0), (2, 10.0))]
    history = _lora_history(configs, runs, ratings, params)
    assert {cid for cid, h in history.items() if h.verdict is not None} == {2, 3, 5}
    assert history[2].verdict == rating_score(10.0) and history[3].verdict == rating_score(3.0)
    assert history[3].measured < history[2].measured  # the loss prefers the config rated 3
    assert all(h.measured is None for cid, h in history.items() if cid in (1, 4))  # not judged
    steps = list(history.values())
    assert ratings_disagree(steps) and focus_centre(steps) is history[2]
    draw = focus_draw(steps, SPACE, seed=1)
    assert draw is not None and step_of(draw, SPACE)[0] == step_of(SPACE.complete(params[2]), SPACE)[0]
    # the controller hands it out (its shape draws made), named as one
    study = optuna.create_study(direction="minimize")
    controller = SearchController(study=study, space=SPACE, seed=5, history=lambda: steps, lr_bracket=False,
                                  shapes=ShapeRule(trials=4), hedge=None)
    assert controller.next().name.startswith("focus-")
    # the history as it was (no verdicts kept): no focus draw
    assert focus_draw(list(_lora_history(configs, runs, ratings, params, judged=False).values()), SPACE, seed=1) is None
    # ratings that follow the loss: no focus draw
    follow = [{**g, "value": {3: 10.0, 5: 9.0, 2: 3.0}[g["run_id"]]} for g in ratings]
    assert focus_draw(list(_lora_history(configs, runs, follow, params).values()), SPACE, seed=1) is None


def test_the_verdicts_kept_come_from_the_rung_where_most_configs_were_judged():
    from types import SimpleNamespace

    from bracket.session.loop.proposing import judged_rung

    view = SimpleNamespace(rungs=RUNGS, seen={(1, 0): 0.1, (2, 0): 0.2, (3, 0): 0.3, (1, 1): 0.5, (2, 1): 0.6},
                           judged_measured={(1, 0): 0.9, (2, 0): 0.8, (3, 0): 0.7, (1, 1): 0.4, (2, 1): 0.3})
    assert judged_rung(view, {}, {}) == {1: (0.1, 0.9), 2: (0.2, 0.8), 3: (0.3, 0.7)}  # three judged at rung 0
    # full length counts as the last rung, and a tie goes to the higher rung
    full = judged_rung(view, {4: 0.0, 5: 0.5, 6: 1.0}, {4: 0.2, 5: 0.1, 6: 0.3})
    assert full == {4: (0.0, 0.2), 5: (0.5, 0.1), 6: (1.0, 0.3)}
    assert judged_rung(SimpleNamespace(rungs=RUNGS, seen={}, judged_measured={}), {}, {}) == {}
