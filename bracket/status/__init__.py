"""``bracket status``: the view of a session's standings kept in the store, and its text.

``view`` answers ``status`` from the view kept in the store (table ``bracket_views``) with
only the store opened (no preset registry, no Optuna); ``refresh`` builds that view and keeps
it current from the process that changed the store (:class:`ViewRefresher`, a
``Session.on_change`` callback the CLI and the app hand in); ``text`` is what the CLI prints
about a session (progress line, table of runs, winner and best-step lines); ``ranking`` reads
an earlier session's leaderboard order (what ``--warm-start-from`` carries) from its kept view.
"""

from __future__ import annotations

from bracket.lazy_exports import lazy_exports

#: public name -> the module (of this package) that defines it
_WHERE = {
    "quick_status": "view",
    "standings_view": "view",
    "kept_view": "view",
    "view_key": "view",
    "ViewRefresher": "refresh",
    "build_view": "refresh",
    "progress_line": "text",
    "results_table": "text",
    "winner_lines": "text",
    "best_step_lines": "text",
    "past_ranking": "ranking",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
