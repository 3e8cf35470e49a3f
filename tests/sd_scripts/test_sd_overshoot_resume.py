"""Steps a paused run trained past its rung are kept (issue 46): an SDXL LoRA run the stop reached only
after it had trained on (its state at the rung and a later one saved at its save interval) resumes from
the newest complete state it saved past the rung, not from the rung's, so what it trained past the
rung is training used, not thrown away. Its schedule decays over the run (``cosine``): the run keeps
its full length and the session stops it (a constant one stops itself at the rung:
test_sd_rung_own_limit.py). The inventory-parsing fake sd-scripts saves and resumes states as
``train_network.py`` does (``tests/fakes/fake_state.py``)."""

from __future__ import annotations

import json

import pytest

from bracket.session.launches import up_to
from bracket.session.loop.search_loop import SearchLoop, session_scheduler
from bracket.session.store.rows import RunRow
from tests.fakes import write_fake_plan
from tests.sd_scripts.test_sd_full_halving_cost import STEPS, halving_session

pytestmark = pytest.mark.timeout(180)
# STEPS (12, the shared halving session's length): rung 1/3 at step 4; states saved every 4 steps: at 4 and 8


def test_a_run_that_trained_past_its_rung_resumes_from_its_newest_state_there(
        field_values, image_folder, tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(write_fake_plan(tmp_path / "plan.json", ["stubborn", "ok"])))
    session = halving_session("sdxl-lora", "sdxl_train_network.py", 2, "kept", field_values, image_folder,
                              tmp_path, runs_dir)  # bounded to cosine: the session's stop pauses it
    loop = SearchLoop(session, session_scheduler(session), wait_s=0.1)
    taken = loop.next_work()
    assert taken is not None and taken[0].stop_at == 4
    loop.train(*taken)  # it ignores the pause's SIGTERM and trains on to its end (0 s per step)
    run = session.store.runs(session.name)[0]
    assert run["last_step"] == STEPS
    # the row as the executor records a run the stop reached past its rung but before it was done:
    # paused at its rung, charged every step it trained, its series ending at the rung
    session.store.update_run(run["id"], status="paused", pause_step=4, loss=up_to(run["loss"], 4))
    paused = RunRow.of(session.store.get_run(run["id"]))
    assert (paused.overshoot(), paused.trained_steps()) == (8, STEPS)

    assert session.pipeline.resume(run["id"], steps=STEPS) == "done"
    done = session.store.get_run(run["id"])
    commands = [json.loads(line) for line in (tmp_path / "sd-scripts" / "commands.jsonl").read_text().splitlines()]
    argv = [c for c in commands if c["script"] == "sdxl_train_network.py"][-1]["argv"]
    resumed = argv[argv.index("--resume") + 1]
    assert resumed.endswith("bracket-step00000008-state"), resumed  # the newest state past the rung
    assert [s for s, _ in done["loss"]] == list(range(1, STEPS + 1))  # steps 5-8 from the first launch's files
    assert done["launches"] == 2 and done["restart_steps"] == 4  # only 9-12 are trained again
    assert RunRow.of(done).trained_steps() == STEPS + 4  # charged 16 steps, not 20: 4 of the 8 past the rung kept
    session.close()
