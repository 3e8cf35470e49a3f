"""When a run renders its samples, when the search asks for no interval (``--sample-every``).

The best step of a config is chosen among the steps that have samples
(``bracket.session.scoring.best_step``), so a run that sampled only its first and last step
offers a choice of one. Without an interval an image run therefore samples
:data:`SAMPLED_STEPS` times after step 0 — every ``max_steps // 5`` steps, the steps its held-out
validation loss is taken at too (``bracket.trainer.heldout``) — and at step 0 where the trainer
samples the untrained model (``--sample_at_first``). Each sampled step renders every prompt once, so
the cost is ``SAMPLED_STEPS × prompts`` pictures per run (docs/TRAINERS.md, "Samples"); a
larger ``--sample-every`` (Setup: *Sample every N steps*) lowers it.

Video samples are clips, each costing many times a picture: a video run samples at its last
step unless the search asks for an interval.
"""

from __future__ import annotations

#: how many sampled steps after step 0 a run offers the best-step choice, without an interval
SAMPLED_STEPS = 5


def default_every(max_steps: int) -> int:
    """The steps between two samples of a run of ``max_steps`` when none was asked for."""
    return max(1, int(max_steps) // SAMPLED_STEPS)


def sample_every(asked: int | None, max_steps: int, kind: str = "image") -> int:
    """The interval a run samples at: ``asked`` (``--sample-every`` or a halving rung's), else
    :func:`default_every` for pictures and the last step for video clips."""
    if asked:
        return int(asked)
    return int(max_steps) if kind == "video" else default_every(max_steps)
