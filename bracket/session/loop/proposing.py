"""How a session proposes configs: its search controller, and the "why" line kept with each.

:func:`build_controller` makes the session's :class:`~bracket.search.controller.SearchController`
(each worker samples with its own stable seed, so two workers never propose the same config)
and hands it :func:`line_at_proposal`, so every config's one-line "why" (``bracket.search.why_line``)
is written into its Optuna trial (user attribute ``why``) the moment it is proposed — with
the scores, ratings and votes of that moment. The trial table shows that line from then on:
later ratings move the scores, and a line rebuilt from them would say what the search did
not see when it proposed the config.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bracket.search.types import Proposal
from bracket.search.why_line import short_reasons
from bracket.session.scoring.run_scores import config_values
from bracket.session.store import stored_rows

if TYPE_CHECKING:  # pragma: no cover
    from bracket.search.controller import SearchController

#: the id the proposal gets in :func:`line_at_proposal` (stored configs have positive ids)
_PROPOSED = -1


def line_at_proposal(session: Any, proposal: Proposal) -> str:
    """The trial table's line for ``proposal``, as of now: after ``session``'s search configs
    so far, with their current mean scores and the person's ratings and votes until now
    (``session``: the :class:`~bracket.session.session.Session`, which imports this module)."""
    from bracket.search.controller import DEFAULT_N_STARTUP_TRIALS

    rows, configs = stored_rows(session)  # as the sampler's history read them: one read, one scoring per change
    runs = [r for r in rows if r["stage"] == "search"]
    new = {"id": _PROPOSED, "name": proposal.name, "kind": proposal.kind, "params": dict(proposal.config),
           "created_at": time.time()}
    lines = short_reasons([*(c for c in configs if c["stage"] == "search"), new],
                          config_values(runs, session.scores()), session.space,
                          ratings=session.store.ratings(session.name),
                          comparisons=session.store.comparisons(session.name),
                          algorithm=session.settings.algorithm, n_startup=DEFAULT_N_STARTUP_TRIALS,
                          only=(_PROPOSED,))
    return lines[_PROPOSED]


def halving_history(session: Any) -> list[Any]:
    """The sampler's history of a halving search (``scheduling.halving.sampler_history``) from the
    search's read model of this store change: full-length configs by the value a search of full
    runs gives them (``Scoreboard.sampler_values``: once a run is judged, the person's verdicts and
    their predictions), the rest by the rung they reached and their rank there by the same rule
    (``SearchView.seen``); the configs judged at one rung carry their verdicts and measured scores
    there, for the focus draws (``bracket.search.rated_focus``)."""
    from bracket.session.scheduling.halving import sampler_history
    from bracket.session.scoring.run_scores import rated_configs
    from bracket.session.scoring.sampler_values import config_measured

    view = session.view()
    runs = [r.row for r in view.runs]  # scored runs are the full-length ones
    scores = session.scoreboard.scores(runs)
    full = session.scoreboard.sampler_values(runs, scores, [c.row for c in view.configs])
    full_rated = rated_configs(runs, scores)
    measured = {cid: m for cid, m in config_measured(runs, scores).items() if cid in full_rated}
    return sampler_history(view, full, session.space.searched_params, rated=view.judged | full_rated,
                           judged=judged_rung(view, full, measured))


def judged_rung(view: Any, full_values: Mapping[int, float],
                full_measured: Mapping[int, float]) -> dict[int, tuple[float, float]]:
    """Config id -> (the person's verdict, its measured score) at the one rung where the most configs
    were judged (a tie: the higher rung; full length, ``full_measured``'s configs at their
    ``full_values``, counts as the last): verdicts and scores of runs cut at the same step, which
    ``bracket.search.rated_focus`` compares. ``view``: the halving search's ``SearchView``."""
    last = len(view.rungs.steps) - 1
    pairs: dict[int, dict[int, tuple[float, float]]] = {}
    for (cid, rung), measured in view.judged_measured.items():
        if (cid, rung) in view.seen:
            pairs.setdefault(rung, {})[cid] = (view.seen[(cid, rung)], measured)
    full = {cid: (full_values[cid], measured) for cid, measured in full_measured.items() if cid in full_values}
    if full:
        pairs[last] = full
    if not pairs:
        return {}
    return pairs[max(pairs, key=lambda rung: (len(pairs[rung]), rung))]


def build_controller(session: Any) -> "SearchController":
    """The session's search controller, writing each proposal's line with its trial."""
    from bracket.search.controller import SearchController
    from bracket.search.hedge import DEFAULT_RULE as HEDGE_RULE

    seed = session.settings.base_seed + zlib.crc32(session.worker_id.encode("utf-8")) % 10_000
    return SearchController(study=session.store.study(session.name), space=session.space,
                            algorithm=session.settings.algorithm, seed=seed,
                            history=(lambda: halving_history(session)) if session.settings.halving
                            else session.scored_configs,
                            lr_bracket=session.settings.lr_bracket, note=session.add_note,
                            hedge=HEDGE_RULE if session.settings.hedge else None,
                            describe=lambda proposal: line_at_proposal(session, proposal))
