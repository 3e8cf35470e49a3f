"""What a halving plan's cost depends on in the session's trainer, decided once when the session is
created (``bracket.session.loop.rung_steps.trainer_facts``) and stored with the session row
(``plan``) beside its settings, never in them: the person chose the settings, the trainer decides these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TrainerFacts:
    """The trainer's facts of one session's plan (see the module)."""

    #: the trainer cannot resume a paused run (``resume_mode`` "restart"): a promoted config trains
    #: again from step 0 and pays for its whole next rung
    restarts: bool = False
    #: the steps between saved samples and validation losses, where the rungs are rounded up to
    #: (``Rungs.steps``); None: not rounded
    rung_every: int | None = None
    #: a run exits by itself at the rung it was asked to pause at (the adapter's ``stops_at_pause``): a run
    #: in flight may train to that rung at most; False: it may train on to its full length before the
    #: session's stop lands (``Budget.pays`` reserves that)
    stops_at_rung: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"restarts": self.restarts, "rung_every": self.rung_every, "stops_at_rung": self.stops_at_rung}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "TrainerFacts":
        """The facts stored with a session (none stored: a trainer that resumes, rungs not rounded)."""
        data = data or {}
        every = data.get("rung_every")
        return cls(restarts=data.get("restarts") is True,
                   rung_every=every if isinstance(every, int) and not isinstance(every, bool) and every > 0 else None,
                   stops_at_rung=data.get("stops_at_rung") is True)


#: the facts of a session without halving (or not yet decided): nothing restarts, nothing is rounded
NO_FACTS = TrainerFacts()
