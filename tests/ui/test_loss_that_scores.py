"""Issue 34 item 8: the loss charts drew only the training loss while the score used the
validation loss. They draw the validation loss too (dashed), where the runs logged one."""

from __future__ import annotations

import json
from types import SimpleNamespace

from bracket.app.loss_series import LossSeries
from ui.loss_plot import loss_plot, plot_json
from ui.render import VALIDATION_TITLE, loss_figure


class _Store:
    def __init__(self, stored):
        self.stored, self.asked = stored, []

    def series(self, ids):  # as the store's: no query for no ids
        if ids:
            self.asked.append(list(ids))
        return {i: self.stored[i] for i in ids}


def test_the_charts_draw_the_validation_loss_that_scores():
    store = _Store({1: {"loss": [[1, 0.9], [2, 0.8]], "eval_loss": [[2, 0.5]]},
                    2: {"loss": [[1, 0.7], [2, 0.6]], "eval_loss": []}})
    runs = [{"id": i, "kind": "search", "status": "done"} for i in (1, 2)]
    snap = SimpleNamespace(runs=runs, current=None)
    cache = LossSeries()
    assert cache.read(store, snap) == {1: [(1, 0.9), (2, 0.8)], 2: [(1, 0.7), (2, 0.6)]}
    assert cache.read(store, snap, kind="eval_loss") == {1: [(2, 0.5)]}  # run 2 logged none
    assert store.asked == [[1, 2]]  # read once, both kinds
    series, validation = cache.read(store, snap), cache.read(store, snap, kind="eval_loss")
    figure = loss_figure(series, {1: "#1 a"}, validation=validation)
    dashed = [t for t in figure.data if t.line.dash == "dash"]
    assert [(t.name, list(t.x), list(t.y)) for t in dashed] == [("#1 a validation", [2], [0.5])]
    assert figure.layout.title.text == VALIDATION_TITLE
    # the live chart's hand-written JSON is the same figure
    fast = plot_json(loss_plot(series, {1: "#1 a"}, validation=validation, scope="v"))
    assert fast == json.loads(figure.to_json())
    assert loss_figure(series, {}).layout.title.text == "Training loss"  # no validation: as before
