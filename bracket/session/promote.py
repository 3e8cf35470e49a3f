"""Promotion: a chosen configuration trained for real, with periodic saves, resumable.

A search finds a configuration with short runs; promotion trains the winner (chosen by the
standings, ``bracket.app.stages.promote``: the finals' best when there are finals) for the
full length (on the full dataset, or another one) with ``save_every_n_steps`` checkpoints
and ``save_state``, as a separate ``promote`` stage of the session. If that long run is
interrupted, promoting again resumes it from its newest saved state instead of starting
over. (To run it by hand instead, ``python -m bracket export`` writes the command.)

**Default length.** The app trains the winner for its *best step* (``Winner.step``,
``bracket.session.best_step``; its run's own step count when no evidence names an earlier
step). With another dataset (``--dataset``) that step count is scaled by the ratio of the
two datasets' image counts (:func:`scaled_steps`), so the run sees each image as many times
(the same number of epochs) as the best search run did: a best step of 400 on 20 images
becomes 2000 on 100.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bracket.session.pipeline import RunPipeline

STAGE = "promote"


def latest_state(output_dir: Path) -> Path | None:
    """The newest ``*-state`` folder the trainer saved under ``output_dir`` (sd-scripts/musubi)."""
    if not output_dir.is_dir():
        return None
    states = [p for p in output_dir.iterdir() if p.is_dir() and p.name.endswith("-state")]
    return max(states, key=lambda p: p.stat().st_mtime) if states else None


def scaled_steps(pipeline: RunPipeline, steps: int, dataset: Path | None) -> int:
    """``steps`` scaled by the image counts of ``dataset`` and the search's dataset (same epochs)."""
    from bracket.dataset.validation import preflight_dataset

    style = getattr(pipeline.trainer, "dataset_style", None)
    search_dataset = pipeline.parts.fields.get("dataset", "")
    if dataset is None or not style or not search_dataset:
        return steps
    before = preflight_dataset(Path(search_dataset), style).media
    after = preflight_dataset(Path(dataset), style).media
    return max(1, round(steps * after / before)) if before and after else steps


def train_promoted(pipeline: RunPipeline, source: dict[str, Any], *, steps: int, save_every_n_steps: int | None = None,
                   dataset: Path | None = None) -> int:
    """Train (or resume) config ``source`` as the promoted run for ``steps``; returns its run id.

    Call it inside the session's ``exclusive()`` section."""
    store, name = pipeline.store, pipeline.name
    existing = {c["trial_number"]: c for c in store.configs(name, stage=STAGE)}
    config = existing.get(source["trial_number"])
    if config is None:
        config_id = store.add_config(name, trial_number=source["trial_number"], kind=source["kind"],
                                     stage=STAGE, name=source["name"], params=source["params"],
                                     worker=pipeline.worker_id)
        config = next(c for c in store.configs(name, stage=STAGE) if c["id"] == config_id)
    previous = [r for r in store.runs(name, with_series=False) if r["config_id"] == config["id"]]
    resume_from = None
    for run in reversed(previous):
        resume_from = latest_state(Path(run["output_dir"])) if run["output_dir"] else None
        if resume_from is not None:
            break
    pipeline.train(config, 0, steps=steps, seed=pipeline.settings.base_seed, dataset=dataset,
                   save_every_n_steps=save_every_n_steps or max(1, steps // 10), save_state=True,
                   resume_from=resume_from)
    return store.runs(name, with_series=False)[-1]["id"]
