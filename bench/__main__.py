"""``python -m bench``: run Bracket's benchmarks and write their JSON under bench/results/.

    python -m bench                      # the short version of everything (~15 min on 2 idle cores)
    python -m bench --full               # the long version (search efficiency ~30+ min)
    python -m bench overhead             # only the overhead benchmark (short; what CI runs)
    python -m bench search --full        # only search efficiency, long
    python -m bench ui                   # page ready, app memory with 500 trials, Compare grid, preset switch
    python -m bench noise [--full]       # validation loss, confirmation round, best step under diffusion noise
    python -m bench presets [--full]     # search over the real preset spaces (issue 19), in process
    python -m bench steer [--full]       # simulated raters: do ratings steer the search?
    python -m bench halving [--full|--quick]  # successive halving vs full runs, TPE+Hyperband, ASHA (issue 38)
    python -m bench hedge [--full] [--fresh]  # where the warm start is wrong: vs plain TPE, GP, random (issue 46)
    python -m bench.rater_ceiling RECORDS  # what the rater's own ratings allow at best (steering records)

Options: ``--results DIR`` (default bench/results), ``--no-demo`` (skip the real demo
search in the overhead benchmark), ``--workers N`` (parallel sessions for search
efficiency, steering and noise, default 2; the preset-space search runs its sessions in this
process unless given). The figures are summarised on the console; docs/BENCHMARKS.md
explains them and holds the numbers of the last full run.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path


def _print_search(data: dict) -> None:
    budget = data["plan"]["budget"]
    for landscape, table in data["summary"].items():
        print(f"\n  {landscape}: optimum {table['optimum']:.4f}, baseline at {table['baseline_ratio']:.2f}x")
        print(f"    {'strategy':<22} {'median trials':>13} {'found':>7} {'best@8':>7} {'best@16':>8} "
              f"{'pick@16':>8} {'base by 3':>9}")
        for strategy, row in table.items():
            if not isinstance(row, dict) or "repetitions" not in row:
                continue
            trials = row["median_trials_to_target"]
            shown = f"{trials:g}" if trials is not None else f">{row.get('budget', budget)}"
            print(f"    {strategy:<22} {shown:>13} {row['found']:>3}/{row['repetitions']:<3} "
                  f"{row.get('best_after_8', float('nan')):>7.3f} {row.get('best_after_16', float('nan')):>8.3f} "
                  f"{(row.get('picked_after_16') or float('nan')):>8.3f} {row['baseline_by_3']:>9.2f}")
        ratio = table.get("bracket_vs_random_trials")
        if ratio is not None:
            print(f"    bracket / random median trials: {ratio:.2f} (goal <= 0.5)")
        if table.get("bracket_vs_random_expected") is not None:
            print(f"    bracket / random's expected median ({table['random_expected_median']:g}): "
                  f"{table['bracket_vs_random_expected']:.2f}")


def _print_steering(data: dict) -> None:
    budget = data["plan"]["budget"]
    print(f"    {'taste':<13} {'mode':<18} {'trials':>6} {'ratio':>6} {'pick<=5%':>8} {'pick/opt':>8} "
          f"{'pick better/worse':>17} {'next 4 in pref. region ctl/with':>32}")
    for taste, row in data["summary"].items():
        for mode in row.get("modes", ("control", "rated", "late")):
            own, versus = row.get(mode), row.get(f"{mode}_vs_control") or {}
            if not own:
                continue
            moved = versus.get("preferred_share_next_proposals") or {}
            ratio = f"{versus['trials_ratio']:.2f}" if versus else ""
            better = f"{versus['pick_better']:.0%}/{versus['pick_worse']:.0%}" if versus else ""
            share = f"{moved['control']:.2f}/{moved['rated']:.2f}" if moved else ""
            print(f"    {taste:<13} {mode:<18} {own['median_trials_to_target']:>6g} {ratio:>6} "
                  f"{own['pick_within_5pct']:>8.0%} {own['median_pick_ratio']:>8.3f} {better:>17} {share:>32}")
    print(f"    (trials: median trials to a config within 5 % of the rater's optimum, a miss counts as "
          f"{budget + 1}; goals: rated/control ratio <= 0.5, rated pick <= 5 % in >= 80 %)")


def _print_overhead(data: dict) -> None:
    gap = data["gap"]
    print(f"\n  orchestration gap: median {gap['gap_median_s']:.3f} s, p95 {gap['gap_p95_s']:.3f} s "
          f"over {gap['trials']} trials (goal median <= {gap['goal_s']} s)")
    for row in data["suggestion"]:
        print(f"  {row['trials']:>5} trials: next() {row['next_s']:.3f} s, scored_configs() "
              f"{row['scored_configs_s']:.3f} s, snapshot() {row['snapshot_s']:.3f} s, RSS {row['rss_mb']:.0f} MB, "
              f"store {row['store_mb']:.1f} MB")
    demo = data.get("demo")
    if demo:
        if not demo.get("available"):
            print(f"  demo search: not available ({demo['reason']})")
        elif demo.get("wall_s") is None:
            print(f"  demo search: {demo['reason']}")
        else:
            print(f"  demo search: {demo['wall_s']:.0f} s, exit code {demo['exit_code']} (goal <= 180 s)")


def ui_latency_results(results: Path | None, *, short: bool = True) -> dict:
    import tempfile

    from bench import ui_latency
    from bench.common import write_result

    with tempfile.TemporaryDirectory(prefix="bracket-ui-bench-") as workdir:
        data = ui_latency.run(Path(workdir), sizes=(500,) if short else (500, 2000), cpu_seconds=20 if short else 60)
    write_result("ui", data, results)
    return data


def _print_ui(data: dict) -> None:
    page, loaded, grid = data["page"], data["loaded"], data["grid"]
    ready = (f"{page['page_ready_s']:.1f} s, {page.get('page_ready_cpu_s') or float('nan'):.2f} CPU-s of the app"
             if page["page_ready_s"] is not None else "did not answer")
    print(f"  page ready after `python app.py`: {ready} (goal <= {page['goal_s']:g} s); idle app RSS "
          f"{page['idle_app_rss_mb'] or float('nan'):.0f} MB")
    if "legacy_page_ready_s" in page:
        print(f"    legacy checkout {page['legacy_page_ready_s'] or float('nan'):.1f} s, this one again "
              f"{page['page_ready_again_s'] or float('nan'):.1f} s")
    for size in data.get("loaded_sizes", [loaded]):
        print(f"  app RSS with a {size['trials']}-trial session loaded: {size['rss_mb']:.0f} MB "
              f"(goal <= {size['goal_mb']:g} MB at 500); Search tab poll {size['search_poll_s']:.3f} s")
        _print_poll(size)
    print(f"  Compare grid 8 runs x 6 prompts: first {grid['first_s']:.3f} s, repeat {grid['repeat_s']:.3f} s, "
          f"after a restart {grid['after_restart_s']:.3f} s (goal <= {grid['goal_s']:g} s)")
    switch = data.get("preset_switch", {})
    if "median_s" in switch:
        print(f"  Setup settles after a preset switch: median {switch['median_s']:.2f} s, slowest "
              f"{switch['slowest_s']:.2f} s (goal <= {switch['goal_s']:g} s on an idle machine; load average "
              f"{'/'.join(str(x) for x in switch['load'])}), "
              f"{switch['events']} server events a switch at most; "
              f"another preset's text shown: {'; '.join(switch['foreign']) or 'never'}")
    elif switch:
        print(f"  Setup preset switch: {switch.get('skipped')}")


def _print_poll(loaded: dict) -> None:
    if "poll_unchanged_s" not in loaded:
        return
    n = loaded["trials"]
    print(f"    {n} trials: poll nothing changed {loaded['poll_unchanged_s']:.4f} s, one run progressed "
          f"{loaded['poll_progressed_s']:.4f} s, after a change {loaded['poll_after_change_s']:.3f} s; "
          f"legacy poll {loaded['legacy_poll_s']:.3f} s (progressed {loaded['legacy_progressed_s']:.3f} s)")
    if "cpu_share_1_tab" in loaded:
        print(f"    CPU share over {loaded['cpu_seconds']} s of a run: 1 tab {loaded['cpu_share_1_tab']:.1%}, "
              f"3 tabs {loaded['cpu_share_3_tabs']:.1%}, legacy 1 tab {loaded['legacy_cpu_share_1_tab']:.1%}")
    nan = float("nan")
    print(f"    Results tab build: leaderboard {loaded['results_cold_s']:.3f} s, then charts and report "
          f"{loaded.get('results_report_s', nan):.3f} s (again {loaded['results_again_s']:.3f} s; verdict "
          f"study in the background {loaded.get('verdict_background_s', nan):.1f} s)")
    for key, what in (("results_restart", "summaries kept"), ("results_restart_cold", "nothing kept"),
                      ("legacy_results_restart", "legacy")):
        if key in loaded:
            got = loaded[key]
            print(f"    Results tab in a just-started app ({what}): leaderboard {got.get('board_s', nan):.2f} s, "
                  f"then charts and report {got.get('report_s', nan):.2f} s {got.get('error', '')}")
    legacy = (f"; legacy first {loaded['legacy_status_cli_s']:.2f} s, again "
              f"{loaded.get('legacy_status_cli_again_s', nan):.2f} s" if "legacy_status_cli_s" in loaded else "")
    print(f"    `bracket status`: cold {loaded.get('status_cli_cold_s', nan):.2f} s, first (summaries kept) "
          f"{loaded['status_cli_s']:.2f} s, again {loaded.get('status_cli_again_s', nan):.2f} s{legacy} "
          f"(exit {loaded['status_cli_exit']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="?",
                        choices=("all", "search", "overhead", "ui", "presets", "steer", "noise", "halving", "hedge"),
                        default="all")
    parser.add_argument("--full", action="store_true", help="the long version")
    parser.add_argument("--quick", action="store_true", help="a tiny version (halving only; for tests)")
    parser.add_argument("--results", type=Path, default=None, help="folder for the JSON results")
    parser.add_argument("--no-demo", action="store_true", help="skip the real demo search")
    parser.add_argument("--workers", type=int, default=None, help="parallel sessions for search efficiency")
    parser.add_argument("--fresh", action="store_true", help="hedge: seeds never used in development")
    parser.add_argument("--strategies", default=None, help="hedge: comma-separated strategies")
    parser.add_argument("--repetitions", type=int, default=None, help="hedge: seeds per kind and strategy")
    args = parser.parse_args(argv)

    from bench import overhead, search_efficiency

    started = time.time()
    short = not args.full
    if args.which in ("all", "overhead"):
        print(f"overhead ({'short' if short else 'full'})")
        _print_overhead(overhead.run(short=short, results_dir=args.results, demo=not args.no_demo))
    if args.which in ("all", "ui"):
        print("ui")
        _print_ui(ui_latency_results(args.results, short=short))
    if args.which in ("all", "search"):
        plan = search_efficiency.SHORT if short else search_efficiency.FULL
        if args.workers:
            plan = replace(plan, workers=args.workers)
        print(f"\nsearch efficiency ({'short' if short else 'full'}: {plan.repetitions} repetitions, "
              f"budget {plan.budget})")
        _print_search(search_efficiency.run(short=short, plan=plan, results_dir=args.results))
    if args.which in ("all", "presets"):
        from bench import preset_search
        from bench.common import write_result

        plan = preset_search.SHORT if short else preset_search.FULL
        if args.workers:
            plan = replace(plan, workers=args.workers)
        print(f"\npreset spaces ({'short' if short else 'full'}: {plan.repetitions} repetitions, budget {plan.budget})")
        data = preset_search.run(plan, results_dir=args.results)
        write_result("preset_search", data, args.results)
        preset_search.print_result(data)
    if args.which in ("all", "steer"):
        from bench import steering

        plan = steering.SHORT if short else steering.FULL
        if args.workers:
            plan = replace(plan, workers=args.workers)
        print(f"\nsteering ({'short' if short else 'full'}: {plan.repetitions} repetitions, budget {plan.budget})")
        _print_steering(steering.run(short=short, plan=plan, results_dir=args.results))
        from bench import proposal_shift
        from bench.common import write_result

        draws = 20 if short else 60
        print(f"\none rating's effect on TPE's next proposals ({draws} draws per taste)")
        shift = proposal_shift.run(draws=draws, variants=("", "human=4"), log=print)
        write_result("proposal_shift", {"draws": draws, "summary": shift}, args.results)
    if args.which in ("all", "noise"):
        from bench import noise

        plan = noise.SHORT if short else noise.FULL
        if args.workers:
            plan = replace(plan, workers=args.workers)
        print(f"\nnoise ({'short' if short else 'full'}: {plan.repetitions} repetitions, budget {plan.budget})")
        print(noise.tables(noise.run(short=short, plan=plan, results_dir=args.results)))
    if args.which in ("all", "halving"):
        from bench import halving, halving_report
        from bench.common import write_result

        plan = halving.QUICK if args.quick else (halving.FULL if args.full else halving.SHORT)
        print(f"\nsuccessive halving ({'quick' if args.quick else 'full' if args.full else 'short'}: "
              f"{plan.repetitions} repetitions, {len(plan.landscapes)} landscapes, cap {plan.cap:g} full runs)")
        data = halving.run(plan, results_dir=args.results)
        write_result("halving", data, args.results)
        halving_report.print_result(data)
    if args.which in ("all", "hedge"):
        from bench import hedge
        from bench.common import write_result

        plan = replace(hedge.FULL if args.full else hedge.SHORT, fresh=args.fresh)
        if args.strategies:
            plan = replace(plan, strategies=tuple(args.strategies.split(",")))
        if args.repetitions:
            plan = replace(plan, repetitions=args.repetitions)
        print(f"\nhedge ({'full' if args.full else 'short'}: {plan.repetitions} seeds"
              f"{' (fresh)' if plan.fresh else ''}, budget {plan.budget})")
        data = hedge.run(plan)
        write_result("hedge" + ("_fresh" if plan.fresh else ""), data, args.results)
        print(hedge.table(data))
    print(f"\ndone in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
