"""Sample files of a Compare grid, without a trainer: 8 runs x 6 prompts x 5 saved steps.

Shared by the grid's test (tests/ui/test_ui_handlers.py) and its benchmark (``bench.ui_latency``,
``python -m bench ui``), so no test imports from ``bench/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def grid_fixture(workdir: Path) -> tuple[list[dict[str, Any]], list[Any], Path]:
    """8 runs × 6 prompts of 512 px PNG samples at 5 steps: (runs, prompts, runs folder).

    The sample files are hard links to 6 originals: distinct paths (the thumbnail cache's
    keys) without writing 240 PNGs.
    """
    from PIL import Image

    from bracket.trainer.prompts import parse_prompt_lines

    runs_dir = workdir / "runs-grid"
    originals = []
    for index in range(6):
        originals.append(workdir / f"original-{index}.png")
        Image.new("RGB", (512, 512), (index * 40, 90, 160)).save(originals[-1])
    runs = []
    for run_id in range(1, 9):
        sample_dir = runs_dir / "s" / "trials" / f"{run_id:04d}" / "output" / "sample"
        sample_dir.mkdir(parents=True, exist_ok=True)
        samples = []
        for step in (0, 25, 50, 75, 100):
            for index in range(6):
                path = sample_dir / f"demo_{step:06d}_{index:02d}_20260101120000_{index + 1}.png"
                if not path.exists():
                    os.link(originals[index], path)
                samples.append({"path": str(path), "step": step, "prompt_index": index, "seed": index + 1,
                                "kind": "image", "frame": None})
        runs.append({"id": run_id, "config_name": f"c{run_id}", "seed": 42, "status": "done", "params": {},
                     "samples": samples})
    prompts = parse_prompt_lines("\n".join(f"prompt {i} --d {i + 1}" for i in range(6)))
    return runs, prompts, runs_dir
