"""Shared fixtures: the fake trainer, the fake python, and a temporary runs folder."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FAKES = Path(__file__).resolve().parent / "fakes"
# the fakes' switches reach the fake trainers (a trainer gets only an allow-list of Bracket's
# environment, bracket.trainer.environment), as a person passes WANDB_* there; for the whole
# run, since session-scoped fixtures train before any function-scoped fixture sets anything
os.environ.setdefault("BRACKET_TRAINER_ENV", "BRACKET_FAKE_*,FAKE_*")
#: marks every process this test run starts (the trainers' allow-list above lets it through), so
#: the check at the end tells this run's leftovers from another run's on a shared machine
RUN_MARK = "BRACKET_FAKE_TEST_RUN"
os.environ[RUN_MARK] = f"{os.getpid()}-{time.time_ns()}"
#: how long the check at the end waits for processes that are on their way out
LEFTOVER_GRACE_S = 10.0
#: the interpreter's own helpers: multiprocessing starts one for a spawned child and it lives as
#: long as the process that started it (it ends when pytest exits, so it is not a leftover)
INTERPRETER_HELPERS = (
    "from multiprocessing.resource_tracker import main",
    "from multiprocessing.forkserver import main",
)


def leftover_processes() -> list:
    """Processes this test run left behind: a child of the test process (at any depth), or a
    process of this run (its mark in the environment) or running a script of ``tests/fakes``
    (an orphan whose parent is gone, a trainer's escaped grandchild). Zombies are gone already."""
    import psutil

    me = psutil.Process()
    found = {p.pid: p for p in me.children(recursive=True)}
    mark = os.environ[RUN_MARK]
    for process in psutil.process_iter(["pid", "cmdline", "create_time"]):
        if process.pid == me.pid or process.pid in found:
            continue
        try:
            if process.info["create_time"] < me.create_time():
                continue
            environ = process.environ()
            ours = environ.get(RUN_MARK) == mark
            fake = RUN_MARK not in environ and any(str(FAKES) in str(arg) for arg in process.info["cmdline"] or ())
        except psutil.Error:  # gone, or another user's
            continue
        if ours or fake:
            found[process.pid] = process
    alive = []
    for process in found.values():
        try:
            helper = process.ppid() == me.pid and any(h in " ".join(process.cmdline()) for h in INTERPRETER_HELPERS)
            if process.status() != psutil.STATUS_ZOMBIE and not helper:
                alive.append(process)
        except psutil.Error:
            pass
    return alive


#: (test id, start, end) of each test this run ran, in seconds since the machine booted (the clock
#: of a process's start time, :func:`since_boot`), so the check at the end names the test that
#: started each process it finds
TEST_WINDOWS: list[tuple[str, float, float]] = []
#: what the check at the end found (one line per process), for the run's summary
LEFT_BEHIND: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Notes when each test ran (its fixtures' setup and teardown included)."""
    start = since_boot()
    yield
    TEST_WINDOWS.append((item.nodeid, start, since_boot()))


def since_boot(process=None) -> float:
    """Seconds since the machine booted: now, or when ``process`` (psutil) started. A process's start
    is kept in clock ticks since boot; ``create_time`` adds a boot time rounded to the second, so the
    wall clock cannot tell which of two short tests started it."""
    import psutil

    if process is not None:
        return process.create_time() - psutil.boot_time()
    try:
        return float(Path("/proc/uptime").read_text().split()[0])
    except OSError:  # not Linux: the wall clock, as near as it gets
        return time.time() - psutil.boot_time()


def started_during(process) -> str:
    """The test that was running when ``process`` started, in words."""
    started = since_boot(process)
    for nodeid, start, end in reversed(TEST_WINDOWS):
        if start - 0.02 <= started <= end + 0.02:  # both clocks tick in hundredths of a second
            return f"started during {nodeid}"
    return "started outside any test (collection, or a session fixture)"


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when a test left a process behind (and end those processes, so none outlives it):
    whatever ran, however the run ends (a failure, ``-x``, a test's timeout), once, after every test
    and fixture of the session has finished."""
    import psutil

    from tests.fakes.waiting import wait_until

    try:
        wait_until(lambda: not leftover_processes(), LEFTOVER_GRACE_S, "no process left", interval=0.2)
        return
    except AssertionError:
        left = leftover_processes()
    if not left:
        return
    lines = []
    for process in left:
        try:
            lines.append(f"  pid {process.pid}, {started_during(process)}: "
                         f"{' '.join(process.cmdline())[:200]}")
            process.kill()
        except psutil.Error:
            pass
    LEFT_BEHIND.extend(lines)
    sys.stderr.write("\nerror: the tests left these processes behind (killed now):\n" + "\n".join(lines) + "\n")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The leftover processes again at the end of the run's summary, where a reader looks for why it failed."""
    if LEFT_BEHIND:
        terminalreporter.section("processes left behind", sep="=", red=True, bold=True)
        terminalreporter.line(f"error: the run fails: the tests left {len(LEFT_BEHIND)} process(es) behind "
                              "(killed now):", red=True)
        for line in LEFT_BEHIND:
            terminalreporter.line(line)


@pytest.fixture(autouse=True)
def _isolated_runs_dir(tmp_path, monkeypatch):
    """Every test gets its own runs folder; nothing is written into the project."""
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs))
    yield runs


@pytest.fixture
def runs_dir(_isolated_runs_dir) -> Path:
    return _isolated_runs_dir


@pytest.fixture
def output_dir() -> Path:
    """A folder kept after the test (screenshots, reports) under test-output/."""
    base = Path(os.environ.get("BRACKET_TEST_OUTPUT", ROOT / "test-output"))
    base.mkdir(parents=True, exist_ok=True)
    return base


def make_caption_folder(folder: Path, count: int = 3) -> Path:
    """A tiny dataset folder: ``count`` PNGs with .txt captions."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    colours = ["red", "green", "blue", "yellow"]
    for index in range(count):
        colour = colours[index % len(colours)]
        Image.new("RGB", (8, 8), colour).save(folder / f"{index:03d}.png")
        (folder / f"{index:03d}.txt").write_text(f"a {colour} circle", encoding="utf-8")
    return folder


@pytest.fixture
def demo_fields(tmp_path) -> dict[str, str]:
    """Field values of the demo-cpu preset that run the FAKE trainer through a fake python."""
    from tests.fakes import FAKE_TRAINER, make_fake_python

    python = make_fake_python(tmp_path / "fakebin")
    data = make_caption_folder(tmp_path / "data")
    return {"dataset": str(data), "trainer_python": str(python), "train_script": str(FAKE_TRAINER)}


@pytest.fixture
def filled_demo_session(runs_dir, demo_fields):
    """Makes a demo-cpu session of ``configs`` finished search configs written straight into
    its store the way a search writes them (``tests.fakes.filled_store``: full params, a loss
    series of ``points`` steps each), closed again; returns its folder. For tests of what
    reading a session costs (the Results tab's probe, ``status``), not of the search."""
    def make(configs: int, *, name: str, points: int = 20, budget: int | None = None) -> Path:
        from bracket.session import SearchSettings, Session
        from tests.fakes.filled_store import fill_store

        settings = SearchSettings(budget=budget or configs + 2, sample_prompts="", warm_start=False)
        session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir, name=name)
        fill_store(session, configs, points)
        session.close()
        return session.folder

    return make
