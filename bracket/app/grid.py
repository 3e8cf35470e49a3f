"""The Compare grid as plain data: rows are prompts, columns are runs, cells are samples.

Every run of a session renders the same prompts with the same seeds, so a fair side-by-side
comparison puts, in one row, the sample of one prompt from every chosen run at one step.
:func:`build_grid` turns run records (the snapshot's ``runs``) into that table:

* ``steps``: every step at which any chosen run saved samples (``e000000`` counts as 0);
  the chosen step defaults to the last step that every run has reached;
* a cell holds the full-size file (PNG or MP4 under the runs folder, never re-encoded) and
  a thumbnail path from :class:`~bracket.app.thumbs.ThumbnailCache`;
* text samples (LLM presets) come from ``generations.json`` in the run's sample folder,
  a list of ``{prompt_index, prompt, seed, completion}``;
* edit models: the prompt's control image (``--ci``, or the ``sample_control_image``
  field) is given once per row, as thumbnails written into the session folder.

Nothing here knows about Gradio; the UI renders a :class:`GridData` as HTML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bracket.app.thumbs import FULL_SIZE, ThumbnailCache
from bracket.session.scoring.image_judges import image_scores
from bracket.trainer.prompts import SamplePrompt

GENERATIONS_FILE = "generations.json"


@dataclass(frozen=True)
class GridCell:
    """One run's sample of one prompt at the grid's step."""

    run_id: int
    prompt_index: int
    #: "image", "video", "text" or "missing"
    kind: str
    path: str | None = None
    thumb: str | None = None
    step: int | None = None
    seed: int | None = None
    text: str = ""
    #: the image judges' raw scores of this sample (judge -> score, higher is better; empty: not judged)
    scores: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class GridColumn:
    run_id: int
    label: str
    config_name: str
    seed: int | None
    status: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class GridData:
    """What the Compare tab draws."""

    columns: list[GridColumn]
    prompts: list[str]
    steps: list[int]
    step: int | None
    rows: list[list[GridCell]]
    sample_kind: str = "image"
    #: per prompt: (thumbnail, full-size copy) of its control image, when the model has one
    controls: list[tuple[str, str] | None] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(cell.kind != "missing" for row in self.rows for cell in row)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except (OSError, ValueError):
        return False


def read_generations(run_dir: str | Path) -> list[dict[str, Any]]:
    """The text samples of an LLM run (``generations.json`` anywhere under its folder)."""
    if not run_dir:
        return []
    folder = Path(run_dir)
    candidates = [folder / "output" / "sample" / GENERATIONS_FILE, *folder.glob(f"**/{GENERATIONS_FILE}")]
    for path in candidates:
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return []
            return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
    return []


def available_steps(runs: Sequence[Mapping[str, Any]]) -> list[int]:
    return sorted({s["step"] for run in runs for s in run.get("samples") or [] if s.get("step") is not None})


def choose_step(runs: Sequence[Mapping[str, Any]], steps: Sequence[int], requested: int | None) -> int | None:
    """``requested`` snapped to an available step; by default the last step every run reached."""
    if not steps:
        return None
    if requested is None:
        per_run = [{s["step"] for s in run.get("samples") or [] if s.get("step") is not None} for run in runs]
        common = set.intersection(*per_run) if per_run and all(per_run) else set()
        return max(common) if common else steps[-1]
    return min(steps, key=lambda s: (abs(s - requested), -s))


def grid_cell(run: Mapping[str, Any], index: int, step: int | None, thumbs: ThumbnailCache, runs_dir: Path,
          blind: bool = False, judged: Mapping[str, Any] | None = None) -> GridCell:
    """One run's sample of prompt ``index`` at ``step``; ``judged``: the run's stored record, whose
    image judges' scores of the sample the cell carries (never in a blind grid)."""
    candidates = [s for s in run.get("samples") or [] if s.get("prompt_index") == index and s.get("step") == step]
    if not candidates:
        return GridCell(run["id"], index, "missing", step=step)
    videos = [s for s in candidates if s.get("kind") == "video"]
    sample = videos[0] if videos else min(candidates, key=lambda s: s.get("frame") or 0)
    path = Path(sample["path"])
    scores = image_scores(judged, path) if judged is not None and not blind else {}
    if sample.get("kind") == "video":
        if not path.is_file() or not (_inside(path, runs_dir) or blind):
            return GridCell(run["id"], index, "missing", step=step)
        shown = thumbs.alias(path) if blind else path
        return GridCell(run["id"], index, "video", str(shown), None, step, sample.get("seed"), scores=scores)
    thumb = thumbs.path_for(path)
    if thumb is None:  # a file that cannot be decoded (e.g. a trainer killed while writing it)
        return GridCell(run["id"], index, "missing", step=step,
                        text="unreadable sample" if blind else f"unreadable sample: {path.name}")
    if blind:
        full = thumbs.alias(path)
    else:
        full = path if _inside(path, runs_dir) else thumbs.path_for(path, FULL_SIZE)
    return GridCell(run["id"], index, "image", str(full), str(thumb), step, sample.get("seed"), scores=scores)


def _text_cells(run: Mapping[str, Any], count: int) -> list[GridCell]:
    by_index = {int(g.get("prompt_index", i)): g for i, g in enumerate(read_generations(run.get("run_dir", "")))}
    cells = []
    for index in range(count):
        item = by_index.get(index)
        if item is None:
            cells.append(GridCell(run["id"], index, "missing"))
        else:
            cells.append(GridCell(run["id"], index, "text", seed=item.get("seed"),
                                  text=str(item.get("completion", ""))))
    return cells


def build_grid(runs: Sequence[Mapping[str, Any]], prompts: Sequence[SamplePrompt], *, thumbs: ThumbnailCache,
               runs_dir: Path, step: int | None = None, sample_kind: str = "image",
               control_image: str = "", blind: bool = False,
               judged: Mapping[int, Mapping[str, Any]] | None = None) -> GridData:
    """The grid of ``runs`` (in the given order) at ``step`` (see the module docstring).

    ``blind``: every file is shown under a neutral name, so nothing in the page says which
    run (config) a column is. ``judged`` (run id -> stored run record): each cell carries the
    image judges' scores of its sample (``bracket.session.scoring.image_judges``).
    """
    columns = [GridColumn(r["id"], f"#{r['id']} {r.get('config_name', '')} · seed {r.get('seed')}",
                          str(r.get("config_name", "")), r.get("seed"), str(r.get("status", "")),
                          dict(r.get("params") or {})) for r in runs]
    prompt_texts = [p.text for p in prompts]
    if sample_kind == "text":
        generations = {r["id"]: read_generations(r.get("run_dir", "")) for r in runs}
        count = max([len(prompt_texts)] + [int(g.get("prompt_index", 0)) + 1 for gs in generations.values()
                                           for g in gs])
        for gs in generations.values():
            for g in gs:
                index = int(g.get("prompt_index", 0))
                while len(prompt_texts) <= index:
                    prompt_texts.append("")
                if not prompt_texts[index]:
                    prompt_texts[index] = str(g.get("prompt", ""))
        per_run = [_text_cells(r, count) for r in runs]
        rows = [[cells[i] for cells in per_run] for i in range(count)]
        return GridData(columns, prompt_texts[:count], [], None, rows, "text", [None] * count)
    steps = available_steps(runs)
    chosen = choose_step(runs, steps, step)
    indices = {s["prompt_index"] for r in runs for s in r.get("samples") or [] if s.get("prompt_index") is not None}
    count = max([len(prompt_texts)] + [i + 1 for i in indices])
    prompt_texts += [f"prompt {i}" for i in range(len(prompt_texts), count)]
    rows = [[grid_cell(r, i, chosen, thumbs, runs_dir, blind, (judged or {}).get(r["id"])) for r in runs]
            for i in range(count)]
    controls: list[tuple[str, str] | None] = []
    for i in range(count):
        source = (prompts[i].control_images[0] if i < len(prompts) and prompts[i].control_images
                  else control_image)
        small = thumbs.path_for(Path(source)) if source else None
        large = thumbs.path_for(Path(source), FULL_SIZE) if small else None
        controls.append((str(small), str(large)) if small and large else None)
    return GridData(columns, prompt_texts, steps, chosen, rows, sample_kind, controls)
