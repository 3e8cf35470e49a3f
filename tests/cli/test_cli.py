"""The headless CLI: happy path, status/resume, and every bad input exits 2 with one clear line."""

from __future__ import annotations

import pytest

from bracket.cli import main
from bracket.search.configs import NamedConfig
from bracket.search.space import FloatKnob
from bracket.trainer.demo.adapter import DemoLoRA


def _sets(fields: dict[str, str]) -> list[str]:
    args: list[str] = []
    for name, value in fields.items():
        args += ["--set", f"{name}={value}"]
    return args


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_presets_table_lists_every_preset(capsys):
    from bracket.registry import PRESETS

    code, out, _ = run_cli(capsys, "presets")
    assert code == 0
    for preset in PRESETS:
        assert preset.id in out
    assert "pre-cache" in out.splitlines()[0]


def test_run_status_and_resume_happy_path(capsys, demo_fields, runs_dir):
    code, out, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "3",
                             "--steps", "8", "--seeds", "1", "--name", "happy", "--out", str(runs_dir))
    assert code == 0, err
    assert "budget 3 = 3 configs × 1 seed" in out
    assert "finished — 3/3 runs" in out
    assert "earlier session" not in out  # the first search in this folder
    table = [line for line in out.splitlines() if line.strip().startswith(("1 ", "2 ", "3 "))]
    assert len(table) == 3 and all(" done " in line for line in table)
    code, out, _ = run_cli(capsys, "status", str(runs_dir / "happy"))
    assert code == 0 and "finished" in out and "3/3 runs spent" in out
    code, out, _ = run_cli(capsys, "resume", str(runs_dir / "happy"))
    # nothing left to run: no extra run was launched, and it says so (seen: "recovering")
    assert code == 0 and "has already trained its whole budget (3/3 runs): nothing to resume" in out, out
    assert "--more-runs N" in out and "recovering" not in out
    assert len(list((runs_dir / "happy" / "trials").iterdir())) == 3
    # the next search of the preset there is told it could start from this one (still a choice)
    code, out, _ = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "1",
                           "--steps", "8", "--seeds", "1", "--name", "next", "--out", str(runs_dir), "--quiet")
    assert code == 0 and f"note: 1 earlier session of demo-cpu in {runs_dir} (newest: happy (" in out
    assert f"--warm-start-from {runs_dir / 'happy'} starts a search from its best configs" in out


@pytest.mark.parametrize("flags, kinds", [
    ((), ["baseline", "curated", "curated", "curated", "bracket", "bracket"]),
    (("--no-lr-bracket",), ["baseline", "curated", "curated", "curated", "search", "search"]),
    (("--no-warm-start",), ["search"] * 6),
    # the demo's warm start does not read flat: without the hedge the same order, the switch stored
    (("--no-hedge",), ["baseline", "curated", "curated", "curated", "bracket", "bracket"]),
])
def test_warm_start_and_bracket_switches(capsys, demo_fields, runs_dir, flags, kinds):
    from bracket.session import Session

    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "6",
                           "--steps", "5", "--name", "switches", "--out", str(runs_dir), "--quiet", *flags)
    assert code == 0, err
    session = Session.open(runs_dir / "switches", validate=False)
    assert [c["kind"] for c in session.store.configs("switches", stage="search")] == kinds
    assert session.settings.lr_bracket == ("--no-lr-bracket" not in flags)
    assert session.settings.hedge == ("--no-hedge" not in flags)
    session.close()


def test_a_search_whose_runs_all_fail_exits_1(capsys, demo_fields, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_MODE", "exit1")
    code, out, _ = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "1",
                           "--steps", "4", "--out", str(runs_dir), "--quiet")
    assert code == 1
    assert "failed" in out and "exit code 1" in out


BAD_INPUTS = [
    (["--preset", "no-such-preset"], "Unknown preset 'no-such-preset'"),
    (["--set", "dataset="], "dataset (TOML or folder) is required; fill it in"),
    (["--set", "dataset=/does/not/exist"], "does not exist"),
    (["--set", "dataset"], "--set 'dataset' is malformed"),
    (["--set", "colour=red"], "Unknown field(s) colour"),
    (["--budget", "0"], "budget must be at least 1"),
    (["--budget", "-3"], "budget must be at least 1"),
    (["--steps", "0"], "steps must be at least 1"),
    (["--seeds", "0"], "seeds must be at least 1"),
    (["--budget", "2", "--seeds", "3"], "smaller than seeds per config"),
    (["--budget", "100000000"], "extra zero"),
    (["--storage", "not a url"], "Storage URL 'not a url' is malformed"),
    (["--storage", "postgresql+psycopg://bracket:hunter2@127.0.0.1:1/x"], "Cannot open the store"),
    (["--lr-min", "1e-3", "--lr-max", "1e-5"], "reversed"),
    (["--weights", "loss=0,human=0,vlm=0,eval_loss=0,task=0,llm_judge=0,likeness=0,prompt_following=0,"
                   "image_quality=0"], "weights are 0"),
    (["--prompts", "a cat --zz 3"], "unknown option --zz"),
    (["--warm-start-from", "/no/such/session"], "not a local Bracket session folder"),
    (["--batch-sizes", "0,4"], "positive whole numbers"),
    (["--bound", "lr_warmup_steps=-5:10"], "Bound lr_warmup_steps=-5:10: lr_warmup_steps cannot be negative"),
    # every bad value named on the one line, not only the first
    (["--lr-min", "0", "--batch-sizes", "a", "--bound", "lr_warmup_steps=-1:3"],
     "LR min must be a positive number, got 0.0. Batch sizes 'a' must be whole numbers separated by commas, e.g. "
     "1,2,4. Bound lr_warmup_steps=-1:3: lr_warmup_steps cannot be negative"),
    (["--bound", "optimizer_type=Lion", "--bound", "lr_scheduler=wavy"],
     "Bound for 'optimizer_type': Lion is not among ['AdamW', 'Adam', 'RAdam', 'SGD', 'Adagrad']. Bound for "
     "'lr_scheduler': wavy is not"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_INPUTS, ids=[m for _, m in BAD_INPUTS])
def test_bad_input_exits_2_with_one_line_and_launches_nothing(capsys, demo_fields, runs_dir, extra, message):
    preset = ["--preset", "demo-cpu"] if "--preset" not in extra else []
    code, out, err = run_cli(capsys, "run", *preset, *_sets(demo_fields), *extra, "--out", str(runs_dir))
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert "hunter2" not in err
    assert list(runs_dir.iterdir()) == [], "nothing may be written after a validation error"


def test_non_numeric_budget_is_an_argument_error(capsys, demo_fields):
    code = None
    with pytest.raises(SystemExit) as info:
        main(["run", "--preset", "demo-cpu", "--budget", "many"])
    code = info.value.code
    assert code == 2
    err = capsys.readouterr().err
    assert "invalid int value: 'many'" in err and err.rstrip().endswith("(see `python -m bracket run --help`)")


def test_a_mistyped_command_names_the_help_that_exists(capsys):
    """Seen: ``python -m bracket runn`` said "see `python -m bracket bracket --help`"."""
    with pytest.raises(SystemExit) as info:
        main(["runn"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert err.rstrip().endswith("(see `python -m bracket --help`)"), err


def test_unwritable_output_folder(capsys, demo_fields, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--out", str(blocker / "runs"))
    assert code == 2 and "is not writable" in err


def test_curated_config_outside_the_space_is_refused(capsys, demo_fields, runs_dir, monkeypatch):
    bad = NamedConfig("broken", {"optimizer_type": "AdamW", "learning_rate": 5.0, "lr_scheduler": "cosine",
                                 "lr_warmup_steps": 0, "batch_size": 16}, source="test")
    monkeypatch.setattr(DemoLoRA, "curated_configs", lambda self: [bad])
    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--out", str(runs_dir))
    assert code == 2
    assert "curated config 'broken'" in err and "learning_rate" in err and "outside its own search space" in err
    assert list(runs_dir.iterdir()) == []
    assert isinstance(DemoLoRA({}).declare_search_space()["learning_rate"], FloatKnob)


def test_resume_of_something_that_is_not_a_session(capsys, tmp_path):
    code, _, err = run_cli(capsys, "resume", str(tmp_path))
    assert code == 2 and "not a Bracket session folder" in err


def test_batch_sizes_on_a_fixed_batch_preset_search_them_and_leave_no_pending_run(capsys, demo_fields, runs_dir):
    """Issue 19: ``--batch-sizes`` on a preset whose batch size is fixed used to fail every
    session with "is fixed at 16, got 4", leaving a pending run."""
    from bracket.session import Session

    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "2",
                           "--steps", "5", "--batch-sizes", "4,8", "--name", "batches", "--out", str(runs_dir),
                           "--quiet")
    assert code == 0, err
    session = Session.open(runs_dir / "batches", validate=False)
    runs = session.store.runs("batches", with_series=False)
    assert [r["status"] for r in runs if r["stage"] == "search"] == ["done", "done"]
    assert {r["params"]["batch_size"] for r in runs if r["stage"] == "search"} <= {4, 8}
    session.close()


def test_status_json_gives_the_fixed_knobs_and_the_winners_whole_config(capsys, demo_fields, runs_dir):
    """The standings' params are the searched knobs; ``status --json`` also names the fixed ones
    (demo-cpu holds batch_size fixed), so a script can rebuild the winner's config from it."""
    import json

    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "1",
                           "--steps", "3", "--name", "fixed", "--out", str(runs_dir), "--quiet")
    assert code == 0, err
    code, out, _ = run_cli(capsys, "status", str(runs_dir / "fixed"), "--json")
    answer = json.loads(out)
    fixed = DemoLoRA({}).declare_search_space()["batch_size"].value
    assert code == 0 and answer["fixed_knobs"]["batch_size"] == fixed
    winner = answer["winner"]
    assert "batch_size" not in winner["params"] and winner["all_params"]["batch_size"] == fixed
    assert winner["params"].items() <= winner["all_params"].items()


def test_resume_with_more_runs_extends_a_finished_search(capsys, demo_fields, runs_dir):
    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "2",
                           "--steps", "5", "--name", "more", "--out", str(runs_dir), "--quiet")
    assert code == 0, err
    code, _, err = run_cli(capsys, "resume", str(runs_dir / "more"), "--more-runs", "0", "--quiet")
    assert code == 2 and err.startswith("error: +N runs must be a whole number of at least 1")
    code, out, err = run_cli(capsys, "resume", str(runs_dir / "more"), "--more-runs", "2", "--quiet")
    assert code == 0, err
    assert "budget 4 = 4 configs × 1 seed" in out and "4/4 runs" in out
    assert len(list((runs_dir / "more" / "trials").iterdir())) == 4


def test_progress_into_a_log_file_prints_a_line_per_run_not_per_step(capsys, monkeypatch):
    """Output that is not a terminal (``run ... > log``) gets a progress line when a run starts
    or ends, and otherwise at most every ``LOG_EVERY_S``, not one line per step and second."""
    from types import SimpleNamespace

    from bracket.cli import commands as cli_commands

    frames = [(run, step) for run in range(2) for step in range(0, 101)]

    class Session:
        def __init__(self):
            self.i = -1

        def start(self):
            pass

        def wait(self, _timeout):
            self.i += 1
            return self.i >= len(frames)

        def snapshot(self):
            run, step = frames[min(self.i, len(frames) - 1)]
            return SimpleNamespace(progress=run / 2, spent_label=f"{run}/2 runs", phase=f"search {run + 1}/2",
                                   current={"step": step, "max_steps": 100}, eta_s=200 - step, status="finished")

    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    assert cli_commands._watch(Session(), quiet=False) == "finished"
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("] ")[1].split(" | step ")[0] for line in lines] == ["0/2 runs | search 1/2",
                                                                          "1/2 runs | search 2/2"]


def test_the_run_table_fits_a_100_column_terminal():
    """Seen in review: ``val loss X · loss Y`` overflowed the 24-character raw-figures column and the
    table ran past 150 columns. The row now fits 100; long figures wrap below it, params go on an
    indented line of their own (with the worker when several trained)."""
    from types import SimpleNamespace

    from bracket.status import results_table

    params = {"learning_rate": 0.0002, "optimizer_type": "AdamW8bit", "lr_scheduler": "cosine_with_restarts",
              "lr_warmup_steps": 40, "network_dim": 32, "network_alpha": 16.0, "batch_size": 4, "max_grad_norm": 1.0}
    run = dict(id=12, stage="search", kind="curated", config_name="adamw-fast-long-name", seed=42, status="done",
               score=0.123, params=params, failure_reason="", worker="host-a:101")
    failed = dict(run, id=13, status="failed", score=None, failure_reason="RuntimeError: CUDA out of memory",
                  worker="host-b:202")
    raw = {12: "val loss 0.1234 · loss 0.1245 · rating 7.5 · strength 0.123; human estimated"}
    text = results_table(SimpleNamespace(runs=[run, failed]), raw)
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines), "\n".join(line for line in lines if len(line) > 100)
    row = next(line for line in lines if line.startswith("  12  search"))
    # no min-max quality column any more: the headline comes with the raw figures (docs/SCORING.md)
    assert row.endswith(" val loss 0.1234 · loss 0.1245") and " done " in row and "8.89" not in row
    following = lines[lines.index(row) + 1:]
    assert following[0].strip() == "rating 7.5 · strength 0.123" and following[1].strip() == "human estimated"
    assert following[0].index("rating") == row.index("val loss")  # continued in its own column
    assert following[2].startswith("      worker host-a:101; learning_rate=0.0002, optimizer_type=AdamW8bit")
    assert "(RuntimeError: CUDA out of memory)" in text
    alone = results_table(SimpleNamespace(runs=[run]), raw)
    assert "worker" not in alone and "network_dim=32" in alone  # one worker: no column for it


def test_the_demo_makes_its_default_dataset_when_it_is_missing(capsys, demo_fields, runs_dir, monkeypatch):
    """The quick start on a fresh clone (no runs/demo-data yet) just works: the demo makes its own
    data at the default place, and says so. A missing path typed elsewhere is one clear error line,
    never written to."""
    monkeypatch.delenv("BRACKET_DEMO_DATA_DIR", raising=False)
    fields = {k: v for k, v in demo_fields.items() if k != "dataset"}  # the form's default
    code, out, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(fields), "--budget", "1", "--steps", "3",
                             "--name", "fresh", "--quiet")
    assert code == 0, err
    assert (runs_dir / "demo-data" / "dataset.toml").is_file()
    assert len(list((runs_dir / "demo-data" / "images").glob("*.png"))) == 64
    assert f"note: made the demo dataset in {runs_dir / 'demo-data'}" in out

    elsewhere = runs_dir.parent / "typo" / "dataset.toml"
    code, out, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets({**fields, "dataset": str(elsewhere)}),
                             "--budget", "1", "--name", "typo")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and not elsewhere.parent.exists()
    assert f"{elsewhere} does not exist; check the path. Make one with `python -m bracket demo-data DIR`" in lines[0]
    depth = 0
    for char in lines[0]:  # seen in review: "(Made by ... (install.sh makes runs/demo-data).)"
        depth += {"(": 1, ")": -1}.get(char, 0)
        assert depth <= 1, lines[0]


def test_ctrl_c_wind_down_says_what_it_waits_for_and_gives_up_at_its_cap(capsys, monkeypatch, tmp_path):
    """A wind-down that does not end (a judge still scoring) is reported while it lasts and cut at
    WIND_DOWN_S: the trainer is killed at once and the CLI exits like a second Ctrl-C."""
    from bracket.cli import commands as cli_commands

    class Stuck:  # a session whose search thread does not end
        folder, phase, calls = tmp_path / "s", "waiting for the judge model", []

        def stop(self, **kw):
            self.calls.append(("stop", kw))

        def wait(self, timeout):
            return False

        def abandon(self):
            self.calls.append(("abandon", {}))

    monkeypatch.setattr(cli_commands, "WIND_DOWN_S", 0.6)
    monkeypatch.setattr(cli_commands, "WIND_DOWN_SAY_S", 0.2)
    session = Stuck()
    with pytest.raises(KeyboardInterrupt):
        cli_commands._wind_down(session, everywhere=True)
    assert session.calls == [("stop", {"now": True, "everywhere": True}), ("abandon", {})]
    err = capsys.readouterr().err
    assert "Press Ctrl-C again to stop now" in err and f"python -m bracket resume {tmp_path / 's'}" in err
    assert "stopping: still waiting (waiting for the judge model); Ctrl-C again stops now" in err
    assert "not done after 1 s (waiting for the judge model); stopping now" in err
    assert "stopped now: the trainer was killed" in err


def test_a_second_ctrl_c_during_the_stop_request_still_kills_the_trainer(capsys, tmp_path):
    """The second Ctrl-C can land while the first one's stop is still being recorded (a store
    write, slow on a loaded machine): the trainer must still be killed, not left running."""
    from bracket.cli import commands as cli_commands

    class SlowStop:
        folder, phase, calls = tmp_path / "s", "training", []

        def stop(self, **kw):
            self.calls.append("stop")
            raise KeyboardInterrupt  # the person pressed Ctrl-C again before stop returned

        def wait(self, timeout):
            raise AssertionError("never reached")

        def abandon(self):
            self.calls.append("abandon")

    session = SlowStop()
    with pytest.raises(KeyboardInterrupt):
        cli_commands._wind_down(session, everywhere=True)
    assert session.calls == ["stop", "abandon"]
    assert "stopped now: the trainer was killed" in capsys.readouterr().err


#: what each command says it cannot do when a folder's session.json names a store file that is gone
WITHOUT_STORE = {
    "status": "status cannot show this session's progress, runs or winner",
    "resume": "the session cannot be resumed",
    "report": "no report can be written",
    "export": "this session's winner cannot be exported",
    "finals": "this session's best configs cannot be re-run as finals",
    "promote": "this session's winner cannot be promoted",
}


@pytest.mark.parametrize("command", list(WITHOUT_STORE))
def test_a_session_without_its_store_says_what_this_command_cannot_do(capsys, tmp_path, command):
    """Seen in review: ``status`` (and report, export…) of a folder with session.json but no
    bracket.db said resume's words, "the session cannot be resumed"."""
    folder = tmp_path / "lost-store"
    folder.mkdir()
    (folder / "session.json").write_text('{"name": "lost-store", "storage": "bracket.db"}', encoding="utf-8")
    code, out, err = run_cli(capsys, command, str(folder))
    assert code == 2 and out == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert f"The store {folder / 'bracket.db'} is missing" in err and WITHOUT_STORE[command] in err, err
    assert "put that file back" in err.lower(), err
    if command != "resume":
        assert "resumed" not in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["session.json"], "nothing may be made in its place"


def test_warm_start_from_a_folder_without_its_store_names_the_missing_file(capsys, demo_fields, runs_dir, tmp_path):
    """Seen in review: session.json present, bracket.db gone, and the message said
    "(no session.json and bracket.db)" — which of the two was missing?"""
    past = tmp_path / "past"
    past.mkdir()
    (past / "session.json").write_text('{"name": "past", "storage": "bracket.db"}', encoding="utf-8")
    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--warm-start-from", str(past),
                           "--out", str(runs_dir))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"its store {past / 'bracket.db'} is missing (session.json is there" in err, err
    assert "no session.json" not in err and list(runs_dir.iterdir()) == []
    (past / "session.json").unlink()
    code, _, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--warm-start-from", str(past),
                           "--out", str(runs_dir))
    assert code == 2 and "(it has no session.json)" in err and "bracket.db" not in err, err
