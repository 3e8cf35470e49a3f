"""What the headless CLI prints about a session: the progress line, the table of runs, the
winner and best-step lines. Pure text from a :class:`SessionSnapshot` and the standings."""

from __future__ import annotations

from bracket.session.snapshot import SessionSnapshot
from bracket.standings import Standings, figures_text


def _format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


def progress_line(snapshot: SessionSnapshot, width: int = 24) -> str:
    """``[#####.....] 3/8 runs | search 2/5 | step 40/100 | ETA 1:20``."""
    filled = int(round(snapshot.progress * width))
    line = f"[{'#' * filled}{'.' * (width - filled)}] {snapshot.runs_spent}/{snapshot.total_runs} runs | {snapshot.phase}"
    if snapshot.current and snapshot.current.get("max_steps"):
        line += f" | step {snapshot.current['step']}/{snapshot.current['max_steps']}"
    return line + f" | ETA {_format_seconds(snapshot.eta_s)}"


def run_figures(table: Standings) -> dict[int, str]:
    """Per run, the raw figures behind its score (``loss 0.321 · rating 8.0``) and estimated parts."""
    found: dict[int, str] = {}
    for board in table.boards.values():
        for row in board.rows:
            for run in row.runs:
                figures = figures_text({k: v for p in run.parts if not p.estimated for k, v in p.figures.items()})
                estimated = f"{', '.join(run.estimated)} estimated" if run.estimated else ""
                found[run.run_id] = "; ".join(t for t in (figures, estimated) if t)
    return found


def results_table(snapshot: SessionSnapshot, raw: dict[int, str] | None = None) -> str:
    """The runs as an aligned text table per stage (finals first; each stage scored on its own),
    best first, with the raw figures behind each score when ``raw`` gives them."""
    order = {"final": 0, "search": 1, "promote": 2}
    raw = raw or {}
    rows = [r for r in snapshot.runs if r["kind"] != "setup"]
    rows.sort(key=lambda r: (order.get(r["stage"], 3), r["score"] is None,
                             r["score"] if r["score"] is not None else 0.0, r["id"]))
    header = (f"{'run':>4}  {'stage':<7} {'kind':<9} {'config':<18} {'seed':>5}  {'status':<12} {'score':>6}  "
              f"{'raw figures':<24}  {'worker':<16}  params")
    lines = [header, "-" * len(header)]
    for r in rows:
        score = "-" if r["score"] is None else f"{r['score']:.3f}"
        params = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["params"].items())
        reason = f"  ({r['failure_reason']})" if r["failure_reason"] and r["status"] != "done" else ""
        lines.append(f"{r['id']:>4}  {str(r['stage'])[:7]:<7} {r['kind']:<9} {str(r['config_name'])[:18]:<18} "
                     f"{r['seed'] or 0:>5}  {r['status']:<12} {score:>6}  {raw.get(r['id'], '') or '-':<24}  "
                     f"{str(r.get('worker') or '-')[-16:]:<16}  {params}{reason}")
    return "\n".join(lines)


def best_step_lines(table: Standings) -> list[str]:
    """``best step of adamw-fast: 300 (validation), mean 0.12 over 2 seeds, validation loss`` per
    ranked search config, best first."""
    board = table.board("search")
    return [f"best step of {row.name}: {row.best_step} ({row.best_step_basis}), mean score {row.mean:.3f} "
            f"over {row.seeds} seed{'s' if row.seeds != 1 else ''}" + (f", {row.loss_basis} loss" if row.loss_basis else "")
            for row in (board.rows if board else []) if row.rank is not None and row.best_step is not None]


def winner_lines(table: Standings) -> list[str]:
    """The winner and the standings' warnings, as the lines ``status`` prints."""
    winner = table.winner
    if winner is None:
        return ["winner: none yet (no config has a finished score)"]
    seeds = ",".join(str(s) for s in winner.seeds) or "-"
    raw = figures_text(winner.figures)
    at = f" at its best step {winner.step} (by {winner.step_basis})" if winner.step else ""
    lines = [f"winner: {winner.config_name} ({winner.stage}) run {winner.run_id}, {winner.steps} steps{at}, seeds {seeds}; "
             f"score {winner.mean:.3f}" + (f" ({raw})" if raw else "")
             + f"; judges {', '.join(winner.judges) or '-'}"
             + (f" (estimated: {', '.join(winner.estimated)})" if winner.estimated else "")
             + f"; {'rated' if winner.rated else 'not rated'}", f"verdict: {table.verdict}"]
    return lines + [f"warning: {w}" for w in table.warnings]
