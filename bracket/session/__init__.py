"""One search: the loop and its control, over the store, the processes and the scoring.

The package's parts (docs/ARCHITECTURE.md, "The session engine"):

- control, here: ``session`` (:class:`Session`), ``control``, ``pipeline``, ``worker`` and
  ``distributed``, ``recovery``, ``precache``, ``finals``/``winner_training``, ``create``,
  ``past``, ``snapshot``, ``search_settings``;
- ``loop/``: the search loop (``search_loop``), its read model (``search_view``,
  ``search_reading``), ``budget``, ``plan``, ``proposing``, the confirmation round (``confirm``)
  and the rungs (``rung_scores``, ``rung_steps``); ``scheduling/``: what trains next;
- ``store/``: the database and the session folder;
- ``process/``: running one trainer process tree;
- ``scoring/``: the judges run on finished runs, the scoreboard, a run's outputs read back.

The names below are imported on first use, so ``import bracket.session.store`` (``status``)
loads neither Optuna nor the preset registry.
"""

from __future__ import annotations

from bracket.lazy_exports import lazy_exports

#: public name -> the module (of this package) that defines it
_WHERE = {
    "Session": "session",
    "SearchSettings": "search_settings",
    "SettingsError": "search_settings",
    "HalvingSettings": "search_settings",
    "create_session": "create",
    "open_session": "create",
    "SessionSnapshot": "snapshot",
    "build_snapshot": "snapshot",
    "RunControl": "control",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
