"""What a halving plan's cost depends on in the session's trainer, decided once when the session is
created (``bracket.session.loop.rung_steps.trainer_facts``) and stored with the session row
(``plan``) beside its settings, never in them: the person chose the settings, the trainer decides these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bracket.trainer.pause import stops_itself


@dataclass(frozen=True)
class TrainerFacts:
    """The trainer's facts of one session's plan (see the module)."""

    #: the trainer cannot resume a paused run (``resume_mode`` "restart"): a promoted config trains
    #: again from step 0 and pays for its whole next rung
    restarts: bool = False
    #: the steps between saved samples and validation losses, where the rungs are rounded up to
    #: (``Rungs.steps``); None: not rounded
    rung_every: int | None = None
    #: every run of the session exits by itself at the rung it was asked to pause at (the adapter's
    #: ``stops_at_pause``, or every config of the session's space meets :attr:`stops_when`): a run in flight
    #: may train to that rung at most; False: a run may train on to its full length before the session's
    #: stop lands unless its own config meets :attr:`stops_when` (``Budget.pays`` reserves that)
    stops_at_rung: bool = False
    #: the configs whose run carries its own step limit at the rung (the adapter's ``stops_at_pause_when``:
    #: (knob, values) pairs, all met; ``bracket.trainer.pause.stops_itself``): a launch of such a config is
    #: charged its rung, any other its full length
    stops_when: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def stops(self, params: Mapping[str, Any] | None) -> bool:
        """Whether a run of the config ``params`` (None: one not proposed yet) exits by itself at its rung."""
        return self.stops_at_rung or (params is not None and stops_itself(params, self.stops_when))

    def to_dict(self) -> dict[str, Any]:
        return {"restarts": self.restarts, "rung_every": self.rung_every, "stops_at_rung": self.stops_at_rung,
                "stops_when": [[name, list(values)] for name, values in self.stops_when]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "TrainerFacts":
        """The facts stored with a session (none stored: a trainer that resumes, rungs not rounded, no run
        that stops itself; a damaged ``stops_when``: none)."""
        data = data or {}
        every = data.get("rung_every")
        return cls(restarts=data.get("restarts") is True,
                   rung_every=every if isinstance(every, int) and not isinstance(every, bool) and every > 0 else None,
                   stops_at_rung=data.get("stops_at_rung") is True, stops_when=_stops_when(data.get("stops_when")))


def _stops_when(data: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``stops_when`` as stored (``[[knob, [value, ...]], ...]``), () where it is not that shape."""
    if not isinstance(data, list):
        return ()
    pairs = []
    for pair in data:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], list)
                and all(isinstance(v, str) for v in pair[1])):
            return ()
        pairs.append((pair[0], tuple(pair[1])))
    return tuple(pairs)


#: the facts of a session without halving (or not yet decided): nothing restarts, nothing is rounded
NO_FACTS = TrainerFacts()
