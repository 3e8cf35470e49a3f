"""Windows paths: the trainer venv's python, dataset TOML, prompt files and export's train.ps1 (issue 27).

Run on Linux with Windows-style paths (``PureWindowsPath`` and strings with drive letters,
backslashes, spaces, quotes and non-ASCII letters); nothing here ran on Windows. The
PowerShell launcher is read back by the rules PowerShell and the C runtime apply
(``tests/reliability/ps_parse.py``), since no PowerShell is installed here.
"""

from __future__ import annotations

import tomllib
from pathlib import Path, PureWindowsPath
from types import SimpleNamespace

import pytest

from bracket import settings
from bracket.dataset.runtime import derive_run_toml
from bracket.report.powershell import powershell_script, ps_quote, windows_argument, write_powershell_script
from bracket.trainer.prompts import SamplePrompt, format_prompt_line, parse_prompt_line, write_prompt_file
from tests.conftest import make_caption_folder
from tests.reliability.ps_parse import crt_split, ps_literals, read_launcher

WIN_PATHS = [
    r"C:\Users\Zoë\Bracket app\vendor\sd-scripts\.venv\Scripts\python.exe",
    r"D:\data sets\my style (v2)\img",
    r"\\nas\share\lora data\été",
    "C:\\out dir\\",  # a trailing backslash: the classic command-line quoting trap
]
HOSTILE = ["", " ", 'say "hi"', "it's", "‘curly’ ‚low‛", "$HOME `whoami` $(calc)", "a; Remove-Item -Recurse C:\\",
           "%PATH% ^& !x! | > <", "new\nline", "tab\there", "back\\\\\"slash", "\\\\server\\x\\", "#not a comment",
           "') ; calc ; ('"]


def test_the_venv_python_is_scripts_python_exe_on_windows(monkeypatch):
    venv = PureWindowsPath(r"C:\Users\Zoë\Bracket app\vendor\sd-scripts\.venv")
    assert settings.venv_python(venv, os_name="nt") == venv / "Scripts" / "python.exe"
    assert str(settings.venv_python(venv, os_name="nt")).endswith(r"\.venv\Scripts\python.exe")
    assert settings.venv_python(Path("/x/.venv"), os_name="posix") == Path("/x/.venv/bin/python")
    # every default trainer python follows it: sd-scripts, musubi-tuner and the LLM trainers
    monkeypatch.setattr(settings, "os", SimpleNamespace(name="nt", environ=settings.os.environ))
    for name in ("BRACKET_SD_SCRIPTS_PYTHON", "BRACKET_MUSUBI_PYTHON"):
        monkeypatch.delenv(name, raising=False)
    current = settings.get_settings()
    assert current.sd_scripts_python.parts[-4:] == ("sd-scripts", ".venv", "Scripts", "python.exe")
    assert current.musubi_python.parts[-3:] == (".venv", "Scripts", "python.exe")
    from bracket.trainer.llm.base import _vendor_venv_python

    assert Path(_vendor_venv_python("axolotl")).parts[-4:] == ("axolotl", ".venv", "Scripts", "python.exe")


@pytest.mark.parametrize("style", ["sd-scripts", "musubi"])
def test_dataset_toml_keeps_windows_paths_exactly(tmp_path, style):
    """Backslashes, spaces, quotes and accents survive the generated TOML (tomli_w escapes, never an f-string)."""
    folder = make_caption_folder(tmp_path / "Données d'été 🎨" / "back\\slash dir")
    dest = derive_run_toml(folder, tmp_path / "run" / "dataset.toml", style=style,
                           per_dataset={"control_directory": WIN_PATHS[1], "note": WIN_PATHS[2]},
                           general={"resolution": 512})
    document = tomllib.loads(dest.read_text(encoding="utf-8"))
    entry = document["datasets"][0]
    assert entry["control_directory"] == WIN_PATHS[1] and entry["note"] == WIN_PATHS[2]
    if style == "sd-scripts":
        assert entry["subsets"][0]["image_dir"] == str(folder.resolve())
    else:
        assert entry["image_directory"] == str(folder.resolve())


def test_prompt_files_keep_windows_control_image_paths(tmp_path):
    image = PureWindowsPath(r"C:\Users\Zoë\edit pairs\control\001 (a).png")
    prompt = SamplePrompt(text="a red fox, 'quoted' \"both\"", seed=7, control_images=(str(image),))
    line = format_prompt_line(prompt)
    assert f"--ci {image}" in line
    parsed = parse_prompt_line(line, default_seed=0)
    assert parsed.control_images == (str(image),) and parsed.text == prompt.text
    path = tmp_path / "prompts.txt"
    write_prompt_file(path, [prompt])
    assert str(image) in path.read_text(encoding="utf-8")


def test_ps_quote_makes_every_value_a_literal():
    for value in [*WIN_PATHS, *HOSTILE]:
        assert ps_literals(ps_quote(value)) == [("", value)]
    assert ps_quote("it's") == "'it''s'" and ps_quote("‘x’") == "'‘‘x’’'"


def test_windows_argument_quoting_round_trips_by_the_c_runtime_rules():
    arguments = [*WIN_PATHS, *HOSTILE]
    line = " ".join(windows_argument(a) for a in arguments)
    assert crt_split(line) == arguments
    assert windows_argument("C:\\out dir\\") == '"C:\\out dir\\\\"'
    assert windows_argument("") == '""'


def test_train_ps1_runs_exactly_the_command_in_the_folder_with_the_environment(tmp_path):
    command = [WIN_PATHS[0], "-m", "accelerate.commands.launch", "--num_cpu_threads_per_process", "1",
               r"C:\Program Files\sd-scripts\sdxl_train_network.py", "--dataset_config", r"D:\runs\s 1\dataset.toml",
               "--output_dir", WIN_PATHS[3], *HOSTILE]
    cwd = PureWindowsPath(r"D:\runs\Zoë's run [1]\trial 3")
    env = {"PYTHONUNBUFFERED": "1", "HF_HOME": r"E:\hf cache\'q'", "ODD NAME": "skipped", "X": "$(calc)"}
    path = write_powershell_script(tmp_path / "train.ps1", command, cwd, env,
                                   header=["Bracket export of session 'it''s'", "line\nbreak # in a header"],
                                   dropped_env=["HF_TOKEN"])
    launcher = read_launcher(path)
    assert launcher["program"] == command[0]
    assert launcher["arguments"] == command[1:]
    assert launcher["cwd"] == str(cwd)
    assert launcher["env"] == {"PYTHONUNBUFFERED": "1", "HF_HOME": env["HF_HOME"], "X": "$(calc)"}
    text = launcher["text"]
    assert "Set-Location -LiteralPath" in text and "[System.Diagnostics.Process]::Start($Start)" in text
    assert "return $Process.ExitCode" in text and "exit (Invoke-Step $Program $Arguments)" in text
    assert "$ErrorActionPreference = 'Stop'" in text
    assert "# HF_TOKEN is not written here" in text and "\r" not in text
    # a newline in the header cannot end its comment and start a command
    assert all(line.startswith("#") for line in text.splitlines()[:2])


def test_powershell_script_has_no_secret_values():
    from bracket.report.export import safe_env

    env, dropped = safe_env({"HF_TOKEN": "hf_secret", "DB": "postgresql://u:pw@h/db", "NEW": "y"}, base={})
    text = powershell_script(["python.exe", "train.py"], PureWindowsPath(r"C:\r"), env, dropped_env=dropped)
    assert "hf_secret" not in text and "pw@" not in text and "$env:NEW = 'y'" in text
