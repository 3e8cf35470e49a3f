"""Where the rungs of a halving session fall for its runs, whether they fit, and what a trainer
that cannot resume costs — what ``create_session`` checks and notes before anything is made, and
what the loop (``bracket.session.halving_loop``) trains to."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from bracket.search.halving import share_label

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.rung_scores import StepRungs


def sample_interval(settings: Any, trainer: Any) -> int:
    """The steps between the saved samples and validation losses, where a rung may fall."""
    plan = getattr(trainer, "validation", None)
    return int(settings.sample_every_n_steps or (plan.every(settings.steps) if plan else 1))


def session_rungs(settings: Any, trainer: Any) -> "StepRungs":
    """The rungs at steps where samples and the validation loss are saved (``Rungs.steps``)."""
    from bracket.session.rung_scores import StepRungs  # here: creating a session imports no scoring

    rungs = settings.rungs()
    steps = rungs.steps(int(settings.steps), every=sample_interval(settings, trainer))
    return StepRungs(int(settings.eta), steps, rungs.fractions())


def halving_decided(settings: Any, trainer: Any) -> Any:
    """``settings`` with what the plan's cost depends on in ``trainer`` (made once, at creation):
    ``restarts`` (it cannot resume a paused run) and ``rung_every`` (the interval the rungs round to)."""
    return dataclasses.replace(settings, restarts=restarts(trainer), rung_every=sample_interval(settings, trainer))


def restarts(trainer: Any) -> bool:
    """Whether ``trainer`` trains a promoted config again from step 0 (``resume_mode``)."""
    return getattr(trainer, "resume_mode", "restart") != "continue"


#: a rung rounded up past its share by more than this part of the share is said in a note
ROUNDED_FAR = 0.1


def rounded_note(settings: Any, trainer: Any) -> str:
    """The session note when the sample interval puts a rung far past its share (``--steps 60
    --sample-every 50``: 1/3 at step 50, 83%); "" when every rung is near it."""
    full, every = int(settings.steps), sample_interval(settings, trainer)
    rungs = session_rungs(settings, trainer)
    far = [f"{share_label(share)} falls on step {step} of {full} ({step / full:.0%})"
           for share, step in zip(rungs.shares[:-1], rungs.steps[:-1]) if step > share * full * (1 + ROUNDED_FAR)]
    if not far:
        return ""
    fix = ", lower --sample-every to bring them nearer" if settings.sample_every_n_steps else ""
    return (f"halving: the rungs are rounded up to a step where samples are saved (every {every}): {'; '.join(far)}; "
            f"the plan counts those steps{fix}")


def rung_problem(settings: Any, trainer: Any) -> str:
    """Why the planned rungs do not fit runs of ``settings.steps`` ("" when they do): each rung
    below full length needs a step of its own, below the full length, once rounded up to the
    sample interval; else configs train further than the plan pays for (at worst every config
    to full length)."""
    full, every = int(settings.steps), sample_interval(settings, trainer)
    shares = settings.rungs().fractions()
    if len(session_rungs(settings, trainer).steps) == len(shares):
        return ""
    where, previous = "", None
    for share in shares[:-1]:
        step = min(full, every * math.ceil(share * full / every))
        if step >= full:
            where = f"{share_label(share)} falls on step {step} of {full}, the full length"
            break
        if previous is not None and step <= previous[1]:
            where = f"{share_label(share)} falls on step {step}, as {share_label(previous[0])} does"
            break
        previous = (share, step)
    fix = "raise --steps or lower --sample-every" if settings.sample_every_n_steps else "raise --steps"
    planned = " → ".join(share_label(s) for s in shares)
    return (f"runs of {full} step{'s' if full != 1 else ''} are too short for the halving rungs {planned}: "
            f"rounded up to a step where samples are saved (every {every}), {where}; {fix}.")


def restart_note(trainer: Any, name: str) -> str:
    """The session note of a halving search whose trainer cannot resume (``resume_mode``); "" when it can."""
    if not restarts(trainer):
        return ""
    return (f"halving: {name} cannot resume a paused run, so a promoted config trains again from step 0 to its "
            "next rung (the plan and the budget pay for every step it trains again)")
