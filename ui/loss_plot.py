"""The Search tab's live loss chart as Plotly JSON, written directly.

``ui.render.loss_figure`` builds a ``plotly.graph_objects.Figure``; Plotly validates every
number of every trace on the way in, which made a redraw of many finished series and the live
one slow — once a second while a run logs loss. Gradio's ``gr.Plot`` also takes
the JSON itself (``gradio.components.plot.PlotData``), so this module writes the same figure
(same traces, the same layout with the default template) as text:

* a finished run's trace never changes: its JSON is written once per (session, run, points,
  smoothing) and kept (:data:`_TRACES`), so a tick writes only the live run's trace;
* the layout, template included, is serialised once per process;
* non-finite values become ``null`` (Plotly's own encoder does the same; bare ``NaN`` is not JSON).

The result is what ``loss_figure(...).to_json()`` would give for the same input (a test checks it).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from gradio.components.plot import PlotData

from ui.render import VALIDATION_TITLE, smooth, thin_points, validation_trace

#: finished traces kept; past this many the oldest half is dropped
MAX_KEPT = 2000
_TRACES: dict[tuple, str] = {}


@functools.lru_cache(maxsize=8)
def _layout(title: str, empty: bool = False) -> str:
    """The chart's layout as JSON (``empty``: the layout of a chart with no trace, which says so)."""
    from ui.render import loss_figure

    series = {} if empty else {0: [(0, 1.0)]}  # any trace: the layout does not depend on it
    return json.dumps(json.loads(loss_figure(series, {}, title=title).to_json())["layout"])


def _number(value: float) -> float | None:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def trace_json(points: Sequence[Sequence[float]], name: str, *, smoothing: float, current: bool) -> str:
    """One run's ``scattergl`` trace as JSON (``""`` for a run with no points)."""
    points = thin_points(points)
    if not points:
        return ""
    trace = {"line": {"width": 3 if current else 1.5}, "mode": "lines" if len(points) > 1 else "markers",
             "name": name, "opacity": 1.0 if current else 0.6, "x": [p[0] for p in points],
             "y": [_number(v) for v in smooth([p[1] for p in points], smoothing)], "type": "scattergl"}
    return json.dumps(trace)


def _kept_trace(scope: str, run_id: int, points: Sequence[Sequence[float]], name: str, smoothing: float) -> str:
    ends = (tuple(points[0]), tuple(points[-1])) if points else None
    key = (scope, run_id, len(points), ends, name, smoothing)
    text = _TRACES.get(key)
    if text is None:
        if len(_TRACES) >= MAX_KEPT:
            for old in list(_TRACES)[: MAX_KEPT // 2]:
                del _TRACES[old]
        text = _TRACES[key] = trace_json(points, name, smoothing=smoothing, current=False)
    return text


def loss_plot(series: Mapping[int, Sequence[Sequence[float]]], labels: Mapping[int, str], *,
              smoothing: float = 0.0, highlight: int | None = None, title: str = "Training loss",
              scope: str = "", validation: Mapping[int, Sequence[Sequence[float]]] | None = None) -> PlotData:
    """The figure of ``ui.render.loss_figure`` as ``gr.Plot`` data; only the ``highlight`` run's
    trace (the run in progress) is written anew, the finished ones come from :data:`_TRACES`
    (``scope``: whose runs these are, e.g. the session's name, so run ids of two sessions differ)."""
    traces = []
    for run_id, points in series.items():
        name = labels.get(run_id, f"#{run_id}")
        if run_id == highlight:
            traces.append(trace_json(points, name, smoothing=smoothing, current=True))
        else:
            traces.append(_kept_trace(scope, run_id, points, name, smoothing))
    for run_id, points in (validation or {}).items():  # finished runs' validation loss: kept too
        if points:
            key = (scope, run_id, "validation", len(points), tuple(points[-1]))
            if key not in _TRACES:
                _TRACES[key] = json.dumps(validation_trace(points, labels.get(run_id, f"#{run_id}")))
            traces.append(_TRACES[key])
    if validation and any(validation.values()) and title == "Training loss":
        title = VALIDATION_TITLE
    data = ", ".join(t for t in traces if t)
    return PlotData(type="plotly", plot=f'{{"data": [{data}], "layout": {_layout(title, not data)}}}')


def plot_json(value: Any) -> dict[str, Any]:
    """The figure a ``gr.Plot`` value stands for, as plain data (for tests and benchmarks)."""
    if isinstance(value, PlotData):
        return json.loads(value.plot)
    return json.loads(value.to_json())
