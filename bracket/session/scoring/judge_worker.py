"""The session's one image-judge worker process: started on the first job, fed every run's images,
its models loaded once for the whole search.

``python -m bracket.judge.image_worker --serve`` (``BRACKET_JUDGE_PYTHON``, else the app's python)
reads one job a line on its stdin and answers each with one JSON line on its stdout; its stderr
(and anything a library prints) goes to ``<session>/logs/image-judges.log``. The pipes carry only
that protocol, never a trainer's output. The image scorer's one thread asks it
(:meth:`JudgeWorker.ask`) beside the next run's training; a worker that ends or fails is started
again at the next job; :meth:`JudgeWorker.close` (at the search's end, the scorer's ``drain``)
closes its stdin, so it ends, and stops it if it does not (as does dropping the object). It reads
the Hugging Face libraries offline (:data:`OFFLINE`).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import weakref
from pathlib import Path
from typing import IO, Any

from bracket import settings as app_settings
from bracket.errors import BracketError

#: how long one job may take before the worker is stopped
WORKER_TIMEOUT_S = 3600
#: how long a closed worker may take to finish before it is stopped
CLOSE_TIMEOUT_S = 30
#: the worker's Hugging Face libraries never reach the network (a model is read from local files only)
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


class JudgeWorker:
    """One long-lived worker process, started on the first :meth:`ask`."""

    def __init__(self, python: str, log: Path, timeout_s: float = WORKER_TIMEOUT_S) -> None:
        self.python, self.log, self.timeout_s = python, Path(log), timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        #: how many processes this worker has started (1 for a whole search unless one failed)
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _start(self) -> subprocess.Popen[bytes]:
        root = str(app_settings.PROJECT_ROOT)
        env = {**os.environ, **OFFLINE,
               "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
        self.log.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(self.log, "ab") as out:
                process = subprocess.Popen([self.python, "-m", "bracket.judge.image_worker", "--serve"], cwd=root,
                                           env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=out)
        except OSError as error:
            raise BracketError(f"the image-judge worker could not start: {error}") from None
        self.starts += 1
        weakref.finalize(self, _end, process, 0)  # a worker object dropped without close ends its process
        return process

    def ask(self, job: dict[str, Any]) -> dict[str, Any]:
        """The worker's answer to ``job`` (``bracket.judge.image_worker``); raises ``BracketError``
        (with where its log is) when it fails, ends or takes longer than ``timeout_s``."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            process = self._process
            stdin, stdout = _pipes(process)
            timer = threading.Timer(self.timeout_s, process.kill)
            timer.daemon = True
            timer.start()
            try:
                stdin.write((json.dumps(job) + "\n").encode("utf-8"))
                stdin.flush()
                line = stdout.readline()
            except (OSError, ValueError):
                line = b""
            finally:
                timer.cancel()
            if not line:
                self._process = None
                _end(process)
                raise BracketError(f"the image-judge worker ended (exit {process.returncode}); see {self.log}")
        try:
            answer = json.loads(line)
        except ValueError:
            raise BracketError(f"the image-judge worker answered {line[:80]!r}; see {self.log}") from None
        if not isinstance(answer, dict) or answer.get("error"):
            raise BracketError(f"{answer.get('error') if isinstance(answer, dict) else answer}; see {self.log}")
        return answer

    def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        """End the worker: its stdin closed (it finishes the job in hand, then ends), stopped after
        ``timeout_s``. Not under the lock: a job in hand must not keep the search from ending."""
        process, self._process = self._process, None
        if process is not None:
            _end(process, timeout_s)


def _pipes(process: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert process.stdin is not None and process.stdout is not None
    return process.stdin, process.stdout


def _end(process: subprocess.Popen[bytes], timeout_s: float = CLOSE_TIMEOUT_S) -> None:
    """Close ``process``'s stdin, wait ``timeout_s`` for it to end, else stop it; its pipes closed."""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
