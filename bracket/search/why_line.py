"""The trial table's one-line "why" of each config, as it reads when the config is proposed.

:func:`short_reasons` writes one short line per config (``TPE from 5 scored · vs search-2:
learning_rate ×0.31 · after your rating of run #3 (8)``): its origin; for a TPE proposal how
many scored configs it saw, what it changed against the best one scored before it and the
person's newest rating or vote before it (:func:`after_feedback`). All configs in one pass.

The line depends on the scores, and ratings move scores, so the search writes each config's
line once, when it proposes the config, into its Optuna trial's ``why`` user attribute
(:data:`WHY_ATTR`, ``bracket.session.proposal_why``); the app shows that line, and rebuilds
one from the scores of now only for a config of an older session that has none
(``bracket.app.reading.Reading.short_reasons``, which says so). Pure: plain data in, text out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from bracket.search.hedge import NAME_PREFIX as HEDGE_PREFIX
from bracket.search.rated_focus import NAME_PREFIX as FOCUS_PREFIX
from bracket.search.shapes import NAME_PREFIX as SHAPE_PREFIX
from bracket.search.space import FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import PAST_KIND, WARM_START_KINDS, stored_kind

#: the Optuna trial user attribute that keeps a config's line from the moment it was proposed
WHY_ATTR = "why"


def shown(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def after_feedback(created_at: float | None, ratings: Sequence[Mapping[str, Any]],
                   comparisons: Sequence[Mapping[str, Any]]) -> str:
    """``after your rating of run #3 (8)`` / ``after your vote #3 vs #5: left`` for the newest
    rating or pairwise vote made before ``created_at``; "" when there was none."""
    if created_at is None:
        return ""
    before = [(float(r["created_at"]), "rating", r) for r in ratings if float(r.get("created_at") or 0) < created_at]
    before += [(float(c["created_at"]), "vote", c) for c in comparisons
               if float(c.get("created_at") or 0) < created_at]
    if not before:
        return ""
    _, what, row = max(before, key=lambda item: item[0])
    if what == "rating":
        return f"after your rating of run #{row['run_id']} ({float(row['value']):g})"
    winner = {"left": f"#{row['left_run_id']} better", "right": f"#{row['right_run_id']} better"}.get(
        str(row.get("winner")), "a tie")
    return f"after your vote #{row['left_run_id']} vs #{row['right_run_id']} ({winner})"


def _short_change(space: SearchSpace, name: str, new: Any, old: Any) -> str:
    knob = space[name] if name in space else None
    if isinstance(knob, (FloatKnob, IntKnob)) and isinstance(new, (int, float)) and isinstance(old, (int, float)) \
            and new > 0 and old > 0:
        return f"{name} ×{new / old:.2g}"
    return f"{name} {shown(new)}"


def short_reasons(configs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], space: SearchSpace, *,
                  ratings: Sequence[Mapping[str, Any]] = (), comparisons: Sequence[Mapping[str, Any]] = (),
                  algorithm: str = "tpe", n_startup: int = 4, changes_shown: int = 2,
                  only: Collection[int] | None = None) -> dict[int, str]:
    """One short line per config of ``configs`` (in proposal order) for the trial table: its
    origin; for a TPE proposal how many scored configs it saw, what it changed against the
    best one before it and the rating it came after. One pass, however many configs; with
    ``only``, the lines of those config ids alone (the others are only counted)."""
    lines: dict[int, str] = {}
    best: Mapping[str, Any] | None = None
    seen = 0
    for config in configs:
        if only is not None and int(config["id"]) not in only:
            seen, best = _counted(config, scores, seen, best)
            continue
        name = str(config.get("name", ""))
        kind = stored_kind(str(config.get("kind", "search")), name)
        if kind == "baseline":
            text = "baseline: the by-hand config"
        elif kind == PAST_KIND:
            text = "warm start from a past session"
        elif kind == "curated":
            text = "curated known-good config"
        elif kind != "search":
            text = "learning-rate bracket of the best warm start"
        elif name.startswith(SHAPE_PREFIX):
            text = "shape draw: the best step, another shape"
        elif name.startswith(HEDGE_PREFIX):
            text = "hedge draw: the family tried least, the rest random"
        elif name.startswith(FOCUS_PREFIX):
            text = "focus draw: the config you rated best, one knob changed"
        elif algorithm == "random":
            text = f"random sample ({seen} scored before)"
        elif seen < n_startup:
            text = f"TPE, still random: {seen} of {n_startup} scored"
        else:
            text = f"TPE from {seen} scored"
        if kind not in WARM_START_KINDS and best is not None:
            params, old = config.get("params") or {}, best.get("params") or {}
            moved = [_short_change(space, k, params.get(k), old.get(k)) for k in space.searched()
                     if params.get(k) != old.get(k) and not isinstance(space[k], FixedKnob)]
            if moved:
                more = len(moved) - changes_shown  # "×11, +1 more", never "×11 +1" (read as a sum)
                text += f" · vs {best.get('name')}: " + ", ".join(moved[:changes_shown] + (
                    [f"+{more} more"] if more > 0 else []))
        if kind == "search" and algorithm != "random" and seen >= n_startup:
            after = after_feedback(config.get("created_at"), ratings, comparisons)
            text += f" · {after}" if after else ""
        lines[int(config["id"])] = text
        seen, best = _counted(config, scores, seen, best)
    return lines


def _counted(config: Mapping[str, Any], scores: Mapping[int, float], seen: int,
             best: Mapping[str, Any] | None) -> tuple[int, Mapping[str, Any] | None]:
    """(configs scored so far, the best of them) once ``config`` is past."""
    if config["id"] not in scores:
        return seen, best
    return seen + 1, config if best is None or scores[config["id"]] < scores[best["id"]] else best
