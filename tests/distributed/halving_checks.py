"""What a successive-halving search must hold however many processes trained it, and however
often they were killed: the checks the multi-worker and restart tests share.

The trainer is ``tests/session/pausing_trainer.py`` with ``BRACKET_FAKE_PAUSE_LAUNCH_LOG``: each of
its launches notes when it started (from which step) and when it ended (at which step), so the
checks see every launch of a run, the killed ones included, not only what the store says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bracket.session import HalvingSettings, SearchSettings
from bracket.session.loop.rung_scores import full_runs_spent
from bracket.session.store.schema import spends_budget

ROOT = Path(__file__).resolve().parents[2]
#: the searches these checks are written for: budget 3 full runs at eta 2 from a quarter of 16
#: steps (7 configs to step 4 → 3 to step 8 → 1 to 16), the start-up not counted (it is timing)
SETTINGS = SearchSettings(budget=3, steps=16, sample_every_n_steps=2,
                          halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                          confirm=0, sample_prompts="a red circle --d 1")


def launches_by_output(launch_log: Path) -> dict[str, list[dict[str, Any]]]:
    """Output folder -> its launches in start order: ``{"start", "end", "from", "to", "pid"}``
    (``end``/``to`` None for a launch that was killed)."""
    opened: dict[int, dict[str, Any]] = {}
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in launch_log.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # the line a launch is writing now
            continue
        if record["event"] == "start":
            launch = {"start": record["time"], "from": record["step"], "end": None, "to": None, "pid": record["pid"]}
            opened[record["pid"]] = launch
            out[record["output"]].append(launch)
        else:
            opened[record["pid"]] |= {"end": record["time"], "to": record["step"]}
    return {key: sorted(value, key=lambda launch: launch["start"]) for key, value in out.items()}


def check_halving_search(store: Any, name: str, settings: Any, launch_log: Path, *,
                         lost_allowed: bool = False, short_allowed: bool = False) -> dict[str, Any] | None:
    """Assert the guarantees of a finished halving search ``name``; returns the winner's run row
    (None: with ``short_allowed``, a search whose budget paid for no full-length run, :func:`ended_short`).

    * every config has at most one run per seed that was not interrupted (a slot is trained once),
      and one for each seed — but (with ``lost_allowed``) a config stopped because a seed's run was
      killed and the budget, every step a launch trained charged, cannot pay for it to train again
      (:func:`unpaid_stops`: only where training it would pass the budget);
    * a run's launches never overlap (no two processes resume one paused run at once), each goes
      on from the step the one before ended at (or, with ``lost_allowed``, after one was killed
      or its worker died, from the same saved state again, or not at all: the config stopped at
      the rung its row records), and no rung is trained twice;
    * the store's loss series is every step from 1 to where the run stands, once (true steps), and
      ``launches`` counts every launch (with ``lost_allowed`` also one whose worker died before
      its trainer started); every config that went past the first rung resumed;
    * the budget (full-run equivalents of the runs that spend it, ``schema.spends_budget``) holds;
    * nothing is left running or paused, and the study has no trial left open."""
    full = int(settings.steps)
    rungs = settings.rungs().steps(full, every=int(settings.sample_every_n_steps))
    runs = [r for r in store.runs(name) if r["stage"] == "search"]
    configs = {c["id"]: c for c in store.configs(name, stage="search")}
    assert len(configs) <= settings.n_configs
    kept = [r for r in runs if r["status"] != "interrupted"]
    per_slot = Counter((r["config_id"], r["seed_index"]) for r in kept)
    assert max(per_slot.values()) == 1, per_slot
    unpaid = unpaid_stops(configs.values(), runs, settings) if lost_allowed else set()
    assert all((c["id"], i) in per_slot or c["id"] in unpaid for c in configs.values() for i in range(settings.seeds))
    launches = launches_by_output(launch_log)
    for run in kept:
        assert run["status"] in ("paused", "done"), (run["label"], run["status"], run["failure_reason"])
        reached = full if run["status"] == "done" else int(run["pause_step"])
        assert [step for step, _ in run["loss"]] == list(range(1, reached + 1)), (run["label"], run["loss"])
        seen = launches[str(Path(run["output_dir"]).resolve())]
        # a worker killed after counting a launch but before its trainer started counts one the log never saw
        assert run["launches"] == len(seen) or (lost_allowed and run["launches"] > len(seen)), \
            (run["label"], run["launches"], seen)
        lost = 0  # launches whose work was lost: killed, or their worker died before recording them
        while lost_allowed and len(seen) > 1 and seen[-1]["from"] == reached and seen[-1]["to"] != reached:
            seen, lost = seen[:-1], lost + 1  # the last resume's work lost, and the config stopped where it stood
        assert seen[0]["from"] == 0 and seen[-1]["to"] == reached, (run["label"], seen)
        for before, after in zip(seen, seen[1:], strict=False):
            if before["end"] is not None:
                assert before["end"] <= after["start"], f"two launches of {run['label']} at once: {seen}"
            if after["from"] == before["from"] and (before["end"] is None or before["to"] != before["from"]):
                lost += 1  # resumed again from the same saved state
            else:
                assert after["from"] == before["to"], f"{run['label']} skipped or repeated steps: {seen}"
        assert lost == 0 or lost_allowed, f"{run['label']} lost a launch though nothing was killed: {seen}"
        kept_launches = [launch for launch, after in zip(seen, [*seen[1:], None], strict=True)
                         if after is None or after["from"] != launch["from"]]
        assert all(launch["to"] in rungs for launch in kept_launches), (run["label"], seen, rungs)
        assert len({launch["from"] for launch in kept_launches}) == len(kept_launches), seen  # no rung twice
        if reached > rungs[0]:  # promoted: it resumed from its state at least once
            assert len(kept_launches) >= 2 and run["launches"] >= 2, (run["label"], seen)
    spent = [r for r in runs if spends_budget(r)]
    assert full_runs_spent(spent, full) <= settings.search_runs + 1e-9, [(r["label"], r["last_step"]) for r in spent]
    assert all(c["status"] in ("done", "stopped") for c in configs.values()), [c["status"] for c in configs.values()]
    winners = [r for r in kept if r["status"] == "done"]
    if short_allowed and not winners:
        ended_short(configs.values(), full_runs_spent(spent, full) * full, settings, rungs)
        assert all(t.state.is_finished() for t in store.study(name).trials)
        return None
    assert winners and all(configs[r["config_id"]]["rung_state"] == "full" for r in winners)
    trials = store.study(name).trials
    assert all(t.state.is_finished() for t in trials), [t.state.name for t in trials]
    return min(winners, key=lambda r: configs[r["config_id"]]["value"])


def ended_short(configs: Any, spent_steps: float, settings: Any, rungs: tuple[int, ...]) -> None:
    """A search that ended with no config at full length: every config stopped (none done), and the
    budget, every launch charged, could not pay for the best of the highest rung any config reached to
    go one rung further (the closing rule promotes it whenever its own steps fit: ``Halving.affordable``)."""
    configs = list(configs)
    assert configs and all(c["status"] == "stopped" for c in configs), [(c["id"], c["status"]) for c in configs]
    top = max((int(c["rung"]) for c in configs if c["rung"] is not None), default=-1)
    step = rungs[top + 1] - (rungs[top] if top >= 0 else 0)
    assert spent_steps + settings.seeds * step > settings.search_runs * int(settings.steps) + 1e-9, \
        (top, spent_steps)


def unpaid_stops(configs: Any, runs: list[dict[str, Any]], settings: Any) -> set[int]:
    """The configs stopped because a seed's run was killed and the budget cannot pay for it to train
    again (``Halving.stop_unpaid``), asserted to be such: every run of theirs interrupted, and the
    search's spent full runs, with that seed trained to full length (as a launch is promised:
    ``Budget.pays``), past the budget."""
    full = int(settings.steps)
    spent = full_runs_spent([r for r in runs if r["status"] != "interrupted" or r["launches"]], full)
    out = set()
    for config in configs:
        if config["status"] == "stopped" and "the budget cannot pay" in (config["rung_note"] or ""):
            own = [r for r in runs if r["config_id"] == config["id"]]
            assert own and all(r["status"] == "interrupted" for r in own), [(r["label"], r["status"]) for r in own]
            assert spent + 1 > settings.search_runs + 1e-9, (config["name"], spent)
            out.add(config["id"])
    return out


def status_text(folder: Path, env: dict[str, str] | None = None) -> str:
    """What ``python -m bracket status <folder>`` prints (asserting it exits 0)."""
    result = subprocess.run([sys.executable, "-m", "bracket", "status", str(folder)], cwd=ROOT, check=False,
                            env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout
