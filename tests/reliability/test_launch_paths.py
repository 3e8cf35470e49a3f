"""Every launch the web app makes runs only configured code (issue 35, items 1 and 3).

Item 1: torchtune's *Recipe config* names a YAML whose ``_component_`` entries torchtune
imports and calls, and Bracket itself writes web-typed text into files under the runs folder
(each sample prompt is a line of ``sample_prompts.txt``): a prompt can make such a file. The
field is an executable one now: the app takes only the configured config or one of
torchtune's built-in names. Item 3: Resume, **+N runs**, finals and promote of a stored
session (made by the CLI with a trainer python nobody configured) are refused like Start.
Issue 36: the same for a stored judge server URL — every launch passes the one check
(``bracket.app.programs.check_launch``) Start passes.
"""

from __future__ import annotations

import json

import pytest
import yaml

from bracket.app.programs import check_launch, check_session_launch
from bracket.errors import BracketError, FieldError
from bracket.registry import get_preset
from bracket.session import SearchSettings, Session
from bracket.trainer.llm.torchtune import BUILTIN_CONFIGS
from bracket.trainer.prompts import parse_prompt_lines, write_prompt_file
from tests.reliability.rel_helpers import app_manager, inline_error, launches

pytestmark = pytest.mark.timeout(240)

ATTACK = 'loss: {_component_: os.system, command: "touch PWNED"} #'


def _torchtune_fields(tmp_path, python) -> dict[str, str]:
    model = tmp_path / "model"
    model.mkdir()
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"instruction": f"say {n}", "input": "", "output": str(n)}) + "\n"
                            for n in range(40)), encoding="utf-8")
    return {"base_model": str(model), "dataset": str(data), "trainer_python": str(python)}


def test_a_prompt_line_makes_a_torchtune_config_and_the_web_form_cannot_name_it(
        monkeypatch, tmp_path, runs_dir, fast_fields, argv_log):
    # the fault is real: the prompt file Bracket writes is YAML that instantiates os.system
    planted = runs_dir / "earlier" / "trials" / "001" / "sample_prompts.txt"
    planted.parent.mkdir(parents=True)
    write_prompt_file(planted, parse_prompt_lines(ATTACK))
    assert yaml.safe_load(planted.read_text(encoding="utf-8"))["loss"]["_component_"] == "os.system"

    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    monkeypatch.setenv("BRACKET_TORCHTUNE_PYTHON", fast_fields["trainer_python"])  # the python is configured
    manager = app_manager(monkeypatch)
    fields = {**_torchtune_fields(tmp_path, fast_fields["trainer_python"]), "torchtune_config": str(planted)}
    before = sorted(p.name for p in runs_dir.iterdir())
    from ui.setup_tab import start_search

    message = inline_error(start_search(manager, preset_id="torchtune-lora", fields=fields, budget=2, steps=3,
                                        seeds=1))
    assert f"Recipe config: {planted} is not the configured one" in message, message
    assert "--allow-custom-executables" in message
    assert launches(argv_log) == [] and sorted(p.name for p in runs_dir.iterdir()) == before


def test_the_recipe_config_takes_the_configured_yaml_or_a_builtin_name(monkeypatch, tmp_path):
    specs = get_preset("torchtune-lora").fields
    spec = next(s for s in specs if s.name == "torchtune_config")
    assert spec.executable and spec.builtin == BUILTIN_CONFIGS
    assert "llama3_2/1B_lora_single_device" in BUILTIN_CONFIGS
    for name in ("llama3_2/1B_lora_single_device", "qwen2/0.5B_lora_single_device"):
        check_launch(specs, {"torchtune_config": name})  # a built-in name: torchtune's own file
    for spelled in ("./llama3_2/1B_lora_single_device", "llama3_2/1B_lora_single_device.yaml", "/tmp/x.yaml"):
        with pytest.raises(FieldError, match="is not the configured one"):
            check_launch(specs, {"torchtune_config": spelled})  # read as a file by `tune run`
    own = tmp_path / "mine.yaml"
    own.write_text("model: {}\n", encoding="utf-8")
    monkeypatch.setenv("BRACKET_TORCHTUNE_CONFIG", str(own))  # the person starting the app chose it
    check_launch(specs, {"torchtune_config": str(own)})
    check_launch(specs, {"torchtune_config": str(tmp_path / "other.yaml")}, allow=True)


def _cli_session(fields, runs_dir) -> Session:
    """A finished session made as ``python -m bracket run`` makes it: any trainer python."""
    settings = SearchSettings(budget=2, steps=3, seeds=1, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", fields, settings, out_dir=runs_dir, name="from-cli")
    assert session.run() == "finished", session.error
    session.close()
    return session


def test_resume_more_runs_finals_and_promote_refuse_a_stored_unconfigured_program(
        monkeypatch, fast_fields, runs_dir, argv_log):
    folder = _cli_session(fast_fields, runs_dir).folder
    trained = len(launches(argv_log))
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    manager = app_manager(monkeypatch)
    for launch in (lambda: manager.resume(folder), lambda: manager.extend(2),
                   lambda: manager.start_job("finals", steps=3, top_k=1, seeds=1),
                   lambda: manager.start_job("promote", steps=3)):
        with pytest.raises(BracketError) as refused:
            manager.open(folder)
            launch()
        message = str(refused.value)
        assert "Session from-cli was made with a trainer program" in message, message
        assert "Trainer python" in message and "python -m bracket resume" in message
        assert manager.job is None and not manager.running
    assert len(launches(argv_log)) == trained, "a refused launch started the trainer"
    assert manager.session.settings.budget == 2, "+N runs changed the budget before it was refused"
    manager.close()

    allowed = app_manager(monkeypatch, "--allow-custom-executables")
    allowed.open(folder)
    session = allowed.extend(1)
    assert session.wait(120) and session.snapshot().status == "finished"
    assert len(launches(argv_log)) == trained + 1
    allowed.close()


def test_every_launch_refuses_a_stored_judge_url_that_is_not_the_configured_one(
        monkeypatch, fast_fields, runs_dir, argv_log):
    """A CLI-made session whose typed judge URL is not ``BRACKET_VLM_BASE_URL``: the app's Resume,
    +N runs, finals and promote refuse it with one line, as Start refuses the URL typed in the form
    (before, only Start checked the URL: the app resumed such a session and judged with it)."""
    monkeypatch.setenv("BRACKET_DEMO_PYTHON", fast_fields["trainer_python"])  # the program is configured
    monkeypatch.setenv("BRACKET_VLM_BASE_URL", "http://127.0.0.1:1234/v1")
    settings = SearchSettings(budget=2, steps=3, seeds=1, sample_prompts="a red circle --d 1",
                              vlm={"base_url": "http://169.254.169.254/v1", "model": "m"})
    configured = {k: v for k, v in fast_fields.items() if k != "train_script"}  # the programs pass
    session = Session.create("demo-cpu", configured, settings, out_dir=runs_dir, name="judged-elsewhere")
    session.close()
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    manager = app_manager(monkeypatch)
    for launch in (lambda: manager.resume(session.folder), lambda: manager.extend(2),
                   lambda: manager.start_job("finals", steps=3, top_k=1, seeds=1),
                   lambda: manager.start_job("promote", steps=3)):
        with pytest.raises(BracketError) as refused:
            manager.open(session.folder)
            launch()
        message = str(refused.value)
        assert "\n" not in message and message.startswith("Session judged-elsewhere was made with a trainer program,"
                                                          " config or judge server that is not the configured one")
        assert "'http://169.254.169.254/v1' is not the configured one (http://127.0.0.1:1234/v1)" in message, message
        assert "python -m bracket resume" in message and "--allow-custom-executables" in message
        assert manager.job is None and not manager.running
    assert launches(argv_log) == [], "a refused launch started the trainer"
    assert manager.session.settings.budget == 2, "+N runs changed the budget before it was refused"
    manager.close()
    stored = Session.open(session.folder, validate=False)
    check_session_launch(stored, allow=True)  # --allow-custom-executables: any judge server
    monkeypatch.setenv("BRACKET_VLM_BASE_URL", "http://169.254.169.254/v1/")  # now the configured one
    check_session_launch(stored)
    stored.store.close()
