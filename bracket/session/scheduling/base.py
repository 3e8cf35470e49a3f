"""The scheduler interface: what the session's one search loop asks, and what it tells.

The loop (``bracket.session.loop.search_loop``) owns everything a worker does for any rule —
recovering dead workers' runs, taking over an orphan's config (``WorkerProtocol.claim``),
reserving a new config (``WorkerProtocol.reserve``, the controller's proposal), claiming paused
runs to resume (``Store.claim_run``), the skipped-proposal notes, pausing, stopping, waiting for
other workers, the confirmation round. A :class:`Scheduler` only decides, on a
:class:`~bracket.session.loop.search_view.SearchView`:

- :meth:`Scheduler.target` — which seeds of a config still need a run, and the step they stop at;
- :meth:`Scheduler.resumes` — paused runs worth resuming now, best first (the loop claims the
  first whose runs it gets, under the session's row lock);
- :meth:`Scheduler.first_stop` — the step a new config's runs stop at (None: full length);
- and it is told: :meth:`Scheduler.started` (a config starts or resumes), :meth:`Scheduler.trained`
  (its runs came back: record where it stands), :meth:`Scheduler.settle` (a config left open with
  nothing in flight: repair it from its runs' rows), :meth:`Scheduler.closing` (nothing more will
  come: stop what waits). Whatever it writes into a config's row from a view goes through
  :meth:`Scheduler.write` (only while the config's runs are as the view read them).

As Ray Tune's ``FIFOScheduler`` is "no early stopping", :class:`~.full_runs.FullRuns` trains
every config to full length and never resumes anything; :class:`~.halving.Halving` pauses configs
at rungs. A new rule (median stopping, a divergence stop at a rung) is one more module here with
one more subclass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.loop.budget import Budget
    from bracket.session.loop.search_view import SearchView
    from bracket.session.store.rows import ConfigRow


@dataclass(frozen=True)
class Work:
    """One thing to train: ``seeds`` of ``config_id`` anew, or its paused ``runs`` resumed, to ``stop_at``
    (None: full length); ``note``: why (a promotion's reason)."""

    config_id: int
    stop_at: int | None
    seeds: tuple[int, ...] = ()
    runs: tuple[int, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Hooks:
    """What a scheduler may do besides deciding, handed in by the loop (the session's parts, not
    the session): read the view now (``view``), write a config row (``store``), finish a config or
    judge a paused run (``pipeline``), add a session note, reach the study (``controller()``)."""

    store: Any
    pipeline: Any
    view: Callable[[], "SearchView"]
    add_note: Callable[[str], None]
    controller: Callable[[], Any]
    #: the session's trainer adapter (its facts: ``resume_mode``) and its name in notes
    trainer: Any = None
    trainer_name: str = ""


class Scheduler:
    """No early stopping: every config's seeds train to full length (see the module)."""

    name = "base"
    #: it pauses runs and resumes them (``resumes`` decided under the session's row lock)
    pauses = False

    def __init__(self, budget: "Budget", hooks: Hooks) -> None:
        self.budget = budget
        self.hooks = hooks

    def begin(self, view: "SearchView") -> None:
        """Once, when the loop starts (notes, judging what waits)."""

    def target(self, config: "ConfigRow", view: "SearchView") -> tuple[list[int], int | None] | None:
        """(the seeds of ``config`` that still need a run, the step they stop at), or None when the
        config has none to train now (all its seeds ran, one trains, it ended)."""
        raise NotImplementedError

    def resumes(self, view: "SearchView") -> Iterator[Work]:
        """Paused runs to resume, best first (none without early stopping)."""
        return iter(())

    def first_stop(self) -> int | None:
        """The step a new config's runs stop at (None: full length)."""
        return None

    def bought(self, view: "SearchView") -> tuple[int, str]:
        """The configs the budget buys now, and the note that says why when fewer than planned."""
        return self.budget.configs(view)

    def config_limit(self, view: "SearchView") -> int:
        """:meth:`bought`, its note said once."""
        count, note = self.bought(view)
        if note:
            self.hooks.add_note(note)
        return count

    def started(self, work: Work, view: "SearchView", *, new: bool) -> None:
        """``work`` was taken by this worker (``new``: a config just reserved)."""

    def trained(self, config: "ConfigRow") -> None:
        """The runs of ``config`` came back (or were stopped): record where it stands."""
        raise NotImplementedError

    def settle(self, config: "ConfigRow", view: "SearchView") -> None:
        """``config`` is open, this worker may act for it, and it has nothing to train: record it
        from its runs' rows (a worker killed between a run's end and its config's row)."""
        raise NotImplementedError

    def busy(self, view: "SearchView") -> bool:
        """Another worker still trains a config of the search: wait, to take over if it dies (the
        confirmation round waits for its own runs itself)."""
        return any(c.status == "running" for c in view.configs)

    def closing(self, view: "SearchView") -> None:
        """Nothing more will be trained by the rule: stop what still waits."""

    def write(self, config: "ConfigRow", view: "SearchView", *, also: Mapping[str, Any] | None = None,
              **values: Any) -> bool:
        """Write ``values`` into ``config``'s row only while its status (and ``also``'s columns) and
        its seeds' runs are as ``view`` read them (``Store.update_config``'s ``only_if`` and ``runs_as``,
        one transaction): a decision on an older view never lands after another worker's claim of a
        run of it — a config promoted and trained on meanwhile is never set back to the rung it
        left, nor stopped. Whether it was written (if not, whoever moved it on records it)."""
        return bool(self.hooks.store.update_config(config.id, only_if={"status": config.status, **(also or {})},
                                                   runs_as=view.runs_as(config.id), **values))
