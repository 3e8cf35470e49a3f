"""The judges' verdicts at a rung of a halving search, shared by the scorers that give them.

A run paused at a rung is judged on what it made at its pause step — the VLM on its samples
(``bracket.session.scoring.vlm``), the task judge and the LLM-as-judge on its held-out answers
generated from the paused adapter (``bracket.session.scoring.text_judges``). Each verdict is
kept as ``judges["at_step"][str(step)][judge]`` (:func:`store_at_step`), which
``bracket.session.loop.rung_scores`` reads for that step, also after the run went on.
:class:`RungVerdicts` is each scorer's list of verdicts still being judged; the halving loop
waits for all of them, bounded (:func:`wait_all`), before it decides the next promotion.
:class:`QueuedScorer` is the one background thread of the scorers that judge samples (the VLM,
the image judges): what they queue, wait for and drain.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

from bracket.session.scoring.run_scores import AT_STEP
from bracket.session.store import Store

#: one write of a run's ``judges`` at a time in this process: the scorers' threads (VLM, image
#: judges) each read, change and write back the record, and must not drop each other's keys
_WRITE = threading.Lock()


def merge_judges(store: Store, run_id: int, **records: Any) -> None:
    """Set the judges' ``records`` (judge key -> record) in run ``run_id``'s ``judges``, keeping the rest."""
    with _WRITE:
        run = store.get_run(run_id) or {}
        store.update_run(run_id, judges={**(run.get("judges") or {}), **records})


def store_at_step(store: Store, run_id: int, step: int, **records: Any) -> None:
    """Keep the judges' ``records`` of run ``run_id`` for ``step`` (beside those stored there already)."""
    with _WRITE:
        run = store.get_run(run_id) or {}
        judges = dict(run.get("judges") or {})
        at_step = dict(judges.get(AT_STEP) or {})
        at_step[str(int(step))] = {**at_step.get(str(int(step)), {}), **records}
        store.update_run(run_id, judges={**judges, AT_STEP: at_step})


class RungVerdicts:
    """The rung verdicts one scorer has queued (futures of its thread) and not yet stored."""

    def __init__(self) -> None:
        self._futures: list[Future] = []
        self._lock = threading.Lock()

    def add(self, future: Future) -> None:
        with self._lock:
            self._futures.append(future)

    def pending(self) -> bool:
        with self._lock:
            return any(not f.done() for f in self._futures)

    def wait(self, timeout: float, stop: Callable[[], bool] = lambda: False) -> bool:
        """Wait until they are all stored, at most ``timeout`` seconds and only while ``stop()``
        is false; whether they all are (a late one still lands and counts then)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                self._futures = [f for f in self._futures if not f.done()]
                waiting = list(self._futures)
            left = deadline - time.monotonic()
            if not waiting or left <= 0 or stop():
                return not waiting
            wait(waiting, timeout=min(1.0, left))


class QueuedScorer(ABC):
    """A scorer's one background thread (named ``thread``): a finished run queued by :meth:`submit`
    (its :meth:`_score`), one paused at a rung by :meth:`submit_rung` (its :meth:`_score_rung`, a
    verdict :meth:`wait_rungs` waits for), everything queued waited for by :meth:`settle` and at the
    search's end by :meth:`drain`."""

    def __init__(self, thread: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread)
        self._futures: list[Future] = []
        self._rungs = RungVerdicts()

    @abstractmethod
    def _score(self, run_id: int) -> None: ...

    @abstractmethod
    def _score_rung(self, run_id: int) -> None: ...

    def submit(self, run_id: int) -> None:
        self._futures.append(self._pool.submit(self._score, run_id))

    def submit_rung(self, run_id: int) -> None:
        """Queue the judging of a paused run's samples at its pause step."""
        future = self._pool.submit(self._score_rung, run_id)
        self._futures.append(future)
        self._rungs.add(future)

    def wait_rungs(self, timeout: float, stop: Callable[[], bool] = lambda: False) -> bool:
        """Wait (at most ``timeout`` seconds, not past ``stop()``) for the queued rung verdicts;
        whether they are all stored (:meth:`RungVerdicts.wait`)."""
        return self._rungs.wait(timeout, stop)

    def rungs_pending(self) -> bool:
        return self._rungs.pending()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout``) for everything queued so far; the thread stays for more. Whether
        all of it is done."""
        return not wait(self._futures, timeout=timeout).not_done

    def drain(self, timeout: float | None = None) -> None:
        """Wait (at most ``timeout``) for the queued scoring (at the end of a session), then stop the thread."""
        wait(self._futures, timeout=timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)


class RungScorer(Protocol):
    def rungs_pending(self) -> bool: ...

    def wait_rungs(self, timeout: float, stop: Callable[[], bool] = lambda: False) -> bool: ...


def wait_all(scorers: Iterable[RungScorer], timeout: float, stop: Callable[[], bool] = lambda: False) -> bool:
    """Wait for every scorer's rung verdicts within one deadline of ``timeout`` seconds (not past
    ``stop()``); whether they are all in."""
    deadline = time.monotonic() + timeout
    results = [scorer.wait_rungs(max(0.0, deadline - time.monotonic()), stop=stop) for scorer in scorers]
    return all(results)
