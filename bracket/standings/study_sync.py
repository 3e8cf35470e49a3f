"""Make the stored Optuna study tell the truth at the end of a search.

The session's study (``<session>``) is a log: each trial's value is the config's score when
it finished, and Optuna never lets a finished value change. Bracket's scores keep moving
(ratings arrive late, the loss judge normalises across all runs), so by the end the logged
values can rank configs differently from Bracket's verdict. :func:`record_verdict`, run when
a search finishes (:func:`record_at_end`, the ``on_finish`` callback the CLI and the app give
their sessions; the engine itself never imports the standings) and by ``python -m bracket
report``, puts the truth where optuna-dashboard shows it:

* warm-start trials still WAITING (the budget ran out before their turn) are closed as FAIL
  with a ``bracket_note`` user attribute saying why — nothing is left pending forever;
* the study gets user attributes ``current_scores`` (trial number -> current mean score on the
  search leaderboard of :mod:`bracket.standings`; a finished trial itself cannot be
  changed) and ``verdict_study`` (the name of the companion study below);
* a companion study ``<session>-verdict`` is written afresh with one COMPLETE trial per
  scored search config and the *current* mean score as its value, so the dashboard's best
  trial, history and importance plots of that study match Bracket's verdict;
* that companion study is rewritten only when what it would hold changed: a digest of its
  trials and verdict is kept as its ``bracket_digest`` user attribute, and a call that finds
  the same digest writes nothing (rewriting a large study through Optuna is slow, and the
  app calls this on every Results build after a change).

Open it with ``optuna-dashboard <storage URL>`` and pick the study ``<session>-verdict``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from typing import TYPE_CHECKING

import optuna
from optuna.trial import TrialState

from bracket.optuna_access.quiet import optuna_module
from bracket.standings import Standings, standings

optuna_module()  # its INFO lines off

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

log = logging.getLogger(__name__)
VERDICT_SUFFIX = "-verdict"
LEFTOVER_NOTE = "not trained: the search's budget ran out before this warm-start config's turn"


def verdict_study_name(session_name: str) -> str:
    return f"{session_name}{VERDICT_SUFFIX}"


def close_waiting(study: optuna.Study, note: str = LEFTOVER_NOTE) -> int:
    """Close the study's WAITING trials as FAIL with ``note``; returns how many."""
    from bracket.optuna_access.private import study_storage, trial_id

    storage = study_storage(study)
    closed = 0
    for trial in study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
        storage.set_trial_user_attr(trial_id(trial), "bracket_note", note)
        if storage.set_trial_state_values(trial_id(trial), TrialState.FAIL):
            closed += 1
    return closed


def record_verdict(session: "Session", table: Standings | None = None, *, close_leftovers: bool = True) -> str:
    """Bring the stored study up to date with the current standings; returns the verdict study's name."""
    table = table if table is not None else standings(session)
    study = session.store.study(session.name)
    if close_leftovers:
        close_waiting(study)
    board = table.board("search")
    rows = {row.trial_number: row for row in (board.rows if board else []) if row.trial_number is not None}
    current = {str(n): round(float(r.mean), 6) for n, r in sorted(rows.items()) if r.mean is not None}
    if study.user_attrs.get("current_scores") != current:
        study.set_user_attr("current_scores", current)
    name = verdict_study_name(session.name)
    trials = _verdict_trials(session, rows)
    digest = _digest(trials, table.verdict)
    if _stored_digest(session, name) == digest:
        if study.user_attrs.get("verdict_study") != name:
            study.set_user_attr("verdict_study", name)
        return name  # the companion study already holds exactly this
    try:
        optuna.delete_study(study_name=name, storage=session.store.storage)
    except KeyError:
        pass  # the first time there is none
    verdict = optuna.create_study(study_name=name, storage=session.store.storage, direction="minimize")
    if trials:
        verdict.add_trials(trials)
    verdict.set_user_attr("verdict", table.verdict)
    verdict.set_user_attr("source_study", session.name)
    verdict.set_user_attr("bracket_digest", digest)
    study.set_user_attr("verdict_study", name)
    return name


def _stored_digest(session: "Session", name: str) -> str | None:
    try:
        return optuna.load_study(study_name=name, storage=session.store.storage).user_attrs.get("bracket_digest")
    except KeyError:
        return None


def _digest(trials: list[optuna.trial.FrozenTrial], verdict: str) -> str:
    plain = [[t.params, t.value, t.user_attrs] for t in trials]
    return hashlib.sha1(json.dumps([plain, verdict], sort_keys=True, default=str).encode()).hexdigest()


def _verdict_trials(session: "Session", rows: dict) -> list[optuna.trial.FrozenTrial]:
    """One COMPLETE trial per scored search config, its current mean score as the value."""
    trials = []
    for number, row in sorted(rows.items()):
        if row.mean is None:
            continue
        try:
            params = session.space.searched_params(row.params)
            distributions = {k: v for k, v in session.space.distributions(params).items() if k in params}
            trials.append(optuna.trial.create_trial(
                params={k: params[k] for k in distributions}, distributions=distributions, value=float(row.mean),
                user_attrs={"config": row.name, "kind": row.kind, "rank": int(row.rank or 0), "trial": number}))
        except (ValueError, KeyError):
            continue  # a config from an older (or narrowed) space: left out of the view
    return trials


def record_at_end(session: "Session") -> None:
    """:func:`record_verdict` at the end of a finished search; a failure is logged, never fatal."""
    try:
        record_verdict(session)
    except Exception:  # noqa: BLE001 - the search itself succeeded; the dashboard view is a convenience
        log.warning("could not record the verdict in the Optuna study", exc_info=True)


def background_verdict(session: "Session", table: Standings | None,
                       previous: threading.Thread | None = None) -> threading.Thread:
    """:func:`record_verdict` in a daemon thread (after ``previous`` ends), so a view that
    asks for it (the app's Results tab) does not wait; a failure is logged, never raised."""
    def write() -> None:
        if previous is not None:
            previous.join()
        try:
            record_verdict(session, table, close_leftovers=False)
        except Exception:  # noqa: BLE001 - a convenience view; the report is what was asked for
            log.warning("could not update the verdict study", exc_info=True)

    thread = threading.Thread(target=write, name="bracket-verdict-study", daemon=True)
    thread.start()
    return thread
