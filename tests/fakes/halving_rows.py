"""A session store that reads as a successive-halving search, written row by row with the store
API (the way the session loop writes its rung columns), for the tests of what the screens show
— status, the report, the export, the app — without running the loop.

:func:`halving_session` makes a demo-cpu session of four search configs of 90 full steps each
(rungs 1/9 → 1/3 → full at steps 10, 30, 90):

* ``search-0`` — trained to full length (``full``), run done at 90 steps, samples at 10, 30, 90;
* ``search-1`` — stopped at 1/9 ("5 of 7, top 2 go on"); its run ended at the rung (10 steps) with
  a lower loss than any full-length run — the config a naive ranking would crown;
* ``search-2`` — paused at 1/9, its run ``paused`` with its state saved at step 10, samples at 10;
* ``search-3`` — promoted from 1/9 and running to 1/3 (its run at step 15).

:func:`waiting_session` makes one whose every config waits paused at its first rung.
"""

from __future__ import annotations

from pathlib import Path

FULL = 90
NOTES = {1: "stopped at 1/9: 5 of 7, top 2 go on",
         2: "waiting at 1/9: 3 of 7, top 2 go on",
         3: "promoted: 1 of 7 at 1/9, top 2 go on to 1/3",
         0: "promoted: 1 of 2 at 1/3, top 1 goes on to full"}
#: (rung reached, state) per config index
PLACES = {0: (2, "full"), 1: (0, "stopped"), 2: (0, "paused"), 3: (0, "running")}


def _samples(folder: Path, run_id: int, steps: tuple[int, ...]) -> list[dict]:
    from PIL import Image

    out = []
    for step in steps:
        path = folder / "samples" / f"run{run_id}-{step}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (step % 256, 40, 90)).save(path)
        out.append({"path": str(path), "step": step, "prompt_index": 0})
    return out


def place_on_rungs(store, name: str, folder: Path) -> dict[str, int]:
    """Writes the rung columns into the four configs of ``name`` (filled by ``fill_store``);
    returns the run id of each config by its name."""
    runs = {r["config_id"]: r for r in store.runs(name, with_series=False) if r["kind"] != "setup"}
    ids = {}
    for index, config in enumerate(store.configs(name, stage="search")):
        rung, state = PLACES[index]
        store.update_config(config["id"], rung=rung, rung_state=state, rung_note=NOTES[index])
        run = runs[config["id"]]
        ids[config["name"]] = run["id"]
        if index == 1:  # ended at its rung: 10 steps, a low early loss
            store.update_run(run["id"], last_step=10, launches=1, loss=[[s, 0.02] for s in range(1, 11)])
        elif index == 2:
            store.update_run(run["id"], status="paused", last_step=10, pause_step=10, launches=1,
                             loss=[[s, 1.0] for s in range(1, 11)], samples=_samples(folder, run["id"], (10,)))
        elif index == 3:
            store.update_run(run["id"], status="running", last_step=15, launches=2, finished_at=None,
                             loss=[[s, 1.0] for s in range(1, 16)])
        else:
            store.update_run(run["id"], launches=3, samples=_samples(folder, run["id"], (10, 30, FULL)))
    return ids


def halving_session(runs_dir: Path, fields: dict[str, str], name: str = "halved") -> tuple[Path, dict[str, int]]:
    """(folder, run id per config name) of a closed demo-cpu session placed on the rungs."""
    from bracket.session import HalvingSettings, SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    session = Session.create("demo-cpu", fields, SearchSettings(budget=6, steps=FULL, sample_prompts="a red circle",
                                                                warm_start=False,
                                                                halving=HalvingSettings(smallest_rung=1 / 9)),
                             out_dir=runs_dir, name=name)
    fill_store(session, 4, FULL)
    ids = place_on_rungs(session.store, session.name, session.folder)
    folder = session.folder
    session.close()
    return folder, ids


def waiting_session(runs_dir: Path, fields: dict[str, str], name: str = "waiting") -> Path:
    """The folder of a closed demo-cpu halving session (budget 2 full runs: 4 configs, rungs 1/3 →
    full at steps 10 and 30) whose every config has trained to 1/3 and waits there, its run paused
    with its state saved at step 10: every run of the budget started, no promotion decided yet."""
    from bracket.session import HalvingSettings, SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    session = Session.create("demo-cpu", fields, SearchSettings(budget=2, steps=30, sample_prompts="a red circle",
                                                                warm_start=False, halving=HalvingSettings()),
                             out_dir=runs_dir, name=name)
    fill_store(session, session.total_runs(), 30)
    runs = {r["config_id"]: r for r in session.store.runs(session.name, with_series=False) if r["kind"] != "setup"}
    for config in session.store.configs(session.name, stage="search"):
        session.store.update_config(config["id"], status="paused", rung=0, rung_state="paused",
                                    rung_note="waiting at 1/3: 4 configs to rank")
        session.store.update_run(runs[config["id"]]["id"], status="paused", last_step=10, pause_step=10, launches=1,
                                 loss=[[s, 1.0 - s / 100] for s in range(1, 11)])
    folder = session.folder
    session.close()
    return folder
