"""Issue 19: a session's own space — batch sizes the trainer fixes, warm-ups relative to the run.

A session narrows the trainer's space with the person's bounds; batch-size choices turn
the fixed ``batch_size`` into a searched knob. Each run's config is validated against
that session space (``Trainer.config_from_dict(knobs, space)``), not the trainer's own,
and a config that is refused leaves no pending run behind. The sd-scripts and LLM cases
live with their adapters' tests (``test_batch_size_choices_*``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from PIL import Image

from bracket.errors import SearchSpaceError
from bracket.registry import get_preset
from bracket.session import SearchSettings, Session
from bracket.trainer.base import RunRequest


def _musubi_trainer(root: Path, dataset: Path):
    preset = get_preset("zimage-lora")
    values = {"dataset": str(dataset), "vram_gb": "80"}
    for spec in preset.fields:
        if spec.name == "musubi_dir":
            (root / "musubi" / "src" / "musubi_tuner").mkdir(parents=True, exist_ok=True)
            values[spec.name] = str(root / "musubi")
        elif spec.name == "trainer_python":
            (root / "python").write_text("#!/bin/sh\n", encoding="utf-8")
            (root / "python").chmod(0o755)
            values[spec.name] = str(root / "python")
        elif spec.kind in ("file", "path") and spec.name not in values and spec.required:
            path = root / "models" / f"{spec.name}.safetensors"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
            values[spec.name] = str(path)
    return preset.build_trainer(values)


def test_musubi_trains_a_batch_size_choice(tmp_path):
    dataset = tmp_path / "images"
    dataset.mkdir()
    for n in range(2):
        Image.new("RGB", (32, 32), (40 * n, 0, 0)).save(dataset / f"img{n}.png")
        (dataset / f"img{n}.txt").write_text(f"caption {n}", encoding="utf-8")
    trainer = _musubi_trainer(tmp_path, dataset)
    space = trainer.session_space({"batch_size": [1, 2]})
    knobs = {**trainer.baseline_config().knobs, "batch_size": 2}
    with pytest.raises(SearchSpaceError, match="fixed at 1, got 2"):
        trainer.config_from_dict(knobs)  # the trainer's own space
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=trainer.config_from_dict(knobs, space),
                                          dataset=dataset, max_steps=20, seed=1))
    toml = Path(spec.cmd[spec.cmd.index("--dataset_config") + 1])
    assert tomllib.loads(toml.read_text(encoding="utf-8"))["general"]["batch_size"] == 2


def _settings(**values) -> SearchSettings:
    return SearchSettings(**{"budget": 3, "steps": 6, "seeds": 1, "sample_prompts": "a red circle --d 7", **values})


def test_demo_session_searches_batch_sizes_the_preset_fixes(demo_fields, runs_dir):
    """The demo preset fixes batch size 16; with choices 4 and 8 the warm start moves to the
    nearest choice (8) instead of being lost, and every run trains at a chosen size, none
    left pending."""
    session = Session.create("demo-cpu", demo_fields, _settings(bounds={"batch_size": [4, 8]}), out_dir=runs_dir)
    assert any("batch_size 16 moved to 8" in note for note in session.parts.notes)
    assert not any("dropped" in note for note in session.parts.notes)
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name, with_series=False) if r["stage"] == "search"]
    assert len(runs) == 3 and {r["status"] for r in runs} == {"done"}
    assert {r["params"]["batch_size"] for r in runs} <= {4, 8}
    assert runs[0]["kind"] == "baseline" and runs[0]["params"]["batch_size"] == 8


def test_a_refused_config_leaves_no_pending_run(demo_fields, runs_dir):
    session = Session.create("demo-cpu", demo_fields, _settings(), out_dir=runs_dir)
    bad = {"id": 0, "name": "bad", "kind": "search", "params": {**session.trainer.baseline_config().knobs,
                                                                 "batch_size": 3}}
    with pytest.raises(SearchSpaceError, match="batch_size"):
        session.pipeline.train(bad, 0)
    assert session.store.runs(session.name, with_series=False) == []


def test_warm_up_is_limited_to_a_share_of_the_run_and_curated_warm_ups_are_clamped(demo_fields, runs_dir):
    from bracket.trainer.base import WARMUP_SHARE

    session = Session.create("demo-cpu", demo_fields, _settings(steps=12), out_dir=runs_dir)
    assert session.space["lr_warmup_steps"].high == 0 == int(WARMUP_SHARE * 12) // 5 * 5
    assert session.parts.notes[0].startswith("no warm-up: 25% of the 12-step runs is less than the warm-up knob's")
    waiting = session.store.study(session.name).get_trials(deepcopy=False)
    assert len(waiting) == 4 and all(t.system_attrs["fixed_params"]["lr_warmup_steps"] == 0 for t in waiting)
    assert any("lr_warmup_steps 5 clamped to 0" in n for n in session.parts.notes)
    row = session.store.get_session(session.name)
    assert row["settings"]["warmup_share"] == WARMUP_SHARE
    long = Session.create("demo-cpu", demo_fields, _settings(steps=200), out_dir=runs_dir, name="long")
    assert long.space["lr_warmup_steps"].high == 20 and not any("warm-up searched" in n for n in long.parts.notes)


def test_a_new_session_starts_from_the_best_configs_of_an_earlier_one(demo_fields, runs_dir):
    from bracket.errors import BracketError
    from bracket.session.past import past_sessions

    first = Session.create("demo-cpu", demo_fields, _settings(budget=3), out_dir=runs_dir, name="first")
    assert first.run() == "finished"
    done = sorted((c for c in first.store.configs("first", stage="search")), key=lambda c: c["value"])
    listed = past_sessions(runs_dir, "demo-cpu")
    assert [s.name for s in listed] == ["first"] and "3 configs" in listed[0].label
    assert past_sessions(runs_dir, "sdxl-lora") == []
    second = Session.create("demo-cpu", demo_fields, _settings(warm_start_from=[str(first.folder)]),
                            out_dir=runs_dir, name="second")
    queued = second.store.study("second").get_trials(deepcopy=False)
    names = [t.user_attrs["name"] for t in queued]
    assert names[:3] == ["baseline", "past-1-first", "past-2-first"] and len(names) == 6
    assert queued[1].system_attrs["fixed_params"] == second.space.searched_params(done[0]["params"])
    assert queued[1].user_attrs["kind"] == "past" and "session first" in queued[1].user_attrs["source"]
    # kind past: planned as its own phase, spends the search budget (3 = baseline + 2 past), labelled
    assert second.search_plan == [("baseline", 1), ("past", 2)]
    assert second.run() == "finished" and second.spent_runs() == 3
    assert [c["kind"] for c in second.store.configs("second", stage="search")] == ["baseline", "past", "past"]
    from bracket.session.snapshot import phase_label
    assert phase_label(second, second.store.configs("second", stage="search")[2]) == "past 2/2"
    with pytest.raises(BracketError, match="not a local Bracket session folder"):
        Session.create("demo-cpu", demo_fields, _settings(warm_start_from=[str(runs_dir)]), out_dir=runs_dir)
