"""The results table: one Markdown table (what the device call prints last) and the JSON behind it."""

from __future__ import annotations

import json
from pathlib import Path

COLUMNS = (("run", "run"), ("wall_s", "wall s"), ("before_first_step_s", "before 1st step s"),
           ("before_share", "share before"), ("steps_s", "steps s"), ("after_s", "samples+save s"),
           ("steps_per_s", "steps/s"), ("peak_gb", "peak GB"), ("tier_gb", "tier GB"),
           ("fits_tier", "fits tier"), ("samples", "samples"), ("eval_points", "val. points"))


def _cell(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def markdown(rows: list[dict], summary: dict) -> str:
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(key)) for key, _ in COLUMNS) + " |")
    lines.append("")
    lines += [f"- {key}: {_cell(value)}" for key, value in summary.items()]
    return "\n".join(lines) + "\n"


def write(out: Path, rows: list[dict], summary: dict) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_proof.json").write_text(json.dumps({"runs": rows, "summary": summary}, indent=1, default=str),
                                        encoding="utf-8")
    path = out / "gpu_proof.md"
    path.write_text(markdown(rows, summary), encoding="utf-8")
    return path
