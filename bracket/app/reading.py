"""What the Search and Setup tabs read of the open session: ``SessionManager.reading``.

One :class:`Reading` per :class:`~bracket.app.manager.SessionManager`; it reads through the
manager's cached snapshot and standings (``SessionManager.memo``: built once per store change
for every open tab) and hands back plain data:

* :meth:`Reading.log_tail` and :meth:`Reading.loss_series` — the run log and the loss curves,
  read again only when new (``log_view``, ``loss_series``);
* :meth:`Reading.estimate_seconds` — the wall time of a budget (``estimate``);
* :meth:`Reading.short_reasons` — the trial table's "why" column: the line recorded when each
  config was proposed (looked up once per config, not once per poll);
* :meth:`Reading.config_choices` and :meth:`Reading.suggestion` — the search's configs, newest
  first, and why one was proposed (``suggestion_reason``);
* :meth:`Reading.past_sessions` — the earlier sessions of a preset, to warm-start from;
* :meth:`Reading.setup_values` — the open (or any past) session's settings as Setup-form values
  (``form_values``).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket.app.estimate import Estimate, wall_time_estimate
from bracket.app.log_view import LogTail
from bracket.app.loss_series import LossSeries
from bracket.session import SessionSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.holder import SessionHolder
    from bracket.app.suggestion_reason import Reason

#: the mark of a line rebuilt from today's scores (a config proposed before lines were recorded)
REBUILT = "(rebuilt from today's scores: not recorded at proposal)"


def search_scores(manager: "SessionHolder") -> dict[int, float]:
    """Config id → mean score on the search board of the open session's standings."""
    table = manager.standings()
    board = table.board("search") if table else None
    return {row.config_id: row.mean for row in (board.rows if board else []) if row.mean is not None}


class Reading:
    """The open session's log, curves, estimate, "why" lines and form values (see the module)."""

    def __init__(self, manager: "SessionHolder") -> None:
        self._manager = manager
        self._log = LogTail()
        self._loss: tuple[Any, LossSeries] | None = None  # (session, its series)
        #: each session's "why" line per config id: looked up once, when the config first shows
        self._reasons: "weakref.WeakKeyDictionary[Any, dict[int, str]]" = weakref.WeakKeyDictionary()

    def log_tail(self, lines: int = 40, snap: SessionSnapshot | None = None) -> list[str]:
        """The tail of the current run's log, else of the last run that has one (read again
        only when the file grew; ``bracket.app.log_view``); ``snap``: the snapshot the caller just
        got (else one is taken)."""
        snap = snap if snap is not None else self._manager.snapshot()
        return [] if snap is None else self._log.read(snap, self._manager.memo, lines)

    def loss_series(self, run_ids: list[int] | None = None,
                    snap: SessionSnapshot | None = None, kind: str = "loss") -> dict[int, list[tuple[int, float]]]:
        """Loss series of finished runs (read once per session, then cached) and of the run in
        progress (``snap``: the snapshot the caller just got; else one is taken): ``bracket.app.loss_series``."""
        session = self._manager.require()
        snap = snap if snap is not None else self._manager.snapshot()
        if self._loss is None or self._loss[0] is not session:
            self._loss = (session, LossSeries())
        return self._loss[1].read(session.store, snap, run_ids, kind)  # kind "eval_loss": validation

    def estimate_seconds(self, total_runs: int, preset_id: str | None = None, steps: int | None = None,
                         fields: dict[str, str] | None = None) -> Estimate | None:
        """``total_runs`` × the median finished run like these (``bracket.app.estimate``: same preset,
        steps, resolution; this and earlier sessions); by default the open session's setup."""
        manager, session = self._manager, self._manager.session
        if (preset_id is None or steps is None) and session is not None:
            preset_id, steps, fields = session.parts.preset.id, session.settings.steps, dict(session.parts.fields)
        return None if preset_id is None or steps is None else wall_time_estimate(
            manager.runs_dir, preset_id, int(steps), fields, total_runs, current=session,
            storage_url=manager.storage_url)

    def short_reasons(self, snap: Any = None) -> dict[int, str]:
        """One line per search config of the open session on why it was proposed (config id →
        text): the line the search wrote with the config's trial when it proposed it (``why``,
        ``bracket.session.loop.proposing``), so a restart or a later rating does not change it. A config
        of an older session without one gets a line rebuilt from the scores of now, marked
        :data:`REBUILT`. Lines are kept per session (the same dict each call): only a config not
        seen before is looked up, so a poll costs a dict lookup (its scores, for a rebuild, come
        from ``snap``, the caller's snapshot)."""
        from bracket.app.suggestion_reason import WHY_ATTR, trial_attrs
        from bracket.app.suggestion_reason import short_reasons as lines_for
        from bracket.search.controller import DEFAULT_N_STARTUP_TRIALS

        session = self._manager.session
        snap = snap if snap is not None else self._manager.snapshot()
        if session is None or snap is None:
            return {}
        known = self._reasons.setdefault(session, {})
        runs = [r for r in snap.runs if r.get("stage") == "search" and r.get("config_id") is not None]
        if all(r["config_id"] in known for r in runs):
            return known
        store = session.store
        configs = store.configs(session.name, stage="search")
        attrs = trial_attrs(session)
        recorded = {c["id"]: str(attrs.get(c["trial_number"], {}).get(WHY_ATTR) or "") for c in configs}
        rebuilt: dict[int, str] = {}
        if not all(recorded.values()):
            values: dict[int, list[float]] = {}
            for run in runs:
                if run.get("score") is not None:
                    values.setdefault(run["config_id"], []).append(float(run["score"]))
            scores = {config_id: sum(v) / len(v) for config_id, v in values.items()}
            rebuilt = lines_for(configs, scores, session.space, ratings=store.ratings(session.name),
                                comparisons=store.comparisons(session.name), algorithm=session.settings.algorithm,
                                n_startup=DEFAULT_N_STARTUP_TRIALS)
        for config in configs:  # a line once shown stays: the table does not shift under you
            known.setdefault(config["id"], recorded[config["id"]] or f"{rebuilt[config['id']]} {REBUILT}")
        return known

    def config_choices(self) -> list[tuple[str, int]]:
        """(``#3 search-4 · TPE``, config id) of the search's configs, newest first."""
        session = self._manager.require()

        def build() -> list[tuple[str, int]]:
            configs = session.store.configs(session.name, stage="search")
            return [(f"{c['name']} · {c['kind']} · trial {c['trial_number'] + 1}", int(c["id"]))
                    for c in reversed(configs)]

        return self._manager.memo("config-choices", build, structural=True)

    def suggestion(self, config_id: int | None = None) -> "Reason | None":
        """Why config ``config_id`` (default: the newest proposed) was proposed."""
        from bracket.app.suggestion_reason import explain_session

        manager = self._manager
        session = manager.require()
        return manager.memo(("why", config_id), lambda: explain_session(session, search_scores(manager), config_id),
                            structural=True)

    def past_sessions(self, preset_id: str | None) -> list[Any]:
        """Earlier sessions of ``preset_id`` in the runs folder, to warm-start from, each with its
        date, run count and winner (``bracket.session.past``, ranked by ``bracket.standings``)."""
        from bracket.session.past import past_sessions
        from bracket.status.ranking import past_ranking

        return past_sessions(self._manager.runs_dir, preset_id, past_ranking) if preset_id else []

    def setup_values(self, folder: Path | str | None = None) -> dict[str, Any]:
        """The Setup form's values for the open session, or (``folder``) for a past session
        read without opening it (its store is closed again)."""
        from bracket.app.catalog import session_folder
        from bracket.app.form_values import session_form_values
        from bracket.session import Session

        manager = self._manager
        if folder is None:
            return session_form_values(manager.require())
        path = session_folder(manager.runs_dir, folder)
        current = manager.session
        if current is not None and current.folder.resolve() == path.resolve():
            return session_form_values(current)
        other = Session.open(path, storage_url=manager.storage_url, validate=False)
        try:
            return session_form_values(other)
        finally:
            other.store.close()
