"""The search plan: which phases a search goes through, how many configs each, and where it is.

A search spends its configs (``budget // seeds``) in phases, in this order: the trainer's
``baseline``, the best configs of earlier sessions it warm-starts from (``past``), its
``curated`` configs, the ``LR bracket`` (the best of those at a lower and
a higher learning rate, ``bracket.search.lr_bracket``), with TPE the ``shape draws`` (the
sampler's first four proposals keep the best config's step and spread the rest,
``bracket.search.shapes``; stored as kind ``search`` named ``shape-N``) and then the sampler
(``TPE`` or ``random``). :func:`search_plan` says this as a list of ``(phase, configs)`` pairs,
so a later phase (a confirmation round, say) slots in as one more pair; :func:`plan_text` writes
it in one line (``baseline, 3 curated, 2 LR bracket, 4 shape draws, 2 TPE``) for the Setup tab
and the CLI; :func:`plan_progress` says how far a session got in each phase from its stored
configs; :func:`budget_reaching_search` is the smallest budget whose plan reaches the sampler.

    >>> plan_text(search_plan(12, curated=3))
    'baseline, 3 curated, 2 LR bracket, 4 shape draws, 2 TPE'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bracket.search.lr_bracket import KIND as BRACKET_KIND
from bracket.search.lr_bracket import TRIALS as BRACKET_TRIALS
from bracket.search.shapes import DEFAULT_RULE as SHAPES_RULE
from bracket.search.shapes import NAME_PREFIX as SHAPE_PREFIX
from bracket.search.types import PAST_KIND

BASELINE, PAST, CURATED, BRACKET, CONFIRM = "baseline", "past", "curated", "LR bracket", "confirm"
SHAPES = "shape draws"
#: how many shape draws a TPE search makes after its warm start (``bracket.search.shapes``)
SHAPE_TRIALS = SHAPES_RULE.trials
#: the sampler configs (after the shape draws) a default budget buys: a search that "reaches
#: TPE" has TPE model at least this many proposals (``budget_reaching_search``)
SAMPLER_REACHED = 2
#: a shape draw is stored as kind ``search`` named ``shape-N``; the plan counts it under this kind
SHAPE_KIND = "shape"
#: the stored config kind behind each warm-start phase (the sampler's phase takes the rest)
KIND_OF_PHASE = {BASELINE: "baseline", PAST: PAST_KIND, CURATED: "curated", BRACKET: BRACKET_KIND,
                 SHAPES: SHAPE_KIND}

#: the sampler's phases: their configs are stored with kind ``search``
SAMPLER_PHASES = ("TPE", "random")

Plan = list[tuple[str, int]]

def search_plan(n_configs: int, *, curated: int, baseline: int = 1, warm_start: bool = True,
                lr_bracket: bool = True, algorithm: str = "tpe", confirm: int = 0, past: int = 0) -> Plan:
    """``(phase, configs)`` in order, phases that get no config left out.

    ``curated`` is the number of the trainer's curated configs and ``past`` that of earlier
    sessions' configs (both after fitting the bounds).
    The budget may end inside a phase: the plan then ends there too."""
    left = max(0, int(n_configs))
    plan: Plan = []

    def take(phase: str, wanted: int) -> None:
        nonlocal left
        count = min(left, max(0, wanted))
        if count:
            plan.append((phase, count))
            left -= count

    if warm_start:
        take(BASELINE, baseline)
        take(PAST, past)
        take(CURATED, curated)
        if lr_bracket:
            take(BRACKET, BRACKET_TRIALS)
        if algorithm == "tpe":  # the shape draws need a scored warm-start config and TPE
            take(SHAPES, SHAPE_TRIALS)
    take(sampler_phase(algorithm), left)
    if confirm > 0:  # the confirmation round: runs of the top configs with fresh seeds (bracket.session.loop.confirm)
        plan.append((CONFIRM, int(confirm)))
    return plan


def sampler_phase(algorithm: str) -> str:
    """The sampler phase's label for a search with ``algorithm`` (``tpe`` or ``random``)."""
    return "TPE" if algorithm == "tpe" else "random"


def budget_reaching_search(settings: Any, plan_of: Any) -> int:
    """The smallest budget (``settings``' seeds and confirmation rule) whose plan, as
    ``plan_of(settings)`` makes it, gives the sampler :data:`SAMPLER_REACHED` configs after
    every phase before it: the warm start, the LR bracket and the shape draws all run, and TPE
    models at least two proposals. Without a warm start: :data:`SAMPLER_REACHED` configs."""
    seeds = max(1, int(getattr(settings, "seeds", 1) or 1))
    for budget in range(seeds, 100 * seeds + 1):
        trial = replace(settings, budget=budget)
        phases = dict(plan_of(trial))
        if phases.get(sampler_phase(trial.algorithm), 0) >= SAMPLER_REACHED:
            return budget
    return settings.budget


def plan_for(trainer: Any, space: Any, settings: Any, preset_id: str = "", *, rank: Any = None,
             n_configs: int | None = None) -> Plan:
    """The plan of a search with ``settings`` on ``trainer`` (its warm start fitted to ``space``,
    with the configs of the earlier sessions it warm-starts from, taken in the order ``rank``
    gives them — ``bracket.standings.past_ranking``, their leaderboards, as the session takes
    them: which two are taken decides how many survive the fit); ``n_configs``: the configs the
    budget buys when fewer than the settings plan (``Budget.configs``)."""
    from bracket.session.create import fit_past, fit_warm_start
    from bracket.session.past import past_configs

    fitted, _ = fit_warm_start(trainer, space)
    if getattr(settings, "warm_start_from", None) and preset_id:
        fitted += fit_past(space, past_configs(settings.warm_start_from, preset_id, rank=rank), [])
    kinds = [kind for kind, _ in fitted]
    count = settings.n_configs if n_configs is None else n_configs
    return search_plan(count, curated=kinds.count("curated"), baseline=kinds.count("baseline"),
                       past=kinds.count(PAST_KIND),
                       warm_start=settings.warm_start, lr_bracket=settings.lr_bracket, algorithm=settings.algorithm,
                       confirm=getattr(settings, "confirm_runs", 0))


def plan_text(plan: Sequence[tuple[str, int]]) -> str:
    """``baseline, 3 curated, 2 LR bracket, 6 TPE`` (``baseline`` alone when it is one config)."""
    return ", ".join(phase if (phase == BASELINE and count == 1) else f"{count} {phase}" for phase, count in plan)


def plan_progress(plan: Sequence[tuple[str, int]], configs: Iterable[Mapping[str, Any]],
                  current_kind: str | None = None, skipped: Mapping[str, int] | None = None,
                  algorithm: str = "tpe", ended: bool = False) -> list[dict[str, Any]]:
    """Each phase of ``plan`` with the configs already tried in it (from the session's stored
    search-stage configs: their ``kind``) and whether it is the phase in progress.

    Sampled configs (kind ``search``) count towards the last, sampler phase; a phase other
    code adds later counts the configs of the kind of the same name. Once the sampler has
    begun and the warm start and bracket are finished, a bracket side that was never trained
    (the bounds clamped it onto a config already tried) is the sampler's: the plan counts
    what happened (``LR bracket 1/1 ✓ · TPE 5/5``), and the session notes say why. So is a
    warm-start config the skip rule took out of the queue (``skipped``: how many of each kind,
    :mod:`bracket.search.skip_rule`): ``curated 2/2 (1 skipped) ✓``; a sampler phase added for
    such slots is labelled by the session's ``algorithm``. ``ended``: the search finished, so no
    phase is marked as the next one."""
    tried: dict[str, int] = {}
    busy: set[str] = set()
    for config in configs:
        kind = phase_kind(config)
        tried[kind] = tried.get(kind, 0) + 1
        if config.get("status") == "running":
            busy.add(kind)
    plan = _shapes_as_made(_rebalanced(_without_skipped(plan, skipped or {}, algorithm), tried, busy), tried)
    rows: list[dict[str, Any]] = []
    for phase, count in plan:
        kind = KIND_OF_PHASE.get(phase, "search" if phase in SAMPLER_PHASES else phase)
        rows.append({"phase": phase, "planned": count, "done": tried.get(kind, 0), "kind": kind,
                     "current": kind == current_kind})
        why = (skipped or {}).get(kind)
        if kind != "search" and why:
            rows[-1]["skipped"] = why
    if current_kind is None and not ended:  # no run in progress: the first phase not yet full is the next one
        for row in rows:
            if row["done"] < row["planned"]:
                row["next"] = True
                break
    return rows


def phase_kind(config: Mapping[str, Any]) -> str:
    """The kind a stored config counts under in the plan: a shape draw (kind ``search`` named
    ``shape-N``) under :data:`SHAPE_KIND`, every other config under its stored kind."""
    kind = str(config.get("kind"))
    return SHAPE_KIND if kind == "search" and str(config.get("name", "")).startswith(SHAPE_PREFIX) else kind


def _shapes_as_made(plan: Sequence[tuple[str, int]], tried: Mapping[str, int]) -> Plan:
    """``plan`` with the shape draws and the sampler sharing their configs as the controller
    shares them: the first :data:`SHAPE_TRIALS` sampler proposals of a TPE search after a warm
    start are draws; those TPE made instead (no scored warm-start config yet, another worker)
    count out of the draws."""
    phases = dict(plan)
    if SHAPES not in phases and not ("TPE" in phases and BASELINE in phases):
        return list(plan)
    pool = phases.get(SHAPES, 0) + phases.get("TPE", 0)
    shapes = min(pool, max(tried.get(SHAPE_KIND, 0), SHAPE_TRIALS - tried.get("search", 0)))
    out: Plan = []
    for phase, count in plan:
        if phase == SHAPES:
            continue
        if phase == "TPE":
            if shapes:
                out.append((SHAPES, shapes))
            count = pool - shapes
        if count:
            out.append((phase, count))
    if "TPE" not in phases:  # the budget ends in the draws
        at = next((i for i, (p, _) in enumerate(out) if p == CONFIRM), len(out))
        out[at:at] = [(SHAPES, shapes)] + ([("TPE", pool - shapes)] if pool > shapes else [])
    return out


def _without_skipped(plan: Sequence[tuple[str, int]], skipped: Mapping[str, int], algorithm: str = "tpe") -> Plan:
    """``plan`` with the skipped warm-start configs' slots given to the phases after them, as
    the controller does: the LR bracket (up to its two configs), then the sampler (a phase of its
    own, named by ``algorithm``, when the budget had left it none)."""
    spare = 0
    out: Plan = []
    for phase, count in plan:
        kind = KIND_OF_PHASE.get(phase)
        taken = skipped.get(kind or "") if phase in (BASELINE, PAST, CURATED) else None
        if taken:
            moved = min(taken, count)
            count, spare = count - moved, spare + moved
        elif phase == BRACKET and spare:
            extra = min(spare, BRACKET_TRIALS - count)
            count, spare = count + extra, spare - extra
        elif phase in SAMPLER_PHASES:
            count, spare = count + spare, 0
        out.append((phase, count))
    if spare:
        at = next((i for i, (p, _) in enumerate(out) if p == CONFIRM), len(out))
        out.insert(at, (sampler_phase(algorithm), spare))
    return out


def _rebalanced(plan: Sequence[tuple[str, int]], tried: Mapping[str, int], busy: set[str]) -> Plan:
    """``plan`` with the bracket's untried sides moved to the sampler once the bracket is over."""
    phases = dict(plan)
    sampler = next((p for p in (SHAPES, *SAMPLER_PHASES) if p in phases), None)  # the draws, then TPE
    warm_kinds = {KIND_OF_PHASE[p] for p in (BASELINE, PAST, CURATED, BRACKET)}
    begun = tried.get("search") or tried.get(SHAPE_KIND)
    if (BRACKET not in phases or sampler is None or not begun or busy & warm_kinds
            or any(tried.get(KIND_OF_PHASE[p], 0) < phases[p] for p in (BASELINE, PAST, CURATED) if p in phases)):
        return list(plan)
    spare = phases[BRACKET] - min(tried.get(BRACKET_KIND, 0), phases[BRACKET])
    out: Plan = []
    for phase, count in plan:
        if phase == BRACKET:
            count -= spare
        elif phase == sampler:
            count += spare
        if count:
            out.append((phase, count))
    return out


def progress_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """``baseline ✓ · curated 3/3 ✓ · LR bracket 1/2 ◀ now · TPE 0/6``."""
    parts = []
    for row in rows:
        done, planned = min(row["done"], row["planned"]), row["planned"]
        text = row["phase"] if (row["phase"] == BASELINE and planned == 1) else f"{row['phase']} {done}/{planned}"
        if row.get("skipped"):
            text += f" ({row['skipped']} skipped)"
        if row.get("current"):
            text += " ◀ now"
        elif done >= planned:
            text += " ✓"
        elif row.get("next"):
            text += " ◀ next"
        parts.append(text)
    return " · ".join(parts)
