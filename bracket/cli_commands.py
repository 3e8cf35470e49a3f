"""What each ``python -m bracket`` command does (argument parsing is in ``bracket.cli``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import json

from bracket.cli import parse_assignments
from bracket.errors import BracketError
from bracket.judge.combine import parse_weights
from bracket.registry import PRESETS
from bracket.session.config import DEFAULT_PROMPTS, SearchSettings
from bracket.session.forms import judge_server_settings, parse_bounds
from bracket.session.plan import plan_text as phases_text
from bracket.session.session import Session
from bracket.session.snapshot import SessionSnapshot
from bracket.session.standings import Standings, figures_text, standings


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


def raw_figures(table: Standings) -> dict[int, str]:
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


def _watch(session: Session, *, quiet: bool, everywhere: bool = True) -> str:
    session.start()
    interactive = sys.stdout.isatty()
    last = ""
    try:
        while not session.wait(0.5):
            if quiet:
                continue
            line = progress_line(session.snapshot())
            if line != last:
                print(("\r" + line.ljust(100)) if interactive else line, end="" if interactive else "\n", flush=True)
                last = line
    except KeyboardInterrupt:
        print("\nstopping: the current run is killed; resume with `python -m bracket resume`", file=sys.stderr)
        session.stop(now=True, everywhere=everywhere)
        session.wait(60)
    if interactive and not quiet:
        print()
    return session.snapshot().status


def best_step_lines(table: Standings) -> list[str]:
    """``best step of adamw-fast: 300 (validation), mean 0.12 over 2 seeds, validation loss`` per
    ranked search config, best first."""
    board = table.board("search")
    return [f"best step of {row.name}: {row.best_step} ({row.best_step_basis}), mean score {row.mean:.3f} "
            f"over {row.seeds} seed{'s' if row.seeds != 1 else ''}" + (f", {row.loss_basis} loss" if row.loss_basis else "")
            for row in (board.rows if board else []) if row.rank is not None and row.best_step is not None]


def _finish(session: Session, status: str, shown: tuple[str, ...] | list[str] = ()) -> int:
    """Print the run table, the answer and the notes not ``shown`` already; the exit code."""
    snapshot, table = session.snapshot(), standings(session)
    print(results_table(snapshot, raw_figures(table)))
    for line in best_step_lines(table) + winner_lines(table):
        print(line)
    print(f"\nsession {snapshot.name}: {status} — {snapshot.runs_spent}/{snapshot.total_runs} runs; folder {session.folder}")
    if snapshot.error:
        print(f"error: {snapshot.error}", file=sys.stderr)
    for note in snapshot.notes:
        if note not in shown:
            print(f"note: {note}")
    succeeded = any(r["status"] == "done" for r in snapshot.runs if r["kind"] != "setup")
    session.close()
    if status == "failed" or not succeeded:
        return 1
    return 0 if status == "finished" else 1


def cmd_presets(_args: argparse.Namespace) -> int:
    header = f"{'id':<22} {'family':<22} {'type':<8} {'pre-cache':<9} trainer script"
    print(header)
    print("-" * len(header))
    for p in PRESETS:
        print(f"{p.id:<22} {p.model_family:<22} {p.training_type:<8} {'yes' if p.needs_pre_cache else 'no':<9} "
              f"{p.trainer_script}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    prompts = _prompts_argument(args.prompts) if args.prompts else DEFAULT_PROMPTS
    settings = SearchSettings(
        budget=args.budget, steps=args.steps, seeds=args.seeds, sample_prompts=prompts,
        sample_every_n_steps=args.sample_every, algorithm=args.search,
        bounds=parse_bounds(args.lr_min, args.lr_max, args.batch_sizes or "", parse_assignments(args.bound or [],
                                                                                                "--bound")),
        weights=parse_weights(args.weights), timeout_s=args.timeout, base_seed=args.seed,
        warm_start=not args.no_warm_start, lr_bracket=not args.no_lr_bracket,
        warm_start_from=[str(p) for p in args.warm_start_from], confirm=args.confirm,
        validation_split=0.0 if args.no_validation else None,
        vlm=judge_server_settings(args.judge_url or "", args.judge_model or "", repeats=args.judge_repeats))
    session = Session.create(args.preset, parse_assignments(args.set), settings, out_dir=args.out,
                             name=args.name, storage_url=args.storage)
    print(f"session {session.name} in {session.folder}: {settings.plan()}")
    print(f"plan: {phases_text(session.search_plan)}")
    for warning in session.parts.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in session.parts.notes:
        print(f"note: {note}")
    return _finish(session, _watch(session, quiet=args.quiet), shown=session.parts.notes)


def _prompts_argument(value: str) -> str:
    """``--prompts``: a file's text, or prompt text (``\\n`` between lines); a path that names no
    file is refused rather than taken as a prompt."""
    looks_like_path = "\n" not in value and "\\n" not in value and " --" not in value and (
        value.startswith(("/", "./", "../", "~/")) or value.lower().endswith(".txt"))
    path = Path(value).expanduser()
    try:
        is_file = len(value) < 4096 and path.is_file()
    except OSError:
        is_file = False
    if is_file:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise BracketError(f"--prompts {value}: cannot read it ({type(error).__name__}); give a UTF-8 text file.") \
                from None
    if looks_like_path:
        raise BracketError(f"--prompts {value}: no such file. Give an existing prompt file, or the prompt text itself "
                           "(lines separated by \\n).")
    return value.replace("\\n", "\n")


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


def cmd_status(args: argparse.Namespace) -> int:
    session = Session.open(args.path, storage_url=args.storage, validate=False)
    try:
        table = standings(session)
        if args.json:
            snapshot = session.snapshot()
            print(json.dumps({"session": session.name, "preset_id": session.parts.preset.id, "status": snapshot.status,
                              "runs_spent": snapshot.runs_spent, "total_runs": snapshot.total_runs,
                              **table.to_dict()}, indent=2, default=str))
            return 0
        snapshot = session.snapshot()
        status = snapshot.status
        if status == "running" and not any(w["alive"] for w in snapshot.workers):
            status = "interrupted (no process runs it; resume it)"  # e.g. a full disk kept "failed" from the store
        print(f"session {snapshot.name} ({snapshot.preset_id}): {status}; {snapshot.plan}; "
              f"{snapshot.runs_spent}/{snapshot.total_runs} runs spent")
        for worker in snapshot.workers:
            print(f"worker {worker['worker_id']} gpu={worker['gpu'] or '-'}: {'alive' if worker['alive'] else 'gone'}")
        print(results_table(snapshot, raw_figures(table)))
        for line in best_step_lines(table) + winner_lines(table):
            print(line)
    finally:
        session.close()
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    session = Session.open(args.path, storage_url=args.storage)
    session.store.require_writable()  # a read-only folder or a full disk: one line, nothing started
    if getattr(args, "more_runs", None) is not None:  # +N runs (bracket.session.extend), as in the app
        from bracket.session.extend import extend_budget

        try:
            extend_budget(session, args.more_runs)
        finally:
            session.store.close()
        session = Session.open(args.path, storage_url=args.storage)
    print(f"resuming session {session.name}: {session.settings.plan()}")
    print(f"plan: {phases_text(session.search_plan)}")
    return _finish(session, _watch(session, quiet=args.quiet))


def cmd_finals(args: argparse.Namespace) -> int:
    session = Session.open(args.path, storage_url=args.storage)
    session.store.require_writable()  # a read-only folder or a full disk: one line, nothing started
    final_ids = session.run_finals(top_k=args.top, steps=args.steps, seeds=args.seeds)
    snapshot = session.snapshot()
    finals = [r for r in snapshot.runs if r["stage"] == "final" and r["config_id"] in final_ids]
    print(f"finals of session {session.name}: {len(final_ids)} configs, {len(finals)} runs")
    for run in sorted(finals, key=lambda r: (r["score"] is None, r["score"] or 0.0)):
        score = "-" if run["score"] is None else f"{run['score']:.3f}"
        print(f"  {run['config_name']:<20} seed {run['seed']:>5}  {run['status']:<12} score {score}")
    session.close()
    return 0 if any(r["status"] == "done" for r in finals) else 1


def cmd_report(args: argparse.Namespace) -> int:
    from bracket.report import write_report

    from bracket.session.study_sync import record_verdict

    session = Session.open(args.path, storage_url=args.storage, validate=False)
    try:
        files = write_report(session, args.out)
        verdict_study = None
        if not session.store.read_only:  # a read-only session is only looked at
            finished = (session.store.get_session(session.name) or {}).get("status") == "finished"
            verdict_study = record_verdict(session, close_leftovers=finished)
    finally:
        session.close()
    print(files.report.verdict)
    for warning in files.report.warnings:
        print(f"warning: {warning}")
    for path in (files.markdown, files.html, *files.images):
        print(f"wrote {path}")
    if verdict_study is not None:
        print(f"optuna-dashboard: the study {verdict_study!r} holds the current scores (the verdict's ranking)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from bracket.export import export_run

    session = Session.open(args.path, storage_url=args.storage, validate=False)
    try:
        result = export_run(session, run_id=args.run, steps=args.steps, out=args.out)
    finally:
        session.close()
    print(f"exported run {result.run_id} ({result.config_name}, {result.steps} steps)")
    for path in (result.script, result.windows_script, result.json_path, result.toml_path):
        print(f"wrote {path}")
    for name in result.dropped_env:
        print(f"note: {name} looks like a secret and is not in the script; export it yourself if needed")
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    session = Session.open(args.path, storage_url=args.storage)
    try:
        session.store.require_writable()  # a read-only folder or a full disk: one line, nothing started
        run_id = session.promote(steps=args.steps, run_id=args.run, save_every_n_steps=args.save_every,
                                 dataset=args.dataset)
    except BracketError:
        session.close()
        raise
    run = session.store.get_run(run_id) or {}
    print(f"promoted run {run_id} ({run.get('label', '')}): {run.get('status')}; output {run.get('output_dir')}")
    if run.get("failure_reason"):
        print(f"reason: {run['failure_reason']} — run the same command again to resume from the last saved state")
    session.close()
    return 0 if run.get("status") == "done" else 1


def cmd_worker(args: argparse.Namespace) -> int:
    from bracket.session.store import redact_url
    from bracket.settings import get_settings

    url = args.storage or get_settings().storage_url
    if not url:
        raise BracketError("Give the shared database with --storage postgresql+psycopg://USER@HOST:5432/DATABASE "
                           "or BRACKET_STORAGE_URL; put the password in PGPASSWORD.")
    if args.grace <= 0:
        raise BracketError("--grace must be a positive number of seconds.")
    if args.storage and "@" in args.storage and ":" in args.storage.split("://")[-1].split("@")[0]:
        print("warning: a password in --storage is visible in the process list; put it in PGPASSWORD "
              "(or ~/.pgpass) instead", file=sys.stderr)

    session = Session.join(url, args.session, args.runs_dir, gpu=args.gpu or "", grace_s=args.grace)
    print(f"worker {session.worker_id} (gpu {session.gpu or '-'}) joined {session.name} on {redact_url(url)}; "
          f"run folders in {session.folder}", flush=True)
    # Ctrl-C or SIGTERM stops only this worker; the others take its slot over
    _watch(session, quiet=args.quiet, everywhere=False)
    return _finish(session, session.phase)  # this worker's own outcome; the session may still run elsewhere


def cmd_doctor(args: argparse.Namespace) -> int:
    from bracket.doctor import run_doctor

    report = run_doctor(args.preset, parse_assignments(args.set))
    print(report.render())
    return 0 if report.ok else 1


def cmd_demo_data(args: argparse.Namespace) -> int:
    from bracket.dataset.demo_data import make_demo_dataset

    if args.count <= 0:
        raise BracketError("--count must be at least 1.")
    toml = make_demo_dataset(args.path, count=args.count)
    print(f"demo dataset written: {toml}")
    return 0


COMMANDS = {"presets": cmd_presets, "run": cmd_run, "status": cmd_status, "resume": cmd_resume,
            "demo-data": cmd_demo_data, "doctor": cmd_doctor, "finals": cmd_finals, "promote": cmd_promote,
            "worker": cmd_worker,
            "report": cmd_report, "export": cmd_export}


#: commands that train: SIGTERM (``kill``, a service manager, a closed terminal) stops them the way
#: Ctrl-C does — the trainer is stopped and the run recorded as interrupted — instead of killing
#: Bracket and leaving the trainer running with its run marked "running"
TRAINING_COMMANDS = ("run", "resume", "finals", "promote", "worker")


def _stop_on_sigterm() -> None:
    import signal
    import threading

    def _terminate(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():  # signal handlers belong to the main thread
        signal.signal(signal.SIGTERM, _terminate)


def dispatch(args: argparse.Namespace) -> int:
    if args.command in TRAINING_COMMANDS:
        _stop_on_sigterm()
    return COMMANDS[args.command](args)
