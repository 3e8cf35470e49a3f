"""Pre-caching runs once per session: a musubi preset with a budget of 6 caches once, resume skips it."""

from __future__ import annotations

import json
import stat

from bracket.session import SearchSettings, Session
from tests.fakes import copy_fake_trainer, make_fake_python
from tests.musubi.helpers import fields_for, image_folder

_CACHE_SCRIPT = """#!/usr/bin/env python3
import json, os, sys
log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache_calls.jsonl")
with open(log, "a") as handle:
    handle.write(json.dumps({"script": os.path.basename(__file__), "argv": sys.argv[1:]}) + "\\n")
"""


def _fake_musubi(root, preset_id: str, dataset):
    fields = fields_for(preset_id, root, dataset)
    scripts = root / "musubi" / "src" / "musubi_tuner"
    for name in ("zimage_cache_latents.py", "zimage_cache_text_encoder_outputs.py"):
        (scripts / name).write_text(_CACHE_SCRIPT)
        (scripts / name).chmod(0o755)
    copy_fake_trainer(scripts / "zimage_train_network.py")
    (scripts / "zimage_train_network.py").chmod(0o755 | stat.S_IXUSR)
    fields["trainer_python"] = str(make_fake_python(root / "fakebin"))
    return fields, scripts / "cache_calls.jsonl"


def test_cache_commands_run_once_for_a_budget_of_six_and_not_again_on_resume(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", "musubi")
    dataset = image_folder(tmp_path)
    fields, calls = _fake_musubi(tmp_path, "zimage-lora", dataset)
    settings = SearchSettings(budget=6, steps=6, seeds=1, sample_prompts="a red fox --d 3")
    session = Session.create("zimage-lora", fields, settings, out_dir=runs_dir, name="cached")
    assert session.run() == "finished", session.error
    lines = [json.loads(line) for line in calls.read_text().splitlines()]
    assert sorted(line["script"] for line in lines) == ["zimage_cache_latents.py",
                                                         "zimage_cache_text_encoder_outputs.py"]
    assert all("--skip_existing" in line["argv"] for line in lines)
    runs = session.store.runs(session.name)
    setup = [r for r in runs if r["kind"] == "setup"]
    assert [r["label"] for r in setup] == ["cache latents", "cache text encoder outputs"]
    assert all(r["status"] == "done" for r in setup)
    trials = [r for r in runs if r["kind"] != "setup"]
    assert len(trials) == 6 and all(r["status"] == "done" for r in trials)
    # every trial's dataset TOML points at the one cache the setup filled
    setup_toml = next(a for line in lines for i, a in enumerate(line["argv"])
                      if line["argv"][i - 1] == "--dataset_config")
    cache_dirs = {json.dumps(_cache_dirs(setup_toml))}
    for run in trials:
        cache_dirs.add(json.dumps(_cache_dirs(f"{run['run_dir']}/dataset.toml")))
    assert len(cache_dirs) == 1
    folder = session.folder
    session.close()

    resumed = Session.open(folder)
    resumed.run()
    assert len(calls.read_text().splitlines()) == 2, "a resumed session does not cache again"
    resumed.close()


def _cache_dirs(toml_path: str) -> list[str]:
    import tomllib
    from pathlib import Path

    document = tomllib.loads(Path(toml_path).read_text())
    return [d["cache_directory"] for d in document["datasets"]]
