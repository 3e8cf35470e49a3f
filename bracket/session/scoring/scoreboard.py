"""The scoreboard: current scores of a session's runs and what the sampler sees of them.

Scores are derived, never frozen (``bracket.session.scoring.run_scores``): every read recomputes them
from the runs, ratings and comparisons in the store as they are now. A :class:`Scoreboard`
does that read for one session and keeps what may be kept between reads — each finished
run's loss summary (:class:`~bracket.session.scoring.run_scores.SummaryCache`; with the session's folder,
:class:`~bracket.session.scoring.summaries.KeptSummaries`, kept across processes too), so a poll, a
suggestion or a restarted app re-scores a long search without re-reading every loss series.

Stages are never mixed: search, final and promote runs are scored each among their own.
Ranking configs and naming a winner is the standings' job (``bracket.standings``), one
level up; the scoreboard gives the numbers they rank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bracket.search.types import ScoredConfig
from bracket.session.scoring.ratings import record_comparison, record_rating
from bracket.session.scoring.run_scores import (
    RunScore,
    SummaryCache,
    config_losses,
    config_values,
    diverged_configs,
    needs_series,
    rated_configs,
    sampler_history,
    score_runs,
)
from bracket.session.scoring.sampler_values import Reading, config_measured, taste_readings
from bracket.session.scoring.summaries import SUMMARY_FILE, KeptSummaries
from bracket.session.search_settings import SearchSettings
from bracket.session.store import Store


class Scoreboard:
    """Current scores of one session, from its store; safe to read from several threads."""

    def __init__(self, store: Store, session_name: str, settings: SearchSettings, space: Any, *,
                 eval_loss: bool, folder: Path | None = None) -> None:
        self.store = store
        self.session_name = session_name
        self.settings = settings
        self.space = space
        #: text trainers are judged on their evaluation loss (read with every run's series)
        self.eval_loss = eval_loss
        #: each finished run's loss summary; with ``folder``, kept there between processes too
        #: (``bracket.session.scoring.summaries``: a restarted app or ``status`` reads no series again)
        self.summaries: SummaryCache = (KeptSummaries(folder / SUMMARY_FILE, writable=not store.read_only)
                                        if folder is not None else SummaryCache())
        self.summaries.use_validation = not eval_loss  # as ``score_runs`` sets it: kept summaries match

    def scores(self, runs: list[dict[str, Any]] | None = None) -> dict[int, RunScore]:
        """Current combined score of every finished run (ratings included, as of now)."""
        store, name = self.store, self.session_name
        runs = store.runs(name, with_series=False) if runs is None else runs
        missing = [r["id"] for r in runs if "loss" not in r and (self.eval_loss or needs_series(r, self.summaries))]
        if missing:
            series = store.series(missing)
            runs = [{**r, **series[r["id"]]} if r["id"] in series else r for r in runs]
        ratings, comparisons = store.ratings(name), store.comparisons(name)
        scores: dict[int, RunScore] = {}
        for stage in {r["stage"] for r in runs if r["stage"] != "setup"}:  # never mix finals with short runs
            scores.update(score_runs([r for r in runs if r["stage"] == stage], ratings, comparisons,
                                     self.settings.weights, eval_loss=self.eval_loss, cache=self.summaries))
        self.save_summaries()
        return scores

    def save_summaries(self) -> None:
        """Keep the run summaries made since the last save (when they are kept in a folder)."""
        if isinstance(self.summaries, KeptSummaries):
            self.summaries.save()

    def config_values(self, runs: list[dict[str, Any]],
                      scored_among: list[dict[str, Any]] | None = None) -> dict[int, float]:
        """Config id -> mean current score of its scored runs among ``runs``, each run scored among
        ``scored_among`` (default: ``runs`` themselves; scores normalise over the runs they are given)."""
        return config_values(runs, self.scores(runs if scored_among is None else scored_among))

    def stage_runs(self, stage: str) -> list[dict[str, Any]]:
        """The session's runs of ``stage`` (without their loss series)."""
        return [r for r in self.store.runs(self.session_name, with_series=False) if r["stage"] == stage]

    def scored_configs(self, runs: list[dict[str, Any]] | None = None, scores: dict[int, RunScore] | None = None,
                       configs: list[dict[str, Any]] | None = None) -> list[ScoredConfig]:
        """Every search config as the sampler should see it now (current scores, running ones);
        from the given search ``runs``, their ``scores`` and search ``configs`` when the caller
        has them (each read or scored now when not)."""
        runs = self.stage_runs("search") if runs is None else runs
        scores = self.scores(runs) if scores is None else scores
        configs = self.store.configs(self.session_name, stage="search") if configs is None else configs
        values = self.sampler_values(runs, scores, configs)
        return sampler_history(configs, values,
                               self.space, rated_configs(runs, scores), diverged_configs(runs, scores),
                               config_losses(runs, scores), config_measured(runs, scores))

    def readings(self, runs: list[dict[str, Any]], scores: dict[int, RunScore],
                 configs: list[dict[str, Any]]) -> dict[int, Reading]:
        """Config id -> what the sampler sees of it, with its spread (``taste_readings``: the person's
        verdicts and their predictions once a run is judged), from search ``runs``, their ``scores``
        and the search ``configs``; a search of full runs and a halving search's full-length configs
        alike ("Next unrated" and a rating's effect read them too)."""
        return taste_readings(runs, scores, {c["id"]: self.space.searched_params(c["params"]) for c in configs})

    def sampler_values(self, runs: list[dict[str, Any]], scores: dict[int, RunScore],
                       configs: list[dict[str, Any]]) -> dict[int, float]:
        """Config id -> the value the sampler sees for it: :meth:`readings`' values."""
        return {cid: reading.value for cid, reading in self.readings(runs, scores, configs).items()}

    # -- human input ------------------------------------------------------------------
    def add_rating(self, run_id: int, value: float, prompt_index: int | None = None,
                   step: int | None = None) -> None:
        """Record a 1–10 rating (``bracket.session.scoring.ratings``); it counts from the next read."""
        record_rating(self.store, self.session_name, run_id, value, prompt_index, step)

    def add_comparison(self, left_run_id: int, right_run_id: int, winner: str) -> None:
        """Record a blind pairwise choice (``left``, ``right`` or ``tie``)."""
        record_comparison(self.store, self.session_name, left_run_id, right_run_id, winner)

    def undo_last_comparison(self) -> dict[str, Any] | None:
        """Take back the most recent pairwise choice; returns it (None when there is none)."""
        return self.store.delete_last_comparison(self.session_name)
