"""Where the rungs of a halving session fall for its runs, whether they fit, and what a trainer
that cannot resume costs — what ``create_session`` checks and notes before anything is made, and
what the halving scheduler (``bracket.session.scheduling.halving``) trains to. The rungs fall on sample steps, and a
halving search's launches ask for samples there (:func:`sample_interval`, :func:`launch_sample_every`:
one rule for the loop, the pipeline's launches and the app's Compare marks)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from bracket.errors import SearchSpaceError
from bracket.search.halving import share_label
from bracket.session.loop.trainer_facts import NO_FACTS, TrainerFacts
from bracket.trainer.pause import space_stops_itself

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.loop.rung_scores import StepRungs


def sample_interval(settings: Any, trainer: Any) -> int:
    """The steps between the saved samples and validation losses of a run of the session's length,
    where a rung may fall: ``--sample-every``; else the validation interval where the trainer logs
    a validation loss (the trainer renders its samples there too); else, in a halving search of a
    trainer that renders samples while it trains (images, videos), the first rung's step, so every
    rung is a sample step (:func:`launch_sample_every` asks the launch for it); else 1."""
    if settings.sample_every_n_steps:
        return int(settings.sample_every_n_steps)
    plan = getattr(trainer, "validation", None)
    if plan:
        return int(plan.every(settings.steps))
    if settings.halving is not None and getattr(trainer, "sample_kind", "image") != "text":
        first = settings.rungs().steps(int(settings.steps))[0]  # at every step: its share, rounded up
        return first if first < int(settings.steps) else 1
    return 1


def launch_sample_every(settings: Any, trainer: Any, steps: int) -> int | None:
    """The sample interval a launch of ``steps`` asks the trainer for (``RunRequest.sample_every_n_steps``):
    ``--sample-every``; in a halving search, for runs of the session's length, :func:`sample_interval`
    (the rungs are rounded up to it, so the runs paused there have samples to rate and judge); else
    None, the trainer's own (``bracket.trainer.sample_steps``: every steps/5, a video at its last step). An
    LLM trainer answers its held-out prompts at the pause instead (``RunPipeline.judge_rung``)."""
    if settings.sample_every_n_steps or settings.halving is None or int(steps) != int(settings.steps) \
            or getattr(trainer, "sample_kind", "image") == "text":
        return settings.sample_every_n_steps
    return sample_interval(settings, trainer)


def session_rungs(settings: Any, trainer: Any) -> "StepRungs":
    """The rungs at steps where samples and the validation loss are saved (``Rungs.steps``)."""
    from bracket.session.loop.rung_scores import StepRungs  # here: creating a session imports no scoring

    rungs = settings.rungs()
    steps = rungs.steps(int(settings.steps), every=sample_interval(settings, trainer))
    return StepRungs(int(rungs.eta), steps, rungs.fractions())


def trainer_facts(settings: Any, trainer: Any) -> TrainerFacts:
    """What a halving plan's cost depends on in ``trainer`` (decided once, at creation, into the
    session's plan): ``restarts`` (it cannot resume a paused run), ``rung_every`` (the interval
    the rungs round to), ``stops_when`` (the configs whose run exits by itself at its pause step) and
    ``stops_at_rung`` (every run does: the trainer's always do, or every config of the session's space,
    its bounds applied, meets ``stops_when``); :data:`NO_FACTS` without halving."""
    if settings.halving is None:
        return NO_FACTS
    when = tuple((str(name), tuple(str(v) for v in values))
                 for name, values in getattr(trainer, "stops_at_pause_when", ()) or ())
    every = getattr(trainer, "stops_at_pause", False) is True
    if not every and when:
        try:
            space = trainer.session_space(settings.bounds, steps=settings.steps, warmup_share=settings.warmup_share)
        except SearchSpaceError:  # bounds that do not fit: the session refuses them where they are checked
            space = None
        every = space is not None and space_stops_itself(space, when)
    return TrainerFacts(restarts=restarts(trainer), rung_every=sample_interval(settings, trainer),
                        stops_at_rung=every, stops_when=when)


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
