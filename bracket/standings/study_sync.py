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
  trial, history and importance plots of that study match Bracket's verdict.

Open it with ``optuna-dashboard <storage URL>`` and pick the study ``<session>-verdict``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import optuna
from optuna.trial import TrialState

from bracket.standings import Standings, standings

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

log = logging.getLogger(__name__)
VERDICT_SUFFIX = "-verdict"
LEFTOVER_NOTE = "not trained: the search's budget ran out before this warm-start config's turn"


def verdict_study_name(session_name: str) -> str:
    return f"{session_name}{VERDICT_SUFFIX}"


def close_waiting(study: optuna.Study, note: str = LEFTOVER_NOTE) -> int:
    """Close the study's WAITING trials as FAIL with ``note``; returns how many."""
    storage = study._storage
    closed = 0
    for trial in study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
        storage.set_trial_user_attr(trial._trial_id, "bracket_note", note)
        if storage.set_trial_state_values(trial._trial_id, TrialState.FAIL):
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
    study.set_user_attr("current_scores", {str(n): round(float(r.mean), 6) for n, r in sorted(rows.items())
                                           if r.mean is not None})
    name = verdict_study_name(session.name)
    try:
        optuna.delete_study(study_name=name, storage=session.store.storage)
    except KeyError:
        pass  # the first time there is none
    verdict = optuna.create_study(study_name=name, storage=session.store.storage, direction="minimize")
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
    if trials:
        verdict.add_trials(trials)
    verdict.set_user_attr("verdict", table.verdict)
    verdict.set_user_attr("source_study", session.name)
    study.set_user_attr("verdict_study", name)
    return name


def record_at_end(session: "Session") -> None:
    """:func:`record_verdict` at the end of a finished search; a failure is logged, never fatal."""
    try:
        record_verdict(session)
    except Exception:  # noqa: BLE001 - the search itself succeeded; the dashboard view is a convenience
        log.warning("could not record the verdict in the Optuna study", exc_info=True)
