"""The one wait for a condition in the tests: each test names what it waits for and a deadline.

Where the code under test offers an event (a callback, ``threading.Event``, a process's exit) a
test waits on that instead; this is for what only shows in a file, a store or another process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
#: how often the condition is looked at
INTERVAL_S = 0.02


def wait_until(predicate: Callable[[], T], timeout: float = 60.0, what: str = "condition",
               interval: float = INTERVAL_S) -> T:
    """The first true value ``predicate()`` gives within ``timeout`` seconds; AssertionError naming
    ``what`` if none came."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not reached within {timeout:g} s")
        time.sleep(interval)


#: how long an app may take to answer its first request: on a loaded 2-core machine its start
#: (importing Gradio, building the Blocks) took a minute
APP_START_S = 180.0


def wait_for_answer(url: str, process: Any, log: Path, ok: tuple[int, ...] = (200,),
                    timeout: float = APP_START_S) -> None:
    """Until the app ``process`` (writing to ``log``) answers ``url`` with one of ``ok``; an
    AssertionError with the log's tail when it exits first or does not answer in time."""
    import httpx

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"app exited with {process.returncode}: {log.read_text()[-3000:]}")
        try:
            return httpx.get(url, timeout=2).status_code in ok
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, timeout, f"an answer from {url}", interval=0.1)
    except AssertionError as error:
        if "app exited" in str(error):
            raise
        raise AssertionError(f"app did not answer within {timeout:g} s: {log.read_text()[-3000:]}") from None
