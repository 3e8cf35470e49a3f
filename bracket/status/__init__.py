"""``bracket status``: the view of a session's standings kept in the store, and its text.

``view`` answers ``status`` from the view kept in the store (table ``bracket_views``) with
only the store opened (no preset registry, no Optuna); ``refresh`` builds that view and keeps
it current from the process that changed the store (:class:`ViewRefresher`, a
``Session.on_change`` callback the CLI and the app hand in); ``text`` is what the CLI prints
about a session (progress line, table of runs, winner and best-step lines).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

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
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Import the module that holds ``name`` on first use, so importing the package stays light."""
    if name in _WHERE:
        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
