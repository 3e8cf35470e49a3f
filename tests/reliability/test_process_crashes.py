"""Bracket itself dies: SIGKILL during pre-caching and while a rating is written; two processes, one session.

Each test runs Bracket as a real subprocess, kills it the hard way at a chosen moment, and
resumes the session in this process with ``Session.open(...).run()``: no finished run and no
acknowledged rating may be lost, the orphaned trainer tree must be gone, and the slot that
was interrupted must run again. (SIGKILL in the middle of a trial is in tests/session/test_session.py.)
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.errors import SessionBusyError
from bracket.session import SearchSettings, Session
from tests.fakes import copy_fake_trainer, make_fake_python, write_fake_plan
from tests.reliability.rel_helpers import (
    ROOT,
    bracket_process,
    cli_args,
    dead,
    kill_tree_now,
    launches,
    python_process,
    read_pid,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

_CACHE_SCRIPT = """#!/usr/bin/env python3
import os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "cache_calls.txt"), "a") as handle:
    handle.write(os.path.basename(__file__) + "\\n")
if "latents" in os.path.basename(__file__) and os.path.exists(os.path.join(here, "HANG")):
    child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
    with open(os.path.join(here, "cache_child.pid"), "w") as handle:
        handle.write(str(child.pid))
    with open(os.path.join(here, "cache.pid"), "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(3600)
"""


def _fake_musubi(root: Path) -> tuple[dict[str, str], Path]:
    from tests.musubi.helpers import fields_for, image_folder

    fields = fields_for("zimage-lora", root, image_folder(root))
    scripts = root / "musubi" / "src" / "musubi_tuner"
    for name in ("zimage_cache_latents.py", "zimage_cache_text_encoder_outputs.py"):
        (scripts / name).write_text(_CACHE_SCRIPT)
        (scripts / name).chmod(0o755)
    copy_fake_trainer(scripts / "zimage_train_network.py")
    fields["trainer_python"] = str(make_fake_python(root / "fakebin"))
    return fields, scripts


def test_sigkill_during_pre_caching_reruns_the_cache_step_and_kills_its_tree(tmp_path, runs_dir):
    fields, scripts = _fake_musubi(tmp_path)
    (scripts / "HANG").write_text("1")
    args = ["run", "--preset", "zimage-lora", *cli_args(fields), "--budget", "2", "--steps", "4",
            "--prompts", "a red fox --d 3", "--name", "precache", "--out", str(runs_dir), "--quiet"]
    process = bracket_process(args, {"BRACKET_FAKE_SAMPLE_STYLE": "musubi"}, tmp_path / "bracket.log")
    try:
        cache_pid = read_pid(scripts / "cache.pid", 90)
        child_pid = read_pid(scripts / "cache_child.pid", 10)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        kill_tree_now(process)
    assert not dead(cache_pid) and not dead(child_pid), "the cache step outlives a SIGKILLed Bracket"
    (scripts / "HANG").unlink()

    session = Session.open(runs_dir / "precache")
    assert session.run() == "finished", session.error
    assert dead(cache_pid) and dead(child_pid), "resume kills the orphaned cache step and its child"
    runs = session.store.runs(session.name)
    setup = [(r["label"], r["status"]) for r in runs if r["kind"] == "setup"]
    assert setup == [("cache latents", "interrupted"), ("cache latents", "done"),
                     ("cache text encoder outputs", "done")]
    assert "killed" in runs[0]["failure_reason"]
    trials = [r for r in runs if r["kind"] != "setup"]
    assert len(trials) == 2 and all(r["status"] == "done" for r in trials)
    calls = (scripts / "cache_calls.txt").read_text().split()
    assert calls == ["zimage_cache_latents.py", "zimage_cache_latents.py", "zimage_cache_text_encoder_outputs.py"]
    session.close()


def test_sigkill_while_ratings_are_written_loses_no_rating_and_no_run(fast_fields, runs_dir, tmp_path):
    plan = write_fake_plan(tmp_path / "plan.json", ["ok", "grandchild,hang", "ok", "ok"])
    settings = SearchSettings(budget=3, steps=6, seeds=1, sample_prompts="a red circle --d 1")
    created = Session.create("demo-cpu", fast_fields, settings, out_dir=runs_dir, name="rated")
    folder = created.folder
    created.close()
    ack = tmp_path / "ack.txt"
    env = {"BRACKET_FAKE_PLAN": str(plan)}
    process = python_process([str(ROOT / "tests" / "reliability" / "rating_writer.py"), str(folder), str(ack)],
                             env, tmp_path / "writer.log")
    try:
        grandchild_file = wait_for(lambda: next(folder.glob("trials/*/output/grandchild.pid"), None), 90,
                                   "the hanging second run")
        grandchild, trainer = read_pid(grandchild_file), read_pid(grandchild_file.with_name("trainer.pid"))
        wait_for(lambda: ack.is_file() and len(ack.read_text().split()) >= 25, 60, "25 acknowledged ratings")
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        kill_tree_now(process)
    acknowledged = [int(n) for n in ack.read_text().split()]
    with sqlite3.connect(folder / "bracket.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    session = Session.open(folder)
    ratings = session.store.ratings(session.name)
    assert len(ratings) >= len(acknowledged), "every committed rating survives the kill"
    assert [r["value"] for r in ratings][: len(acknowledged)] == [1 + n % 10 for n in acknowledged]
    assert session.run() == "finished", session.error
    assert dead(trainer) and dead(grandchild)
    runs = session.store.runs(session.name)
    assert [r["status"] for r in runs] == ["done", "interrupted", "done", "done"]
    assert runs[1]["config_id"] == runs[2]["config_id"], "the interrupted slot runs again"
    assert len(session.store.ratings(session.name)) == len(ratings)
    session.close()


def _exit_code(process: subprocess.Popen, log: Path, timeout: float = 30.0) -> int:
    """The exit code of a CLI told to stop; a wind-down of more than ``timeout`` seconds (it takes
    about one) fails with the CLI's own words on what it was still waiting for."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
        pytest.fail(f"the CLI did not exit within {timeout:g} s of Ctrl-C; its last lines:\n{tail}")


def test_a_second_process_on_a_running_session_is_refused_and_launches_nothing(fast_fields, runs_dir, tmp_path,
                                                                              argv_log):
    args = ["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "5",
            "--name", "busy", "--out", str(runs_dir), "--quiet"]
    first = bracket_process(args, {"BRACKET_FAKE_MODE": "hang"}, tmp_path / "first.log")
    folder = runs_dir / "busy"
    try:
        trainer = read_pid(wait_for(lambda: next(folder.glob("trials/*/output/trainer.pid"), None), 90, "a run"))
        second = subprocess.run([sys.executable, "-m", "bracket", "resume", str(folder), "--quiet"], cwd=ROOT,
                                capture_output=True, text=True, timeout=120, check=False)
        assert second.returncode == 2, second.stderr
        assert f"already being run by another Bracket process (pid {first.pid})" in second.stderr
        assert "Stop that one first" in second.stderr and "Traceback" not in second.stderr
        other = Session.open(folder)
        with pytest.raises(SessionBusyError):
            other.run()
        other.store.close()
        assert len(list((folder / "trials").iterdir())) == 1 and len(launches(argv_log)) == 1, \
            "the refused processes launched nothing"
        # Ctrl-C of the first process stops it and kills its run: the trainer obeys SIGTERM, so the
        # wind-down takes about a second (its cap, cli_commands.WIND_DOWN_S, is for judges still scoring)
        first.send_signal(signal.SIGINT)
        assert _exit_code(first, tmp_path / "first.log") == 1
        assert dead(trainer)
        said = (tmp_path / "first.log").read_text(encoding="utf-8", errors="replace")
        assert ("stopping: the current run's trainer gets 5 s to exit" in said
                and "Press Ctrl-C again to stop now" in said)
    finally:
        kill_tree_now(first)
    session = Session.open(folder)
    assert session.store.runs(session.name)[0]["status"] == "interrupted"
    session.close()


def test_a_second_ctrl_c_stops_at_once_and_loses_nothing(fast_fields, runs_dir, tmp_path):
    """The first Ctrl-C winds down (the trainer gets 5 s to exit); a person who will not wait presses
    it again: the trainer — here one that ignores SIGTERM — is killed at once and the CLI exits 130.
    The store is whole: the first run's result is kept, and resume marks the cut run interrupted."""
    args = ["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "5",
            "--name", "twice", "--out", str(runs_dir), "--quiet"]
    plan = write_fake_plan(tmp_path / "plan.json", ["ok", "hang,stubborn"])
    log = tmp_path / "twice.log"
    first = bracket_process(args, {"BRACKET_FAKE_PLAN": str(plan)}, log)
    folder = runs_dir / "twice"
    try:
        trainer = read_pid(wait_for(lambda: next(folder.glob("trials/0002-*/output/trainer.pid"), None), 90,
                                    "the second run"))
        first.send_signal(signal.SIGINT)
        wait_for(lambda: "Press Ctrl-C again to stop now" in log.read_text(errors="replace"), 30, "the prompt")
        assert not dead(trainer), "a stubborn trainer outlives SIGTERM: the grace time is running"
        first.send_signal(signal.SIGINT)
        assert _exit_code(first, log) == 130
        assert wait_for(lambda: dead(trainer), 60, "the killed trainer")
        assert "stopped now: the trainer was killed" in log.read_text(errors="replace")
    finally:
        kill_tree_now(first)
    session = Session.open(folder)
    statuses = [r["status"] for r in session.store.runs(session.name)]
    # as the kill left it: still "running", or "interrupted" when the CLI recorded the cut on its way out
    assert statuses[0] == "done" and statuses[1] in ("running", "interrupted"), statuses
    session.worker.recover()  # what resume does first: the run's process is gone
    assert [r["status"] for r in session.store.runs(session.name)] == ["done", "interrupted"]
    session.close()


def test_ctrl_c_works_when_the_parent_ignored_sigint(fast_fields, runs_dir, tmp_path):
    """Started in the background by a non-interactive shell (``nohup … &``, a CI runner), a process
    inherits SIGINT as ignored; the CLI still stops on ``kill -INT`` the way it does on Ctrl-C."""
    args = ["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "5",
            "--name", "nohup", "--out", str(runs_dir), "--quiet"]
    log = tmp_path / "nohup.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1", BRACKET_FAKE_MODE="hang")
    with open(log, "wb") as handle:
        first = subprocess.Popen([sys.executable, "-m", "bracket", *args], cwd=ROOT, env=env, stdout=handle,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    folder = runs_dir / "nohup"
    try:
        trainer = read_pid(wait_for(lambda: next(folder.glob("trials/*/output/trainer.pid"), None), 90, "a run"))
        first.send_signal(signal.SIGINT)
        assert _exit_code(first, log) == 1
        assert dead(trainer)
        assert "Press Ctrl-C again to stop now" in log.read_text(encoding="utf-8", errors="replace")
    finally:
        kill_tree_now(first)


@pytest.mark.parametrize("command", ["run"])
def test_sigterm_stops_a_search_like_ctrl_c(fast_fields, runs_dir, tmp_path, command):
    """``kill PID`` (SIGTERM) of ``bracket run`` used to kill Bracket alone: the trainer trained
    on, owned by init, and the run stayed "running". It now stops like Ctrl-C."""
    args = [command, "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "5",
            "--name", "term", "--out", str(runs_dir), "--quiet"]
    first = bracket_process(args, {"BRACKET_FAKE_MODE": "hang"}, tmp_path / "term.log")
    folder = runs_dir / "term"
    try:
        trainer = read_pid(wait_for(lambda: next(folder.glob("trials/*/output/trainer.pid"), None), 90, "a run"))
        first.send_signal(signal.SIGTERM)
        assert first.wait(60) == 1
        assert dead(trainer), "the trainer must stop with Bracket"
    finally:
        kill_tree_now(first)
    session = Session.open(folder)
    assert session.store.runs(session.name)[0]["status"] == "interrupted"
    session.close()
