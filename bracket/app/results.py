"""What the Results tab shows beside the standings, as plain data.

Leaderboards, the winner and parameter importance come from :mod:`bracket.standings`
(the one place that ranks configs); this module adds what only the tab needs:

* :func:`winner_command` — the winner as a ready-to-run trainer command and JSON/TOML files
  (``bracket.report.export.export_run`` of the standings' winner, at its own step count);
* ``score_history`` — each search config's leaderboard rank in trial order, and the best so far
  (:func:`bracket.standings.history.rank_history`, which the report draws too);
* :func:`dashboard_command` — the ``optuna-dashboard`` command for the session's studies.

It also hands out the front of fidelity against flexibility and how far each judge agrees with
the person (both from the standings), and takes the person's pick on the front and a judge's new
weight (``bracket.app.answer_choice``).

:class:`Results` (``SessionManager.results``) hands all of it out for the open session, each
computed once per store change (``SessionManager.memo``), with the search space as a table
(``space_table``), the config plots (``config_plots``) and the report.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket.session.store import redact_url
from bracket.standings import STAGES, StageBoard, importance
from bracket.standings.history import rank_history

if TYPE_CHECKING:  # pragma: no cover
    import threading

    from bracket.app.holder import SessionHolder
    from bracket.session import Session
    from bracket.standings import Winner


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

    The same export as ``python -m bracket export`` (``bracket.report.export.export_run``).
    """
    from bracket.report import export_run

    if winner is None or winner.disqualified:
        return None
    result = export_run(session, run_id=winner.run_id, steps=winner.step or winner.steps)
    return WinnerExport(winner.config_name, winner.run_id, result.steps, result.command, shlex.join(result.command),
                        result.json_path, result.toml_path)


def dashboard_command(session: "Session") -> str:
    """The shell command that opens this session's studies in optuna-dashboard, and which
    study to pick for the ranking of the verdict."""
    from bracket.standings.study_sync import verdict_study_name

    return (shlex.join(["optuna-dashboard", redact_url(session.store.url)])
            + f"\n# then pick the study {verdict_study_name(session.name)!r}: the current scores, as in the verdict")


class Results:
    """The Results tab's data of the open session of ``manager`` (see the module)."""

    def __init__(self, manager: "SessionHolder") -> None:
        self._manager = manager
        self._verdict_thread: "threading.Thread | None" = None

    def leaderboard(self) -> tuple[list[StageBoard], str]:
        """(every stage's board, finals first; the verdict with its warnings)."""
        table = self._manager.standings()
        if table is None:
            return [], "No search is open."
        boards = [table.boards[s] for s in STAGES if s in table.boards]
        text = table.verdict + "".join(f"\n\n**Warning: {w}.**" for w in table.warnings)
        return boards, text

    def winner_export(self) -> WinnerExport | None:
        manager = self._manager
        table = manager.standings()
        return None if table is None else manager.memo("winner", lambda: winner_command(
            manager.require(), table.winner), structural=True)

    def param_importance(self) -> tuple[dict[str, float], str]:
        manager = self._manager
        session = manager.require()
        return manager.memo("importance", lambda: importance(session, manager.standings()), structural=True)

    def score_history(self) -> list[dict[str, Any]]:
        table = self._manager.standings()
        return [] if table is None else self._manager.memo("history", lambda: rank_history(table), structural=True)

    def space_table(self) -> list[dict[str, str]]:
        """The open session's space (narrowed by its bounds) beside the trainer's own ranges."""
        from bracket.app.space_table import space_rows

        session = self._manager.require()
        return self._manager.memo("space-table", lambda: space_rows(
            session.space, session.trainer.declare_search_space()), structural=True)

    def config_figures(self) -> tuple[Any, Any]:
        """(parallel-coordinate, slice) figures of the search's scored configs (None below two)."""
        from bracket.app.config_plots import parallel_coordinate, slice_plot

        session, table = self._manager.require(), self._manager.standings()
        board = table.board("search") if table else None
        rows = board.rows if board else []
        return self._manager.memo("config-plots", lambda: (parallel_coordinate(rows, session.space),
                                                           slice_plot(rows, session.space)), structural=True)

    def report_markdown(self, image_url: Any = None) -> str:
        """The report (written under the session folder); when no search runs here, the stored
        study's verdict view is brought up to date too (``bracket.standings.study_sync``)."""
        from bracket.report import report_markdown
        from bracket.standings.study_sync import background_verdict

        manager = self._manager
        session = manager.require()

        def build() -> str:  # once per change (the same image-URL scheme every time in an app)
            text = report_markdown(session, image_url)
            if not manager.running:  # in the background: the Results tab does not wait for it (issue 24)
                self._verdict_thread = background_verdict(session, manager.standings(), self._verdict_thread)
            return text

        return manager.memo("report", build, structural=True)

    def report_html(self) -> Path | None:
        """Where :meth:`report_markdown` writes the open session's ``report.html`` (None: no session open)."""
        from bracket.report.writing import report_folder

        session = self._manager.session
        return None if session is None else report_folder(session) / "report.html"

    def wait_for_verdict(self, timeout: float | None = None) -> None:
        """Wait until the verdict study written in the background (:meth:`report_markdown`) is done."""
        thread = self._verdict_thread
        if thread is not None:
            thread.join(timeout)

    def export_winner(self, steps: int | None = None) -> Any:
        """Write the winner's ``train.sh``/``train.ps1``/config under the session folder
        (``bracket.report.export.export_run``); returns its ``ExportResult``."""
        from bracket.report import export_run

        return export_run(self._manager.require(), steps=steps)

    def dashboard_command(self) -> str:
        return dashboard_command(self._manager.require())

    def front(self) -> Any:
        """The front of fidelity against flexibility (``bracket.standings.front.Front``; None without
        image judges' scores)."""
        table = self._manager.standings()
        return None if table is None else table.front

    def trust(self) -> list[Any]:
        """How far each automatic judge agrees with the person (``bracket.standings.trust.JudgeTrust``)."""
        table = self._manager.standings()
        return [] if table is None else list(table.trust)

    def no_agreement(self) -> str:
        """Why no judge's agreement with the person is known yet (``bracket.report.judges``); "" with no session."""
        from bracket.report.judges import no_agreement_text

        table = self._manager.standings()
        return "" if table is None else no_agreement_text(table)

    def pick(self, config: str | int | None) -> str:
        """Make a config on the front the answer (None: the winner again): ``answer_choice.set_pick``."""
        from bracket.app.answer_choice import set_pick

        message = set_pick(self._manager.require(), config)
        self._manager.forget(changed=True)
        return message

    def set_weight(self, judge: str, value: float) -> dict[str, float]:
        """Set one judge's weight (0: switch it off), the way ``python -m bracket weights`` does."""
        from bracket.app.answer_choice import set_weights

        weights = set_weights(self._manager.require(), {judge: value})
        self._manager.forget(changed=True)
        return weights
