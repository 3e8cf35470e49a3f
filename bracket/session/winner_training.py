"""The winner's training: a chosen configuration trained for real, with periodic saves, resumable.

A search finds a configuration with short runs; this trains the winner (chosen by the
standings, ``bracket.app.stages.train_winner``: the finals' best when there are finals) for the
full length (on the full dataset, or another one) with ``save_every_n_steps`` checkpoints
and ``save_state``, as a separate stage of the session (stored as ``promote``, the name old
sessions have; not a halving promotion). If that long run is interrupted, training it again
resumes it from its newest saved state that is complete and its own
(``bracket.session.run_state.resumable_state``: else the one before, else step 0) instead
of starting over — in the same run row and folder, so its loss series goes on with true steps.
A winner's training that finished is not trained again for the same length. (To run it
by hand instead, ``python -m bracket export`` writes the command.)

**Default length.** The app trains the winner for its *best step* (``Winner.step``,
``bracket.session.scoring.best_step``; its run's own step count when no evidence names an earlier
step). With another dataset (``--dataset``) that step count is scaled by the ratio of the
two datasets' image counts (:func:`scaled_steps`), so the run sees each image as many times
(the same number of epochs) as the best search run did: a best step of 400 on 20 images
becomes 2000 on 100.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bracket.session.pipeline import RunPipeline
from bracket.session.run_state import resumable_state

STAGE = "promote"


def scaled_steps(pipeline: RunPipeline, steps: int, dataset: Path | None) -> int:
    """``steps`` scaled by the image counts of ``dataset`` and the search's dataset (same epochs)."""
    from bracket.dataset.preflight import preflight_dataset

    style = getattr(pipeline.trainer, "dataset_style", None)
    search_dataset = pipeline.parts.fields.get("dataset", "")
    if dataset is None or not style or not search_dataset:
        return steps
    before = preflight_dataset(Path(search_dataset), style).media
    after = preflight_dataset(Path(dataset), style).media
    return max(1, round(steps * after / before)) if before and after else steps


def train_winner(pipeline: RunPipeline, source: dict[str, Any], *, steps: int, save_every_n_steps: int | None = None,
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
    options: dict[str, Any] = {"save_every_n_steps": save_every_n_steps or max(1, steps // 10), "save_state": True}
    last = previous[-1] if previous else None
    if last is not None and last["status"] == "done" and int(last.get("max_steps") or 0) == steps:
        return int(last["id"])  # promoted already: its state is at the end, a trainer would refuse it
    found = resumable_state(pipeline.trainer, Path(last["output_dir"]), run_dir=Path(last["run_dir"]), length=steps,
                            session=name, run_id=int(last["id"])) if last and last["output_dir"] else None
    resume_from, resume_step = found if found else (None, None)
    if last is not None and resume_from is not None and last["status"] in ("interrupted", "failed") \
            and int(last.get("max_steps") or 0) == steps:
        # the same run goes on, in its own row and folder: its series continues with true steps
        # (a trainer that counts from 1 again after a resume is mapped, ``bracket.session.launches``)
        status = pipeline.resume(last["id"], from_status=last["status"], resume_from=resume_from,
                                 resume_step=resume_step, dataset=dataset, **options)
        if status is not None:
            return int(last["id"])
    pipeline.train(config, 0, steps=steps, seed=pipeline.settings.base_seed, dataset=dataset,
                   resume_from=resume_from, **options)
    return store.runs(name, with_series=False)[-1]["id"]
