"""Running the image judges beside training: a worker process, a cache, one background thread.

When the image judges are configured (``bracket.session.scoring.image_config``: their models in
the session's settings or ``.env``, see docs/JUDGES.md) and weigh above 0, every finished run's
sample images of every step are scored on one background thread while the next run trains: the
images not yet in the session's cache (``views/image_judges.json``, keyed by path, modification
time, size, prompt and models, so nothing is scored twice) go in one job to the session's one
worker process (``judge_worker``: ``python -m bracket.judge.image_worker --serve`` with
``BRACKET_JUDGE_PYTHON``, else the app's python; started on the first job, its models loaded once
for the whole search, ended by :meth:`ImageScorer.drain`), which scores them in batches. The
figures land in the run's ``judges["image"]`` (:mod:`bracket.session.scoring.image_judges`) and
enter the scores at the next read. A run paused at a rung of a halving search is scored the same
way up to its pause step, kept as ``judges["at_step"]["<step>"]["image"]``; the loop waits for
those as for the VLM's. A worker that fails leaves the run with ``judges["image"]["error"]`` and
no image scores; the search goes on (the next job starts a worker again). The likeness
references are the session's held-out images, else training images
(``image_config.likeness_references``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.errors import BracketError
from bracket.judge.image_judges import IMAGE_JUDGES, OPTIONAL, SCALES
from bracket.judge.preference import NAME as PREFERENCE
from bracket.session.scoring.image_config import (
    ImageJudgeConfig,
    image_judge_config,
    image_judges_wanted,
    likeness_references,
)
from bracket.session.scoring.image_judges import RECORD
from bracket.session.scoring.judge_worker import JudgeWorker
from bracket.session.scoring.run_scores import verdicts_at
from bracket.session.scoring.rung_verdicts import QueuedScorer, merge_judges, store_at_step
from bracket.session.store import Store
from bracket.trainer.prompts import SamplePrompt

log = logging.getLogger(__name__)


def cache_key(path: Path, prompt: str, kind: str, context: str) -> str | None:
    """The cache key of one sample's figures (None when the file is gone)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    text = json.dumps([str(path), stat.st_mtime_ns, stat.st_size, prompt, kind, context])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FigureCache:
    """The figures of every sample already scored (``views/image_judges.json`` of the session),
    read on first use (a session opened only to be looked at never reads it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._figures: dict[str, dict[str, Any]] | None = None

    @property
    def figures(self) -> dict[str, dict[str, Any]]:
        if self._figures is None:
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                loaded = {}
            self._figures = loaded if isinstance(loaded, dict) else {}
        return self._figures

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(self.figures), encoding="utf-8")
        os.replace(temporary, self.path)


def judged_samples(run: Mapping[str, Any], prompts: Sequence[SamplePrompt], step: int | None = None
                   ) -> list[tuple[int, Path, SamplePrompt]]:
    """(step, sample, prompt) of every rendered step up to ``step`` (all when None), one sample per
    prompt and step: its video when there is one (judged from frames), else its first frame."""
    chosen: dict[tuple[int, int], dict[str, Any]] = {}
    for sample in sorted(run.get("samples") or (), key=lambda s: (s.get("kind") != "video", s.get("frame") or 0)):
        where = (sample.get("step"), sample.get("prompt_index"))
        if sample.get("kind") not in ("image", "video") or None in where or where in chosen:
            continue
        if where[1] < len(prompts) and (step is None or where[0] <= step):
            chosen[where] = sample
    return [(s, Path(chosen[(s, i)]["path"]), prompts[i]) for s, i in sorted(chosen)]


def relative(path: Path, run: Mapping[str, Any]) -> str:
    try:
        return path.resolve().relative_to(Path(str(run.get("run_dir") or "/")).resolve()).as_posix()
    except ValueError:
        return path.name


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def build_record(run: Mapping[str, Any], rows: Sequence[tuple[int, Path, SamplePrompt, dict[str, Any]]],
                 references: dict[str, Any]) -> dict[str, Any]:
    """``judges["image"]`` of ``run`` from each judged sample's figures (see ``image_judges``)."""
    images: dict[str, dict[str, Any]] = {}
    by_step: dict[int, list[dict[str, Any]]] = {}
    preferred: dict[str, dict[str, float]] = {}
    errors = []
    for step, path, prompt, figures in rows:
        if "error" in figures:
            errors.append(str(figures["error"]))
            continue
        images[relative(path, run)] = {**{n: figures.get(n) for n in IMAGE_JUDGES if n not in OPTIONAL or n in figures},
                                       "step": int(step), "prompt_kind": prompt.kind}
        if figures.get("face"):  # the face-identity judge: "found", or why the sample has no figure
            images[relative(path, run)]["face"] = str(figures["face"])
        by_step.setdefault(int(step), []).append(figures)
        if figures.get(PREFERENCE) is not None:  # kept per prompt: compared only within one
            images[relative(path, run)][PREFERENCE] = figures[PREFERENCE]
            preferred.setdefault(str(step), {})[prompt.text] = float(figures[PREFERENCE])

    def means(rows: list[dict[str, Any]]) -> dict[str, Any]:
        shown = [n for n in IMAGE_JUDGES if n not in OPTIONAL or any(n in f for f in rows)]
        out: dict[str, Any] = {**{n: _mean([float(f[n]) for f in rows if f.get(n) is not None]) for n in shown},
                               "n_images": len(rows)}
        looked = [f for f in rows if f.get("face")]
        if looked:  # how many in-distribution samples showed a face (the rest have no face figure)
            out["faces"] = f"{sum(f['face'] == 'found' for f in looked)} of {len(looked)}"
        return out

    base = means(by_step.pop(0)) if 0 in by_step else None
    steps = {}
    for step, found in sorted(by_step.items()):
        figures = means(found)
        if base is not None and base["prompt_following"] is not None and figures["prompt_following"] is not None:
            figures["prompt_following"] -= base["prompt_following"]
        steps[str(step)] = figures
    record: dict[str, Any] = {"steps": steps, "images": images, "scales": dict(SCALES),
                              "base": {"step": 0, **base} if base else None, "references": references}
    if preferred:
        record[PREFERENCE] = preferred
    if errors:
        record["unreadable"] = errors
    return record


class ImageScorer(QueuedScorer):
    """One background thread that scores finished runs (and runs paused at a rung) with the image
    judges' worker; ``on_scored`` is called once each run's figures are stored."""

    def __init__(self, store: Store, session: str, folder: Path, config: ImageJudgeConfig,
                 prompts: Sequence[SamplePrompt], references: Sequence[Path],
                 on_scored: Callable[[], None] | None = None, *,
                 reference_note: Mapping[str, Any] | None = None) -> None:
        super().__init__("bracket-image-judges")
        self.store, self.session, self.config, self.on_scored = store, session, config, on_scored
        self.prompts = list(prompts)
        self.references = [str(p) for p in references]
        #: what the references are (``image_config.likeness_references``); training images unless told
        self.reference_note = dict(reference_note or {"source": "training images",
                                                      "note": "likeness is measured against images the runs "
                                                              "train on"})
        self.reference_note["count"] = len(self.references)
        self.folder = Path(folder)
        self.cache = FigureCache(self.folder / "views" / "image_judges.json")
        self._context = json.dumps([config.digest(), self.references])
        self._lock = threading.Lock()
        #: seconds the last job took loading models and scoring, its memory, and how many times the
        #: worker has loaded models (for the bench and the log)
        self.last_timing: dict[str, float] = {}
        python = str(Path(config.python).expanduser()) if config.python else sys.executable
        #: the session's one worker process, started on the first job (``judge_worker``)
        self.worker = JudgeWorker(python, self.folder / "logs" / "image-judges.log")

    def drain(self, timeout: float | None = None) -> None:
        """Wait (at most ``timeout``) for the queued scoring, then stop the thread and end the worker."""
        super().drain(timeout)
        self.worker.close()

    # -- the work (on the scorer's thread) ---------------------------------------------------
    def figures(self, samples: Sequence[tuple[int, Path, SamplePrompt]]) -> list[dict[str, Any]]:
        """Each sample's figures, from the cache or one worker job for those not in it."""
        keys = [cache_key(path, prompt.text, prompt.kind, self._context) for _, path, prompt in samples]
        missing = [(key, path, prompt) for key, (_, path, prompt) in zip(keys, samples)
                   if key is not None and key not in self.cache.figures]
        if missing:
            scored = self._run_worker([(path, prompt) for _, path, prompt in missing])
            for key, path, _ in missing:
                if str(path) in scored:
                    self.cache.figures[key] = scored[str(path)]
            self.cache.save()
        return [self.cache.figures.get(key or "", {"error": f"{path.name}: not scored"})
                for key, (_, path, _) in zip(keys, samples)]

    def _run_worker(self, items: Sequence[tuple[Path, SamplePrompt]]) -> dict[str, dict[str, Any]]:
        """Figures per image path of ``items``, from the session's worker (one job)."""
        job = {"backbone": self.config.backbone(), "references": self.references,
               "images": [{"path": str(path), "prompt": prompt.text, "kind": prompt.kind} for path, prompt in items]}
        result = self.worker.ask(job)
        self.last_timing = {k: float(result.get(k) or 0.0) for k in ("load_s", "score_s", "peak_rss_mb", "loads")}
        return dict(result.get("images") or {})

    def record(self, run: Mapping[str, Any], step: int | None = None) -> dict[str, Any]:
        """The run's ``judges["image"]`` from its samples up to ``step`` (every step when None)."""
        samples = judged_samples(run, self.prompts, step)
        try:
            figures = self.figures(samples)
        except BracketError as error:
            log.warning("image judges on run %s: %s", run.get("id"), error)
            return {"steps": {}, "images": {}, "scales": dict(SCALES), "base": None,
                    "references": self.reference_note, "error": str(error)}
        return build_record(run, [(s, p, q, f) for (s, p, q), f in zip(samples, figures)],
                            {**self.reference_note, "count": len(self.references)})

    def _score(self, run_id: int) -> None:
        run = self.store.get_run(run_id)
        if run is None:
            return
        merge_judges(self.store, run_id, **{RECORD: self.record(run)})
        if self.on_scored is not None:
            self.on_scored()

    def _score_rung(self, run_id: int) -> None:
        run = self.store.get_run(run_id)
        step = (run or {}).get("pause_step")
        if run is None or run.get("status") != "paused" or not step or verdicts_at(run, int(step)).get(RECORD):
            return  # gone on, or judged at this step already
        store_at_step(self.store, run_id, int(step), **{RECORD: self.record(run, int(step))})
        if self.on_scored is not None:
            self.on_scored()


def session_image_scorer(parts: Any, on_scored: Callable[[], None] | None = None) -> ImageScorer | None:
    """The image scorer of a session (its ``SessionParts``), or None when the image judges are not
    configured, weigh 0, or the preset renders no images or video."""
    settings, trainer = parts.settings, parts.trainer
    config = image_judge_config(settings.weights or {}, settings.image_models)
    if config is None or not image_judges_wanted(settings.weights or {}, trainer.sample_kind):
        return None
    references, note = likeness_references(trainer)
    return ImageScorer(parts.store, parts.name, parts.folder, config, settings.prompts(), references, on_scored,
                       reference_note=note)
