"""Per-stage leaderboards and the winner, from a session's runs, configs and current scores.

Pure functions of store records: :func:`build_standings` takes a session's training runs and
configs, their current combined scores, the ratings and comparisons; returns a :class:`Standings`.

* **Stages are never mixed.** ``search`` (short runs), ``final`` (longer runs of the best
  search configs with fresh seeds) and ``promote`` (the full-length run) each get their own
  leaderboard; each stage's scores are normalised among that stage's runs only.
* **A config's score** is the mean combined score of its runs over seeds, with a 95 %
  confidence interval (:mod:`bracket.stats`); the order is the score's until a person judged a
  run of the stage, then the person's own judgement outranks estimates (``evidence``; ``unseen``). Each
  config and run carries its headline (``headline``).
* **The winner** is the best config of the finals when any final is scored, else of the
  search (promote runs are the winner trained, not candidates). Its run is the config's
  best-scored finished run; its step count is that run's own (``max_steps``), its seeds those
  of the config's scored runs. ``step`` is its **best step** (``bracket.session.scoring.best_step``:
  the lowest per-step score over its seeds) when that is before the run's last step (None:
  the run's last step), so the answer is a (config, step) pair.
* **The answer is trained to full length.** With successive halving a config may stand at a
  lower rung (paused or stopped there, ``bracket.standings.rungs``): while any full-length config
  is scored, the ranks go to the full-length configs first and the lower-rung ones after them
  (the furthest rung first), so a config that only reached 1/9 is never crowned over one
  trained to the end; with none at full length yet, the best is named with a warning.
* **An unrated winner is flagged** when humans weigh in (human weight > 0 and at least one
  rating in the session) and no run of the winning config has a rating.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bracket.search.halving import Rungs
from bracket.session.scoring.image_judges import image_steps
from bracket.standings.evidence import config_duels, evidence_order, own_rating, own_verdict
from bracket.standings.headline import Headline, loss_values, pair_reading, seed_noise, stage_headlines
from bracket.standings.interval import FLOOR_ONLY, PairReading
from bracket.standings.parts import mean_figures, score_parts
from bracket.standings.quality import HeadlineReading
from bracket.standings.rows import ConfigRow, RunStanding
from bracket.standings.rungs import reached_full, rung_place, trained_steps
from bracket.standings.unseen import unseen_better
from bracket.stats import ONE_SEED_NOTE, ConfigScores, StatsReport, summarise, verdict

#: the stages with a leaderboard, in the order the winner is looked for first
STAGES = ("final", "search", "promote")
#: stages a winner can come from, in order of preference
WINNER_STAGES = ("final", "search")
UNRATED_WINNER = "the winner has no rating — rate it before trusting it"
_STATUS_RANK = {"done": 0, "disqualified": 1, "pruned": 2}
SHORT_WINNER = ("no config has trained to full length yet: the best, {name} (run {run}), stands at a lower rung; "
                "the answer is the best full-length run, once one is scored")


@dataclass
class StageBoard:
    """One stage's leaderboard: rows best first (unscored configs last), statistics, verdict."""

    stage: str
    rows: list[ConfigRow]
    stats: StatsReport
    verdict: str

    def top(self, k: int) -> list[ConfigRow]:
        """The ``k`` best ranked configs."""
        return [r for r in self.rows if r.rank is not None][:max(0, k)]

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "verdict": self.verdict, "notes": list(self.stats.notes),
                "rows": [r.to_dict() for r in self.rows]}


@dataclass
class Winner:
    """The answer: this config, from this stage, at this many steps."""

    stage: str
    config_id: int
    config_name: str
    kind: str
    trial_number: int | None
    params: dict[str, Any]
    mean: float | None
    run_id: int
    run_ids: list[int]
    steps: int | None
    seeds: list[int]
    judges: list[str]
    estimated: list[str]
    rated: bool
    disqualified: bool
    figures: dict[str, float] = field(default_factory=dict)
    #: a best step inside the run; None means the run's last step, ``steps``
    step: int | None = None
    #: what the best step rests on ("validation", "human", ...; "" without a best step)
    step_basis: str = ""
    #: its run is full-length (False: no config has trained to full length yet, see the warnings)
    full_length: bool = True
    #: its run failed or was disqualified (not merely paused at a rung or cut short)
    failed: bool = False
    #: the steps its run has trained (``RunStanding.trained_steps``; less than ``steps`` at a lower rung)
    trained_steps: int | None = None
    #: its config's headline (``bracket.standings.headline``): what it achieved, in words that do not move
    headline: Headline | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "config_id": self.config_id, "config": self.config_name, "kind": self.kind,
                "trial_number": self.trial_number, "params": dict(self.params), "mean": self.mean,
                "run_id": self.run_id, "run_ids": list(self.run_ids), "steps": self.steps,
                "trained_steps": self.trained_steps, "step": self.step, "step_basis": self.step_basis,
                "full_length": self.full_length, "seeds": list(self.seeds), "judges": list(self.judges),
                "estimated": list(self.estimated), "rated": self.rated, "disqualified": self.disqualified,
                "figures": dict(self.figures), "headline": self.headline.text if self.headline else ""}


@dataclass
class Standings:
    """Every stage's leaderboard, the winner, and the warnings that go with them."""

    boards: dict[str, StageBoard]
    winner: Winner | None
    #: human weight > 0 and at least one rating in the session
    humans_weigh_in: bool
    warnings: list[str] = field(default_factory=list)
    front: Any = None  #: fidelity against flexibility (``standings.front.Front``); None without image scores
    trust: list[Any] = field(default_factory=list)  #: agreement with the person (``standings.trust``)
    #: a halving search that ended with no config at full length: the answer, the best at its highest
    #: rung and how to finish it (``bracket.standings.short_answer``, also one of the warnings); "" otherwise
    budget_short: str = ""

    def board(self, stage: str) -> StageBoard | None:
        return self.boards.get(stage)

    def top(self, stage: str, k: int) -> list[ConfigRow]:
        board = self.boards.get(stage)
        return board.top(k) if board else []

    @property
    def verdict(self) -> str:
        """The verdict sentence of the stage the winner comes from (the search's without a winner)."""
        board = self.boards.get(self.winner.stage if self.winner else "search")
        return board.verdict if board else "No config has a finished score yet."

    @property
    def unrated_winner(self) -> bool:
        return UNRATED_WINNER in self.warnings

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner.to_dict() if self.winner else None, "verdict": self.verdict,
                "humans_weigh_in": self.humans_weigh_in, "warnings": list(self.warnings),
                "budget_short": self.budget_short,
                "front": self.front and self.front.to_dict(), "agreement": [t.to_dict() for t in self.trust],
                "stages": {stage: board.to_dict() for stage, board in self.boards.items()}}


def _count(ratings: Sequence[Mapping[str, Any]], comparisons: Sequence[Mapping[str, Any]]
           ) -> tuple[dict[int, int], dict[int, int]]:
    rated: dict[int, int] = {}
    for rating in ratings:
        rated[rating["run_id"]] = rated.get(rating["run_id"], 0) + 1
    compared: dict[int, int] = {}
    for comparison in comparisons:
        for key in ("left_run_id", "right_run_id"):
            compared[comparison[key]] = compared.get(comparison[key], 0) + 1
    return rated, compared


def _board(stage: str, configs: Sequence[Mapping[str, Any]], runs: Sequence[RunStanding],
           searched: Any, curves: Mapping[int, Any] | None = None, rungs: Rungs | None = None,
           comparisons: Sequence[Mapping[str, Any]] = ()) -> StageBoard:
    by_config: dict[int, list[RunStanding]] = {c["id"]: [] for c in configs}
    for run in runs:
        by_config.setdefault(run.config_id, []).append(run)
    info = {c["id"]: c for c in configs}
    stats, summaries = _ranked(by_config, info, config_duels(comparisons, {r.run_id: r.config_id for r in runs}))
    lines = stage_headlines(by_config, next((s.config_id for s in summaries
                                             if s.kind == "baseline" and by_config[s.config_id]), None))
    rows, rank = [], 0
    for s in summaries:
        rank += 1 if s.n else 0
        config, members = info.get(s.config_id, {}), by_config[s.config_id]
        parts = [p for r in members for p in r.parts]
        curve = (curves or {}).get(s.config_id)
        rows.append(ConfigRow(
            rank if s.n else None, s.config_id, config.get("trial_number"), s.name, s.kind, stage, s.mean,
            s.ci_low, s.ci_high, s.n, s.disqualified, searched(dict(config.get("params") or {})), members,
            mean_figures(parts), sorted({p.judge for p in parts if p.estimated and p.weight > 0}),
            curve.best_step if curve else None, curve.basis if curve else "",
            dict(zip(curve.steps, curve.scores)) if curve else {},
            dict(curve.per_judge.get("loss") or {}) if curve else {}, reached_full(config),
            rung_place(config, rungs) if rungs is not None else None, lines.get(s.config_id),
            step_images=image_steps(curve)))
    best = next((row for row in rows if row.rank == 1), None)
    won = _winning_run(best) if best else None
    short = sum(1 for row in rows if not row.full_length)
    others = f"the {short} others stand" if short != 1 else "the other stands"
    alone = {"alone": f"it is the only full-length config; {others} at a lower rung, ranked there (see the rungs)"
             } if short and best and best.full_length else {}
    noise = seed_noise(by_config.values())

    def pair(a: Any, b: Any) -> PairReading | None:  # the headline's tie rule for the verdict
        return pair_reading(by_config.get(a.config_id, ()), by_config.get(b.config_id, ()), noise,
                            a_is_baseline=a.kind == "baseline")

    if ONE_SEED_NOTE in stats.notes and loss_values(runs):  # a ± of one seed each is the floor's: said so
        said = [FLOOR_ONLY] if not noise else []  # (a lower-rung config's seeds measured a spread: no note)
        stats = replace(stats, notes=[n for note in stats.notes for n in (said if note == ONE_SEED_NOTE else [note])])

    return StageBoard(stage, rows, stats, verdict(stats, step=best.best_step if best else None,
                                                  steps=won.steps if won else None,
                                                  reading=HeadlineReading(lines, pair),
                                                  unsettled=unseen_better(rows, noise), **alone))


def _ranked(by_config: Mapping[int, Sequence[RunStanding]], info: Mapping[int, Mapping[str, Any]],
            duels: Mapping[tuple[int, int], float] | None = None) -> tuple[StatsReport, list[Any]]:
    """(the statistics the verdict rests on, the summaries in rank order): the full-length configs
    ranked first while one is scored, the lower-rung ones after them, the furthest rung first."""
    def scores(ids: Iterable[int]) -> StatsReport:
        return summarise((ConfigScores(cid, str(info.get(cid, {}).get("name", cid)),
                                       str(info.get(cid, {}).get("kind", "")),
                                       [r.score for r in by_config[cid]],
                                       sum(1 for r in by_config[cid] if r.disqualified))
                          for cid in ids),
                         order=evidence_order(by_config, duels))
    short = [cid for cid in by_config if not reached_full(info.get(cid, {}))]
    full = [cid for cid in by_config if cid not in short]
    if not short or not any(r.score is not None for cid in full for r in by_config[cid]):
        stats = scores(by_config)
        return stats, stats.summaries
    stats, lower = scores(full), scores(short).summaries
    ahead = sorted((s for s in lower if s.n), key=lambda s: -(info.get(s.config_id, {}).get("rung") or 0))
    return stats, ([s for s in stats.summaries if s.n] + ahead
                   + [s for s in stats.summaries + lower if not s.n])


def _winning_run(best: ConfigRow) -> RunStanding:
    """The run that stands for the best config: a finished one first, then the best scored."""
    scored = [r for r in best.runs if r.score is not None]
    return min(scored, key=lambda r: (_STATUS_RANK.get(r.status, 9), r.score, r.run_id))


def _winner(board: StageBoard) -> Winner | None:
    best = next((row for row in board.rows if row.rank == 1), None)
    return None if best is None else winner_of(board, best)


def winner_of(board: StageBoard, best: ConfigRow) -> Winner:
    """``best`` (a row of ``board``) as the answer: its best run, steps, seeds and judges."""
    scored = [r for r in best.runs if r.score is not None]
    run = _winning_run(best)
    early = best.best_step is not None and run.steps is not None and best.best_step < run.steps
    return Winner(board.stage, best.config_id, best.name, best.kind, best.trial_number, dict(best.params), best.mean,
                  run.run_id, [r.run_id for r in scored], run.steps, [r.seed for r in scored if r.seed is not None],
                  run.judges, run.estimated, any(r.rated for r in best.runs), run.disqualified or run.status != "done",
                  dict(best.figures), best.best_step if early else None, best.best_step_basis if early else "",
                  best.full_length, run.disqualified or run.status in ("failed", "disqualified"), run.trained_steps,
                  best.headline)


def build_standings(runs: Sequence[Mapping[str, Any]], configs: Sequence[Mapping[str, Any]],
                    scores: Mapping[int, Any], ratings: Sequence[Mapping[str, Any]] = (),
                    comparisons: Sequence[Mapping[str, Any]] = (), *, human_weight: float = 0.0,
                    searched: Any = None, curves: Mapping[str, Mapping[int, Any]] | None = None,
                    rungs: Rungs | None = None) -> Standings:
    """The standings of one session from its store records and current scores.

    ``scores`` maps run id to a ``RunScore`` (scored per stage, never across stages);
    ``searched`` turns a config's params into those the leaderboard shows (default: all);
    ``curves`` (stage -> config id -> ``bracket.session.scoring.best_step.StepCurve``) gives each
    config its best step and the winner its ``step``; ``rungs`` (a halving search's) gives each
    config its place on them (``rungs.rung_place``).
    """
    searched = searched or (lambda params: params)
    rated, compared = _count(ratings, comparisons)
    stage_of = {c["id"]: c.get("stage") or "search" for c in configs}
    standing: dict[str, list[RunStanding]] = {}
    for run in runs:
        if run.get("config_id") is None or run.get("kind") == "setup" or run.get("stage") == "setup":
            continue
        stage = stage_of.get(run["config_id"], run.get("stage") or "search")
        score = scores.get(run["id"])
        value = getattr(score, "value", None)
        standing.setdefault(stage, []).append(RunStanding(
            int(run["id"]), int(run["config_id"]), stage, run.get("seed"), run.get("max_steps"), str(run.get("status")),
            value, bool(getattr(score, "disqualified", False)), score_parts(score), rated.get(run["id"], 0),
            compared.get(run["id"], 0),
            str(((getattr(score, "details", None) or {}).get("loss") or {}).get("basis", "")), trained_steps(run),
            verdict=own_verdict(score), rating=own_rating(score)))
    boards = {}
    for stage in STAGES:
        stage_configs = [c for c in configs if (c.get("stage") or "search") == stage]
        if stage_configs or standing.get(stage):
            boards[stage] = _board(stage, stage_configs, standing.get(stage, []), searched, (curves or {}).get(stage),
                                   rungs, comparisons)
    winner = next((w for stage in WINNER_STAGES if stage in boards and (w := _winner(boards[stage]))), None)
    humans = human_weight > 0 and bool(ratings)
    warnings = []
    if winner is not None and humans and not winner.rated:
        warnings.append(UNRATED_WINNER)
    if winner is not None and not winner.full_length and not winner.failed:
        warnings.append(SHORT_WINNER.format(name=winner.config_name, run=winner.run_id))
    elif winner is not None and winner.disqualified:
        warnings.append(f"the best config's run {winner.run_id} was disqualified or did not finish; "
                        "no config has a usable score")
    return Standings(boards, winner, humans, warnings)
