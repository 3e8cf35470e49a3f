"""The setup phase of a search: the trainer's one-off commands before the first trial.

Some trainers cache what every run reads the same way — latents, text-encoder outputs
(``Trainer.session_setup_commands``: musubi-tuner's pre-caching scripts). They run once
per session, each as a run of kind ``setup`` (its log under ``<session>/setup/<label>/logs``),
before any config is trained:

* a step already done (a resumed session) is not run again;
* in a shared search, a step another live worker runs or ran is waited for, not repeated
  (``WorkerProtocol.setup_done_elsewhere``);
* a failed step stops the search with one line saying where its log is: every run after it
  would fail the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bracket.errors import BracketError

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.control import RunControl
    from bracket.session.create import SessionParts
    from bracket.session.process import RunExecutor
    from bracket.session.worker import WorkerProtocol


def run_setup_commands(parts: "SessionParts", *, executor: "RunExecutor", control: "RunControl",
                       worker: "WorkerProtocol", on_phase: Callable[[str], None]) -> None:
    """Run the trainer's setup commands of the session ``parts`` that are not done yet
    (``on_phase`` is told ``"pre-cache: <label>"``); raises ``BracketError`` when one fails."""
    store, name, setup_dir = parts.store, parts.name, parts.folder / "setup"
    specs = parts.trainer.session_setup_commands(dataset=Path(parts.fields.get("dataset", "")), run_dir=setup_dir)
    done = {r["label"] for r in store.runs(name, kinds=("setup",), with_series=False) if r["status"] == "done"}
    for spec in specs:
        if control.halted:
            return
        if spec.label in done or worker.setup_done_elsewhere(spec.label, control, on_phase=on_phase):
            continue
        on_phase(f"pre-cache: {spec.label}")
        run_id = store.add_run(name, kind="setup", stage="setup", label=spec.label, worker=worker.worker_id)
        # its log goes to <session>/setup/<label>/logs, not into the trainer checkout (its cwd)
        label_dir = setup_dir / re.sub(r"[^A-Za-z0-9._-]+", "-", spec.label or f"step{run_id}")
        status = executor.execute(run_id, spec, scored=False, run_dir=label_dir)
        if status != "done":
            run = store.get_run(run_id) or {}
            raise BracketError(f"Pre-caching step {spec.label!r} failed ({run.get('failure_reason', status)}); "
                               f"see the log in {label_dir / 'logs'}, fix it, then resume.")
