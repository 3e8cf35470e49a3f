"""Views of the open session for the app's tabs, on top of :class:`SessionManager`.

Each function takes the manager, reads what it needs through its cached snapshot and
standings (``SessionManager.memo``: built once per store change for every open tab), and
hands back plain data for the UI:

* :func:`space_table` — the session's search space, knob by knob (``space_table``);
* :func:`suggestion` — why a config was proposed (``suggestion_reason``);
* :func:`short_reasons` — the same in one line per config, for the trial table's "why" column:
  the line recorded when the config was proposed (looked up once per config, not once per poll);
* :func:`config_choices` — the search's configs, newest first, to ask "why" about;
* :func:`config_figures` — parallel-coordinate and slice plots of configs vs score (``config_plots``);
* :func:`progressions` — steps × prompts matrices of runs (``progression``);
* :func:`setup_values` — the open (or any past) session's settings as Setup-form values (``form_values``).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket.errors import BracketError

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.grid import GridData
    from bracket.app.manager import SessionManager
    from bracket.app.suggestion_reason import Reason


def _search_scores(manager: "SessionManager") -> dict[int, float]:
    table = manager.standings()
    board = table.board("search") if table else None
    return {row.config_id: row.mean for row in (board.rows if board else []) if row.mean is not None}


def space_table(manager: "SessionManager") -> list[dict[str, str]]:
    """The open session's space (narrowed by its bounds) beside the trainer's own ranges."""
    from bracket.app.space_table import space_rows

    session = manager.require()
    return manager.memo("space-table", lambda: space_rows(session.space, session.trainer.declare_search_space()),
                        structural=True)


def config_choices(manager: "SessionManager") -> list[tuple[str, int]]:
    """(``#3 search-4 · TPE``, config id) of the search's configs, newest first."""
    session = manager.require()

    def build() -> list[tuple[str, int]]:
        configs = session.store.configs(session.name, stage="search")
        return [(f"{c['name']} · {c['kind']} · trial {c['trial_number'] + 1}", int(c["id"]))
                for c in reversed(configs)]

    return manager.memo("config-choices", build, structural=True)


def suggestion(manager: "SessionManager", config_id: int | None = None) -> "Reason | None":
    """Why config ``config_id`` (default: the newest proposed) was proposed."""
    from bracket.app.suggestion_reason import explain_session

    session = manager.require()
    return manager.memo(("why", config_id), lambda: explain_session(session, _search_scores(manager), config_id),
                        structural=True)


#: each open session's "why" line per config id: looked up once, when the config first shows
_REASONS: "weakref.WeakKeyDictionary[Any, dict[int, str]]" = weakref.WeakKeyDictionary()
#: the mark of a line rebuilt from today's scores (a config proposed before lines were recorded)
REBUILT = "(rebuilt from today's scores: not recorded at proposal)"


def short_reasons(manager: "SessionManager", snap: Any = None) -> dict[int, str]:
    """One line per search config of the open session on why it was proposed (config id →
    text): the line the search wrote with the config's trial when it proposed it (``why``,
    ``bracket.session.proposing``), so a restart or a later rating does not change it. A config
    of an older session without one gets a line rebuilt from the scores of now, marked
    :data:`REBUILT`. Lines are kept per session: only a config not seen before is looked up, so a
    poll costs a dict lookup (its scores, for a rebuild, come from ``snap``, the caller's snapshot)."""
    from bracket.app.suggestion_reason import WHY_ATTR, trial_attrs
    from bracket.app.suggestion_reason import short_reasons as lines_for
    from bracket.search.controller import DEFAULT_N_STARTUP_TRIALS

    session = manager.session
    snap = snap if snap is not None else manager.snapshot()
    if session is None or snap is None:
        return {}
    known = _REASONS.setdefault(session, {})
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


def config_figures(manager: "SessionManager") -> tuple[Any, Any]:
    """(parallel-coordinate, slice) figures of the search's scored configs (None below two)."""
    from bracket.app.config_plots import parallel_coordinate, slice_plot

    session, table = manager.require(), manager.standings()
    board = table.board("search") if table else None
    rows = board.rows if board else []
    return manager.memo("config-plots", lambda: (parallel_coordinate(rows, session.space),
                                                 slice_plot(rows, session.space)), structural=True)


def progressions(manager: "SessionManager", run_ids: list[int]) -> list["GridData"]:
    """One steps × prompts matrix per run in ``run_ids`` (in order)."""
    from bracket.app.progression import build_progression

    session, snap = manager.require(), manager.snapshot()
    by_id = {r["id"]: r for r in snap.runs}
    unknown = [i for i in run_ids if i not in by_id]
    if unknown:
        raise BracketError(f"Run(s) {unknown} are not part of session {session.name}; pick runs from the list.")
    return [build_progression(by_id[i], session.settings.prompts(), thumbs=manager._thumbs, runs_dir=manager.runs_dir,
                              sample_kind=snap.sample_kind) for i in run_ids]


def setup_values(manager: "SessionManager", folder: Path | str | None = None) -> dict[str, Any]:
    """The Setup form's values for the open session, or (``folder``) for a past session
    read without opening it (its store is closed again)."""
    from bracket.app.catalog import session_folder
    from bracket.app.form_values import session_form_values
    from bracket.session.session import Session

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
