"""What the app's services hand Compare and Results of a successive-halving search (rows
written as the session loop writes them, no loop run): the rung steps are the loop's own (where
the runs paused and saved samples), every config that reached a rung comes ranked by its score
there, and each run and config says where it stands in ``status``'s words."""

from __future__ import annotations

import pytest

from bracket.app import rung_grid, rungs
from bracket.app.manager import SessionManager
from bracket.errors import BracketError
from bracket.standings.rungs import rung_lines, session_rungs
from tests.fakes import FAKE_TRAINER, make_fake_python

pytestmark = pytest.mark.timeout(240)

FULL, RUNG = 40, 24  # a 40-step demo search with a validation split: the 1/2 rung rounds up to step 24
#: (state, rung reached, note, run status, steps trained, training loss) per config, as the loop leaves them
PLACES = [("full", 1, "promoted: 1 of 2 at 1/2, top 1 goes on to full", "done", FULL, 0.3),
          ("stopped", 0, "stopped at 1/2: 3 of 3, top 1 goes on", "paused", RUNG, 0.9),
          ("stopped", 0, "stopped at 1/2: 2 of 3, top 1 goes on", "paused", RUNG, 0.5)]


def _samples(folder, run_id: int, steps: range) -> list[dict]:
    from PIL import Image

    out = []
    for step in steps:
        path = folder / "samples" / f"run{run_id}-{step}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (step * 5 % 256, 40, 90)).save(path)
        out.append({"path": str(path), "step": step, "prompt_index": 0})
    return out


@pytest.fixture
def opened(tmp_path, runs_dir, monkeypatch):
    from bracket.dataset.demo_data import make_demo_dataset
    from bracket.session import HalvingSettings, SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])
    fields = {"dataset": str(make_demo_dataset(tmp_path / "data", count=24)),  # enough images to hold some out
              "trainer_python": str(make_fake_python(tmp_path / "bin")), "train_script": str(FAKE_TRAINER)}
    session = Session.create("demo-cpu", fields, SearchSettings(budget=3, steps=FULL, sample_prompts="a red circle",
                                                                warm_start=False,
                                                                halving=HalvingSettings(eta=2, smallest_rung=0.5)),
                             out_dir=runs_dir, name="hv")
    fill_store(session, len(PLACES), FULL)
    store, ids = session.store, {}
    runs = {r["config_id"]: r for r in store.runs(session.name, with_series=False)}
    for config, (state, rung, note, status, steps, loss) in zip(store.configs(session.name, stage="search"), PLACES):
        store.update_config(config["id"], rung=rung, rung_state=state, rung_note=note,
                            status="done" if state == "full" else "stopped")
        run = runs[config["id"]]
        store.update_run(run["id"], status=status, last_step=steps, pause_step=steps if status == "paused" else None,
                         loss=[[s, loss] for s in range(1, steps + 1)],
                         samples=_samples(session.folder, run["id"], range(8, steps + 1, 8)))
        ids[config["name"]] = run["id"]
    folder = session.folder
    session.close()
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    yield manager, ids
    manager.close()


def test_the_rung_steps_are_where_the_runs_paused(opened):
    manager, ids = opened
    assert rungs.step_rungs(manager).steps == (RUNG, FULL)  # not 20: samples and the validation loss are at 24
    assert rungs.compare_rung_steps(manager, [ids["search-1"], ids["search-0"]]) == [(RUNG, "1/2")]
    assert rungs.rung_steps(rungs.step_rungs(manager), 4 * FULL) == []  # finals' length: no rungs


def test_every_config_that_reached_a_rung_comes_best_there_first(opened):
    manager, ids = opened
    picks = rung_grid.rung_picks(manager)
    assert [(p.index, p.share, p.step, p.configs) for p in picks] == [(0, "1/2", RUNG, 3)]
    assert picks[0].label == "1/2 at step 24: 3 configs"
    ranked = rung_grid.ranked_at_rung(manager, 0)
    # the loss at step 24 ranks them: 0.3 (went on to full), 0.5, 0.9
    assert ranked.run_ids == (ids["search-0"], ids["search-2"], ids["search-1"])
    with pytest.raises(BracketError, match="No run has reached that rung"):
        rung_grid.ranked_at_rung(manager, 1)  # full length is no rung


def test_runs_and_configs_say_where_they_stand_in_the_words_of_status(opened):
    manager, ids = opened
    marks = rungs.run_marks(manager)
    assert marks == {ids["search-0"]: "full", ids["search-1"]: "stopped at 1/2 (paused at step 24)",
                     ids["search-2"]: "stopped at 1/2 (paused at step 24)"}
    labels = manager.compare.run_labels()
    assert labels[ids["search-1"]].startswith(f"#{ids['search-1']} search-1 · search · seed 42 · "
                                              "stopped at 1/2 (paused at step 24)")
    board, paused = rungs.board_marks(manager)
    snap = manager.snapshot()
    by_name = {c["name"]: c["id"] for c in snap.configs}
    assert board[by_name["search-1"]] == "stopped at 1/2 (3 of 3, top 1 goes on)"
    assert paused == {ids["search-1"]: "paused at step 24", ids["search-2"]: "paused at step 24"}
    # the trial table's why opens with what `status` prints of the config
    status = rung_lines(list(snap.configs), list(snap.runs), session_rungs(manager.session.settings))
    why = rungs.config_rungs(manager, snap)[by_name["search-2"]].note
    assert why == "stopped at 1/2 (2 of 3, top 1 goes on)"
    assert any(line.strip().startswith("search-2 ") and why in line for line in status)
    promoted = rungs.config_rungs(manager, snap)[by_name["search-0"]].note
    assert promoted == "promoted: 1 of 2 at 1/2, top 1 goes on to full"
