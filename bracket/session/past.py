"""Knowledge from past sessions: the best configs of earlier searches as a warm start.

A new search of the same preset rarely starts from nothing: an earlier session on a similar
dataset already found which optimizer, schedule and rate work. ``--warm-start-from SESSION``
(and the Setup tab's opt-in list) enqueues the best :data:`TOP` configs of each named
session right after the new session's baseline, before the curated configs (kind ``past``,
named ``past-<rank>-<end of the session's name>``, short enough that the CLI's tables tell two
apart; their source names the whole session, its date and the rank). They
are fitted into the new session's space like every warm-start config (clamped or dropped,
with a note); they count towards the search budget, and the learning-rate bracket and the
explore rule treat them as part of the warm start, like the curated ones. Stores written
before kind ``past`` existed hold them as kind ``curated``; they read as ``past``
(``bracket.search.types.stored_kind``).

The ranking is the earlier session's current leaderboard (``bracket.standings``: ratings and
runs that came after a config's trial included), handed in by the caller as a :data:`Ranking`
(``bracket.standings.past_ranking``): this package sits below the standings and never
imports them. Without one (the plan's counts, tests) the value each config's trial ended
with stands in. Scores of two sessions are not comparable (each is normalised among its own
runs), so only the order is carried over, and the Setup list shows the winner's raw figure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket.errors import BracketError
from bracket.search.configs import NamedConfig
from bracket.search.types import PAST_PREFIX
from bracket.session.store import Store, sqlite_url
from bracket.session.store.folder import SESSION_FILE, read_session_file

#: configs taken from each earlier session
TOP = 2
#: an earlier session's folder -> its search configs as its leaderboard ranks them, best first:
#: (config name, what it measured, e.g. "val loss 0.41"); ``bracket.standings.past_ranking``
Ranking = Callable[[Path], Sequence[tuple[str, str]]]
#: characters of a session's name kept in its past configs' names (the time of a default name)
SHORT = 11


@dataclass(frozen=True)
class PastSession:
    """An earlier session of a preset, as the Setup tab lists it."""

    folder: Path
    name: str
    preset_id: str
    created_at: float
    best_value: float | None
    configs: int
    #: the leaderboard's best config and what it measured ("" when no ranking was given)
    winner: str = ""
    figure: str = ""
    runs: int = 0

    @property
    def label(self) -> str:
        date = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.created_at))
        best = (f"winner {self.winner}" + (f", {self.figure}" if self.figure else "")) if self.winner \
            else "no finished config"
        runs, configs = (f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((self.runs, "run"),
                                                                             (self.configs, "config")))
        return f"{self.name} ({date}, {runs}, {configs}, {best})"


def short_name(session: str) -> str:
    """The end of ``session``'s name that past config names carry (a default name's date and time)."""
    return session[-SHORT:].lstrip("-_") or session


def _ranked(done: list[dict[str, Any]], ranking: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """``done`` in the leaderboard's order; configs it does not rank follow, by their trial's value."""
    place: dict[str | None, int] = {name: i for i, (name, _) in enumerate(ranking)}
    return sorted(done, key=lambda c: (place.get(c.get("name"), len(place)), c["value"]))


def _read(folder: Path, rank: Ranking | None = None) -> tuple[PastSession, list[dict[str, Any]]]:
    folder = Path(folder)
    db = folder / "bracket.db"
    if not (folder / SESSION_FILE).is_file():
        raise BracketError(f"--warm-start-from {folder}: not a local Bracket session folder "
                           f"(it has no {SESSION_FILE}); "
                           "give the folder of an earlier session.")
    try:
        info = read_session_file(folder)
    except BracketError as error:  # not JSON, not an object, no name: one line, never a traceback
        raise BracketError(f"--warm-start-from {folder}: {error}") from None
    if "://" in str(info.get("storage", "")):
        raise BracketError(f"--warm-start-from {folder}: that session is kept in a database server, not in the "
                           "folder; only a local session (its bracket.db in the folder) can warm-start a search.")
    if not db.is_file():
        raise BracketError(f"--warm-start-from {folder}: its store {db} is missing ({SESSION_FILE} is there, but "
                           "the configs and scores are kept in bracket.db); put it back, or leave this session out.")
    name = info["name"]
    store = Store.open(sqlite_url(db), create=False)
    try:
        row = store.get_session(name)
        if row is None:
            raise BracketError(f"--warm-start-from {folder}: the store holds no session.")
        done = [c for c in store.configs(row["name"], stage="search")
                if c.get("status") == "done" and c.get("value") is not None]
        runs = len(store.runs(row["name"], with_series=False, statuses=["done"]))
    finally:
        store.close()
    done.sort(key=lambda c: c["value"])
    ranking = list(rank(folder)) if rank is not None and done else []
    done = _ranked(done, ranking)
    figures = dict(ranking)
    winner = done[0]["name"] if done else ""
    past = PastSession(folder, row["name"], row["preset_id"], float(row.get("created_at") or 0.0),
                       done[0]["value"] if done else None, len(done), winner, figures.get(winner, ""), runs)
    return past, done


def past_sessions(runs_dir: Path, preset_id: str, rank: Ranking | None = None) -> list[PastSession]:
    """Earlier local sessions of ``preset_id`` under ``runs_dir`` with a finished config, newest
    first (their winners as ``rank`` names them)."""
    found: list[PastSession] = []
    for folder in sorted(Path(runs_dir).glob(f"*/{SESSION_FILE}")):
        try:
            info, done = _read(folder.parent, rank)
        except Exception:  # noqa: BLE001 - a damaged or foreign folder is simply not offered
            continue
        if info.preset_id == preset_id and done:
            found.append(info)
    return sorted(found, key=lambda s: -s.created_at)


def offer(runs_dir: Path, preset_id: str, *, exclude: str = "", rank: Ranking | None = None) -> str:
    """A line telling that earlier sessions of ``preset_id`` could warm-start a search (the CLI
    prints it when ``--warm-start-from`` was not given; taking them stays a choice), or ""."""
    found = [s for s in past_sessions(runs_dir, preset_id, rank) if s.name != exclude]
    if not found:
        return ""
    return (f"{len(found)} earlier session{'s' if len(found) > 1 else ''} of {preset_id} in {runs_dir} (newest: "
            f"{found[0].label}); --warm-start-from {found[0].folder} starts a search from its best configs")


def past_configs(folders: Sequence[Path | str], preset_id: str, *, top: int = TOP,
                 rank: Ranking | None = None) -> list[NamedConfig]:
    """The best ``top`` configs of each session in ``folders``, best first (as ``rank`` orders
    them: the session's leaderboard); the sessions must be of ``preset_id`` (another preset's
    knobs mean something else)."""
    configs: list[NamedConfig] = []
    for folder in folders:
        info, done = _read(Path(folder), rank)
        if info.preset_id != preset_id:
            raise BracketError(f"--warm-start-from {folder}: that session searched preset {info.preset_id!r}, "
                               f"not {preset_id!r}; give a session of the same preset.")
        if not done:
            raise BracketError(f"--warm-start-from {folder}: that session has no finished config yet.")
        date = time.strftime("%Y-%m-%d", time.localtime(info.created_at))
        for place, config in enumerate(done[:top], start=1):
            configs.append(NamedConfig(f"{PAST_PREFIX}{place}-{short_name(info.name)}", dict(config["params"]),
                                       f"session {info.name} ({date}): its #{place} config, {config['name']}"))
    return configs
