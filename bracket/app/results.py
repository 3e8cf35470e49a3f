"""What the Results tab shows beside the standings, as plain data.

Leaderboards, the winner and parameter importance come from :mod:`bracket.standings`
(the one place that ranks configs); this module adds what only the tab needs:

* :func:`winner_command` — the winner as a ready-to-run trainer command and JSON/TOML files
  (``bracket.export.export_run`` of the standings' winner, at its own step count);
* :func:`score_history` — combined score per search config in trial order, and the best so far;
* :func:`dashboard_command` — the ``optuna-dashboard`` command for the session's studies.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket.session.store import redact_url

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session
    from bracket.standings import Standings, Winner


@dataclass
class WinnerExport:
    config_name: str
    run_id: int
    steps: int
    command: list[str]
    command_text: str
    json_path: Path
    toml_path: Path


def winner_command(session: "Session", winner: "Winner | None") -> WinnerExport | None:
    """The winner's command and its JSON/TOML files (None without a usable winner).

    The same export as ``python -m bracket export`` (``bracket.export.export_run``).
    """
    from bracket.export import export_run

    if winner is None or winner.disqualified:
        return None
    result = export_run(session, run_id=winner.run_id, steps=winner.step or winner.steps)
    return WinnerExport(winner.config_name, winner.run_id, result.steps, result.command, shlex.join(result.command),
                        result.json_path, result.toml_path)


def score_history(table: "Standings") -> list[dict[str, Any]]:
    """Per scored search config in trial order: its mean score and the best mean so far."""
    board = table.board("search")
    rows = sorted((r for r in (board.rows if board else []) if r.mean is not None),
                  key=lambda r: (r.trial_number if r.trial_number is not None else math.inf, r.config_id))
    history, best = [], math.inf
    for row in rows:
        best = min(best, row.mean)
        history.append({"trial": row.trial_number, "config": row.name, "kind": row.kind, "score": row.mean,
                        "best": best})
    return history


def dashboard_command(session: "Session") -> str:
    """The shell command that opens this session's studies in optuna-dashboard, and which
    study to pick for the ranking of the verdict."""
    from bracket.standings.study_sync import verdict_study_name

    return (shlex.join(["optuna-dashboard", redact_url(session.store.url)])
            + f"\n# then pick the study {verdict_study_name(session.name)!r}: the current scores, as in the verdict")
