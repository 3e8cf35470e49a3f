"""The loss charts the UI draws (the live chart, the Results chart, the per-step chart)."""

from __future__ import annotations

import json

from ui.loss_plot import loss_plot, plot_json
from ui.render import loss_figure


def test_a_one_step_run_draws_its_loss_point():
    figure = loss_figure({1: [(1, 0.5)], 2: [(1, 0.4), (2, 0.3)]}, {1: "one", 2: "two"})
    assert [trace.mode for trace in figure.data] == ["markers", "lines"]


def test_an_empty_loss_chart_says_so_instead_of_axes_from_minus_one():
    empty = plot_json(loss_plot({}, {}))
    assert empty == json.loads(loss_figure({}, {}).to_json())  # the live chart and the Results chart agree
    layout = empty["layout"]
    assert layout["xaxis"]["visible"] is False and layout["yaxis"]["visible"] is False
    assert "No loss logged yet" in layout["annotations"][0]["text"]
    drawn = plot_json(loss_plot({1: [(1, 0.5), (2, 0.4)]}, {}, scope="t"))["layout"]
    assert "annotations" not in drawn and drawn["xaxis"].get("visible", True) is True


def test_per_step_chart_draws_the_loss_that_scores_on_one_scale_with_each_best_step():
    """Issue 34: "score per step" scaled each config to its own 0–1, so two configs could not be
    compared, and the chart never showed the validation loss the score uses. It draws the raw
    loss that scores at each sampled step (one axis for all configs) and marks each best step."""
    from types import SimpleNamespace

    from ui.render import step_figure

    rows = [SimpleNamespace(name="a", step_scores={10: 1.0, 20: 0.0}, best_step=20, best_step_basis="validation",
                            loss_basis="validation", step_loss={10: 0.30, 20: 0.20}),
            SimpleNamespace(name="b", step_scores={10: 0.0, 20: 1.0}, best_step=10, best_step_basis="validation",
                            loss_basis="validation", step_loss={10: 0.12, 20: 0.15})]
    figure = step_figure(rows)
    assert figure.layout.title.text.startswith("Validation loss") and "own scale" not in figure.layout.title.text
    lines = {t.name: list(t.y) for t in figure.data if t.showlegend is not False}
    assert lines == {"a": [0.30, 0.20], "b": [0.12, 0.15]}  # raw: b is better than a at every step
    stars = {t.name: (list(t.x), list(t.y)) for t in figure.data if t.showlegend is False}
    assert stars == {"a: best step 20 (validation)": ([20], [0.20]), "b: best step 10 (validation)": ([10], [0.12])}
