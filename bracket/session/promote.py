"""Promotion: the winning configuration trained for real, with periodic saves, resumable.

A search finds a configuration with short runs; promotion trains the winner (of
:mod:`bracket.standings`: the finals' best when there are finals) for the full length
(on the full dataset, or another one given here) with ``save_every_n_steps`` checkpoints and
``save_state``, as a separate ``promote`` stage of the session. If that long run is
interrupted, promoting again resumes it from its newest saved state instead of starting
over. (To run it by hand instead, ``python -m bracket export`` writes the command.)

**Default length.** Without ``--steps`` the winner is trained for its *best step*
(``Winner.step``, ``bracket.session.best_step``; its run's own step count when no evidence
names an earlier step). With another dataset (``--dataset``) that step count is scaled by the
ratio of the two datasets' image counts, so the run sees each image as many times (the same
number of epochs) as the best search run did: a best step of 400 on 20 images becomes 2000
on 100.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bracket.errors import BracketError
from bracket.standings import require_winner, standings

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

STAGE = "promote"


def latest_state(output_dir: Path) -> Path | None:
    """The newest ``*-state`` folder the trainer saved under ``output_dir`` (sd-scripts/musubi)."""
    if not output_dir.is_dir():
        return None
    states = [p for p in output_dir.iterdir() if p.is_dir() and p.name.endswith("-state")]
    return max(states, key=lambda p: p.stat().st_mtime) if states else None


def _source(session: "Session", run_id: int | None) -> tuple[dict, int | None]:
    """(the config to promote, its step count): the winner's, at its best step, unless ``run_id`` is given."""
    if run_id is None:
        winner = require_winner(session, standings(session))
        return (next(c for c in session.store.configs(session.name) if c["id"] == winner.config_id),
                winner.step or winner.steps)
    run = session.store.get_run(int(run_id))
    if run is None or run["session"] != session.name or run["config_id"] is None:
        raise BracketError(f"Run {run_id} is not a trained run of session {session.name}; pick one from the table.")
    return next(c for c in session.store.configs(session.name) if c["id"] == run["config_id"]), run.get("max_steps")


def scaled_steps(session: "Session", steps: int, dataset: Path | None) -> int:
    """``steps`` scaled by the image counts of ``dataset`` and the search's dataset (same epochs)."""
    from bracket.dataset.validation import preflight_dataset

    style = getattr(session.trainer, "dataset_style", None)
    search_dataset = session.parts.fields.get("dataset", "")
    if dataset is None or not style or not search_dataset:
        return steps
    before = preflight_dataset(Path(search_dataset), style).media
    after = preflight_dataset(Path(dataset), style).media
    return max(1, round(steps * after / before)) if before and after else steps


def promote(session: "Session", *, steps: int | None = None, run_id: int | None = None,
            save_every_n_steps: int | None = None, dataset: Path | None = None) -> int:
    """Train (or resume) the promoted run; returns its run id.

    Promotes the winner of :mod:`bracket.standings` (or run ``run_id``'s config) for
    ``steps`` steps — by default the winner's best step (or that run's own step count), scaled
    to ``dataset`` when one is given.
    A missing or disqualified winner is refused with a ``NoWinnerError``.
    """
    if steps is not None and steps < 1:
        raise BracketError("Promotion needs a positive step count (--steps).")
    if save_every_n_steps is not None and save_every_n_steps < 1:
        raise BracketError("--save-every must be a positive number of steps.")
    if dataset is not None and not Path(dataset).exists():
        raise BracketError(f"Dataset {dataset} does not exist; give the full dataset's TOML or folder.")
    source, own_steps = _source(session, run_id)
    steps = int(steps or scaled_steps(session, int(own_steps or session.settings.steps), dataset))
    existing = {c["trial_number"]: c for c in session.store.configs(session.name, stage=STAGE)}
    config = existing.get(source["trial_number"])
    if config is None:
        config_id = session.store.add_config(session.name, trial_number=source["trial_number"], kind=source["kind"],
                                             stage=STAGE, name=source["name"], params=source["params"],
                                             worker=session.worker_id)
        config = next(c for c in session.store.configs(session.name, stage=STAGE) if c["id"] == config_id)
    previous = [r for r in session.store.runs(session.name, with_series=False) if r["config_id"] == config["id"]]
    resume_from = None
    for run in reversed(previous):
        resume_from = latest_state(Path(run["output_dir"])) if run["output_dir"] else None
        if resume_from is not None:
            break
    session._lock.acquire()
    session._stop.clear()
    try:
        session._train(config, 0, steps=steps, seed=session.settings.base_seed, dataset=dataset,
                       save_every_n_steps=save_every_n_steps or max(1, steps // 10), save_state=True,
                       resume_from=resume_from)
    finally:
        session._lock.release()
    return session.store.runs(session.name, with_series=False)[-1]["id"]
