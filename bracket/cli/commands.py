"""What each ``python -m bracket`` command does.

Each ``cmd_<name>`` takes the arguments parsed by :mod:`bracket.cli.args` and returns the exit
code; ``bracket.cli`` only dispatches to them (see :data:`COMMANDS`). Values reach the engine
through the same parsers as the app's Setup form: ``forms.parse_bounds`` for bounds and
``judge.combine.parse_weights`` for weights (``cli_args.parse_assignments`` splits the CLI's
``FIELD=VALUE`` pairs first). What the commands print about a session is in :mod:`bracket.status.text`.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time

from bracket.app.forms import judge_server_settings, parse_bounds
from bracket.cli.answer import cmd_pick, cmd_weights
from bracket.cli.args import parse_assignments, prompts_argument
from bracket.cli.folders import output_folder
from bracket.cli.opening import open_session as _open
from bracket.errors import BracketError
from bracket.judge.combine import parse_weights
from bracket.registry import PRESETS
from bracket.safe_text import one_line
from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.plan import plan_text as phases_text
from bracket.session.past import offer
from bracket.session.scoring.image_config import chosen_models
from bracket.standings import standings
from bracket.status.ranking import past_ranking
from bracket.status.text import answer_lines, progress_line

LOG_EVERY_S = 30.0  # output that is not a terminal (a log file): a progress line at most this often
                   # unless a run starts or ends, not one line per step
#: after Ctrl-C, how long the CLI waits for the search to wind down: the trainer gets 5 s to exit
#: before it is killed (``Runner.grace_s``), the run is recorded as interrupted, and judges still
#: scoring finished runs (a VLM, an LLM judge) may finish; a plain run winds down in seconds
WIND_DOWN_S = 60.0
#: while winding down, how often the CLI says what it still waits for
WIND_DOWN_SAY_S = 10.0
#: ``worker --grace``: an hour without a heartbeat is already a dead worker
MAX_GRACE_S = 3600.0
#: ``demo-data --count``: more images than any demo search reads
MAX_DEMO_IMAGES = 10_000
#: ``worker --gpu``: what CUDA_VISIBLE_DEVICES takes — indices, or GPU-/MIG- UUIDs, comma-separated
_GPU = re.compile(r"(\d{1,3}|(GPU|MIG)-[0-9A-Za-z/-]{1,80})(,(\d{1,3}|(GPU|MIG)-[0-9A-Za-z/-]{1,80})){0,63}")


def _record_at_end(session: Session) -> None:
    """``study_sync.record_at_end`` (imported when a search ends: ``status`` imports no Optuna)."""
    from bracket.standings.study_sync import record_at_end

    record_at_end(session)


def _keep_status_view(session: Session) -> Session:
    """From now on this process keeps ``status``'s view current as it changes the store
    (``bracket.status.refresh.ViewRefresher``: in the search's thread, once per run, and in a
    judge's thread when its scores land)."""
    from bracket.status import ViewRefresher

    session.on_change.append(ViewRefresher())
    return session


def _watch(session: Session, *, quiet: bool, everywhere: bool = True) -> str:
    session.start()
    interactive = sys.stdout.isatty()
    last, last_head, last_at = "", "", float("-inf")
    try:
        while not session.wait(0.5):
            if quiet:
                continue
            line = progress_line(session.snapshot())
            if interactive and line != last:
                print("\r" + line.ljust(100), end="", flush=True)
            elif not interactive:
                head = line.split(" | step ")[0].split(" | ETA ")[0]  # runs spent and phase
                if head != last_head or (line != last and time.monotonic() - last_at >= LOG_EVERY_S):
                    print(line, flush=True)
                    last_head, last_at = head, time.monotonic()
            last = line
    except KeyboardInterrupt:
        _wind_down(session, everywhere=everywhere)
    if interactive and not quiet:
        print()
    status = session.snapshot().status
    # still running in the store: another worker of a shared search goes on; this process's own outcome
    return session.phase if status == "running" and session.phase in ("finished", "stopped", "failed") else status


def _wind_down(session: Session, *, everywhere: bool) -> None:
    """After Ctrl-C (or SIGTERM): stop the search and wait for it, saying what for. A second
    Ctrl-C — or the wait passing :data:`WIND_DOWN_S` — kills the trainer at once and exits
    (KeyboardInterrupt: exit 130) without waiting; the store keeps every finished run."""
    print(f"\nstopping: the current run's trainer gets 5 s to exit, then is killed, and the run is recorded as "
          f"interrupted (waiting up to {WIND_DOWN_S:.0f} s). Press Ctrl-C again to stop now: finished runs stay "
          f"in the store, and `python -m bracket resume {session.folder}` runs the cut one again.",
          file=sys.stderr, flush=True)
    try:  # a second Ctrl-C may come while the stop is still being asked for (a store write)
        session.stop(now=True, everywhere=everywhere)
        started = said = time.monotonic()
        while not session.wait(0.25):
            now = time.monotonic()
            if now - started >= WIND_DOWN_S:
                print(f"stopping: not done after {WIND_DOWN_S:.0f} s ({session.phase}); stopping now",
                      file=sys.stderr, flush=True)
                raise KeyboardInterrupt
            if now - said >= WIND_DOWN_SAY_S:
                print(f"stopping: still waiting ({session.phase}); Ctrl-C again stops now", file=sys.stderr,
                      flush=True)
                said = now
    except KeyboardInterrupt:
        session.abandon()
        print(f"stopped now: the trainer was killed; finished runs are in the store, and the cut run is marked "
              f"interrupted and run again by `python -m bracket resume {session.folder}`", file=sys.stderr,
              flush=True)
        raise


def _finish(session: Session, status: str, shown: tuple[str, ...] | list[str] = ()) -> int:
    """Print the run table, the answer and the notes not ``shown`` already; the exit code."""
    snapshot, table = session.snapshot(), standings(session)
    if snapshot.error and status == "finished":  # the store kept its old status: its last write failed
        status = "failed"
    for line in answer_lines(session, snapshot, table):
        print(line)
    print(f"\nsession {snapshot.name}: {status} — {snapshot.spent_label}; "
          f"folder {session.folder}")
    if snapshot.error:
        print(f"error: {one_line(snapshot.error)}", file=sys.stderr)
    for note in snapshot.notes:
        if note not in shown:
            print(f"note: {note}")
    # a halving search whose budget paid for no full-length run ended with an answer all the same (the
    # best config at its highest rung, and how to finish it: the standings' warning)
    succeeded = any(r["status"] == "done" for r in snapshot.runs if r["kind"] != "setup") or table.budget_short
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


def _run_prompts(args: argparse.Namespace, fields: dict[str, str]) -> tuple[str, str]:
    """The prompt lines of ``run`` and where they came from: ``--prompts``, else proposed from
    the preset's dataset (``bracket.app.prompt_field``); "" when there are none (create refuses)."""
    if args.prompts:
        return prompts_argument(args.prompts), "--prompts"
    from bracket.app.prompt_field import proposed_prompts

    proposal = proposed_prompts(args.preset, fields)
    return (proposal.text, f"proposed from {proposal.source}; give --prompts to choose them") if proposal else ("", "")


def _image_models(args: argparse.Namespace) -> dict[str, str]:
    """The image judges' models ``run``'s or ``doctor``'s ``--judge-*`` options choose (blank: ``.env``'s)."""
    return chosen_models(args.judge_text_image, args.judge_likeness, args.judge_preference)


def cmd_run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bracket.app.forms import default_budget
    from bracket.registry import get_preset

    fields = parse_assignments(args.set)
    steps = args.steps if args.steps is not None else int(
        dict(get_preset(args.preset).search_defaults).get("steps", SearchSettings.steps))
    prompts, origin = _run_prompts(args, fields)
    settings = SearchSettings(
        budget=max(1, args.seeds) if args.budget is None else args.budget, steps=steps, seeds=args.seeds,
        sample_prompts=prompts,
        sample_every_n_steps=args.sample_every, algorithm=args.search,
        bounds=parse_bounds(args.lr_min, args.lr_max, args.batch_sizes or "", parse_assignments(args.bound or [],
                                                                                                "--bound")),
        weights=parse_weights(args.weights), timeout_s=args.timeout, base_seed=args.seed,
        warm_start=not args.no_warm_start, lr_bracket=not args.no_lr_bracket, hedge=not args.no_hedge,
        warm_start_from=[str(p) for p in args.warm_start_from], confirm=args.confirm,
        validation_split=0.0 if args.no_validation else None,
        halving=HalvingSettings(eta=args.eta, launch_share=args.launch_cost,
                                **({} if args.smallest_rung is None else {"smallest_rung": args.smallest_rung}))
        if args.halving else None,
        vlm=judge_server_settings(args.judge_url or "", args.judge_model or "", repeats=args.judge_repeats),
        image_models=_image_models(args))
    if args.budget is None:  # the smallest budget whose plan reaches TPE (the Setup form's too)
        settings = replace(settings, budget=default_budget(args.preset, settings, fields, steps))
    session = _keep_status_view(Session.create(args.preset, fields, settings, out_dir=args.out,
                                               name=args.name, storage_url=args.storage, on_finish=[_record_at_end],
                                               rank_past=past_ranking))
    print(f"session {session.name} in {session.folder}: {session.plan_text()}")
    print(f"plan: {phases_text(session.search_plan)}")
    used = session.settings.prompts()
    if used:
        print(f"prompts: {len(used)}, {origin or 'the trainer’s own'}:")
    for prompt in used:
        print(f"  {prompt.text} --d {prompt.seed}" + ("  (held-out)" if prompt.kind == "held_out" else ""))
    for warning in session.parts.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in session.parts.notes:
        print(f"note: {note}")
    if settings.warm_start and not settings.warm_start_from:
        hint = offer(session.folder.parent, args.preset, exclude=session.name, rank=past_ranking)
        if hint:
            print(f"note: {hint}")
    return _finish(session, _watch(session, quiet=args.quiet), shown=session.parts.notes)


def cmd_status(args: argparse.Namespace) -> int:
    """``status`` with the session opened in full: builds the view ``bracket.status.view`` keeps
    (``bracket.cli.dispatch`` answers from the kept view first, when it is current)."""
    from bracket.status import build_view
    from bracket.status.view import print_status, standings_view

    session = _open(args, "status cannot show this session's progress, runs or winner", validate=False)
    try:
        # what comes from the standings and the session: kept until the store changes
        view = standings_view(session, lambda: build_view(session))
        return print_status(session.store, session.name, view, as_json=args.json, grace_s=session.worker.grace_s)
    finally:
        session.close()


def cmd_resume(args: argparse.Namespace) -> int:
    session = _open(args, "the session cannot be resumed", on_finish=[_record_at_end], rank_past=past_ranking)
    session.store.require_writable()  # a read-only folder or a full disk: one line, nothing started
    if getattr(args, "more_runs", None) is not None:  # +N runs (bracket.app.extend), as in the app
        from bracket.app.extend import extend_budget

        try:
            extend_budget(session, args.more_runs)
        finally:
            session.store.close()
        session = Session.open(args.path, storage_url=args.storage, rank_past=past_ranking)
    if session.budget_spent():  # nothing to recover or train: say so, start nothing
        # what it spent in the status line's words (a halving search's budget is full runs, not runs)
        print(f"session {session.name} has already trained its whole budget ({session.snapshot().spent_label}): "
              f"nothing to resume. Give it more with `python -m bracket resume {args.path} --more-runs N`, "
              "or run finals (`python -m bracket finals`).")
        session.close()
        return 0
    _keep_status_view(session)
    print(f"resuming session {session.name}: {session.plan_text()}")
    print(f"plan: {phases_text(session.search_plan)}")
    return _finish(session, _watch(session, quiet=args.quiet))


def cmd_finals(args: argparse.Namespace) -> int:
    session = _keep_status_view(_open(args, "this session's best configs cannot be re-run as finals"))
    session.store.require_writable()  # a read-only folder or a full disk: one line, nothing started
    from bracket.app.stages import run_finals

    final_ids = run_finals(session, top_k=args.top, steps=args.steps, seeds=args.seeds)
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
    from bracket.standings.study_sync import record_verdict

    output_folder(args.out, "--out")
    session = _open(args, "no report can be written", validate=False)
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
    from bracket.report import export_run

    output_folder(args.out, "--out")
    output_folder(args.cache_dir, "--cache-dir")
    session = _open(args, "this session's winner cannot be exported", validate=False)
    try:
        result = export_run(session, run_id=args.run, steps=args.steps, out=args.out, cache_dir=args.cache_dir)
    finally:
        session.close()
    print(f"exported run {result.run_id} ({result.config_name}, {result.steps} steps) to {result.folder}")
    if result.cache_dir is not None:
        print(f"caches: {result.cache_dir} (made by the script before training unless the session's caches exist)")
    for path in (result.script, result.windows_script, result.json_path, result.toml_path):
        print(f"wrote {path}")
    for name in result.dropped_env:
        print(f"note: {name} looks like a secret and is not in the script; export it yourself if needed")
    print(f"train it with: bash {result.script}")
    return 0


def cmd_train_winner(args: argparse.Namespace) -> int:
    from bracket.app.stages import train_winner

    session = _keep_status_view(_open(args, "this session's winner cannot be promoted"))
    try:
        session.store.require_writable()  # a read-only folder or a full disk: one line, nothing started
        run_id = train_winner(session, steps=args.steps, run_id=args.run, save_every_n_steps=args.save_every,
                         dataset=args.dataset)
    except BracketError:
        session.close()
        raise
    run = session.store.get_run(run_id) or {}
    print(f"winner's training, run {run_id} ({run.get('label', '')}): {run.get('status')}; "
          f"output {run.get('output_dir')}")
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
    if not (math.isfinite(args.grace) and 0 < args.grace <= MAX_GRACE_S):
        raise BracketError(f"--grace must be a number of seconds above 0 and at most {MAX_GRACE_S:.0f}, "
                           f"got {args.grace}.")
    if args.gpu and not _GPU.fullmatch(args.gpu):
        raise BracketError(f"--gpu {one_line(args.gpu)!r} is not a GPU: give an index (0), several (0,1) or a "
                           "GPU-/MIG- UUID, as CUDA_VISIBLE_DEVICES takes them.")
    if args.storage and "@" in args.storage and ":" in args.storage.split("://")[-1].split("@")[0]:
        print("warning: a password in --storage is visible in the process list; put it in PGPASSWORD "
              "(or ~/.pgpass) instead", file=sys.stderr)

    from bracket.app.programs import WORKER, check_session_launch

    session = Session.join(url, args.session, args.runs_dir, gpu=args.gpu or "", grace_s=args.grace,
                           on_finish=[_record_at_end])
    try:  # the database names the programs: only this machine's configured ones run (docs/SCALING.md)
        check_session_launch(session, allow=args.allow_custom_executables, launcher=WORKER)
    except BracketError:
        session.close()
        raise
    _keep_status_view(session)
    print(f"worker {session.worker_id} (gpu {session.worker.gpu or '-'}) joined {session.name} on {redact_url(url)}; "
          f"run folders in {session.folder}", flush=True)
    # Ctrl-C or SIGTERM stops only this worker; the others take its slot over
    _watch(session, quiet=args.quiet, everywhere=False)
    return _finish(session, session.phase)  # this worker's own outcome; the session may still run elsewhere


def cmd_doctor(args: argparse.Namespace) -> int:
    from bracket.cli.doctor import run_doctor

    report = run_doctor(args.preset, parse_assignments(args.set), image_models=_image_models(args))
    print(report.render())
    return 0 if report.ok else 1


def cmd_demo_data(args: argparse.Namespace) -> int:
    from bracket.dataset.demo_data import make_demo_dataset

    if not 1 <= args.count <= MAX_DEMO_IMAGES:
        raise BracketError(f"--count must be from 1 to {MAX_DEMO_IMAGES}, got {args.count}.")
    output_folder(args.path, "demo-data")
    toml = make_demo_dataset(args.path, count=args.count)
    print(f"demo dataset written: {toml}")
    return 0


COMMANDS = {"presets": cmd_presets, "run": cmd_run, "status": cmd_status, "resume": cmd_resume,
            "demo-data": cmd_demo_data, "doctor": cmd_doctor, "finals": cmd_finals, "worker": cmd_worker,
            "train-winner": cmd_train_winner, "promote": cmd_train_winner,  # promote: the name it had
            "report": cmd_report, "export": cmd_export, "weights": cmd_weights, "pick": cmd_pick}
