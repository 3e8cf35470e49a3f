"""Experiments on what a rating reaches, as patches a steering benchmark worker applies.

None of these is in the app; each was measured side by side with the shipped rules in
``bench.steering`` (docs/BENCHMARKS.md, section 4, run K) and each ``patch_*`` puts the app's
own behaviour back with ``undo=True``:

* :func:`patch_optimist_order` — what "Next unrated" offers (issue 25, item 3): the unrated
  runs with the best optimistic score first, instead of the informative ranking;
* :func:`patch_focused_tpe` — a narrower TPE once somebody rated;
* :func:`patch_gp_when_rated` — Optuna's ``GPSampler`` instead of TPE once somebody rated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench import patching



def patch_optimist_order(z: float = 1.0, undo: bool = False) -> None:
    """An experiment: "Next unrated" shows the unrated runs with the best *optimistic* score
    first (``score - z * uncertainty``: the highest estimated human score, widened by how
    unsure the estimate is), the winner's run first when it is unrated; ``undo`` restores the
    app's own order (``bracket.judge.informative``)."""
    from bracket.app.manager import SessionManager
    from bracket.judge.informative import candidates_from_standings

    if undo:
        patching.restore(SessionManager, "rate_next")
        return

    def optimist(self: Any, k: int = 4) -> tuple[list[int], str]:
        self.require()
        table = self.standings()
        candidates = candidates_from_standings(table, {r["id"] for r in self.scorable_runs()})
        winner = set(table.winner.run_ids) if table and table.winner else set()
        unrated = sorted((c for c in candidates if not c.rated),
                         key=lambda c: (c.run_id not in winner, c.score - z * c.uncertainty, c.run_id))
        return [c.run_id for c in unrated][:max(k, 0)], ""

    patching.replace(SessionManager, "rate_next", optimist)


def _when_wide_good_set(replace: Callable[[dict[str, Any], Any], Any] | None) -> None:
    """Swap the controller's ``TPESampler`` for a factory that, when TPE would use the wide good
    set (somebody rated, or the explore rule), returns ``replace(options, original)`` instead;
    ``None`` restores Optuna's own. Every sampler experiment goes through here, so undoing one
    always puts back the real ``TPESampler``, whichever ran before."""
    from bracket.search import controller

    original = patching.own(controller, "TPESampler")
    if replace is None:
        patching.restore(controller, "TPESampler")
        return

    def sampler(**options: Any) -> Any:
        if options.get("gamma") is controller._wide_good_count:
            return replace(options, original)
        return original(**options)

    patching.replace(controller, "TPESampler", sampler)


def patch_focused_tpe(prior_weight: float = 0.2, undo: bool = False) -> None:
    """An experiment: once TPE uses the wide good set (somebody rated, or the explore rule),
    its prior counts ``prior_weight`` (Optuna's default 1.0) and it weighs 96 candidates
    (default 24), so it samples closer to the good configs; ``undo`` restores it."""
    _when_wide_good_set(None if undo else lambda options, original: original(
        **{**options, "prior_weight": prior_weight, "n_ei_candidates": 96}))


def patch_gp_when_rated(undo: bool = False) -> None:
    """An experiment: once somebody rated (TPE would use the wide good set), Optuna's
    ``GPSampler`` (a Gaussian process over the current scores, log-EI) proposes instead of
    TPE; ``undo`` restores TPE."""
    def gp(options: dict[str, Any], _original: Any) -> Any:
        from optuna.samplers import GPSampler

        return GPSampler(seed=options.get("seed"), n_startup_trials=options.get("n_startup_trials", 4))

    _when_wide_good_set(None if undo else gp)
