"""Two workers interleaved by hand: one reserves a config, the other decides promotions before the
first has started the config's run (the load test's budget race, docs/RELIABILITY.md §8).

The session's own loop is worker B (SQLite, one process); worker A is played by a ``before_turn``
hook that does what A's loop does — ``reserve_config`` under the session's row lock, with its own
live heartbeat — at the turn when B has three configs and trains nothing. B then goes on deciding
(its own configs, promotions) while A's config is in the store with no run; once B has nothing
left to do and waits, A signs off (its machine went away) and B takes A's config over and trains
it. The budget (3 full runs: 7 configs to 4 → 3 to 8 → 1 to 16) must hold. Before, B counted A's
config nowhere (one of the configs bought, so not to come; no run in flight), sent a fourth config
to 1/2 and the search ended at 3.25 of 3 full runs, as the load test did.
"""

from __future__ import annotations

from bracket.session import Session
from bracket.session.distributed import reserve_config
from bracket.session.loop.search_reading import fresh_view
from tests.distributed.halving_checks import SETTINGS, check_halving_search
from tests.session.test_halving_search import halving_fields

OTHER = "other-machine:1"


def test_a_promotion_decided_while_another_worker_holds_a_reserved_config_keeps_the_budget(
        tmp_path, runs_dir, monkeypatch):
    launch_log = tmp_path / "launches.jsonl"
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_LAUNCH_LOG", str(launch_log))
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="race",
                             worker_id="worker-b")  # its sampler's seed: the same proposals every time
    store, name = session.store, session.name
    seen: dict[str, object] = {}

    def other_worker() -> None:
        view = fresh_view(session)
        trained = sorted((r.id, str(r.status), r.last_step) for r in view.runs)
        if "reserved" not in seen and len(view.configs) == 3 and not view.active():
            store.heartbeat(name, OTHER, host="other-machine", pid=1)  # alive: B leaves its config alone
            seen["reserved"] = reserve_config(store, name, limit=lambda: 7, worker=OTHER,
                                              propose=session.controller().next)
        elif "reserved" in seen and "gone" not in seen:
            assert not [r for r in view.runs if r.config_id == seen["reserved"]]  # A never started it
            if trained == seen.get("trained"):  # B found nothing more to do in its last turn: it waited
                store.heartbeat(name, OTHER, status="stopped")  # A's machine went away: B takes its config over
                seen["gone"] = len(_past_first_rung(view))
            else:
                store.heartbeat(name, OTHER, host="other-machine", pid=1)
        seen["trained"] = trained

    session.before_turn.append(other_worker)
    assert session.run() == "finished"
    assert seen.get("reserved") is not None and "gone" in seen, seen  # the interleaving happened as written
    view = fresh_view(session)
    assert session.budget.spent(view) <= SETTINGS.search_runs + 1e-9, (session.budget.label(view), _rows(view))
    assert len(_past_first_rung(view)) <= 3, _rows(view)  # 7 → 3 → 1
    reserved = view.config(int(seen["reserved"]))
    assert reserved.status in ("done", "stopped") and reserved.worker != OTHER  # taken over and trained
    check_halving_search(store, name, SETTINGS, launch_log)
    session.close()


def _past_first_rung(view) -> set[int]:
    return {r.config_id for r in view.runs if (r.pause_step or r.last_step) > 4}


def _rows(view) -> list[tuple[int, int, str, int | None, int]]:
    return [(r.id, r.config_id, str(r.status), r.pause_step, r.last_step) for r in view.runs]
