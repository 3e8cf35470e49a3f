"""Promotion: the winning configuration trained for real, with periodic saves, resumable.

A search finds a configuration with short runs; promotion trains it for the full length
(on the full dataset, or another one given here) with ``save_every_n_steps`` checkpoints and
``save_state``, as a separate ``promote`` stage of the session. If that long run is
interrupted, promoting again resumes it from its newest saved state instead of starting
over. (To run it by hand instead, ``python -m bracket export`` writes the command.)

**Default length.** Without ``--steps`` the winner is trained for its *best step*
(``bracket.session.best_step``) — the step count at which its per-step score was best in
the search. With another dataset (``--dataset``) that step count is scaled by the ratio of
the two datasets' image counts, so the run sees each image as many times (the same number
of epochs) as the best search run did: a best step of 400 on 20 images becomes 2000 on 100.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bracket.errors import BracketError
from bracket.session.finals import top_configs

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

STAGE = "promote"


def latest_state(output_dir: Path) -> Path | None:
    """The newest ``*-state`` folder the trainer saved under ``output_dir`` (sd-scripts/musubi)."""
    if not output_dir.is_dir():
        return None
    states = [p for p in output_dir.iterdir() if p.is_dir() and p.name.endswith("-state")]
    return max(states, key=lambda p: p.stat().st_mtime) if states else None


def _source_config(session: "Session", run_id: int | None) -> dict:
    if run_id is None:
        finals = top_configs_by_stage(session, "final") or top_configs(session, 1)
        if not finals:
            raise BracketError("No configuration has a score yet; run the search before promoting a winner.")
        return finals[0]
    run = session.store.get_run(int(run_id))
    if run is None or run["session"] != session.name or run["config_id"] is None:
        raise BracketError(f"Run {run_id} is not a trained run of session {session.name}; pick one from the table.")
    return next(c for c in session.store.configs(session.name) if c["id"] == run["config_id"])


def top_configs_by_stage(session: "Session", stage: str) -> list[dict]:
    """Configs of ``stage`` ordered by their recorded value (best first)."""
    configs = [c for c in session.store.configs(session.name, stage=stage) if c["value"] is not None]
    return sorted(configs, key=lambda c: c["value"])


def default_steps(session: "Session", source: dict, dataset: Path | None) -> int:
    """The source config's best step, scaled by the dataset sizes when ``dataset`` is another one."""
    from bracket.dataset.validation import preflight_dataset
    from bracket.session.best_step import session_step_curves

    curve = session_step_curves(session, str(source.get("stage") or "search")).get(source["id"])
    best = curve.best_step if curve is not None and curve.best_step else session.settings.steps
    style = getattr(session.trainer, "dataset_style", None)
    search_dataset = session.parts.fields.get("dataset", "")
    if dataset is None or not style or not search_dataset:
        return int(best)
    before = preflight_dataset(Path(search_dataset), style).media
    after = preflight_dataset(Path(dataset), style).media
    return max(1, round(best * after / before)) if before and after else int(best)


def promote(session: "Session", *, steps: int | None = None, run_id: int | None = None,
            save_every_n_steps: int | None = None, dataset: Path | None = None) -> int:
    """Train (or resume) the promoted run (default length: its best step, see above); returns its run id."""
    if dataset is not None and not Path(dataset).exists():
        raise BracketError(f"Dataset {dataset} does not exist; give the full dataset's TOML or folder.")
    if steps is None:
        steps = default_steps(session, _source_config(session, run_id), dataset)
    if steps < 1:
        raise BracketError("Promotion needs a positive step count (--steps).")
    if save_every_n_steps is not None and save_every_n_steps < 1:
        raise BracketError("--save-every must be a positive number of steps.")
    if dataset is not None and not Path(dataset).exists():
        raise BracketError(f"Dataset {dataset} does not exist; give the full dataset's TOML or folder.")
    source = _source_config(session, run_id)
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
