"""Unusual but valid input must WORK: unicode and spaces in every path, shell metacharacters in values.

No shell is ever involved: a field value such as ``; rm -rf ~`` or ``$(touch PWNED)`` must reach
the trainer as one literal argument (checked in the fake python's argv log and the fake
trainer's own ``fake_args.json``), land unchanged in the run's dataset TOML and prompt file,
and run nothing. Each case runs a real search through the CLI and through the Setup tab.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from bracket.app.manager import SessionManager
from bracket.cli import main
from tests.conftest import make_caption_folder
from tests.fakes import copy_fake_trainer
from tests.reliability.rel_helpers import cli_args, launches, make_probe_python

pytestmark = pytest.mark.timeout(240)

NASTY = {
    "unicode and spaces": "Données d'été 🎨 ñ/sub dir",
    "shell metacharacters": "x; rm -rf ~ && $(touch PWNED) `touch PWNED` | cat > PWNED \"dq\" 'sq' \\ $HOME *",
}
PROMPT = "a cat $(touch PWNED); rm -rf ~ \"quoted\" 'single' `id` --d 5"


def _inputs(tmp: Path, word: str) -> dict[str, str]:
    """Every path a person types — dataset, trainer python, script — with ``word`` inside it."""
    data = make_caption_folder(tmp / f"data {word}")
    python = make_probe_python(tmp / f"bin {word}")
    script = tmp / f"scripts {word}" / f"train {word.split('/')[0]}.py"
    script.parent.mkdir(parents=True)
    copy_fake_trainer(script)
    script.chmod(0o755)
    return {"dataset": str(data), "trainer_python": str(python), "train_script": str(script)}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A throwaway HOME with a canary, in case anything ever expanded ``~``."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "canary").write_text("still here")
    monkeypatch.setenv("HOME", str(home))
    return home


def _start(via: str, fields: dict[str, str], runs: Path) -> Path:
    if via == "cli":
        code = main(["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "1", "--steps", "3",
                     "--prompts", PROMPT, "--name", "nasty", "--out", str(runs), "--quiet"])
        assert code == 0
        return runs / "nasty"
    from ui.setup_tab import start_search

    manager = SessionManager(runs, allow_custom_executables=True)
    try:
        start_search(manager, preset_id="demo-cpu", fields=fields, budget=1, steps=3, seeds=1, prompts=PROMPT,
                     name="nasty")
        session = manager.session
        assert session.wait(90) and session.snapshot().status == "finished", session.error
        return session.folder
    finally:
        manager.close()


@pytest.mark.parametrize("via", ["cli", "ui"])
@pytest.mark.parametrize("kind", list(NASTY), ids=list(NASTY))
def test_nasty_paths_and_values_reach_the_trainer_literally(kind, via, tmp_path, home, monkeypatch, argv_log):
    word = NASTY[kind]
    fields = _inputs(tmp_path, word)
    monkeypatch.setenv("BRACKET_FAKE_PYTHON_LOG", str(argv_log))
    runs = tmp_path / f"runs {word}"
    monkeypatch.chdir(tmp_path)
    folder = _start(via, fields, runs)

    (argv,) = launches(argv_log)
    assert fields["train_script"] in argv, "the script path is one argument, unchanged"
    run_dir = next((folder / "trials").iterdir())
    output = run_dir / "output"
    assert argv[argv.index("--output_dir") + 1] == str(output)
    got = json.loads((output / "fake_args.json").read_text(encoding="utf-8"))["args"]
    assert got["output_dir"] == str(output) and got["dataset_config"] == str(run_dir / "dataset.toml")
    toml = tomllib.loads((run_dir / "dataset.toml").read_text(encoding="utf-8"))
    assert toml["datasets"][0]["subsets"][0]["image_dir"] == fields["dataset"]
    prompt_file = Path(got["sample_prompts"]).read_text(encoding="utf-8")
    assert "a cat $(touch PWNED); rm -rf ~ \"quoted\" 'single' `id`" in prompt_file
    assert list(output.glob("sample/*.png")), "the run really trained and sampled"
    assert not list(tmp_path.rglob("PWNED")) and not (Path.cwd() / "PWNED").exists(), "nothing was executed"
    assert (home / "canary").read_text() == "still here"
