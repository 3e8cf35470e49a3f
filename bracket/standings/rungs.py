"""How a config's place on the successive-halving rungs reads: the one wording every screen uses.

A halving search (``bracket.search.halving``) trains each config to its first rung, a share of
the full steps, where the run saves its state (a trainer that cannot resume: its weights) and
pauses; the best ``1/eta`` there are promoted (resumed to the next rung), the rest wait,
stopped. The session loop writes where each config stands into its config row (``rung``: the
highest rung whose score is in; ``rung_state``: running / paused / promoted / stopped / full;
``rung_note``: why, in words) and a paused run's row says so (status ``paused``,
``pause_step``). This module reads those columns — plain rows in, text out — for ``status``,
the report, the export and the app (``bracket.app.rungs``):

* :func:`rung_text` — ``running to 1/3``, ``paused at 1/9``, ``promoted to 1/3``,
  ``stopped at 1/9 (5 of 7, top 2 go on)``, ``full``;
* :func:`reached_full` — whether a config's runs are full-length: the standings crown only
  such a config while one is scored (``bracket.standings.board``);
* :func:`rung_lines` / :func:`rung_rows` — the rungs of every config, as ``status`` prints them
  and as the report's table holds them; :func:`rung_place` and :func:`trained_steps` — the same
  as data, for ``status --json`` (through the standings, ``bracket.standings.board``).

The session's rungs come from its settings (``halving``, ``eta``, ``smallest_rung``), read with
defaults so a session from before halving reads as one without rungs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bracket.search.halving import Rungs, share_label

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.search_settings import SearchSettings

#: where a config stands on the rungs (``configs.rung_state``)
RUNG_STATES = ("running", "paused", "promoted", "stopped", "full")
#: states of a config that has not trained to full length (yet)
SHORT_STATES = ("running", "paused", "promoted", "stopped")


def session_rungs(settings: "SearchSettings") -> Rungs:
    """The rungs of a session's settings (``halving``'s ``eta`` and ``smallest_rung``; the defaults without them)."""
    try:
        return settings.rungs()
    except (TypeError, ValueError):
        return Rungs()


def uses_rungs(settings: "SearchSettings", configs: Iterable[Mapping[str, Any]] = ()) -> bool:
    """Whether a session has rungs to show: halving is on, or a config has a rung state."""
    return settings.halving is not None or any(c.get("rung_state") for c in configs)


def reached_full(config: Mapping[str, Any]) -> bool:
    """A config whose runs are full-length: no rung state (no halving) or ``full``."""
    return str(config.get("rung_state") or "full") not in SHORT_STATES


def rung_name(rungs: Rungs, index: int | None) -> str:
    """``1/9``, ``1/3``, ``full`` for a rung index (``rung 4`` past the session's rungs)."""
    fractions = rungs.fractions()
    if index is None or index < 0:
        return "-"
    return share_label(fractions[index]) if index < len(fractions) else f"rung {index + 1}"


def _detail(note: str, state: str) -> str:
    """What a note adds to the state's words: ``stopped at 1/9: 5 of 7, top 2 go on`` → ``5 of 7, top 2 go on``."""
    head, sep, rest = note.partition(": ")
    return rest.strip() if sep and head.split(" ")[0] == state else note.strip()


def rung_text(config: Mapping[str, Any], rungs: Rungs, *, detail: bool = True) -> str:
    """Where ``config`` (a config row) stands on ``rungs``, in the words every screen uses; "" without
    a state. ``detail``: a stopped config's place there too (``(5 of 7, top 2 go on)``, from its note)."""
    state = str(config.get("rung_state") or "")
    if not state:
        return ""
    rung = config.get("rung")
    reached = int(rung) if rung is not None else -1
    if state == "full":
        return "full"
    if state in ("running", "promoted"):
        return f"{state} to {rung_name(rungs, reached + 1)}"
    if state == "paused":
        return f"paused at {rung_name(rungs, reached)}"
    if state == "stopped":
        note = str(config.get("rung_note") or "")
        said = _detail(note, "stopped") if note and detail else ""
        where = f"at {rung_name(rungs, reached)}" if reached >= 0 else f"before {rung_name(rungs, 0)}"
        return f"stopped {where}" + (f" ({said})" if said else "")
    return state


def rung_note(config: Mapping[str, Any]) -> str:
    """The stored why of a config's rung (``promoted: 1 of 6 at 1/9, top 2 go on to 1/3``), or ""."""
    return str(config.get("rung_note") or "").strip()


def trained_steps(run: Mapping[str, Any]) -> int | None:
    """The steps ``run`` (a run row) has trained, as its row records them: a paused run's pause
    step, an ended run's last step (a finished one's length when it logged none); None while it
    waits or trains (its progress is the live step, not a stored figure)."""
    status = run.get("status")
    if status in ("pending", "running"):
        return None
    step = (run.get("pause_step") or run.get("last_step")) if status == "paused" else run.get("last_step")
    if not step and status == "done":
        step = run.get("max_steps")
    return int(step) if step is not None else None


def run_rung_text(run: Mapping[str, Any], *, restarts: bool = False) -> str:
    """A run's side of it: ``paused at step 100 of 900, state saved`` for a paused run, else "";
    ``restarts`` (the session's trainer cannot resume, ``TrainerFacts.restarts``): ``weights
    saved``, what such a trainer keeps at a pause (a promotion trains again from step 0)."""
    if run.get("status") != "paused":
        return ""
    step, full = trained_steps(run), run.get("max_steps")
    saved = "weights saved" if restarts else "state saved"
    return f"paused at step {step if step is not None else '?'}" + (f" of {full}" if full else "") + f", {saved}"


def restarting(session: Any) -> bool:
    """Whether a session's trainer trains a promoted config again from step 0 (its plan's
    ``TrainerFacts.restarts``, decided at creation)."""
    return bool(session.facts.restarts)


def plan_text(rungs: Rungs) -> str:
    """``rungs 1/9 → 1/3 → full, the top 1/3 at each go on``."""
    return (f"rungs {' → '.join(share_label(f) for f in rungs.fractions())}, "
            f"the top 1/{rungs.eta} at each go on")


def _runs_by_config(runs: Iterable[Mapping[str, Any]]) -> dict[Any, list[Mapping[str, Any]]]:
    found: dict[Any, list[Mapping[str, Any]]] = {}
    for run in runs:
        if run.get("kind") != "setup" and run.get("stage") != "setup":
            found.setdefault(run.get("config_id"), []).append(run)
    return found


def _run_text(run: Mapping[str, Any], restarts: bool = False) -> str:
    paused = run_rung_text(run, restarts=restarts)
    if paused:
        return f"run {run['id']} {paused}"
    if run.get("status") == "done":
        return f"run {run['id']}, {trained_steps(run) or '?'} steps"
    return f"run {run['id']} {run.get('status')}"


def _order(configs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Configs with a rung state, the furthest first (full, then by rung; at one rung those going
    on before those waiting and those stopped), in trial order within."""
    placed = [c for c in configs if c.get("rung_state")]
    order = {state: i for i, state in enumerate(("full", "running", "promoted", "paused", "stopped"))}
    return sorted(placed, key=lambda c: (c.get("rung_state") != "full",
                                         -(c["rung"] if c.get("rung") is not None else -1),
                                         order.get(str(c.get("rung_state")), 9), c.get("id") or 0))


def rung_lines(configs: Sequence[Mapping[str, Any]], runs: Iterable[Mapping[str, Any]], rungs: Rungs, *,
               restarts: bool = False) -> list[str]:
    """What ``status`` prints under the run table: the session's rungs, then one line per config
    (the furthest first) with its state, why and its runs; nothing when no config has a state.
    ``restarts``: as :func:`run_rung_text`."""
    ordered = _order(configs)
    if not ordered:
        return []
    by_config = _runs_by_config(runs)
    lines = [plan_text(rungs) + ":"]
    for config in ordered:
        members = "; ".join(_run_text(r, restarts) for r in by_config.get(config.get("id"), []))
        lines.append(f"  {str(config.get('name'))[:24]:<24} {rung_said(config, rungs)}"
                     + (f" [{members}]" if members else ""))
    return lines


def rung_said(config: Mapping[str, Any], rungs: Rungs) -> str:
    """What ``status`` says of a config on its rungs line (after its name, before its runs): where
    it stands and why (``paused at 1/9 — waiting at 1/9: 3 of 7, top 2 go on``); "" without a state."""
    text, note, state = rung_text(config, rungs), rung_note(config), config.get("rung_state")
    if note and state == "paused" and _detail(note, "paused") != note:  # the loop's "paused at 1/9: 3 of 7, …"
        return f"{text} ({_detail(note, 'paused')})"
    return f"{text} — {note}" if note and state != "stopped" else text


def rung_place(config: Mapping[str, Any], rungs: Rungs) -> dict[str, Any]:
    """A config's place on the rungs as ``status --json`` gives it: ``rung`` (the share label of
    the highest rung whose score is in — ``1/9``, ``1/3``, ``full``; None before the first),
    ``rung_index`` (0 the smallest), ``rung_state`` (:data:`RUNG_STATES`, None before it has one)
    and ``rung_note``, the words of its ``status`` line (:func:`rung_said`)."""
    reached = config.get("rung")
    index = int(reached) if reached is not None and int(reached) >= 0 else None
    return {"rung": rung_name(rungs, index) if index is not None else None, "rung_index": index,
            "rung_state": config.get("rung_state") or None, "rung_note": rung_said(config, rungs) or None}


RUNG_HEADERS = ["config", "rung reached", "where it stands", "why", "runs"]


def rung_rows(configs: Sequence[Mapping[str, Any]], runs: Iterable[Mapping[str, Any]], rungs: Rungs, *,
              restarts: bool = False) -> list[list[str]]:
    """The report's rung table (:data:`RUNG_HEADERS`), one row per config with a state, the furthest first."""
    by_config = _runs_by_config(runs)
    return [[str(c.get("name")), rung_name(rungs, c.get("rung")), rung_text(c, rungs), rung_note(c) or "-",
             "; ".join(_run_text(r, restarts) for r in by_config.get(c.get("id"), [])) or "-"]
            for c in _order(configs)]


def session_rung_table(session: Any) -> tuple[str, list[list[str]]]:
    """(the rungs' plan, :func:`rung_rows`) of a session — ("", []) for a search without rungs —
    from the rows of this store change (``bracket.session.store.change_memo.stored_rows``)."""
    from bracket.session.store import stored_rows

    runs, configs = stored_rows(session)
    if not uses_rungs(session.settings, configs):
        return "", []
    rungs = session_rungs(session.settings)
    return plan_text(rungs), rung_rows(configs, runs, rungs, restarts=restarting(session))
