"""Why this suggestion: where a proposed config came from, and what it resembles.

Every config of a search has an origin, stored with its Optuna trial: the trainer's
``baseline``; a ``curated`` config (its source says which guide or paper); a warm start from
an earlier session (kind ``past``, named ``past-…``, ``bracket.session.past``); the learning-rate
``bracket`` (the best warm-start config at a lower or higher rate,
``bracket.search.lr_bracket``); a shape draw (kind ``search`` named ``shape-…``: the best
config's optimizer and effective step with its other knobs spread, ``bracket.search.shapes``);
or the sampler (TPE, or random). :func:`explain` says which,
in a sentence, and for a sampled config also:

* how many scored configs the sampler saw (TPE samples at random until it has
  ``n_startup`` scored configs — then the proposal is not yet steered by the scores);
* the finished configs it resembles most — a distance over the searched knobs, each knob
  scaled to its range (log scale for log knobs; a different choice counts 1) — with their
  current rank among the scored configs;
* what it changed against the best config scored before it (``learning_rate 3.2e-04 vs
  1e-04 (×3.2)``, ``optimizer_type Adam vs AdamW``).

Places come from the standings' current scores (ratings included), so "baseline (3rd of 12)"
reads as the leaderboard does (``bracket.app.places``). A config proposed after a person rated
or compared runs says after which (:func:`after_feedback`: the newest rating or vote
before it was proposed), since that rating is part of what TPE saw.

:func:`short_reasons` (``bracket.search.why_line``, re-exported here) writes one short line
per config for the Search tab's trial table (``TPE from 5 scored · vs search-2: learning_rate
×0.31 · after your rating of #3 (8)``); the search stores each config's line with its trial
when it proposes it, and :func:`explain_session` shows that recorded line beside the full
text of now (``recorded``). Gradio-free; the Search tab shows both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bracket.app.places import ordinal, rank
from bracket.search.hedge import NAME_PREFIX as HEDGE_PREFIX
from bracket.search.rated_focus import NAME_PREFIX as FOCUS_PREFIX
from bracket.search.shapes import NAME_PREFIX as SHAPE_PREFIX
from bracket.search.space import FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import PAST_KIND, stored_kind
from bracket.search.why_line import WHY_ATTR, after_feedback, short_reasons  # noqa: F401 (re-exported)
from bracket.search.why_line import shown as _shown

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

#: nearest finished configs named for a sampled config
NEIGHBOURS = 3


@dataclass(frozen=True)
class Neighbour:
    config_id: int
    name: str
    score: float
    distance: float
    #: its rank among the scored configs now ("3rd of 12")
    place: str = ""


def place(scores: Mapping[int, float], config_id: int) -> str:
    """``"3rd of 12"``: config ``config_id``'s rank among ``scores`` (lower is better; ties share one)."""
    return f"{ordinal(rank(scores[config_id], scores.values()))} of {len(scores)}"


@dataclass
class Reason:
    """Why config ``name`` was proposed."""

    config_id: int
    name: str
    kind: str
    origin: str
    #: scored configs the sampler could see (configs created before this one)
    seen: int = 0
    neighbours: list[Neighbour] = field(default_factory=list)
    #: what differs from the best config scored before it
    changes: list[str] = field(default_factory=list)
    best_before: str = ""
    #: the person's newest rating or vote before it was proposed ("after your rating of run #3 (8)")
    after: str = ""
    #: the trial table's line as it read when the config was proposed ("" in older sessions)
    recorded: str = ""

    def text(self) -> str:
        """Markdown: the origin, then (for a sampled config) neighbours and changes."""
        lines = [f"**{self.name}** — {self.origin}"]
        if self.neighbours:
            near = "; ".join(f"{n.name} ({n.place}, distance {n.distance:.2f})" for n in self.neighbours)
            lines.append(f"Closest finished configs: {near}.")
        if self.changes:
            # by the scores of now, which ratings move: the trial table's short line was written
            # when the config first showed, so it may name the best of then
            lines.append(f"Changed from the config before it that scores best now ({self.best_before}): "
                         + "; ".join(self.changes) + ".")
        if self.after:
            lines.append(f"Proposed {self.after}.")
        if self.recorded:
            lines.append(f"When it was proposed: {self.recorded}.")
        return "\n\n".join(lines)


def _scaled(knob: Any, value: Any) -> float | None:
    """``value`` on a 0–1 scale of ``knob``'s range (None when it cannot be placed)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    low, high = float(knob.low), float(knob.high)
    if knob.log and low > 0 and value > 0:
        low, high, value = math.log(low), math.log(high), math.log(value)
    return 0.0 if high == low else (float(value) - low) / (high - low)


def distance(space: SearchSpace, a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Mean distance over the searched knobs either config has: numeric knobs scaled to
    their range (log knobs on a log scale), categorical ones 0 (same) or 1 (different)."""
    parts = []
    for name in space.searched():
        if name not in a and name not in b:
            continue
        knob = space[name]
        if name not in a or name not in b:
            parts.append(1.0)  # one config has the knob (a condition), the other not
        elif isinstance(knob, (FloatKnob, IntKnob)):
            x, y = _scaled(knob, a[name]), _scaled(knob, b[name])
            parts.append(1.0 if x is None or y is None else min(1.0, abs(x - y)))
        else:
            parts.append(0.0 if a[name] == b[name] else 1.0)
    return sum(parts) / len(parts) if parts else 0.0


def changes(space: SearchSpace, new: Mapping[str, Any], old: Mapping[str, Any]) -> list[str]:
    """``knob new vs old`` for every searched knob that differs (numbers with the ratio)."""
    found = []
    for name in space.searched():
        if new.get(name) == old.get(name) or isinstance(space[name], FixedKnob):
            continue
        a, b = new.get(name), old.get(name)
        text = f"{name} {_shown(a)} vs {_shown(b)}"
        if isinstance(space[name], (FloatKnob, IntKnob)) and isinstance(a, (int, float)) and isinstance(
                b, (int, float)) and a > 0 and b > 0:
            text += f" (×{a / b:.2g}, {'higher' if a > b else 'lower'})"
        found.append(text)
    return found


def origin(kind: str, name: str, source: str, *, algorithm: str = "tpe", seen: int = 0, n_startup: int = 4) -> str:
    """One sentence on where a config of ``kind`` came from."""
    kind = stored_kind(kind, name)
    if kind == "baseline":
        return "the trainer's **baseline**: what a person would run by hand" + (f" ({source})." if source else ".")
    if kind == PAST_KIND:
        return "a **warm start from an earlier session**" + (f": {source}." if source else ".")
    if kind == "curated":
        return "a **curated** known-good config" + (f" ({source})." if source else ".")
    if kind not in ("search",):  # the learning-rate bracket
        detail = source.partition("bracket: ")[2] or source  # the source repeats "learning-rate bracket: "
        return "the **learning-rate bracket**" + (f": {detail}." if detail else ".")
    if name.startswith(SHAPE_PREFIX):
        return (f"a **shape draw** after {seen} scored configs: the best config so far with its optimizer family "
                "and effective step (rate × alpha/rank) kept and its other knobs — schedule, warm-up, rank — spread "
                "over the first proposals after the warm start.")
    if name.startswith(HEDGE_PREFIX):
        return (f"a **hedge draw** after {seen} scored configs: the warm start's first configs scored alike (a flat "
                "landscape), so the search explores the whole space — the optimizer family tried least, the rest "
                "at random.")
    if name.startswith(FOCUS_PREFIX):
        return (f"a **focus draw** after {seen} scored configs: your ratings disagree with the loss, so the search "
                "tries the config you rated best with its step moved and one other knob changed.")
    if algorithm == "random":
        return f"sampled **at random** (the search's algorithm), after {seen} scored configs."
    if seen < n_startup:
        return (f"proposed by **TPE** while it still samples at random: {seen} scored configs so far, TPE models "
                f"the scores from {n_startup} on.")
    return (f"proposed by **TPE** from the {seen} configs scored before it: it samples where the better-scored "
            "configs are dense and the worse-scored ones sparse (scores include your ratings).")


def explain(config: Mapping[str, Any], earlier: Sequence[Mapping[str, Any]], scores: Mapping[int, float],
            space: SearchSpace, *, source: str = "", algorithm: str = "tpe", n_startup: int = 4,
            after: str = "") -> Reason:
    """Why ``config`` (a stored config: id, kind, name, params) was proposed, given the
    ``earlier`` configs and the current ``scores`` by config id (lower is better);
    ``after``: the feedback it was proposed after (:func:`after_feedback`)."""
    kind, name = str(config.get("kind", "search")), str(config.get("name", ""))
    scored = [c for c in earlier if c["id"] in scores and c["id"] != config["id"]]
    reason = Reason(int(config["id"]), name, kind, "", seen=len(scored))
    reason.origin = origin(kind, name, source, algorithm=algorithm, seen=len(scored), n_startup=n_startup)
    if kind == "search" and algorithm != "random" and len(scored) >= n_startup:
        reason.after = after  # only a modelled proposal is steered by what the person said
    if kind != "search" or not scored:
        return reason
    params = config.get("params") or {}
    near = sorted((Neighbour(int(c["id"]), str(c["name"]), float(scores[c["id"]]),
                             distance(space, params, c.get("params") or {}), place(scores, c["id"])) for c in scored),
                  key=lambda n: (n.distance, n.score))
    reason.neighbours = near[:NEIGHBOURS]
    best = min(scored, key=lambda c: scores[c["id"]])
    reason.best_before = f"{best['name']}, {place(scores, best['id'])}"
    reason.changes = changes(space, params, best.get("params") or {})
    return reason


def explain_session(session: "Session", scores: Mapping[int, float], config_id: int | None = None) -> Reason | None:
    """:func:`explain` for a config of ``session``'s search (default: the newest proposed),
    with ``scores`` the search board's current mean per config id; None before any config."""
    from bracket.search.controller import DEFAULT_N_STARTUP_TRIALS

    configs = [c for c in session.store.configs(session.name, stage="search")]
    if not configs:
        return None
    config = configs[-1] if config_id is None else next((c for c in configs if c["id"] == config_id), None)
    if config is None:
        return None
    earlier = [c for c in configs if c["id"] < config["id"]]
    attrs = trial_attrs(session).get(int(config["trial_number"]), {})
    after = after_feedback(config.get("created_at"), session.store.ratings(session.name),
                           session.store.comparisons(session.name))
    reason = explain(config, earlier, scores, session.space, source=str(attrs.get("source", "")),
                     algorithm=session.settings.algorithm, n_startup=DEFAULT_N_STARTUP_TRIALS, after=after)
    reason.recorded = str(attrs.get(WHY_ATTR) or "")
    return reason


def trial_attrs(session: "Session") -> dict[int, dict[str, Any]]:
    """The user attributes of each trial of ``session``'s study, by trial number (its
    ``source`` and the ``why`` line written when it was proposed); {} when the study cannot
    be read, e.g. a store without one."""
    from bracket.optuna_access.quiet import optuna_module

    optuna = optuna_module()
    try:
        study = optuna.load_study(study_name=session.name, storage=session.store.storage)
        return {t.number: dict(t.user_attrs) for t in study.get_trials(deepcopy=False)}
    except (KeyError, ValueError, optuna.exceptions.OptunaError):
        return {}
