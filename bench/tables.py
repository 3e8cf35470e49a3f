"""Markdown tables of benchmark results, for docs/BENCHMARKS.md.

``python -m bench.tables [RESULTS_DIR]`` prints the tables of the JSON files found there
(default bench/results), so the numbers in the document are copied, not retyped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def search_tables(data: dict[str, Any]) -> str:
    budget = data["plan"]["budget"]
    checkpoints = [n for n in (3, 8, 16, 32) if n <= budget]
    lines = []
    for landscape, table in data["summary"].items():
        lines.append(f"\n**{landscape}** — optimum {table['optimum']:.4f} "
                     f"({table['optimum_params']['optimizer_type']}, "
                     f"lr {table['optimum_params']['learning_rate']:.2g}, "
                     f"{table['optimum_params']['lr_scheduler']}, "
                     f"warmup {table['optimum_params']['lr_warmup_steps']}); "
                     f"baseline config at {table['baseline_ratio']:.2f}× optimum\n")
        head = ["strategy", "median trials to ≤1.05×", "reached"] + [f"best@{n}" for n in checkpoints] \
            + [f"picked@{checkpoints[-1]}", "≥ baseline by 3"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for strategy, row in table.items():
            if not isinstance(row, dict) or "repetitions" not in row:
                continue
            trials = row["median_trials_to_target"]
            own = row.get("budget", budget)
            cells = [strategy, f"{trials:g}" if trials is not None else f">{own}",
                     f"{row['found']}/{row['repetitions']}" + (f" in {own}" if own != budget else "")]
            cells += [_f(row.get(f"best_after_{n}")) for n in checkpoints]
            cells += [_f(row.get(f"picked_after_{checkpoints[-1]}")), f"{row['baseline_by_3']:.0%}"]
            lines.append("| " + " | ".join(cells) + " |")
        ratio = table.get("bracket_vs_random_trials")
        expected = table.get("random_expected_median")
        said = []
        if ratio is not None:
            said.append(f"bracket ÷ random, median trials to target: **{ratio:.2f}** (goal ≤ 0.5; a miss counts "
                        f"as the strategy's budget + 1)")
        if expected is not None:
            versus = table.get("bracket_vs_random_expected")
            said.append(f"random search's expected median: {expected:g} trials ({table['random_hit_share']:.2%} of "
                        f"the space is within 5 %)" + (f", bracket ÷ that: **{versus:.2f}**" if versus else ""))
        if said:
            lines.append("\n" + "; ".join(said))
    return "\n".join(lines)


def overhead_tables(data: dict[str, Any]) -> str:
    gap = data["gap"]
    lines = ["| figure | value | goal |", "|---|---|---|",
             f"| orchestration gap, median ({gap['trials']} trials) | {gap['gap_median_s']:.3f} s | ≤ 0.2 s |",
             f"| orchestration gap, p95 | {gap['gap_p95_s']:.3f} s | |",
             (f"| gap median, first / second half of the session | {gap['gap_first_half_median_s']:.3f} / "
              f"{gap['gap_second_half_median_s']:.3f} s | |"),
             f"| one instant run (process start to recorded), median | {gap['run_median_s']:.3f} s | |"]
    for row in data["suggestion"]:
        goal = "≤ 0.5 s" if row["trials"] == 500 else ""
        lines.append(f"| `controller().next()` with {row['trials']} finished trials | {row['next_s']:.3f} s | {goal} |")
        lines.append(f"| `scored_configs()` / `snapshot()` with {row['trials']} | {row['scored_configs_s']:.3f} / "
                     f"{row['snapshot_s']:.3f} s | |")
        lines.append(f"| store size / process RSS with {row['trials']} | {row['store_mb']:.1f} MB / "
                     f"{row['rss_mb']:.0f} MB | |")
    demo = data.get("demo")
    if demo is not None:
        if not demo.get("available"):
            value = f"not available ({demo['reason']})"
        elif demo.get("wall_s") is None:
            value = demo.get("reason", "failed")
        else:
            value = f"{demo['wall_s']:.0f} s (exit code {demo['exit_code']})"
        lines.append(f"| demo search, 4 runs, real demo trainer | {value} | ≤ 180 s |")
    return "\n".join(lines)


def steering_tables(data: dict[str, Any]) -> str:
    """One table per taste: each mode against the no-rating control of the same seeds."""
    budget = data["plan"]["budget"]
    lines = []
    for taste, row in data["summary"].items():
        best = row["optimum_params"]
        lines.append(f"\n**{taste}** (loss landscape `{row['loss_landscape']}`; "
                     f"rater's optimum {best['optimizer_type']}, "
                     f"lr {best['learning_rate']:.2g}, {best['lr_scheduler']}) — {row['description']}\n")
        head = ["mode", "median trials to ≤1.05× rater's optimum", "reached", "÷ control", "pick ≤1.05×",
                "pick ÷ optimum (median)", "pick better / worse than control's",
                "next 4 TPE proposals in ≤1.2×: control → this"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for mode in row.get("modes", ("control", "rated", "late")):
            own, versus = row.get(mode), row.get(f"{mode}_vs_control") or {}
            if not own:
                continue
            moved = versus.get("preferred_share_next_proposals") or {}
            trials = own["median_trials_to_target"]
            cells = [mode, f"{trials:g}" if trials <= budget else f">{budget}",
                     f"{own['reached']}/{row['repetitions']}",
                     _f(versus.get("trials_ratio"), 2), f"{own['pick_within_5pct']:.0%}", _f(own["median_pick_ratio"]),
                     f"{versus['pick_better']:.0%} / {versus['pick_worse']:.0%}" if versus else "",
                     f"{moved['control']:.2f} → {moved['rated']:.2f}" if moved else ""]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def proposal_shift_tables(data: dict[str, Any]) -> str:
    """Share of TPE's next proposals in the rater's preferred region before -> after one 10."""
    lines = ["| taste | scoring | in preferred region: before → after the 10 | proposals changed |",
             "|---|---|---|---|"]
    for taste, rows in data["summary"].items():
        for variant, row in rows.items():
            lines.append(f"| {taste} | {variant} | {row['preferred_before']:.2f} → {row['preferred_after']:.2f} | "
                         f"{row['changed']:.0%} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else RESULTS_DIR
    for name, render in (("overhead", overhead_tables), ("search_efficiency", search_tables),
                         ("steering", steering_tables), ("proposal_shift", proposal_shift_tables)):
        path = folder / f"{name}.json"
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            machine = data["machine"]
            load = machine.get("load_average_1min")
            print(f"\n### {name} — {machine['date']}, {machine['cores']} cores, Python {machine['python']}"
                  + (f", load average {load:.1f} when written" if load is not None else "") + "\n")
            print(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
