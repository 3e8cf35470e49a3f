"""One search: the loop and its control, over the store, the processes and the scoring.

The package's parts (docs/ARCHITECTURE.md, "The session engine"):

- the loop and control, here: ``session`` (:class:`Session`), ``control``, ``pipeline``,
  ``worker`` and ``distributed``, ``recovery``, ``precache``, ``confirm``/``finals``/``promote``,
  ``create``, ``plan``, ``past``, ``proposing``, ``snapshot``, ``search_settings``;
- ``store/``: the database and the session folder;
- ``process/``: running one trainer process tree;
- ``scoring/``: the judges run on finished runs, the scoreboard, a run's outputs read back.

The names below are imported on first use, so ``import bracket.session.store`` (``status``)
loads neither Optuna nor the preset registry.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: public name -> the module (of this package) that defines it
_WHERE = {
    "Session": "session",
    "SearchSettings": "search_settings",
    "SettingsError": "search_settings",
    "create_session": "create",
    "open_session": "create",
    "SessionSnapshot": "snapshot",
    "build_snapshot": "snapshot",
    "RunControl": "control",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Import the module that holds ``name`` on first use, so importing the package stays light."""
    if name in _WHERE:
        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
