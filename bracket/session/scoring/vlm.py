"""Running the VLM judge beside training, never in its way.

When a session has a VLM configured (``SearchSettings.vlm``: base URL and model; the API
key is kept in memory or read from ``BRACKET_VLM_API_KEY`` for ``BRACKET_VLM_BASE_URL`` only,
never stored), each finished run's final samples are sent to the judge on a single background
thread. Training goes on meanwhile; the result lands in the run's ``judges`` record and enters the combined score at
the next read. A judge that fails leaves the run unscored by it — the search never fails
because of the VLM. A video sample (video presets) is judged from frames of its ``.mp4``
(see ``bracket.judge.vlm``); an image per prompt otherwise.

When a run rendered samples at intermediate steps, those steps are scored too (after the
final one) and kept as ``judges["vlm_steps"]`` (step → score), which the best-step score
(``bracket.session.scoring.best_step``) uses; the run's own VLM score stays the final step's.

A run paused at a rung of a halving search (:meth:`VlmScorer.submit_rung`) has the samples of
its pause step judged the same way, on the same thread, kept as ``judges["at_step"][step]["vlm"]``
— what ``bracket.session.loop.rung_scores`` reads for that step, also after the run went on — and
reused for that step once the run finishes. :meth:`VlmScorer.wait_rungs` lets the halving loop
wait for those verdicts before it decides a promotion.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bracket import settings as app_settings
from bracket.judge.base import JudgeResult
from bracket.judge.vlm import VlmConfig, VlmJudge, is_video
from bracket.session.scoring.run_scores import judge_record, verdicts_at
from bracket.session.scoring.rung_verdicts import QueuedScorer, merge_judges, store_at_step
from bracket.session.scoring.samples import image_problem
from bracket.session.store import Store
from bracket.trainer.prompts import SamplePrompt

log = logging.getLogger(__name__)


def same_judge_url(first: str, second: str) -> bool:
    """Whether two judge server URLs name the same server (a trailing ``/`` aside)."""
    return bool(first.strip()) and first.strip().rstrip("/") == second.strip().rstrip("/")


def judge_api_key(base_url: str, typed_key: str | None) -> str | None:
    """The key sent to ``base_url``: the one typed with it, else ``BRACKET_VLM_API_KEY`` only when
    ``base_url`` is the ``BRACKET_VLM_BASE_URL`` the environment configures it for — the
    operator's key never goes to a URL someone typed."""
    if typed_key:
        return str(typed_key)
    if same_judge_url(base_url, app_settings.env("BRACKET_VLM_BASE_URL")):
        return app_settings.env("BRACKET_VLM_API_KEY") or None
    return None


def vlm_config(vlm: dict[str, Any]) -> VlmConfig | None:
    """The judge's configuration from session settings (plus environment defaults), or None."""
    base_url = str(vlm.get("base_url") or app_settings.env("BRACKET_VLM_BASE_URL"))
    model = str(vlm.get("model") or app_settings.env("BRACKET_VLM_MODEL"))
    if not vlm.get("enabled", bool(vlm.get("base_url"))) or not base_url or not model:
        return None
    api_key = judge_api_key(base_url, vlm.get("api_key"))
    return VlmConfig(base_url=base_url, model=model, api_key=api_key,
                     repeats=int(vlm.get("repeats", 3)), timeout_s=float(vlm.get("timeout_s", 120.0)))


JUDGED_KINDS = ("image", "video")


def final_samples(samples: list[dict[str, Any]], prompts: list[SamplePrompt], step: int | None = None
                  ) -> list[tuple[Path, str]]:
    """(sample, prompt) pairs of the last rendered step (or of ``step``), one per prompt: its
    video when there is one (the judge reads frames from it), else its first frame image."""
    images = [s for s in samples if s.get("kind") in JUDGED_KINDS and s.get("step") is not None]
    if not images:
        return []
    last = max(s["step"] for s in images) if step is None else step
    chosen: dict[int, dict[str, Any]] = {}
    for sample in sorted(images, key=lambda s: (s.get("kind") != "video", s.get("frame") or 0)):
        index = sample["prompt_index"]
        if sample["step"] == last and index not in chosen and index < len(prompts):
            chosen[index] = sample
    return [(Path(chosen[i]["path"]), prompts[i].text) for i in sorted(chosen)]


def sample_problem(path: Path) -> str | None:
    """Why a sample cannot be judged (an unreadable image, an empty video file), or None."""
    if is_video(path):
        size = path.stat().st_size if path.is_file() else 0
        return None if size else f"{path.name}: the video file is missing or empty"
    return image_problem(path)


class VlmScorer(QueuedScorer):
    """One background thread that scores finished runs (and runs paused at a rung) with the VLM
    judge; ``on_scored`` is called (in that thread) once each run's scores are all stored
    (``Session.changed``)."""

    def __init__(self, store: Store, session: str, config: VlmConfig, prompts: list[SamplePrompt],
                 on_scored: Callable[[], None] | None = None) -> None:
        super().__init__("bracket-vlm")
        self.store, self.session, self.prompts, self.on_scored = store, session, prompts, on_scored
        self.judge = VlmJudge(config)

    def _verdict(self, run: dict[str, Any], step: int | None = None) -> tuple[JudgeResult, dict[str, Any]]:
        """The judge's result on ``run``'s samples of ``step`` (its last sampled step when None),
        and its stored record (unreadable samples skipped and listed)."""
        pairs = final_samples(run["samples"], self.prompts, step)
        unreadable = [problem for path, _ in pairs if (problem := sample_problem(path))]
        readable = [(path, text) for path, text in pairs if sample_problem(path) is None] if unreadable else pairs
        if pairs and not readable:
            result = JudgeResult.no_data("no readable sample image to judge (unreadable: "
                                         + "; ".join(unreadable) + ")")
        else:
            result = self.judge.score_run(readable)
        record = judge_record(result)
        if unreadable:  # skipped, and listed with the judge's record
            record["unreadable"] = unreadable
        return result, record

    def _score_rung(self, run_id: int) -> None:
        run = self.store.get_run(run_id)
        step = (run or {}).get("pause_step")
        if run is None or run.get("status") != "paused" or not step \
                or (verdicts_at(run, int(step)).get("vlm") or {}).get("score") is not None:
            return  # gone on, or judged at this step already (a resume stopped, a session reopened)
        _, record = self._verdict(run, int(step))
        store_at_step(self.store, run_id, int(step), vlm=record)
        if self.on_scored is not None:
            self.on_scored()

    def _score(self, run_id: int) -> None:
        run = self.store.get_run(run_id)
        if run is None:
            return
        result, record = self._verdict(run)
        merge_judges(self.store, run_id, vlm=record)
        steps = sorted({s["step"] for s in run["samples"] if s.get("kind") in JUDGED_KINDS and s.get("step")})
        per_step: dict[str, float | None] = {}
        for step in steps:
            if result.score is not None and step == steps[-1]:
                per_step[str(step)] = result.score
                continue
            judged = verdicts_at(run, step).get("vlm") or {}
            if judged.get("score") is not None:  # judged when the run paused there
                per_step[str(step)] = judged["score"]
                continue
            per_step[str(step)] = self.judge.score_run(final_samples(run["samples"], self.prompts, step)).score
        if per_step:
            merge_judges(self.store, run_id, vlm_steps=per_step)
        if self.on_scored is not None:  # once per run, after its last write
            self.on_scored()

