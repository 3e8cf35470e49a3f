"""The steering benchmark's simulated raters and one real rated session through the app's path."""

from __future__ import annotations

import random

import pytest

from bench.landscape_trainer import optimum, quality
from bench.raters import TASTES, Rater
from bench.steering import run_session, summarise, trials_to_target


@pytest.fixture(autouse=True)
def _no_torch_probe(monkeypatch):
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


@pytest.mark.parametrize("name", list(TASTES))
def test_every_taste_disagrees_with_the_loss_both_ways(name):
    taste = TASTES[name]
    best, params = taste.optimum()
    loss_best, loss_params = optimum(taste.loss, per_decade=100)
    assert taste.value(params) == best
    assert taste.value(loss_params) > 1.05 * best, "the loss optimum is not what the rater likes"
    assert quality(taste.loss, params) > 1.05 * loss_best, "what the rater likes is not the loss optimum"


def test_ratings_fall_with_the_taste_and_noise_stays_in_1_to_10():
    taste = TASTES["softer"]
    best, params = taste.optimum()
    worse = dict(params, learning_rate=params["learning_rate"] * 4)
    assert taste.rating(params, best) == 10 > taste.rating(worse, best)
    assert taste.rating(dict(params, learning_rate=0.03), best) == 1  # diverges on the loss: looks broken
    rng = random.Random(0)
    noisy = {taste.rating(worse, best, rng, noise=3.0) for _ in range(200)}
    assert noisy <= set(range(1, 11)) and len(noisy) > 3


def test_a_rated_session_rates_through_the_manager_and_is_summarised(tmp_path):
    control = run_session("softer", "control", 0, 5, 20, str(tmp_path))
    rated = run_session("softer", "rated", 0, 5, 20, str(tmp_path))
    assert control["status"] == rated["status"] == "finished"
    assert control["ratings"] == 0 and rated["ratings"] >= 1 and rated["first_rating_trial"] >= 2
    assert any(e["did"][0].startswith("rated #") for e in rated["events"])
    # identical up to the first rating: same seeds, same trainer noise
    first = rated["first_rating_trial"]
    assert [t["params"] for t in rated["trials"][:first - 1]] == [t["params"] for t in control["trials"][:first - 1]]
    assert sum(t["picked"] for t in rated["trials"]) == 1
    # every rating the rater gave is kept on its config (the rating ceiling picks from them)
    assert sum(len(t["ratings"]) for t in rated["trials"]) == rated["ratings"]
    assert not any(t["ratings"] for t in control["trials"])
    summary = summarise([control, rated])["softer"]
    assert summary["modes"] == ["control", "rated"]
    assert summary["rated"]["median_trials_to_target"] == trials_to_target(rated) <= 6
    assert 0.0 <= summary["rated_vs_control"]["pick_better"] <= 1.0


def test_a_late_rater_waits_for_half_the_budget():
    rater = Rater(TASTES["linear-bold"], start_trial=11)

    class Nothing:
        def scorable_runs(self):
            raise AssertionError("a late rater does not look before its start")

    assert rater.act(Nothing(), 10) == [] and rater.ratings == 0


class _Compare:
    """The Compare functions a rater uses: ``rate_next`` offers ``offer`` with ``why``."""

    def __init__(self, offer, why, rated=()):
        self.offer, self.why, self.given = offer, why, [{"run_id": i, "value": 8} for i in rated]

    def scorable_runs(self):
        return [{"id": i, "params": TASTES["softer"].optimum()[1]} for i in (1, 2, 3)]

    def rate_next(self, k=4):
        return self.offer[:k], self.why

    def ratings(self):
        return list(self.given)

    def rate(self, run_id, value):
        self.given.append({"run_id": run_id, "value": value})

    def next_pairs(self, k=1):
        return []


def test_the_rater_rates_a_rated_run_again_only_when_the_app_asks():
    asked = _Compare([1, 2], "Why these runs: #1 and #2 are tied at 8/10: a second rating separates them.", (1, 2))
    rater = Rater(TASTES["softer"], p_round=1.0, p_pair=0.0)
    did = rater.act(asked, 2)
    assert [d.split()[1] for d in did] == ["#1", "#2"] and all(d.endswith(" again") for d in did), did
    assert rater.ratings == rater.again == 2 and len(asked.given) == 4
    shown = _Compare([1, 3], "", (1, 2))  # everything rated or no why: the best again, not asked for
    rater = Rater(TASTES["softer"], p_round=1.0, p_pair=0.0)
    rater.act(shown, 2)
    assert [r["run_id"] for r in shown.given[2:]] == [3] and rater.again == 0


def test_the_raters_blind_choice_does_not_depend_on_the_side_it_is_shown_on():
    """The app shuffles a pair's sides without a seed; the same rater seed must pick the same run.
    The two runs are close (1.03x apart in the taste), so the choice is a near coin flip."""
    optimum = TASTES["softer"].optimum()[1]
    runs = [{"id": 1, "params": optimum},
            {"id": 2, "params": {**optimum, "learning_rate": 1.5 * optimum["learning_rate"]}}]

    class Pair(_Compare):
        def __init__(self, shown):
            super().__init__([], "")
            self.shown, self.choices = shown, []

        def scorable_runs(self):
            return runs

        def next_pairs(self, k=1):
            return [self.shown]

        def choose(self, left, right, winner):
            self.choices.append(left if winner == "left" else right)

    winners = []
    for seed in range(16):
        picked = set()
        for shown in ((1, 2), (2, 1)):
            app = Pair(shown)
            Rater(TASTES["softer"], seed=seed, p_round=1.0, per_round=0, p_pair=1.0).act(app, 2)
            picked.add(app.choices[0])
        assert len(picked) == 1, seed
        winners += picked
    assert 1 in winners and 2 in winners  # a near coin flip: each run wins for some seed


def test_a_variant_is_a_session_setting_and_patches_nothing_of_the_engine():
    """The one steering variant left is the human weight, passed as the session's weights; the
    removed experiments' names are refused, and no engine function or default is replaced."""
    from bench.steering import apply_variant
    from bracket.app.compare import Compare
    from bracket.search import controller

    own = (Compare.rate_next, controller.TPESampler, controller.SearchController.next,
           controller.SearchController.__init__.__kwdefaults__.copy())
    assert apply_variant("rated") == ("rated", None)
    assert apply_variant("late@human=4") == ("late", {"loss": 1.0, "human": 4.0})
    for removed in ("winnerfirst", "again", "gp", "focus", "region", "nearfav", "gamma=0.25", "prior=1"):
        with pytest.raises(ValueError, match="unknown variant"):
            apply_variant(f"rated@{removed}")
    assert (Compare.rate_next, controller.TPESampler, controller.SearchController.next,
            controller.SearchController.__init__.__kwdefaults__) == own


def test_the_pick_rules_trade_an_estimate_for_a_known_rating():
    from types import SimpleNamespace

    from bench.steering import pick_rules

    def score(value, uncertainty, rated):
        return SimpleNamespace(value=value, uncertainty=uncertainty, used=["loss", "human"],
                               estimated=[] if rated else ["human"])

    runs = [{"id": 1, "config_id": 10}, {"id": 2, "config_id": 20}, {"id": 3, "config_id": 30}]
    scores = {1: score(0.20, 0.10, False), 2: score(0.25, 0.0, True), 3: score(0.28, 0.0, True)}
    values = {10: 0.20, 20: 0.25, 30: 0.28}
    assert pick_rules(runs, scores, values) == {"mean": 10, "cautious1": 20, "cautious2": 20, "rated": 20}
    scores[1] = score(0.20, 0.03, False)
    picks = pick_rules(runs, scores, values)
    assert picks["cautious1"] == 10 and picks["cautious2"] == 20
