"""Compare's grid headers name only the knobs that apply to each run (issue 43, item 8): a knob
whose condition a run does not meet (the learning rate of an adaptive optimizer) holds no value,
and the header never prints ``learning_rate=None``."""

from __future__ import annotations

from bracket.app.manager import SessionManager
from bracket.session import SearchSettings, Session
from tests.fakes.filled_store import fill_store
from tests.fakes.halving_rows import _samples
from ui import compare_tab
from ui.render import params_text

CONFIGS = [{"optimizer_type": "AdamW", "learning_rate": 1e-3, "lr_scheduler": "constant", "lr_warmup_steps": 0,
            "batch_size": 16},
           {"optimizer_type": "Adagrad", "learning_rate": None, "lr_scheduler": "constant", "lr_warmup_steps": 0,
            "batch_size": 16}]


def test_a_knob_that_does_not_apply_is_not_printed_as_none(runs_dir, demo_fields):
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=4, steps=20, sample_prompts="a --d 1",
                                                                     warm_start=False), out_dir=runs_dir, name="h")
    fill_store(session, 2, 20)
    runs = [r for r in session.store.runs(session.name, with_series=False) if r["kind"] != "setup"]
    for run, params in zip(runs, CONFIGS):  # as a search of a conditional space stores them
        session.store.update_run(run["id"], params=params, samples=_samples(session.folder, run["id"], (0, 20)))
    folder = session.folder
    session.close()
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    html, *_ = compare_tab.show_grid(manager, [r["id"] for r in runs])
    assert "None" not in html, html
    assert "optimizer_type=AdamW" in html and "learning_rate=0.001" in html and "optimizer_type=Adagrad" in html
    assert params_text(CONFIGS[1]) == "optimizer_type=Adagrad, lr_scheduler=constant, lr_warmup_steps=0, batch_size=16"
    manager.close()
