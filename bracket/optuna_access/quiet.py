"""Optuna, imported where a study is actually used, with its INFO lines turned off.

Optuna logs "A new study created in memory ..." to stderr at INFO. Bracket's commands
promise one ``error:`` line on failure and a readable stream otherwise, so every place that
imports Optuna goes through :func:`optuna_module` (Optuna itself is imported lazily: opening
a session or answering ``status`` imports none of it).
"""

from __future__ import annotations

from types import ModuleType


def optuna_module() -> ModuleType:
    """The ``optuna`` module, its logging set to WARNING (idempotent, cheap after the first call)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna
