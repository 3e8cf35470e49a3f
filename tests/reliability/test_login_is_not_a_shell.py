"""A login to the web app must not mean a shell (issue 16, item 2).

``python app.py`` builds its session holder so that a search started from the web form runs
only the trainer python, training script and trainer folder configured in ``.env``/settings.
A form that names another program (here: the fake python and the fake trainer, standing for
an uploaded script) is refused by the engine — whatever the browser sends — and nothing is
launched or written. ``--allow-custom-executables`` (the person starting the app) lifts it.
"""

from __future__ import annotations

import re

import pytest

from bracket.fields import FieldSpec
from bracket.registry import presets_by_family
from tests.reliability.rel_helpers import app_manager, inline_error, launches

pytestmark = pytest.mark.timeout(240)


def _start(manager, fields):
    from ui.setup_tab import start_search

    return start_search(manager, preset_id="demo-cpu", fields=fields, budget=2, steps=3, seeds=1,
                        prompts="a red circle --d 1")


def test_the_web_form_cannot_run_a_program_that_was_not_configured(monkeypatch, fast_fields, runs_dir,
                                                                    argv_log):
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    manager = app_manager(monkeypatch)
    default_script = {k: v for k, v in fast_fields.items() if k != "train_script"}
    for fields, named in ((default_script, ["Trainer python"]), (fast_fields, ["Trainer python", "Training script"])):
        message = inline_error(_start(manager, fields))
        assert "is not the configured one" in message, message
        assert [n for n in ("Trainer python", "Training script") if n in message] == named, message
        assert "--allow-custom-executables" in message
    assert launches(argv_log) == [] and list(runs_dir.iterdir()) == []

    # the configured python (BRACKET_DEMO_PYTHON) is accepted; a typed script still is not
    monkeypatch.setenv("BRACKET_DEMO_PYTHON", fast_fields["trainer_python"])
    assert re.search("Training script: .* is not the configured one", inline_error(_start(manager, fast_fields)))
    assert launches(argv_log) == [] and list(runs_dir.iterdir()) == []


def test_the_person_starting_the_app_may_allow_custom_programs(monkeypatch, fast_fields, runs_dir, argv_log):
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    manager = app_manager(monkeypatch, "--allow-custom-executables")
    _start(manager, fast_fields)
    assert manager.session.wait(120) and manager.session.snapshot().status == "finished"
    assert len(launches(argv_log)) == 2
    manager.close()


def test_every_program_field_of_every_preset_is_marked_executable():
    """And every field that names code a trainer loads (torchtune's recipe config, issue 35):
    the other config-like files are written by Bracket (Axolotl YAML with ``safe_dump``, dataset
    TOMLs rewritten with ``tomli_w``, the Unsloth driver's JSON)."""
    programs = {"trainer_python", "train_script", "sd_scripts_dir", "musubi_dir", "ai_toolkit_dir", "torchtune_config"}
    for preset in [p for group in presets_by_family().values() for p in group]:
        for spec in preset.fields:
            assert isinstance(spec, FieldSpec)
            assert spec.executable == (spec.name in programs), (preset.id, spec.name)
