"""Asynchronous successive halving: which paused configuration trains on, and to where.

Every configuration of a halving search is launched with the schedule of the full run (the
same length, warm-up and decay), but trains only to the first *rung*, a fraction of the full
steps, where it saves its state and pauses. A paused configuration is *promoted* — resumed
from that state to the next rung — when its score at the rung is among the best ``1/eta`` of
all the configurations that reached that rung so far (asynchronous successive halving: no
rung waits for a full cohort, so one worker or many never sit idle). The rest stay paused;
they are not thrown away: scores in Bracket change after the fact (a person rates the samples
at the rung, a judge's score lands), and a paused configuration that climbs into the top
share is promoted then.

This module is the rule only, on plain data; the session (which trains and resumes) and the
benchmarks (``python -m bench halving``) both call it.

    >>> Rungs(eta=3, smallest=1 / 9).fractions()
    (0.1111111111111111, 0.3333333333333333, 1.0)
    >>> Rungs(eta=3, smallest=1 / 9).steps(900, every=50)
    (100, 300, 900)

The rungs' steps are the session's (its request length, ``--steps``). A trainer may count its
run in steps of its own — an LLM trainer's optimizer steps at the config's effective batch (the
equal token budget) — so a rung is the same *share* of each run's own length:
:func:`scaled_step` is the one conversion, used by the trainer for the step it pauses at and by
the session to read where a run stands.

    >>> scaled_step(4, 8, 16), scaled_step(4, 8, 4), scaled_step(8, 8, 4), scaled_step(100, 900, 900)
    (8, 2, 4, 100)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

#: the reduction factor: a third of the configs at a rung go on to the next
DEFAULT_ETA = 3
#: the first rung, as a share of the full steps: 1/3, measured (``python -m bench halving``,
#: docs/BENCHMARKS.md): at 1/9 the loss ranks configs against their full-length quality too
#: poorly (slow starters are cut) and halving costs more than full runs
DEFAULT_SMALLEST = 1 / 3


class RungShape(Protocol):
    """What :func:`promotions` and :func:`stopped_reason` read of the rungs: :class:`Rungs`, or a
    session's rungs at its real steps (``bracket.session.rung_scores.StepRungs``)."""

    @property
    def eta(self) -> int: ...

    def fractions(self) -> tuple[float, ...]: ...


@dataclass(frozen=True)
class Rungs:
    """The rungs of a search: ``smallest``, ``smallest * eta``, … up to the full length."""

    eta: int = DEFAULT_ETA
    smallest: float = DEFAULT_SMALLEST

    def __post_init__(self) -> None:
        if int(self.eta) != self.eta or self.eta < 2:
            raise ValueError(f"the reduction factor must be a whole number of 2 or more, not {self.eta}")
        problem = smallest_problem(self.smallest)
        if problem:
            raise ValueError(problem)

    def fractions(self) -> tuple[float, ...]:
        """The share of the full steps at each rung, the last always 1."""
        out: list[float] = []
        share = float(self.smallest)
        while share < 1 - 1e-9:
            out.append(share)
            share *= self.eta
        return (*out, 1.0)

    def steps(self, full_steps: int, *, every: int = 1) -> tuple[int, ...]:
        """The step of each rung for a run of ``full_steps``: rounded up to a multiple of
        ``every`` (the steps where samples, validation loss and state are saved), strictly
        increasing, the last ``full_steps``. Rungs that round onto each other are merged."""
        every = max(1, int(every))
        out: list[int] = []
        for share in self.fractions()[:-1]:
            step = min(full_steps, every * math.ceil(share * full_steps / every))
            if step < full_steps and (not out or step > out[-1]):
                out.append(step)
        return (*out, int(full_steps))


def scaled_step(step: int, full_steps: int, run_steps: int | None) -> int:
    """Step ``step`` of a run of ``full_steps`` (the session's steps) in a run of ``run_steps``
    steps of its own: the same share of the run. ``step`` itself when the run is as long (or its
    length is unknown), ``run_steps`` at the full length, else rounded, at least 1 and before the end."""
    step, full_steps = int(step), int(full_steps)
    if not run_steps or int(run_steps) == full_steps or full_steps < 1:
        return step
    if step >= full_steps:
        return int(run_steps)
    return max(1, min(int(run_steps) - 1, round(step * int(run_steps) / full_steps)))


@dataclass(frozen=True)
class Parked:
    """A configuration's place on the rungs, as the session or a benchmark sees it now."""

    config_id: int
    #: the highest rung (index into the rungs) whose score is in; -1 before the first
    reached: int
    #: a run of it is training now
    running: bool = False
    #: it cannot go on (diverged, failed, or its trainer cannot resume and it is not worth a restart)
    finished: bool = False


@dataclass(frozen=True)
class Promotion:
    """A paused configuration to resume to rung ``to_rung``, and why (for the why column)."""

    config_id: int
    to_rung: int
    reason: str


def share_label(share: float) -> str:
    """``1/9``, ``1/3``, ``full`` — how a rung is named on screen."""
    if share >= 1 - 1e-9:
        return "full"
    inverse = 1 / share
    return f"1/{round(inverse)}" if abs(inverse - round(inverse)) < 1e-6 else f"{share:.0%}"


def smallest_problem(smallest: object, written: str | None = None) -> str:
    """Why ``smallest`` (as ``written``) cannot be the first rung of a halving search, "" when it
    can: a share of the steps in (0, 1). At 1 the only rung is the full length: no halving.

    >>> smallest_problem(1 / 9), smallest_problem(1.0, "1").partition("share of ")[2]
    ('', "the steps in (0, 1) such as 1/3, got '1' (1: no halving)")
    """
    if not isinstance(smallest, bool) and isinstance(smallest, (int, float)) and 0 < smallest < 1:
        return ""
    said = repr(written) if written is not None else repr(smallest)
    return (f"the smallest rung (--smallest-rung) must be a share of the steps in (0, 1) such as 1/3, got {said}"
            + (" (1: no halving)" if isinstance(smallest, (int, float)) and smallest == 1 else ""))


def parse_share(text: str, *, smallest_rung: bool = False) -> float:
    """A share of the steps as people write it — ``1/3``, ``0.33`` or ``33%`` — as a number in
    (0, 1]; ``smallest_rung``: one a halving search can start at, in (0, 1) (:func:`smallest_problem`).

    >>> parse_share("1/3") == 1 / 3, parse_share("25%"), parse_share("0.5"), parse_share("1")
    (True, 0.25, 0.5, 1.0)
    """
    written = str(text).strip()
    try:
        if written.endswith("%"):
            share = float(written[:-1]) / 100
        elif "/" in written:
            top, bottom = written.split("/", 1)
            share = float(top) / float(bottom)
        else:
            share = float(written)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{written!r} is not a share of the steps; write 1/3, 0.33 or 33%") from None
    if smallest_rung and smallest_problem(share):
        raise ValueError(smallest_problem(share, written))
    if not 0 < share <= 1:
        raise ValueError(f"a share of the steps is in (0, 1]; {written!r} is not (write e.g. 1/3)")
    return share


def top_count(reached: int, eta: int, *, closing: bool = False) -> int:
    """How many of the ``reached`` configurations at a rung go on: ``reached // eta``; when
    ``closing`` (no new configuration will come), at least one and ``ceil(reached / eta)``."""
    if closing:
        return max(1, math.ceil(reached / eta)) if reached else 0
    return reached // eta


def top_words(top: int) -> str:
    """``top 1 goes on``, ``top 2 go on``: how many of a rung go on, in every note that says it."""
    return f"top {top} {'goes' if top == 1 else 'go'} on"


def promotions(configs: Iterable[Parked], scores: Mapping[tuple[int, int], float], rungs: RungShape, *,
               closing: bool = False, leader: bool = False) -> list[Promotion]:
    """The paused configurations to promote now, the most advanced rung first, best first.

    ``scores[(config_id, rung)]`` is a configuration's current score at a rung (lower is
    better); a configuration without a score at its rung is not ranked there. The top share
    is taken over *every* configuration that reached the rung (those gone on included), so a
    rating that lifts a paused configuration into it promotes that one too. ``leader``: the
    best so far at a rung goes on even before ``eta`` configurations reached it (so the
    first configuration trains to full length, and so does every new best at the smallest
    rung)."""
    fractions = rungs.fractions()
    by_id = {c.config_id: c for c in configs}
    out: list[Promotion] = []
    for rung in range(len(fractions) - 2, -1, -1):
        ranked = sorted((value, cid) for (cid, r), value in scores.items()
                        if r == rung and cid in by_id and by_id[cid].reached >= rung and math.isfinite(value))
        top = top_count(len(ranked), rungs.eta, closing=closing)
        if leader and ranked:
            top = max(top, 1)
        for place, (_, cid) in enumerate(ranked[:top], start=1):
            config = by_id[cid]
            if config.reached == rung and not config.running and not config.finished:
                reason = (f"promoted: {place} of {len(ranked)} at {share_label(fractions[rung])}, "
                          f"{top_words(top)} to {share_label(fractions[rung + 1])}")
                out.append(Promotion(cid, rung + 1, reason))
    return out


def search_values(scores: Mapping[tuple[int, int], float], top: int) -> dict[int, float]:
    """One value per configuration for the search's sampler (TPE, the bracket, the shape
    draws), never mixing a short run's loss with a full run's: the configuration's highest
    rung first (``top - rung``: the further it went, the better), then its rank quantile among
    the scores at that rung (in [0, 1)) — the order Optuna gives its pruned trials (by the step
    reached, then the value there). Measured against "the highest rung with ``eta`` configs as
    complete, the rest pruned" in ``python -m bench halving`` (``@lexi``), it reached a
    within-5 % config with less compute."""
    highest: dict[int, int] = {}
    for (cid, rung), value in scores.items():
        if math.isfinite(value) and rung > highest.get(cid, -1):
            highest[cid] = rung
    at: dict[int, list[float]] = {}
    for cid, rung in highest.items():
        at.setdefault(rung, []).append(scores[(cid, rung)])
    for values in at.values():
        values.sort()
    return {cid: (top - rung) + at[rung].index(scores[(cid, rung)]) / len(at[rung])
            for cid, rung in highest.items()}


def stopped_reason(config_id: int, rung: int, scores: Mapping[tuple[int, int], float], rungs: RungShape) -> str:
    """Why a paused configuration waits at ``rung``: its place among those that reached it."""
    ranked = sorted((value, cid) for (cid, r), value in scores.items() if r == rung and math.isfinite(value))
    place = next((i for i, (_, cid) in enumerate(ranked, start=1) if cid == config_id), None)
    label = share_label(rungs.fractions()[rung])
    if place is None:
        return f"stopped at {label}: no score there"
    top = top_count(len(ranked), rungs.eta)
    goes_on = top_words(top) if top else f"none go on before {rungs.eta} reach it"
    return f"stopped at {label}: {place} of {len(ranked)}, {goes_on}"


def cost(steps_trained: float, launches: int, full_steps: int, *, launch_steps: float = 0.0) -> float:
    """Compute in full-run equivalents: the steps trained plus each launch's start-up (model
    load, caches; ``launch_steps`` is that start-up expressed in steps), over a full run's cost."""
    full = full_steps + launch_steps
    return (steps_trained + launches * launch_steps) / full if full > 0 else 0.0
