"""The runner: exit codes, timeouts, stop (whole tree), reaction time, logs, orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from bracket.session.process import ProcessRecord, Runner, kill_leftovers, read_log_tail
from bracket.trainer.base import LaunchSpec
from tests.fakes import fake_trainer_spec
from tests.fakes.waiting import wait_until

pytestmark = pytest.mark.timeout(60)


def _dead(pid: int) -> bool:
    """Gone, or a zombie (a container's PID 1 may never reap orphans; a zombie holds nothing)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _python_spec(tmp_path: Path, code: str) -> LaunchSpec:
    return LaunchSpec(cmd=[sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ), output_dir=tmp_path)


def _wait_for_file(path: Path, timeout: float = 10.0) -> str:
    return wait_until(lambda: path.exists() and path.read_text().strip(), timeout, f"{path}")


@pytest.mark.parametrize(("mode", "code"), [("ok", 0), ("exit1", 1), ("segv", -signal.SIGSEGV)])
def test_exit_codes_and_log(tmp_path, mode, code):
    spec = fake_trainer_spec(tmp_path, mode=mode)
    runner = Runner(spec, tmp_path / "run.log")
    result = runner.run()
    assert result.exit_code == code
    assert result.stopped is False and result.timed_out is False and result.reason == ""
    assert result.ok is (code == 0)
    assert result.pid == runner.pid == int((spec.output_dir / "trainer.pid").read_text())
    assert runner.create_time is not None
    log = (tmp_path / "run.log").read_text()
    assert f"modes {mode}" in log
    if mode == "ok":
        assert result.log_tail[-1] == "fake trainer: done"
    if mode == "exit1":
        assert "RuntimeError: fake trainer failure" in result.log_tail[-5]  # above the launcher's traceback
        assert "CalledProcessError" in result.log_tail[-1]


def test_timeout_kills_the_run(tmp_path):
    spec = fake_trainer_spec(tmp_path, mode="hang")
    started = time.monotonic()
    result = Runner(spec, tmp_path / "run.log", timeout_s=0.8).run(poll_interval=0.1)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.stopped
    assert result.reason == "timeout"
    assert result.exit_code == -signal.SIGTERM
    # ended by the timeout's SIGTERM (the fake sleeps forever), not before it; the upper bound catches a
    # timeout that fires far too late and leaves a loaded machine its slow start (3 s was a fast machine's)
    assert 0.8 <= elapsed < 30.0
    assert _dead(result.pid)


def test_stop_from_on_poll_kills_grandchild(tmp_path):
    spec = fake_trainer_spec(tmp_path, mode="grandchild,hang")
    runner = Runner(spec, tmp_path / "run.log", grace_s=2.0)
    grandchild_file = spec.output_dir / "grandchild.pid"
    polls = []

    def on_poll() -> None:
        polls.append(time.monotonic())
        if grandchild_file.exists() and grandchild_file.read_text().strip():
            runner.stop("diverged")

    runner.start()
    result = runner.wait(on_poll=on_poll, poll_interval=0.05)
    grandchild = int(grandchild_file.read_text())
    assert result.stopped and not result.timed_out
    assert result.reason == "diverged"
    assert result.exit_code == -signal.SIGTERM
    assert len(polls) >= 1
    assert _dead(result.pid)
    assert _dead(grandchild), "the grandchild `sleep 600` outlived stop()"


def test_stop_kills_a_grandchild_orphaned_before_stop(tmp_path):
    """A grandchild whose parent already died is still killed (it was seen at a poll)."""
    code = (
        "import os, subprocess, time\n"
        "if os.fork() == 0:\n"
        "    print(subprocess.Popen(['sleep', '600']).pid, flush=True)\n"
        "    os._exit(0)\n"
        "time.sleep(600)\n"
    )
    # python (sleeps) -> forked python (starts `sleep 600`, exits at once) -> orphaned sleep
    spec = _python_spec(tmp_path, code)
    runner = Runner(spec, tmp_path / "run.log", grace_s=1.0)
    runner.start()
    seen: list[int] = []

    def on_poll() -> None:
        text = (tmp_path / "run.log").read_text().split()
        if text:
            seen.append(int(text[0]))
            if len(seen) >= 2:
                runner.stop()

    result = runner.wait(on_poll=on_poll, poll_interval=0.05)
    assert result.stopped
    assert _dead(seen[0])


def test_stop_from_another_thread_reacts_within_200ms(tmp_path):
    spec = fake_trainer_spec(tmp_path, mode="hang")
    runner = Runner(spec, tmp_path / "run.log")
    runner.start()
    _wait_for_file(spec.output_dir / "trainer.pid")
    stopped_at: list[float] = []
    watching = threading.Event()  # wait() has looked once: the next look is 5 s away

    def stop_later() -> None:
        assert watching.wait(30)
        stopped_at.append(time.monotonic())
        runner.stop()
        runner.stop("second call is ignored")

    thread = threading.Thread(target=stop_later)
    thread.start()
    result = runner.wait(on_poll=watching.set, poll_interval=5.0)  # reaction must not wait for the next poll
    returned = time.monotonic()
    thread.join()
    assert result.reason == "stopped"
    assert returned - stopped_at[0] < 0.2
    assert _dead(result.pid)


def test_exit_is_noticed_within_200ms(tmp_path):
    marker = tmp_path / "exited_at"
    code = f"import time; time.sleep(0.3); open({str(marker)!r}, 'w').write(repr(time.time()))"
    result = Runner(_python_spec(tmp_path, code), tmp_path / "run.log").run(poll_interval=5.0)
    returned = time.time()
    assert result.exit_code == 0
    assert returned - float(marker.read_text()) < 0.2


def test_spam_goes_to_the_log_not_a_pipe(tmp_path):
    spec = fake_trainer_spec(tmp_path, mode="spam", max_steps=3)
    started = time.monotonic()
    result = Runner(spec, tmp_path / "run.log").run(poll_interval=0.1)
    assert result.exit_code == 0
    assert time.monotonic() - started < 20
    assert (tmp_path / "run.log").stat().st_size > 50 * 1024 * 1024
    assert 0 < len(result.log_tail) <= 40
    assert sum(len(line) for line in result.log_tail) < 20_000
    assert result.log_tail[-1] == "fake trainer: done"
    assert any(line.startswith("steps: ") and "it/s" in line for line in result.log_tail)


def test_missing_executable_is_a_result_not_an_exception(tmp_path):
    spec = LaunchSpec(cmd=[str(tmp_path / "no" / "python"), "x.py"], cwd=tmp_path, env={}, output_dir=tmp_path)
    runner = Runner(spec, tmp_path / "logs" / "run.log")
    assert runner.start() is None
    result = runner.wait()
    assert result.exit_code is None and result.pid is None
    assert result.reason.startswith("could not start: ")
    assert "could not start" in (tmp_path / "logs" / "run.log").read_text()


def test_missing_working_folder_is_a_result(tmp_path):
    spec = LaunchSpec(cmd=[sys.executable, "-c", "pass"], cwd=tmp_path / "gone", env={}, output_dir=tmp_path)
    result = Runner(spec, tmp_path / "run.log").run()
    assert result.exit_code is None
    assert result.reason.startswith("could not start: ")


def test_stop_before_start_launches_nothing(tmp_path):
    marker = tmp_path / "ran"
    runner = Runner(_python_spec(tmp_path, f"open({str(marker)!r}, 'w')"), tmp_path / "run.log")
    runner.stop("cancelled")
    result = runner.run()
    assert result.exit_code is None and result.stopped and result.reason == "cancelled"
    assert not marker.exists()


def test_error_in_on_poll_stops_the_run(tmp_path):
    spec = fake_trainer_spec(tmp_path, mode="hang")
    runner = Runner(spec, tmp_path / "run.log")
    runner.start()

    def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError):
        runner.wait(on_poll=broken)
    assert _dead(runner.pid)


def test_kill_leftovers_checks_create_time(tmp_path):
    process = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        created = psutil.Process(process.pid).create_time()
        assert kill_leftovers(ProcessRecord(process.pid, created + 100.0), grace_s=0.5) is False
        assert process.poll() is None, "a process with another create_time was killed"
        assert kill_leftovers(ProcessRecord(process.pid, created), grace_s=0.5) is True
        assert process.wait(timeout=5) == -signal.SIGTERM
        assert kill_leftovers(ProcessRecord(process.pid, created)) is False
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_kill_leftovers_kills_children(tmp_path):
    spec = fake_trainer_spec(tmp_path, mode="grandchild,hang")
    process = subprocess.Popen(spec.cmd, cwd=spec.cwd, env=spec.env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        grandchild = int(_wait_for_file(spec.output_dir / "grandchild.pid"))
        assert kill_leftovers(ProcessRecord(process.pid), grace_s=1.0) is True
        process.wait(timeout=5)
        assert _dead(grandchild)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_read_log_tail_collapses_progress_and_reads_only_the_end(tmp_path):
    log = tmp_path / "big.log"
    with open(log, "wb") as handle:
        handle.write(b"first line\n" + b"x" * 500_000 + b"\n")
        handle.write(b"\r 10%|#\r 50%|#####\r100%|##########\n\nTraceback\r\n  boom\n")
    assert read_log_tail(log) == ["100%|##########", "Traceback", "  boom"]
    assert read_log_tail(log, 2) == ["Traceback", "  boom"]
    assert read_log_tail(tmp_path / "missing.log") == []
    only_progress = tmp_path / "progress.log"
    only_progress.write_bytes(b"".join(b"\rstep %d" % i for i in range(100_000)))
    assert read_log_tail(only_progress) == ["step 99999"]


def test_a_failed_run_is_described_by_the_trainers_own_last_error():
    from bracket.session.process import RunResult
    from bracket.session.process.execute import describe_exit, trainer_error_line

    log = [
        "INFO: loading tokenizer",
        "Traceback (most recent call last):",
        '  File "sdxl_train_network.py", line 9, in <module>',
        "    raise TypeError(msg)",
        "TypeError: expected str, bytes or os.PathLike object, not NoneType",
        "Traceback (most recent call last):",
        "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)",
        "subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit status 1.",
    ]
    assert trainer_error_line(log) == "TypeError: expected str, bytes or os.PathLike object, not NoneType"
    assert trainer_error_line(["torch.OutOfMemoryError: CUDA out of memory.", "  ValueError: indented"]) == (
        "torch.OutOfMemoryError: CUDA out of memory.")
    failed = RunResult(exit_code=1, duration_s=1.0, log_tail=log, stopped=False, timed_out=False, pid=1)
    assert describe_exit(failed, None) == (
        "TypeError: expected str, bytes or os.PathLike object, not NoneType (exit code 1)")
    plain = RunResult(exit_code=2, duration_s=1.0, log_tail=["usage: x", "error: bad"], stopped=False,
                      timed_out=False, pid=1)
    assert describe_exit(plain, None) == "exit code 2"
