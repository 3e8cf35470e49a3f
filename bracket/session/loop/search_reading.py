"""A session's :class:`~bracket.session.loop.search_view.SearchView`, read from its store.

- :func:`search_view` — once per store change (``store.change_memo.per_change``, keyed by the
  store's change marker): the readers that only show or propose (the app, the sampler's history);
- :func:`fresh_view` — read now: the loop, whose decisions (a resume under the session's row lock,
  a claim) must see every write of every worker, also those the marker's sums miss.

A halving view scores every config at every rung it reached (``rung_scores.rung_scores``, the runs
with their series); a search without halving reads the runs without their series.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bracket.session.loop.search_view import SearchView

#: the view's key in the per-change memo
VIEW_KEY = "search-view"


def measured_launch(runs: Sequence[Mapping[str, Any]], settings: Any) -> float:
    """A launch's start-up in the session's steps: the settings' share, else measured (halving only)."""
    if settings.halving is None:
        return 0.0
    from bracket.session.launches import launch_steps

    search = [r for r in runs if (r.get("stage") or "search") == "search" and r.get("kind") != "setup"]
    return launch_steps(search, int(settings.steps), settings.halving.launch_share)


def fresh_view(session: Any) -> SearchView:
    """The view of ``session`` read from its store now (the loop's decisions)."""
    settings, store = session.settings, session.store
    rungs = session.budget.rungs
    runs = store.runs(session.name, with_series=rungs is not None)
    configs = store.configs(session.name, stage="search")
    if rungs is None:
        return SearchView.build(configs, runs, seeds=settings.seeds, full_steps=int(settings.steps))
    from bracket.session.loop.rung_scores import rung_scores  # the scoring: only a halving view needs it

    search = [r for r in runs if r["stage"] == "search"]
    scores = rung_scores(configs, search, rungs, seeds=settings.seeds, ratings=store.ratings(session.name),
                         comparisons=store.comparisons(session.name), weights=settings.weights,
                         eval_loss=session.trainer.sample_kind == "text",
                         params={c["id"]: session.space.searched_params(c["params"]) for c in configs})
    return SearchView.build(configs, runs, seeds=settings.seeds, full_steps=int(settings.steps), rungs=rungs,
                            scores=scores, launch=measured_launch(runs, settings))


def search_view(session: Any) -> SearchView:
    """The view of ``session`` once per store change (the app, the snapshot, the sampler's history)."""
    from bracket.session.store.change_memo import per_change

    return per_change(session, VIEW_KEY, lambda: fresh_view(session))
