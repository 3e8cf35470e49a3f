"""The Compare tab's side of the open session: ``SessionManager.compare``.

One :class:`Compare` per :class:`~bracket.app.manager.SessionManager`. It

* builds the Compare grid and the steps × prompts matrices (:mod:`bracket.app.grid`,
  :mod:`bracket.app.progression`), with the manager's thumbnail cache;
* picks what to score next: unrated runs and blind pairs where a rating could change the
  answer most (:mod:`bracket.app.rating_queue`, :mod:`bracket.judge.informative`);
* orders the grid by any judge and hands each cell its image judges' scores
  (:mod:`bracket.app.judge_order`, :mod:`bracket.session.scoring.image_judges`);
* records ratings and pairwise choices (the manager then drops what it derived from the store
  and keeps ``status``'s view current: ``SessionManager.forget``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bracket.app.grid import GridData, build_grid
from bracket.app.rating_effect import search_readings
from bracket.app.rating_queue import rate_next, run_labels
from bracket.app.rungs import run_marks
from bracket.errors import BracketError

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.holder import SessionHolder

#: the run statuses that can be rated or compared
SCORABLE = ("done", "paused")  # rated and compared: finished runs, and runs paused at a rung


class Compare:
    """Pictures of the open session's runs, and its ratings and pairwise choices."""

    def __init__(self, manager: "SessionHolder") -> None:
        self._manager = manager

    def _runs(self, run_ids: list[int]) -> tuple[Any, Any, list[dict[str, Any]]]:
        """(session, snapshot, the runs ``run_ids`` in order); an id not of the session is refused."""
        session, snap = self._manager.require(), self._manager.require_snapshot()
        by_id = {r["id"]: r for r in snap.runs}
        unknown = [i for i in run_ids if i not in by_id]
        if unknown:
            raise BracketError(f"Run(s) {unknown} are not part of session {session.name}; pick runs from the list.")
        return session, snap, [by_id[i] for i in run_ids]

    def grid(self, run_ids: list[int], step: int | None = None, *, blind: bool = False) -> GridData:
        """Rows = prompts, columns = ``run_ids`` (in order), cells = samples at ``step``.

        ``blind`` serves every file under a neutral name (the pairwise panel)."""
        session, snap, runs = self._runs(run_ids)
        control = session.parts.fields.get("sample_control_image", "")
        return build_grid(runs, session.settings.prompts(), thumbs=self._manager.thumbs,
                          runs_dir=self._manager.runs_dir, step=step, sample_kind=snap.sample_kind,
                          control_image=control, blind=blind, judged=None if blind else self._stored())

    def _stored(self) -> dict[int, dict[str, Any]]:
        """Run id -> the stored run record (its judges' records), read once per store change."""
        from bracket.session.store.change_memo import stored_rows

        return {r["id"]: r for r in stored_rows(self._manager.require())[0]}

    def judge_keys(self) -> list[str]:
        """The judges the grid can be ordered by: those that scored a run of the session."""
        from bracket.app.judge_order import judge_values

        manager = self._manager
        return manager.memo("judge-keys", lambda: list(judge_values(manager.standings(),
                                                                    list(self._stored().values()))),
                            structural=True)

    def order_by(self, run_ids: list[int], judge: str, step: int | None = None) -> list[int]:
        """``run_ids`` best first by ``judge`` (the image judges at ``step``; ``judge_order``)."""
        from bracket.app.judge_order import judge_values, ordered

        values = judge_values(self._manager.standings(), list(self._stored().values()), step)
        return ordered([int(i) for i in run_ids], values.get(judge, {}))

    def progressions(self, run_ids: list[int]) -> list[GridData]:
        """One steps × prompts matrix per run in ``run_ids`` (in order)."""
        from bracket.app.progression import build_progression

        session, snap, runs = self._runs(run_ids)
        return [build_progression(run, session.settings.prompts(), thumbs=self._manager.thumbs,
                                  runs_dir=self._manager.runs_dir, sample_kind=snap.sample_kind) for run in runs]

    def scorable_runs(self) -> list[dict[str, Any]]:
        snap = self._manager.snapshot()
        return [] if snap is None else [r for r in snap.runs if r["status"] in SCORABLE and r["kind"] != "setup"]

    def next_unrated(self, k: int = 4) -> list[int]:
        """Up to ``k`` finished runs nobody rated yet, where a rating could change the answer most."""
        return self.rate_next(k)[0]

    def rate_next(self, k: int = 4) -> tuple[list[int], str]:
        """(runs to rate next, the one-line why): ``rating_queue.rate_next``."""
        session = self._manager.require()  # "No search is open" before anything else
        return rate_next(self._manager.standings(), {r["id"] for r in self.scorable_runs()}, k,
                         search_readings(session))

    def run_labels(self) -> dict[int, str]:
        """Compare's label per finished run: stage, seed, where it stands on the rungs of a halving
        search (``stopped at 1/9 (paused at step 10)``), score with its raw figures, rated or not."""
        manager = self._manager
        return manager.memo("labels", lambda: run_labels(manager.standings(), {r["id"] for r in self.scorable_runs()},
                                                         run_marks(manager)), structural=True)

    def next_pairs(self, k: int = 1) -> list[tuple[int, int]]:
        """Pairs for a blind comparison whose order is least certain among the contenders
        (``bracket.judge.pairs.informative_pairs``)."""
        from bracket.judge.informative import candidates_from_standings
        from bracket.judge.pairs import informative_pairs

        session, scorable = self._manager.require(), [r["id"] for r in self.scorable_runs()]
        return informative_pairs(candidates_from_standings(self._manager.standings(), scorable),
                                 session.store.comparisons(session.name), k)

    def rate(self, run_id: int, value: float, prompt_index: int | None = None, step: int | None = None) -> str:
        """Record a rating (``step``: the step whose samples were shown, for the best step);
        returns what it changed (``bracket.app.rating_effect``)."""
        from bracket.app.rating_effect import rate_and_explain

        message = rate_and_explain(self._manager.require(), int(run_id), value, prompt_index, step)
        self._manager.forget(changed=True)
        return message

    def choose(self, left_run_id: int, right_run_id: int, winner: str) -> None:
        """Record a pairwise choice (``winner``: ``left``, ``right`` or ``tie``)."""
        self._manager.require().add_comparison(int(left_run_id), int(right_run_id), winner)
        self._manager.forget(changed=True)

    def undo_choice(self) -> dict[str, Any] | None:
        """Take back the last pairwise choice of the open session (None when there is none)."""
        undone = self._manager.require().undo_last_comparison()
        self._manager.forget(changed=True)
        return undone

    def ratings(self) -> list[dict[str, Any]]:
        session = self._manager.require()
        return session.store.ratings(session.name)

    def comparisons(self) -> list[dict[str, Any]]:
        session = self._manager.require()
        return session.store.comparisons(session.name)
