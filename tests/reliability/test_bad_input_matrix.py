"""The bad-input matrix: every mistake a person can make at the start of a search, CLI and UI alike.

Each :class:`Case` is one mistake. Through the CLI (``bracket.cli.main``, in this process) it
must give exit code 2 and one line ``error: …`` that says what to do; through the Setup tab's
start handler (``ui.setup_tab.start_search``) the same message inline (``⚠``). Either way
nothing is launched (the fake python logs every launch) and nothing is written to the runs
folder. ``tests/cli/test_cli.py`` has the first ~20 CLI cases; this table is the full set.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bracket.app.form_values import weight_name
from bracket.app.manager import SessionManager
from bracket.cli import main
from bracket.errors import BracketError
from bracket.judge.combine import DEFAULT_WEIGHTS, JUDGE_NAMES
from tests.reliability.rel_helpers import cli_args, inline_error, launches

pytestmark = pytest.mark.timeout(300)

#: form values of the Setup tab that make a valid search (the CLI has the same as defaults)
FORM = {"budget": 2, "steps": 4, "seeds": 1, "prompts": "a red circle --d 1", "sample_every": None,
        "algorithm": "tpe", "lr_min": "", "lr_max": "", "batch_sizes": ""}
CLI_FLAGS = {"budget": "--budget", "steps": "--steps", "seeds": "--seeds", "prompts": "--prompts",
             "sample_every": "--sample-every", "lr_min": "--lr-min", "lr_max": "--lr-max",
             "batch_sizes": "--batch-sizes", "name": "--name", "storage": "--storage", "timeout": "--timeout"}


def _file(tmp: Path, name: str, text: str = "x") -> str:
    path = tmp / "inputs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _folder(tmp: Path, name: str) -> Path:
    path = tmp / "inputs" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _toml(tmp: Path, body: str) -> str:
    return _file(tmp, "dataset.toml", body)


def _no_captions(tmp: Path) -> str:
    from tests.conftest import make_caption_folder

    folder = make_caption_folder(_folder(tmp, "uncaptioned"), 2)
    for caption in folder.glob("*.txt"):
        caption.unlink()
    return str(folder)


def _fake_images(tmp: Path) -> str:
    folder = _folder(tmp, "not-images")
    for index in range(2):
        (folder / f"{index}.png").write_text("this is not a PNG", encoding="utf-8")
        (folder / f"{index}.txt").write_text("a caption", encoding="utf-8")
    return str(folder)


MALFORMED_TOML = '[general]\nresolution = 32\n\n[[datasets]]\n  [[datasets.subsets]]\n  image_dir = "unterminated\n'


@dataclass(frozen=True)
class Case:
    """One bad input: what to change, and a piece of the message that must come back."""

    id: str
    message: str
    #: field overrides, built in the test's tmp folder
    fields: Callable[[Path], dict[str, str]] = lambda tmp: {}
    #: search-setting overrides (Setup-tab names; the CLI flag is in CLI_FLAGS)
    settings: dict[str, object] = field(default_factory=dict)
    preset: str = "demo-cpu"
    #: extra CLI arguments (for mistakes only the command line can make)
    cli_extra: tuple[str, ...] = ()
    cli: bool = True
    ui: bool = True
    weights: dict[str, object] | None = None


CASES = [
    Case("unknown preset", "Unknown preset 'sdxl-typo'", preset="sdxl-typo"),
    Case("dataset empty", "is required; fill it in", lambda t: {"dataset": ""}),
    Case("trainer python empty", "is required; fill it in", lambda t: {"trainer_python": "  "}),
    Case("train script empty", "is required; fill it in", lambda t: {"train_script": ""}),
    Case("dataset missing", "does not exist", lambda t: {"dataset": str(t / "no" / "such" / "set")}),
    Case("dataset is a text file", "not a dataset TOML", lambda t: {"dataset": _file(t, "notes.txt", "hello")}),
    Case("dataset TOML is a folder", "dataset.toml", lambda t: {"dataset": str(_folder(t, "dataset.toml"))}),
    Case("dataset TOML malformed", "line 6", lambda t: {"dataset": _toml(t, MALFORMED_TOML)}),
    Case("dataset TOML names a missing folder", "does not exist",
         lambda t: {"dataset": _toml(t, f'[[datasets]]\n[[datasets.subsets]]\nimage_dir = "{t}/gone"\n')}),
    Case("dataset folder without images", "holds no images", lambda t: {"dataset": str(_folder(t, "empty"))}),
    Case("dataset without captions", "caption", lambda t: {"dataset": _no_captions(t)}),
    Case("dataset images are not images", "are not images", lambda t: {"dataset": _fake_images(t)}),
    Case("train script missing", "does not exist", lambda t: {"train_script": str(t / "train.py")}),
    Case("train script is a folder", "is a folder; give the file",
         lambda t: {"train_script": str(_folder(t, "script-dir"))}),
    Case("trainer python missing", "does not exist", lambda t: {"trainer_python": str(t / "bin" / "python9")}),
    Case("trainer python is a folder", "is a folder; give the file",
         lambda t: {"trainer_python": str(_folder(t, "python-dir"))}),
    Case("resolution not a number", "must be a whole number", lambda t: {"resolution": "big"}),
    Case("budget 0", "budget must be at least 1", settings={"budget": 0}),
    Case("budget negative", "budget must be at least 1", settings={"budget": -5}),
    Case("budget huge", "extra zero", settings={"budget": 10**9}),
    Case("budget not a number", "many", settings={"budget": "many"}),
    Case("budget fractional", "2.5", settings={"budget": "2.5"}),
    Case("steps 0", "steps must be at least 1", settings={"steps": 0}),
    Case("steps huge", "extra zero", settings={"steps": 10**12}),
    Case("steps not a number", "ten", settings={"steps": "ten"}),
    Case("seeds 0", "seeds must be at least 1", settings={"seeds": 0}),
    Case("seeds negative", "seeds must be at least 1", settings={"seeds": -1}),
    Case("seeds above budget", "smaller than seeds per config", settings={"budget": 2, "seeds": 3}),
    Case("LR bounds reversed", "swap", settings={"lr_min": "1e-2", "lr_max": "1e-5"}),
    Case("LR min zero", "positive", settings={"lr_min": "0"}),
    Case("LR max negative", "positive", settings={"lr_max": "-0.0001"}),
    Case("LR outside the trainer's range", "learning_rate", settings={"lr_min": "5", "lr_max": "9"}),
    Case("batch sizes not numbers", "whole numbers separated by commas", settings={"batch_sizes": "a,b"}),
    Case("sample every negative", "sample every N steps must be a positive", settings={"sample_every": -5}),
    Case("prompt with unknown option", "unknown option --zz", settings={"prompts": "a cat --zz 3"}),
    Case("prompt with a bad option value", "--d", settings={"prompts": "a cat --d seven"}),
    Case("weights all 0", "weights are 0", weights={name: 0.0 for name in JUDGE_NAMES}),
    Case("weight negative", "negative", weights={**DEFAULT_WEIGHTS, "human": -1.0}),
    Case("weights 0 for every judge that can score here", "every judge that can score this session weighs 0",
         weights={**DEFAULT_WEIGHTS, "loss": 0.0, "human": 0.0}),  # vlm without a server, LLM judges
    Case("session name escapes the runs folder", "may only use letters", settings={"name": "../escape"}),
    Case("session name with shell characters", "may only use letters", settings={"name": "x; rm -rf ~"}),
    Case("session name starting with a dot", "start with a letter or digit", settings={"name": ".hidden"}),
    Case("session name too long", "at most 121 characters", settings={"name": "n" * 200}),
    Case("storage URL malformed", "is malformed", settings={"storage": "not a url"}),
    Case("storage URL unreachable", "Cannot open the store",
         settings={"storage": "postgresql+psycopg://bracket:hunter2@127.0.0.1:1/bracket"}),
    Case("unknown --set field", "Unknown field(s) colour", lambda t: {"colour": "red"}, ui=False),
    Case("--set without =", "is malformed; write FIELD=VALUE", cli_extra=("--set", "dataset"), ui=False),
    Case("--bound without =", "write KNOB=MIN:MAX or KNOB=A,B (e.g. --bound learning_rate=1e-5:1e-3)",
         cli_extra=("--bound", "learning_rate"), ui=False),  # it said "e.g. --bound dataset=/data/set"
    Case("timeout 0", "trial timeout must be a positive", settings={"timeout": 0}, ui=False),
    Case("weights not a number", "must be a number", cli_extra=("--weights", "loss=lots"), ui=False),
    Case("output folder is a file", "is not writable", settings={"out_is_file": True}, ui=False),
    Case("VLM URL without a model", "needs a model name", settings={"vlm_url": "http://127.0.0.1:1/v1"}, cli=False),
    # issue 16, item 12
    Case("seed beyond 64 bits", "seed must be a whole number from 0", cli_extra=("--seed", str(2**64 + 5)),
         ui=False),
    Case("seed negative", "seed must be a whole number from 0", cli_extra=("--seed", "-1"), ui=False),
    Case("resolution 0", "Resolution must be from 8 to 512", lambda t: {"resolution": "0"}),
    Case("resolution negative", "Resolution must be from 8 to 512", lambda t: {"resolution": "-32"}),
    Case("resolution huge", "Resolution must be from 8 to 512", lambda t: {"resolution": "1000000000"}),
    Case("LR bound nan", "must be numbers", cli_extra=("--bound", "learning_rate=nan:1"), ui=False),
    Case("LR bound not a range", "write learning_rate=MIN:MAX", cli_extra=("--bound", "learning_rate=abc"),
         ui=False),
    Case("LR bound one number", "V:V to lock", cli_extra=("--bound", "learning_rate=1e-4"), ui=False),
    Case("batch size 0", "positive whole numbers", settings={"batch_sizes": "0"}),
    Case("batch size negative", "positive whole numbers", settings={"batch_sizes": "-1"}),
    Case("unknown judge in the weights", "judge weight 'foo'", cli_extra=("--weights", "foo=1"), ui=False),
    Case("prompt file missing", "no such file", settings={"prompts": "/nonexistent/file"}, ui=False),
    Case("too many prompts", "More than 64 sample prompts",
         settings={"prompts": "\n".join(f"prompt {i} --d {i}" for i in range(500))}),
    Case("prompt too long", "characters long", settings={"prompts": "a " * 60_000}),
    Case("prompt size absurd", "--w 100000 is outside", settings={"prompts": "a cat --w 100000 --h 64"}),
    Case("prompt seed beyond 32 bits", "--d 18446744073709551621 is outside",
         settings={"prompts": f"a cat --d {2**64 + 5}"}),
    Case("bound for an unknown knob", "this trainer has no such knob", cli_extra=("--bound", "foo=1:2"), ui=False),
    Case("dataset path too long", "give a shorter path", lambda t: {"dataset": str(t / ("d" * 300))}),
    Case("trainer python path too long", "give a shorter path",
         lambda t: {"trainer_python": str(t / ("p" * 300) / "python")}),
    Case("warm start from a missing session", "not a local Bracket session folder",
         cli_extra=("--warm-start-from", "/nonexistent/session"), ui=False),
]
assert len({c.id for c in CASES}) == len(CASES) >= 30


def _unreadable_dataset_case(tmp: Path, monkeypatch, fields: dict[str, str]) -> None:
    """os.access says the dataset folder cannot be read (root ignores chmod)."""
    real = os.access
    folder = Path(fields["dataset"]).resolve()
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if Path(p).resolve() == folder
                        else real(p, mode, *a, **k))


def _cli_command(case: Case, fields: dict[str, str], runs_dir: Path, tmp: Path) -> list[str]:
    args = ["run", "--preset", case.preset, *cli_args(fields)]
    values = {"budget": FORM["budget"], "steps": FORM["steps"], "seeds": FORM["seeds"], "prompts": FORM["prompts"],
              **case.settings}
    out = runs_dir
    for key, value in values.items():
        if key == "out_is_file":
            out = Path(_file(tmp, "runs-file")) / "runs"
        else:
            args += [CLI_FLAGS[key], str(value)]
    if case.weights is not None:
        args += ["--weights", ",".join(f"{k}={v}" for k, v in case.weights.items())]
    return [*args, *case.cli_extra, "--out", str(out), "--quiet"]


def _run_cli(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors (e.g. "invalid int value")
        code = exit_.code
    return code, capsys.readouterr().err


def _space_table(preset: str, lr_min: str, lr_max: str, batch_sizes: str) -> list[dict[str, str]] | None:
    """The Setup tab's search-space table with the LR and batch-size cells typed in (what the
    CLI's --lr-min, --lr-max and --batch-sizes are in the app); None for an unknown preset."""
    from bracket.app.space_editor import preset_editor_rows

    try:
        rows, _ = preset_editor_rows(preset, {}, {}, steps=FORM["steps"])
    except BracketError:
        return None
    for row in rows:
        if row["knob"] == "learning_rate":
            row["min"], row["max"] = lr_min or row["min"], lr_max or row["max"]
        elif row["knob"] == "batch_size" and batch_sizes:
            row["choices"] = batch_sizes
    return rows


def _ui_start(case: Case, fields: dict[str, str], runs_dir: Path):
    from ui.setup_tab import start_search

    settings = {**FORM, **case.settings}
    manager = SessionManager(runs_dir, storage_url=settings.pop("storage", None), allow_custom_executables=True)
    weights = case.weights if case.weights is not None else DEFAULT_WEIGHTS
    vlm_url = settings.pop("vlm_url", "")
    name = settings.pop("name", "")
    space = _space_table(case.preset, *(str(settings.pop(k)) for k in ("lr_min", "lr_max", "batch_sizes")))
    values = {k: settings[k] for k in FORM if k in settings}
    try:
        return start_search(manager, preset_id=case.preset, fields=fields, **values, space=space,
                            **{weight_name(n): weights[n] for n in JUDGE_NAMES}, vlm_base_url=vlm_url, name=name)
    finally:
        manager.close()


@pytest.mark.parametrize("case", [c for c in CASES if c.cli], ids=lambda c: c.id)
def test_cli_refuses_bad_input_with_exit_2_and_writes_nothing(case, capsys, fast_fields, runs_dir, tmp_path,
                                                             argv_log):
    fields = {**fast_fields, **case.fields(tmp_path)}
    code, err = _run_cli(capsys, _cli_command(case, fields, runs_dir, tmp_path))
    assert code == 2, err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert case.message in err, err
    assert "Traceback" not in err and "hunter2" not in err
    assert launches(argv_log) == [], "nothing may be launched"
    assert list(runs_dir.iterdir()) == [], "nothing may be written"


@pytest.mark.parametrize("case", [c for c in CASES if c.ui], ids=lambda c: c.id)
def test_ui_start_refuses_bad_input_with_gr_error_and_writes_nothing(case, fast_fields, runs_dir, tmp_path,
                                                                    argv_log):
    fields = {**fast_fields, **case.fields(tmp_path)}
    message = inline_error(_ui_start(case, fields, runs_dir))
    assert case.message in message, message
    assert "hunter2" not in message
    assert launches(argv_log) == []
    assert list(runs_dir.iterdir()) == []


#: mistakes made with the default demo dataset, missing (a fresh clone): they must not make it
WITH_DEFAULT_DATASET = ("bound for an unknown knob", "resolution not a number", "warm start from a missing session",
                        "weights 0 for every judge that can score here", "budget 0", "LR bounds reversed",
                        "session name escapes the runs folder", "storage URL malformed")


@pytest.mark.parametrize("case", [c for c in CASES if c.id in WITH_DEFAULT_DATASET], ids=lambda c: c.id)
def test_bad_input_with_the_default_demo_dataset_does_not_make_it(case, capsys, fast_fields, runs_dir, tmp_path,
                                                                  argv_log):
    """Seen in review: ``run --preset demo-cpu --bound foo=1:2`` on a fresh clone made
    ``runs/demo-data`` before it refused the bound. Checks first, the dataset once accepted."""
    fields = {k: v for k, v in {**fast_fields, **case.fields(tmp_path)}.items() if k != "dataset"}
    assert not (runs_dir / "demo-data").exists()
    code, err = _run_cli(capsys, _cli_command(case, fields, runs_dir, tmp_path))
    assert code == 2 and case.message in err, err
    assert list(runs_dir.iterdir()) == [], "nothing may be written, the demo dataset neither"
    if case.ui:
        assert case.message in inline_error(_ui_start(case, fields, runs_dir))
        assert list(runs_dir.iterdir()) == []
    assert launches(argv_log) == []


def test_a_refusal_that_needs_the_demo_dataset_removes_it_again(capsys, fast_fields, runs_dir, tmp_path, argv_log):
    """A trainer python without torch is found only with the dataset made: it is removed again."""
    broken = Path(_file(tmp_path, "python", "#!/bin/sh\necho 'ModuleNotFoundError: torch' >&2\nexit 1\n"))
    broken.chmod(0o755)
    fields = {**{k: v for k, v in fast_fields.items() if k != "dataset"}, "trainer_python": str(broken)}
    code, err = _run_cli(capsys, _cli_command(Case("no torch", ""), fields, runs_dir, tmp_path))
    assert code == 2 and "does not run" in err, err
    assert list(runs_dir.iterdir()) == [] and launches(argv_log) == []
    # accepted, the same default dataset is made and the search starts
    code, err = _run_cli(capsys, _cli_command(Case("valid", ""), {k: v for k, v in fast_fields.items()
                                                                   if k != "dataset"}, runs_dir, tmp_path))
    assert code == 0, err
    assert (runs_dir / "demo-data" / "dataset.toml").is_file() and len(launches(argv_log)) == 2


def test_an_unreadable_dataset_is_refused_by_cli_and_ui(capsys, fast_fields, runs_dir, tmp_path, argv_log,
                                                        monkeypatch):
    _unreadable_dataset_case(tmp_path, monkeypatch, fast_fields)
    case = Case("unreadable", "cannot be read")
    code, err = _run_cli(capsys, _cli_command(case, fast_fields, runs_dir, tmp_path))
    assert code == 2 and case.message in err and len(err.strip().splitlines()) == 1, err
    assert "cannot be read" in inline_error(_ui_start(case, fast_fields, runs_dir))
    assert launches(argv_log) == [] and list(runs_dir.iterdir()) == []


def test_the_valid_baseline_of_the_matrix_does_start(capsys, fast_fields, runs_dir, tmp_path, argv_log):
    """The table's cases fail because of their one mistake: the unchanged inputs run."""
    case = Case("valid", "")
    code, err = _run_cli(capsys, _cli_command(case, fast_fields, runs_dir, tmp_path))
    assert code == 0, err
    assert len(launches(argv_log)) == 2


def test_ratings_out_of_range_are_refused_in_the_engine_and_the_ui(fast_fields, runs_dir):
    from bracket.errors import BracketError
    from ui.compare_tab import choose, rate

    manager = SessionManager(runs_dir, allow_custom_executables=True)
    code = main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--name", "rated", "--out", str(runs_dir), "--quiet"])
    assert code == 0
    manager.open(runs_dir / "rated")
    first, second = (r["id"] for r in manager.compare.scorable_runs())
    for value in (0, 11, -1, 10.5, float("nan"), float("inf")):
        assert "from 1 to 10" in inline_error(rate(manager, first, value, None))
    for value in ("abc", None, "", [3]):
        with pytest.raises(BracketError, match="number from 1 to 10"):
            manager.compare.rate(first, value)
    assert "not part of session" in inline_error(rate(manager, 999, 5, None))
    assert "one of left, right, tie" in inline_error(choose(manager, [first, second], "both"))
    assert "compared with itself" in inline_error(choose(manager, [first, first], "left"))
    assert manager.compare.ratings() == [] and manager.compare.comparisons() == []
    rate(manager, first, 7, None)
    assert [r["value"] for r in manager.compare.ratings()] == [7.0]
    manager.close()


def test_presets_into_a_closed_pipe_ends_quietly():
    """``python -m bracket presets | head``: the reader is gone before Bracket writes (a pipe whose
    read end is already closed, so the write fails every time, not only when head is quick)."""
    import subprocess
    import sys

    from tests.reliability.rel_helpers import ROOT

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "bracket", "presets"], cwd=ROOT, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode == 0, done.stderr


@pytest.mark.parametrize("text", ["not json {", "[1, 2]", '{"preset_id": "demo-cpu"}'])
def test_warm_start_from_a_damaged_session_file_is_one_error_line(text, capsys, fast_fields, runs_dir, tmp_path,
                                                                    argv_log):
    """Seen in review: a session.json that is not JSON (or not an object) beside a bracket.db
    gave a traceback (JSONDecodeError, AttributeError) instead of an ``error:`` line."""
    past = _folder(tmp_path, "damaged-past")
    (past / "session.json").write_text(text, encoding="utf-8")
    (past / "bracket.db").write_bytes(b"")
    case = Case("damaged past", "", cli_extra=("--warm-start-from", str(past)))
    code, err = _run_cli(capsys, _cli_command(case, fast_fields, runs_dir, tmp_path))
    assert code == 2 and err.startswith("error: --warm-start-from ") and len(err.strip().splitlines()) == 1, err
    assert "session.json" in err and "damaged" in err and "Traceback" not in err
    assert launches(argv_log) == [] and list(runs_dir.iterdir()) == []
