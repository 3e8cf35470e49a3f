"""A halving search end to end: the demo preset with a trainer that pauses and resumes as the
demo's does, in a fraction of a second (``pausing_trainer.py``; the real demo trainer's exact
pause and resume is ``test_demo_pause_resume.py``).

Budget 2 full runs at eta 2 from a quarter: 4 configs to 1/4 → 2 to 1/2 → 1 to full. Every
config pauses at 4 steps; the better of each rung's share resumes in its own run row (the
series going on with true steps); the rest are stopped with the reason; the winner is the
full-length run. Then a rating that lifts a stopped config promotes it: it resumes.
"""

from __future__ import annotations

from pathlib import Path

from optuna.samplers import TPESampler

from bracket.app.extend import extend_budget
from bracket.search.controller import CurrentScoreSampler
from bracket.search.halving import Promotion
from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.budget import Budget
from bracket.session.loop.plan import progress_text
from bracket.session.loop.proposing import halving_history
from bracket.session.loop.rung_scores import full_runs_spent
from bracket.standings import standings
from tests.conftest import make_caption_folder
from tests.fakes import make_fake_python
from tests.fakes.plain_views import halving_on, view_of

PAUSING_TRAINER = Path(__file__).resolve().parent / "pausing_trainer.py"


def halving_fields(tmp_path: Path) -> dict[str, str]:
    """The demo preset's fields, its trainer the pausing fake (loss ordered by the rate's distance to 3e-3)."""
    return {"dataset": str(make_caption_folder(tmp_path / "data")), "train_script": str(PAUSING_TRAINER),
            "trainer_python": str(make_fake_python(tmp_path / "fakebin"))}


def test_a_halving_search_pauses_promotes_resumes_and_stops(tmp_path, runs_dir):
    settings = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                              confirm=0, sample_prompts="a red circle --d 1")
    assert settings.plan() == "budget 2 full runs = 4 configs to 1/4 → 2 to 1/2 → 1 to full"
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="halving")
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    configs = {c["id"]: c for c in session.store.configs(session.name, stage="search")}
    assert len(configs) == 4 and len(runs) == 4  # one run row per config: resumed, never re-run
    for run in runs:
        steps = [step for step, _ in run["loss"]]
        assert steps == list(range(1, (run["pause_step"] or 16) + 1)), (run["label"], steps)
        assert run["status"] in ("paused", "done")
        assert run["launches"] == {4: 1, 8: 2, 16: 3}[steps[-1]]
    full = [r for r in runs if r["status"] == "done"]
    assert len(full) == 1 and full[0]["last_step"] == 16 and full[0]["launches"] == 3
    # the progress line ("4/4 runs") counts every config tried, paused at a rung or trained to full
    assert session.spent_runs() == session.total_runs() == 4
    winner = configs[full[0]["config_id"]]
    assert winner["name"] == "radam"  # lr 3e-3: the best at every step
    assert (winner["rung_state"], winner["status"]) == ("full", "done") and winner["value"] is not None
    assert winner["rung_note"].startswith("promoted: ")
    stopped = [c for c in configs.values() if c["id"] != winner["id"]]
    assert all(c["status"] == "stopped" and c["rung_state"] == "stopped" and c["value"] is None for c in stopped)
    assert all(c["rung_note"].startswith("stopped at 1/") for c in stopped), [c["rung_note"] for c in stopped]
    assert sorted(c["rung"] for c in stopped) == [0, 0, 1]
    # the winner is the full-length run; the study saw the curves and why the others stopped
    assert standings(session).boards["search"].rows[0].name == winner["name"]
    # compute in full-run equivalents: 4 × 4 + 2 × 4 more + 1 × 8 more steps = 32 of 16 = 2 full runs (the budget)
    assert full_runs_spent(runs, 16) == 2.0 and full_runs_spent(runs, 16, launch_steps=4) == (32 + 7 * 4) / 20
    trials = {t.number: t for t in session.store.study(session.name).trials}
    assert trials[winner["trial_number"]].state.name == "COMPLETE"
    assert sorted(trials[winner["trial_number"]].intermediate_values) == [4, 8]
    for config in stopped:
        trial = trials[config["trial_number"]]
        assert trial.state.name == "PRUNED" and trial.user_attrs["stopped_reason"] == config["rung_note"]

    # the sampler learns across rungs without mixing a short run's score with a full run's: each
    # config by the rung it reached first, then its rank there (halving.search_values)
    history = {h.name: h for h in halving_history(session)}
    assert {h.state.name for h in history.values()} == {"COMPLETE"} and len(history) == 4
    by_rung = {c["name"]: (2 if c["id"] == winner["id"] else c["rung"]) for c in configs.values()}
    assert sorted(history, key=lambda n: history[n].value) == sorted(
        history, key=lambda n: (-by_rung[n], history[n].value))
    assert history[winner["name"]].value < min(h.value for n, h in history.items() if n != winner["name"])
    inner = CurrentScoreSampler(session.space, lambda: list(history.values()),
                                lambda seed, seen: TPESampler(seed=seed, n_startup_trials=1), seed=0)
    assert set(inner.plan()) >= {"learning_rate", "optimizer_type"}  # TPE takes the pruned trials

    # a person rates the samples at 1/4: a stopped config becomes the best there; with the budget
    # spent it waits, and resumes once the search gets one more full run (``+N runs``)
    lifted = next(c for c in stopped if c["rung"] == 0)
    for run in runs:
        if run["pause_step"] == 4 or run["config_id"] != lifted["id"]:
            session.add_rating(run["id"], 10.0 if run["config_id"] == lifted["id"] else 1.0, step=4)
    # the sampler sees those verdicts too: the lifted config leads the configs stopped at the first
    # rung, and the rated ones are flagged (TPE's wide good share), as in a search of full runs
    history = {h.name: h for h in halving_history(session)}
    first = [c["name"] for c in stopped if c["rung"] == 0]
    assert min(first, key=lambda n: history[n].value) == lifted["name"]
    assert history[lifted["name"]].rated and all(h.rated for h in history.values())
    # and each carries its verdict and measured score at 1/4, the rung every config was judged at,
    # which the focus draws compare (issue 43: a halving history carried no measured score)
    assert {n: h.verdict for n, h in history.items()} == {n: 0.0 if n == lifted["name"] else 1.0 for n in history}
    assert all(h.measured is not None for h in history.values())
    session.close()
    again = Session.open(runs_dir / "halving")
    assert again.run() == "finished"
    assert next(r for r in again.store.runs(again.name) if r["config_id"] == lifted["id"])["launches"] == 1
    assert full_runs_spent([r for r in again.store.runs(again.name) if r["stage"] == "search"], 16) == 2.0
    extend_budget(again, 1)
    again.close()
    again = Session.open(runs_dir / "halving")
    assert again.run() == "finished"
    resumed = next(r for r in again.store.runs(again.name) if r["config_id"] == lifted["id"])
    assert resumed["launches"] >= 2 and [s for s, _ in resumed["loss"]][:5] == [1, 2, 3, 4, 5]
    assert next(c for c in again.store.configs(again.name) if c["id"] == lifted["id"])["rung"] >= 1
    again.close()



def test_the_budget_pays_for_every_promotion_but_the_best_of_a_rung_none_has_passed():
    settings = SearchSettings(budget=2, steps=8, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.5, launch_share=0),
                              confirm=0)
    loop = halving_on(settings)

    def affordable(promotion: Promotion, scores: dict, runs: list) -> bool:
        return loop.affordable(promotion, view_of(loop, runs, scores))

    scores = {(1, 0): 0.1, (2, 0): 0.5, (3, 0): 0.9}
    paused = [{"id": i, "config_id": i, "status": "paused", "pause_step": 4, "last_step": 4, "launches": 1,
               "seed_index": 0} for i in (1, 2, 3)]
    second = Promotion(2, 1, "promoted: 2 of 3 at 1/2, top 2 go on to full")
    assert affordable(second, scores, paused)  # 1.5 spent + 0.5 = the budget
    spent = [{**paused[0], "status": "done", "last_step": 8, "pause_step": None, "launches": 2}, *paused[1:]]
    assert not affordable(second, scores, spent)  # 2.0 spent: nothing left for the second
    # the best of a rung goes on only while no config has gone past that rung, and never past the budget
    assert not affordable(Promotion(1, 1, ""), scores, spent)
    # the budget is a promise: with 2.0 spent at the first rung, not even the best goes on
    over = [{**run, "id": 4, "config_id": 4} for run in paused[:1]] + paused
    assert not affordable(Promotion(1, 1, ""), scores, over) and not affordable(second, scores, over)
    # the best of a rung none has passed goes on when its own steps fit, the rest of the way or not
    assert affordable(Promotion(1, 1, ""), scores, paused[:1] + [{**paused[1], "last_step": 6, "pause_step": 6}])
    # a run another worker resumes now counts to the rung it goes to, not to where it stands
    flight = [{**paused[0], "status": "running", "last_step": 5}, *paused[1:]]
    assert not affordable(second, scores, flight)


def test_the_start_up_of_each_launch_buys_fewer_configs_and_the_notes_say_so(tmp_path, runs_dir):
    # a launch costs a quarter of a full run's steps: 4 configs to 1/4 → 2 → 1 would spend 3.6 of 2
    settings = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0.25),
                              confirm=0, sample_prompts="a red circle --d 1")
    assert settings.plan() == "budget 2 full runs = 4 configs to 1/4 → 2 to 1/2 → 1 to full"  # before measuring
    expected = settings.configs_within(0.25)
    assert expected < settings.n_configs
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="startup")
    assert session.run() == "finished"
    configs = session.store.configs(session.name, stage="search")
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    assert len(configs) == expected
    notes = session.store.get_session(session.name)["notes"]
    assert any(f"2 full runs buy {expected} configs, not the 4 planned" in note for note in notes), notes
    snapshot = session.snapshot()  # the progress counts the same GPU time, start-up included
    assert snapshot.full_runs_spent == full_runs_spent(runs, 16, launch_steps=4)
    assert snapshot.spent_label == f"{expected} configs, {snapshot.full_runs_spent:.1f}/2 full runs"
    # the plan shown is the one that ran, before Start as after it: a finished plan says what it ran and
    # has no next phase
    bought = f"budget 2 full runs = {expected} configs to 1/4 → "
    assert Budget.of(settings, session.trainer).plan_text().startswith(bought)
    assert snapshot.plan.startswith(f"budget 2 full runs: ran {expected} configs to 1/4 → ")
    assert session.plan_text() == snapshot.plan
    assert "◀" not in progress_text(snapshot.phases), progress_text(snapshot.phases)
    assert sum(p["planned"] for p in snapshot.phases) == expected == snapshot.total_runs == snapshot.runs_spent
    session.close()


def test_a_config_whose_run_fails_before_its_first_rung_stands_stopped_there_not_running(tmp_path, runs_dir,
                                                                                      monkeypatch):
    from bracket.standings.rungs import rung_lines, session_rungs

    monkeypatch.setenv("BRACKET_FAKE_PAUSE_FAIL_AT", "2")  # every run dies at step 2, before the rung at 4
    settings = SearchSettings(budget=1, steps=16, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                              confirm=0, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="dies")
    session.run()
    runs = {r["config_id"]: r for r in session.store.runs(session.name) if r["stage"] == "search"}
    configs = session.store.configs(session.name, stage="search")
    assert configs and all(runs[c["id"]]["status"] == "failed" for c in configs)
    assert [(c["rung_state"], c["rung_note"]) for c in configs] == [
        ("stopped", f"stopped: run {runs[c['id']]['id']} failed") for c in configs]
    lines = rung_lines(configs, list(runs.values()), session_rungs(settings))
    assert all("stopped before 1/4 (run " in line and "running" not in line for line in lines[1:]), lines
    session.close()


def test_more_runs_leave_no_stopped_config_with_the_place_it_had_before_them(tmp_path, runs_dir, capsys):
    from bracket.cli import main

    settings = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                              confirm=0, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="more")
    assert session.run() == "finished"
    session.close()
    assert main(["resume", str(runs_dir / "more"), "--more-runs", "2", "--quiet"]) == 0
    capsys.readouterr()
    again = Session.open(runs_dir / "more")
    configs = again.store.configs(again.name, stage="search")
    scores = again.view().scores
    stopped = [c for c in configs if c["status"] == "stopped"]
    assert len(configs) > 4 and stopped
    for config in stopped:
        ranked = sorted((value, cid) for (cid, rung), value in scores.items() if rung == config["rung"])
        place = [cid for _value, cid in ranked].index(config["id"]) + 1
        assert config["rung_note"].startswith(f"stopped at 1/{4 // 2 ** config['rung']}: {place} of {len(ranked)}, ")
        # one inside the top share stopped only because the budget could not pay for it
        assert config["rung_note"].endswith(", but the budget is spent") == (place <= len(ranked) // 2)
    again.close()
