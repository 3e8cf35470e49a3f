"""What the headless CLI prints about a session: the progress line, the table of runs, the
winner and best-step lines, and (successive halving) where each config stands on the rungs.
Pure text from a :class:`SessionSnapshot`, the stored rows and the standings."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from typing import Any

from bracket.session import SessionSnapshot
from bracket.session.store import stored_rows
from bracket.standings import Standings, figures_text
from bracket.standings.rungs import restarting, run_rung_text, rung_lines, session_rungs, uses_rungs


def _format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


def progress_line(snapshot: SessionSnapshot, width: int = 24) -> str:
    """``[#####.....] 3/8 runs | search 2/5 | step 40/100 | ETA 1:20``."""
    filled = int(round(snapshot.progress * width))
    line = (f"[{'#' * filled}{'.' * (width - filled)}] {snapshot.spent_label} "
            f"| {snapshot.phase}")
    if snapshot.current and snapshot.current.get("max_steps"):
        line += f" | step {snapshot.current['step']}/{snapshot.current['max_steps']}"
    return line + f" | ETA {_format_seconds(snapshot.eta_s)}"


def run_figures(table: Standings) -> dict[int, str]:
    """Per run, its headline (``bracket.standings.headline``: ``3.1 % lower validation loss than
    your baseline, ± 2.8 %; rated 8/10 by you``) and the raw figures behind it (``loss 0.321``)."""
    found: dict[int, str] = {}
    for board in table.boards.values():
        for row in board.rows:
            for run in row.runs:
                figures = figures_text({k: v for p in run.parts if not p.estimated for k, v in p.figures.items()})
                line = run.headline.text if run.headline is not None and run.score is not None else ""
                found[run.run_id] = "; ".join(t for t in (line, figures) if t)
    return found


#: the width the run table fits: a normal terminal
TABLE_WIDTH = 100
_RUN_COLUMNS = (f"{'run':>4}  {'stage':<7} {'kind':<9} {'config':<18} {'seed':>5}  {'status':<12} ")
#: what is left of a line for the raw figures; longer figures wrap onto lines of their own
FIGURES_WIDTH = TABLE_WIDTH - len(_RUN_COLUMNS)


def wrap_figures(text: str, width: int = FIGURES_WIDTH) -> list[str]:
    """``text`` (``"val loss 0.1 · loss 0.2; human estimated"``) cut into lines of at most ``width``
    characters between its figures, never inside one ("-" when there is none)."""
    pieces = re.split(r"( · |; )", text) if text else ["-"]
    lines = [pieces[0]]
    for separator, piece in zip(pieces[1::2], pieces[2::2]):
        if len(lines[-1]) + len(separator) + len(piece) <= width:
            lines[-1] += separator + piece
        else:  # the line break separates them
            lines.append(piece)
    return lines


def _wrap_details(text: str) -> list[str]:
    """A run's params line, indented and wrapped to :data:`TABLE_WIDTH` (``textwrap`` only when it
    has to clean whitespace or break a word; a plain line is filled the way it fills one)."""
    if text.isprintable() and text.strip() == text and text and "  " not in text:
        if 6 + len(text) <= TABLE_WIDTH:
            return [" " * 6 + text]
        words = text.split(" ")  # single spaces only: textwrap's greedy fill, as it would cut it
        if max(map(len, words)) <= TABLE_WIDTH - 8:  # no word textwrap would have to break
            lines, line, room = [], " " * 6 + words[0], TABLE_WIDTH
            for word in words[1:]:
                if len(line) + 1 + len(word) <= room:
                    line += " " + word
                else:
                    lines.append(line)
                    line = " " * 8 + word
            return lines + [line]
    return textwrap.wrap(text, TABLE_WIDTH, initial_indent=" " * 6, subsequent_indent=" " * 8,
                         break_on_hyphens=False)


def board_ranks(table: Standings) -> dict[int, int]:
    """Run id -> its config's rank on its stage's leaderboard (ranked configs only)."""
    return {run.run_id: row.rank for board in table.boards.values() for row in board.rows
            if row.rank is not None for run in row.runs}


def _cut(text: str, width: int) -> str:
    """``text`` in ``width`` characters, a cut one ending in "…" (a cut name read as another config's)."""
    return text if len(text) <= width else text[:width - 1] + "…"


def results_table(snapshot: SessionSnapshot, raw: dict[int, str] | None = None,
                  paused: Mapping[int, str] | None = None, ranks: Mapping[int, int] | None = None) -> str:
    """The runs as an aligned text table per stage (finals first; each stage scored on its own),
    best first — in the leaderboard's order of their configs when ``ranks`` gives it (run id ->
    rank: :func:`board_ranks`; the Results tab's and the trial table's order), then by each run's
    score —, fitting :data:`TABLE_WIDTH` columns: the raw figures behind each score when
    ``raw`` gives them (wrapped onto lines below when long), and under each run an indented
    line with its params (the worker too when several trained, why a run failed, and — ``paused``,
    by run id — where a run paused at a rung saved its state)."""
    order = {"final": 0, "search": 1, "promote": 2}
    raw, ranks = raw or {}, ranks or {}
    rows = [r for r in snapshot.runs if r["kind"] != "setup"]
    rows.sort(key=lambda r: (order.get(r["stage"], 3), r["id"] not in ranks, ranks.get(r["id"], 0),
                             r["score"] is None, r["score"] if r["score"] is not None else 0.0, r["id"]))
    several_workers = len({r.get("worker") for r in rows if r.get("worker")}) > 1
    header = _RUN_COLUMNS + "headline; raw figures"
    lines = [header, "-" * TABLE_WIDTH]
    for r in rows:
        figures = wrap_figures(raw.get(r["id"], ""))
        name = _cut(str(r["config_name"]), 18)
        lines.append(f"{r['id']:>4}  {str(r['stage'])[:7]:<7} {str(r['kind'])[:9]:<9} {name:<18} "
                     f"{r['seed'] or 0:>5}  {str(r['status'])[:12]:<12} {figures[0]}")
        lines += [" " * len(_RUN_COLUMNS) + more for more in figures[1:]]
        params = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["params"].items())
        details = ([f"worker {r.get('worker') or '-'}"] if several_workers else []) + ([params] if params else [])
        held = (paused or {}).get(r["id"])
        if held:
            details.append(f"({held})")
        elif r["failure_reason"] and r["status"] != "done":
            details.append(f"({r['failure_reason']})")
        if details:
            lines += _wrap_details("; ".join(details))
    return "\n".join(lines)


def best_step_lines(table: Standings) -> list[str]:
    """``best step of adamw-fast: 300 (validation): 3.1 % lower validation loss than your baseline, ± 2.8 %;
    2 seeds`` per ranked search config, best first."""
    board = table.board("search")
    return [f"best step of {row.name}: {row.best_step} ({row.best_step_basis}): "
            f"{row.headline.text if row.headline else 'not scored yet'}; "
            f"{row.seeds} seed{'s' if row.seeds != 1 else ''}"
            + (f", {row.loss_basis} loss" if row.loss_basis else "")
            for row in (board.rows if board else []) if row.rank is not None and row.best_step is not None]


def winner_lines(table: Standings, *, halving: bool = False) -> list[str]:
    """The winner and the standings' warnings, as the lines ``status`` prints (``halving``: the
    search has rungs, so the line says the run it names is the winner's full-length one)."""
    winner = table.winner
    if winner is None and table.budget_short:  # the answer is the warning below: the best at a lower rung
        return ["winner: none at full length (the budget paid for no full-length run)"] + [f"warning: {w}" for w in
                                                                                          table.warnings]
    if winner is None:
        return ["winner: none yet (no config has a finished score)"]
    seeds = ",".join(str(s) for s in winner.seeds) or "-"
    raw = figures_text(winner.figures)
    at = f" at its best step {winner.step} (by {winner.step_basis})" if winner.step else ""
    run = "full-length run" if halving and winner.full_length else "run"
    lines = [f"winner: {winner.config_name} ({winner.stage}) {run} {winner.run_id}, {winner.steps} steps{at}, "
             f"seeds {seeds}; "
             f"{winner.headline.text if winner.headline else 'not scored yet'}" + (f" ({raw})" if raw else "")
             + f"; judges {', '.join(winner.judges) or '-'}"
             + (f" (estimated: {', '.join(winner.estimated)})" if winner.estimated else "")
             + f"; {'rated' if winner.rated else 'not rated'}", f"verdict: {table.verdict}"]
    return lines + [f"warning: {w}" for w in table.warnings]


def answer_lines(session: Any, snapshot: SessionSnapshot, table: Standings) -> list[str]:
    """What ``status`` and the end of a search print under their header: the run table, the best
    steps, the rungs of a halving search (``bracket.standings.rungs``) and the winner."""
    runs, configs = stored_rows(session)  # the rows the standings were built from
    halving = uses_rungs(session.settings, configs)
    restarts = restarting(session)
    paused = {r["id"]: text for r in runs if (text := run_rung_text(r, restarts=restarts))}
    rungs = rung_lines(configs, runs, session_rungs(session.settings), restarts=restarts) if halving else []
    return [results_table(snapshot, run_figures(table), paused, board_ranks(table)), *best_step_lines(table), *rungs,
            *winner_lines(table, halving=halving)]
