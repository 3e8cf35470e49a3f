"""What one proposal costs: the sampler's history and the "why" line kept with the proposal
(``bracket.session.loop.proposing``) read the runs' scores of one store change, scored once."""

from __future__ import annotations

from bracket.search.why_line import WHY_ATTR
from bracket.session import SearchSettings, Session
from bracket.session.scoring import Scoreboard


def test_a_proposal_scores_the_runs_once_for_the_sampler_and_its_why_line(demo_fields, runs_dir, monkeypatch):
    settings = SearchSettings(budget=4, steps=10, seeds=1, sample_prompts="a red circle --d 5", lr_bracket=False)
    session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir)
    assert session.run() == "finished"
    runs = [r for r in session.snapshot().runs if r["status"] == "done"]
    session.add_rating(runs[0]["id"], 9)  # the store changed: nothing scored before counts
    fresh = session.scoreboard.scored_configs()  # what the sampler must see: every run scored now

    calls = []
    scores = Scoreboard.scores
    monkeypatch.setattr(Scoreboard, "scores", lambda self, *a, **k: calls.append(1) or scores(self, *a, **k))
    proposal = session.controller().next()
    assert len(calls) == 1, f"one proposal scored every run {len(calls)} times"
    # the shared scores are the current ones: the sampler's history is the freshly scored one
    assert session.scored_configs() == fresh and len(calls) == 1
    why = session.store.study(session.name).trials[proposal.trial_number].user_attrs[WHY_ATTR]
    assert proposal.kind == "search" and why.startswith(("TPE from 4 scored · vs ",
                                                         "shape draw: the best step, another shape · vs ")), why
    session.close()


def test_the_why_line_of_one_config_is_the_one_all_lines_give_it():
    from bracket.search.space import FloatKnob, SearchSpace
    from bracket.search.why_line import short_reasons

    space = SearchSpace({"learning_rate": FloatKnob(1e-5, 1e-1, log=True)})
    configs = [{"id": i, "name": f"search-{i}", "kind": "search", "params": {"learning_rate": 10 ** -(1 + i % 4)},
                "created_at": float(i)} for i in range(1, 9)]
    scores = {1: 0.5, 2: 0.3, 3: 0.9, 5: 0.1, 6: 0.4}
    every = short_reasons(configs, scores, space, ratings=[{"run_id": 2, "value": 7, "created_at": 6.5}])
    for config_id in (4, 7, 8):
        alone = short_reasons(configs, scores, space, ratings=[{"run_id": 2, "value": 7, "created_at": 6.5}],
                              only={config_id})
        assert alone == {config_id: every[config_id]}
    assert (every[7].startswith("TPE from 5 scored · vs search-5: learning_rate ×")
            and "rating of run #2 (7)" in every[7])


def test_a_why_line_that_cannot_be_made_never_stops_the_search():
    """The line is a sentence for the trial table: when making it fails, the config is still
    proposed (no line stored, so the table rebuilds one, marked) and the failure is noted."""
    import optuna

    from bracket.search.configs import NamedConfig
    from bracket.search.controller import SearchController
    from bracket.search.space import CategoricalKnob, FloatKnob, SearchSpace
    from bracket.search.why_line import WHY_ATTR

    space = SearchSpace({"optimizer_type": CategoricalKnob(("AdamW", "SGD")),
                         "learning_rate": FloatKnob(1e-5, 3e-2, log=True)})
    study = optuna.create_study(direction="minimize")
    SearchController.enqueue_warm_start(study, space, [
        ("baseline", NamedConfig("baseline", {"optimizer_type": "AdamW", "learning_rate": 1e-4}))])
    notes: list[str] = []
    lines = iter([RuntimeError("scores unreadable"), "search config"])

    def describe(proposal):
        line = next(lines)
        if isinstance(line, Exception):
            raise line
        return line

    controller = SearchController(study=study, space=space, seed=0, describe=describe, note=notes.append)
    first, second = controller.next(), controller.next()
    assert (first.kind, first.name) == ("baseline", "baseline")
    attrs = {t.number: t.user_attrs for t in study.get_trials(deepcopy=False)}
    assert WHY_ATTR not in attrs[first.trial_number] and attrs[second.trial_number][WHY_ATTR] == "search config"
    assert notes == ["why line of baseline not recorded: RuntimeError: scores unreadable"]
