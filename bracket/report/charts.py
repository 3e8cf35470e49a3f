"""Charts as PNG bytes: loss curves, score history, fidelity against flexibility and sample grids — pure drawing.

Every function draws one picture from plain data (lists of dicts and numbers, sample file
paths); none knows sessions, standings or the report. :mod:`bracket.report.document` picks the data
and decides which pictures a report holds.

Charts are drawn with matplotlib's Agg canvas directly (``Figure`` + ``FigureCanvasAgg``, no
pyplot), so drawing keeps no global state and works in a server thread without a display.
Sample grids are composed with Pillow: the final-step sample of every prompt, one tile per
prompt, side by side. Every function takes plain data and returns ``bytes`` (or None when
there is nothing to draw); the report embeds them in HTML and saves them beside report.md.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PIL import Image, ImageDraw

if TYPE_CHECKING:  # pragma: no cover - matplotlib (~1 s to import) is imported when a chart is drawn
    from matplotlib.figure import Figure

#: a run record (the store's dict, or any mapping): :func:`chart_runs` hands back the ones it was given
RunT = TypeVar("RunT", bound=Mapping[str, Any])

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
TILE = 256
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")


def _figure(**kwargs: Any) -> "Figure":
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _png(figure: "Figure") -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def loss_chart(series: Sequence[Mapping[str, Any]], title: str = "Training loss") -> bytes | None:
    """One line per run; ``series`` items: ``{"label", "group", "points": [[step, loss]...], "highlight"}``.

    Runs of the same group (config) share a colour and one legend entry; highlighted runs
    (the winner's) are drawn thicker.
    """
    drawable = [s for s in series if any(_finite(p[1]) for p in s.get("points") or [])]
    if not drawable:
        return None
    figure = _figure(figsize=(8, 4.2))
    axes = figure.add_subplot()
    colours: dict[str, str] = {}
    for item in drawable:
        group = str(item.get("group") or item.get("label"))
        first = group not in colours
        colour = colours.setdefault(group, _COLOURS[len(colours) % len(_COLOURS)])
        points = [(float(s), float(v)) for s, v in item["points"] if _finite(v)]
        axes.plot([p[0] for p in points], [p[1] for p in points], color=colour,
                  linewidth=2.4 if item.get("highlight") else 1.0, alpha=1.0 if item.get("highlight") else 0.7,
                  label=group[:30] if first and len(colours) <= 12 else None)
    axes.set_xlabel("step")
    axes.set_ylabel("loss")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="upper right")
    return _png(figure)


def history_chart(points: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Each search config's rank on the leaderboard now (1 = best) in the order tried, and the best
    rank so far, as the app's Results tab draws it; items: ``{"rank", "best_rank"}``
    (:func:`bracket.standings.history.rank_history`)."""
    points = [p for p in points if p.get("rank") is not None]
    if not points:
        return None
    figure = _figure(figsize=(8, 3.6))
    axes = figure.add_subplot()
    order = list(range(1, len(points) + 1))
    axes.scatter(order, [int(p["rank"]) for p in points], color="#1f77b4", label="config's rank now", zorder=3)
    axes.step(order, [int(p["best_rank"]) for p in points], where="post", color="#2ca02c",
              label="best rank so far")
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("config # (the order tried)")
    axes.set_ylabel("rank (1 = best)")
    axes.set_ylim(max(int(p["rank"]) for p in points) + 0.5, 0.5)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7)
    return _png(figure)


def front_chart(points: Sequence[Mapping[str, Any]], x_label: str = "likeness (fidelity)",
                y_label: str = "prompt-following (flexibility)") -> bytes | None:
    """Fidelity against flexibility, one point per config; items: ``{"name", "x", "y", "on_front",
    "answer", "winner"}``. The front is joined by a line, the answer starred, the winner ringed."""
    if not points:
        return None
    figure = _figure(figsize=(6.4, 4.6))
    axes = figure.add_subplot()
    off = [p for p in points if not p.get("on_front")]
    front = sorted((p for p in points if p.get("on_front")), key=lambda p: p["x"])
    if off:
        axes.scatter([p["x"] for p in off], [p["y"] for p in off], color="#7f7f7f", label="beaten on both", zorder=3)
    if front:
        axes.plot([p["x"] for p in front], [p["y"] for p in front], color="#1f77b4", marker="o", label="front",
                  zorder=3)
    for p in points:
        if p.get("answer"):
            axes.scatter([p["x"]], [p["y"]], marker="*", s=260, color="#d62728", label="the answer", zorder=4)
        if p.get("winner"):
            axes.scatter([p["x"]], [p["y"]], s=220, facecolors="none", edgecolors="#2ca02c", linewidths=2,
                         label="best combined score", zorder=4)
        axes.annotate(str(p["name"])[:24], (p["x"], p["y"]), textcoords="offset points", xytext=(6, 4), fontsize=7)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7)
    return _png(figure)


def final_step_samples(samples: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The last-step image sample of each prompt (first frame), in prompt order; files must exist."""
    images = [s for s in samples if s.get("kind", "image") == "image" and s.get("path")
              and Path(s["path"]).suffix.lower() in IMAGE_SUFFIXES and Path(s["path"]).is_file()]
    chosen: dict[int, Mapping[str, Any]] = {}
    for sample in sorted(images, key=lambda s: (s.get("step") if s.get("step") is not None else -1,
                                                -(s.get("frame") or 0))):
        chosen[int(sample.get("prompt_index") or 0)] = sample  # later steps overwrite earlier ones
    return [chosen[i] for i in sorted(chosen)]


def sample_grid(tiles: Sequence[Mapping[str, Any]], caption: str = "") -> bytes | None:
    """The given image samples side by side, one tile each, with a caption strip on top.

    ``tiles`` are readable images (e.g. :func:`final_step_samples` without the files that do
    not decode); items: ``{"path", "prompt_index", "step"}``."""
    if not tiles:
        return None
    strip = 22 if caption else 0
    grid = Image.new("RGB", (TILE * len(tiles), TILE + strip + 18), "white")
    draw = ImageDraw.Draw(grid)
    if caption:
        draw.text((6, 5), caption[:140], fill="black")
    for index, sample in enumerate(tiles):
        with Image.open(sample["path"]) as image:
            tile = image.convert("RGB")
        scale = TILE / max(tile.size)
        tile = tile.resize((max(1, round(tile.width * scale)), max(1, round(tile.height * scale))),
                           Image.Resampling.NEAREST if scale > 1 else Image.Resampling.LANCZOS)
        x = TILE * index + (TILE - tile.width) // 2
        grid.paste(tile, (x, strip + (TILE - tile.height) // 2))
        label = f"prompt {int(sample.get('prompt_index') or 0)}, step {sample.get('step')}"
        draw.text((TILE * index + 4, strip + TILE + 3), label, fill="black")
    buffer = io.BytesIO()
    grid.save(buffer, format="PNG")
    return buffer.getvalue()


#: runs drawn in a report's loss chart: more are unreadable, and drawing 2000 takes a minute
CHART_RUNS = 30


def chart_runs(runs: Sequence[RunT], scores: Mapping[int, float | None], limit: int = CHART_RUNS) -> list[RunT]:
    """The runs a loss chart draws: all up to ``limit``, else the ``limit`` best by ``scores``
    (run id → score, lower is better; unscored last), in training order, so the chart stays
    readable and cheap at any session size."""
    if len(runs) <= limit:
        return list(runs)
    def rank(run: Mapping[str, Any]) -> tuple:
        score = scores.get(run["id"])
        return (score is None, score if score is not None else 0.0, run["id"])
    keep = {r["id"] for r in sorted(runs, key=rank)[:limit]}
    return [r for r in runs if r["id"] in keep]


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
