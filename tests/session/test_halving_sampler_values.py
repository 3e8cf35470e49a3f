"""A halving search's sampler sees the person's verdicts at each rung, as a search of full runs does.

Seen on main (issue 43): the halving path fed the sampler the combined score at each rung, in
which an unrated config with a good loss and an estimated rating ranked above the config the
person rated 10. The rung scores (``rung_scores``) now also give what the sampler sees there
(``sampler_values`` of the runs cut at the rung), and ``scheduling.halving.sampler_history``
orders each rung's configs by it; checked on plain rows through the real scoring.
"""

from __future__ import annotations

import random

from bracket.judge.human import rating_score
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
