"""The tables of the successive-halving benchmark (``bench/halving.py``): console and Markdown.

``python -m bench.halving_report [RESULTS_DIR]`` prints the Markdown tables of
``<RESULTS_DIR>/halving.json`` for docs/BENCHMARKS.md, so the numbers there are copied, not retyped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _f(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _names(data: dict[str, Any]) -> list[str]:
    return list(data["summary"])


def summary_table(data: dict[str, Any]) -> str:
    """One row per strategy: compute to a within-5 % config ÷ today's (geometric mean, worst),
    ÷ plain TPE and ÷ TPE + Hyperband, pick ÷ today's pick, at the default start-up cost; the
    geometric mean at 0 and 10 % start-up."""
    launch = f"{data['plan']['launch']:g}"
    kinds = sorted(k.split("_")[2].split("@")[0] for k in next(iter(data["summary"].values()))
                   if k.startswith("vs_bracket_") and k.endswith(f"@{launch}"))
    head = ["strategy", f"compute ÷ today (geo-mean, start-up {float(launch):.0%})", "worst landscape",
            *[f"÷ today, {kind} loss" for kind in kinds],
            "÷ plain TPE", "÷ TPE + Hyperband", "pick ÷ optimum", "pick ÷ today's pick (worst)",
            "at start-up 0 / 10 %", "goals"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in data["summary"].items():
        worst = f"{_f(s[f'worst@{launch}'])} ({s[f'worst_landscape@{launch}']})"
        cells = [name, _f(s[f"vs_bracket@{launch}"]), worst, *[_f(s[f"vs_bracket_{k}@{launch}"]) for k in kinds],
                 _f(s.get(f"vs_optuna-tpe@{launch}")),
                 _f(s.get(f"vs_tpe-hyperband@{launch}")),
                 _f(s.get("pick_vs_optimum"), 3),
                 f"{_f(s['pick_vs_bracket'], 3)} ({_f(s['pick_vs_bracket_worst'], 3)})",
                 f"{_f(s['vs_bracket@0'])} / {_f(s['vs_bracket@0.1'])}", "met" if s["meets_goals"] else "not met"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def landscape_table(data: dict[str, Any], names: list[str] | None = None) -> str:
    """Per landscape and strategy: median compute to a within-5 % config (found in n of N)."""
    launch = f"{data['plan']['launch']:g}"
    cap = data["plan"]["cap"]
    names = names or _names(data)
    lines = [f"Median compute (full-run equivalents, start-up {float(launch):.0%}) to train a within-5 % config "
             f"(sessions that found one by {cap:g}):", "",
             "| landscape (evidence) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for land, row in data["landscapes"].items():
        cells = [f"{land} ({row['_evidence']})"]
        for name in names:
            entry = row[name]
            compute = entry[f"compute@{launch}"]
            shown = f">{cap:g}" if entry[f"found@{launch}"] * 2 <= entry["repetitions"] and compute >= cap else \
                _f(compute, 1)
            cells.append(f"{shown} ({entry[f'found@{launch}']}/{entry['repetitions']})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def spearman_rows(data: dict[str, Any]) -> str:
    """Spearman between each rung's evidence and the true full-length quality, per landscape."""
    first = next(iter(data["landscapes"].values()))["_spearman"]
    kinds = list(first)
    labels = list(first[kinds[0]])
    head = ["landscape"] + [f"{kind} at {label}" for kind in kinds for label in labels]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for land, row in data["landscapes"].items():
        used = row["_evidence"]
        cells = [land]
        for kind in kinds:
            for label in labels:
                value = _f(row["_spearman"][kind][label])
                cells.append(f"**{value}**" if kind == used else value)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def print_result(data: dict[str, Any]) -> None:
    launch = f"{data['plan']['launch']:g}"
    cap = data["plan"]["cap"]
    names = _names(data)
    print(f"  compute to a within-5 % config trained to full length (median, full-run equivalents, start-up "
          f"{float(launch):.0%}; found/repetitions), cap {cap:g}")
    print(f"  {'landscape':<20} " + " ".join(f"{n[:16]:>16}" for n in names))
    for land, row in data["landscapes"].items():
        print(f"  {land:<20} " + " ".join(
            f"{_f(row[n][f'compute@{launch}'], 1):>10} {row[n][f'found@{launch}']:>2}/{row[n]['repetitions']:<2}"
            for n in names))
    print(f"  pick ÷ optimum at the cap {cap:g}")
    for land, row in data["landscapes"].items():
        print(f"  {land:<20} " + " ".join(f"{_f(row[n]['pick@1'], 3):>16}" for n in names))
    print("  Spearman rung evidence vs full quality (the evidence used is marked *)")
    for land, row in data["landscapes"].items():
        parts = [f"{'*' if kind == row['_evidence'] else ''}{kind} " + " ".join(f"{k} {v:.2f}" for k, v in by.items())
                 for kind, by in row["_spearman"].items()]
        print(f"  {land:<20} " + " | ".join(parts))
    for name, s in data["summary"].items():
        print(f"  {name:<20} ÷today {_f(s[f'vs_bracket@{launch}'])} (worst {_f(s[f'worst@{launch}'])} "
              f"{s[f'worst_landscape@{launch}']}), ÷tpe {_f(s.get(f'vs_optuna-tpe@{launch}'))}, ÷tpe+hb "
              f"{_f(s.get(f'vs_tpe-hyperband@{launch}'))}, validation/smoothed "
              f"{_f(s.get(f'vs_bracket_validation@{launch}'))}/{_f(s.get(f'vs_bracket_smoothed@{launch}'))}, "
              f"pick÷today {_f(s['pick_vs_bracket'], 3)}; start-up 0/10 %: "
              f"{_f(s['vs_bracket@0'])}/{_f(s['vs_bracket@0.1'])}; goals {'met' if s['meets_goals'] else 'not met'}")
    print(f"  wall {data['wall_s']:.0f} s")


def main(argv: list[str] | None = None) -> int:
    from bench.common import RESULTS_DIR

    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else RESULTS_DIR
    data = json.loads((folder / "halving.json").read_text(encoding="utf-8"))
    print(summary_table(data), landscape_table(data), spearman_rows(data), sep="\n\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
