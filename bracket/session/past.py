"""Knowledge from past sessions: the best configs of earlier searches as a warm start.

A new search of the same preset rarely starts from nothing: an earlier session on a similar
dataset already found which optimizer, schedule and rate work. ``--warm-start-from SESSION``
(and the Setup tab's opt-in list) enqueues the best :data:`TOP` configs of each named
session right after the new session's baseline, before the curated configs (kind ``past``,
named ``past-<session>-<n>``, their source naming the session, its date and the score). They
are fitted into the new session's space like every warm-start config (clamped or dropped,
with a note); they count towards the search budget, and the learning-rate bracket and the
explore rule treat them as part of the warm start, like the curated ones. Stores written
before kind ``past`` existed hold them as kind ``curated``; they read as ``past``
(``bracket.search.types.stored_kind``).

The ranking is the earlier session's own: the value each config had when it was last
finished there (lower is better). Scores of two sessions are not comparable (each is
normalised among its own runs), so only the order is carried over.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket.errors import BracketError
from bracket.search.configs import NamedConfig
from bracket.search.types import PAST_PREFIX
from bracket.session.folder import SESSION_FILE
from bracket.session.store import Store, sqlite_url

#: configs taken from each earlier session
TOP = 2


@dataclass(frozen=True)
class PastSession:
    """An earlier session of a preset, as the Setup tab lists it."""

    folder: Path
    name: str
    preset_id: str
    created_at: float
    best_value: float | None
    configs: int

    @property
    def label(self) -> str:
        date = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.created_at))
        best = f"best score {self.best_value:.3g}" if self.best_value is not None else "no finished config"
        return f"{self.name} ({date}, {self.configs} configs, {best})"


def _read(folder: Path) -> tuple[PastSession, list[dict[str, Any]]]:
    folder = Path(folder)
    db = folder / "bracket.db"
    if not (folder / SESSION_FILE).is_file() or not db.is_file():
        raise BracketError(f"--warm-start-from {folder}: not a local Bracket session folder (no {SESSION_FILE} "
                           "and bracket.db); give the folder of an earlier session.")
    name = json.loads((folder / SESSION_FILE).read_text(encoding="utf-8")).get("name", "")
    store = Store.open(sqlite_url(db), create=False)
    try:
        row = store.get_session(name)
        if row is None:
            raise BracketError(f"--warm-start-from {folder}: the store holds no session.")
        done = [c for c in store.configs(row["name"], stage="search")
                if c.get("status") == "done" and c.get("value") is not None]
    finally:
        store.close()
    done.sort(key=lambda c: c["value"])
    info = PastSession(folder, row["name"], row["preset_id"], float(row.get("created_at") or 0.0),
                       done[0]["value"] if done else None, len(done))
    return info, done


def past_sessions(runs_dir: Path, preset_id: str) -> list[PastSession]:
    """Earlier local sessions of ``preset_id`` under ``runs_dir`` with a finished config, newest first."""
    found: list[PastSession] = []
    for folder in sorted(Path(runs_dir).glob(f"*/{SESSION_FILE}")):
        try:
            info, done = _read(folder.parent)
        except Exception:  # noqa: BLE001 - a damaged or foreign folder is simply not offered
            continue
        if info.preset_id == preset_id and done:
            found.append(info)
    return sorted(found, key=lambda s: -s.created_at)


def offer(runs_dir: Path, preset_id: str, *, exclude: str = "") -> str:
    """A line telling that earlier sessions of ``preset_id`` could warm-start a search (the CLI
    prints it when ``--warm-start-from`` was not given; taking them stays a choice), or ""."""
    found = [s for s in past_sessions(runs_dir, preset_id) if s.name != exclude]
    if not found:
        return ""
    return (f"{len(found)} earlier session{'s' if len(found) > 1 else ''} of {preset_id} in {runs_dir} (newest: "
            f"{found[0].label}); --warm-start-from {found[0].folder} starts a search from its best configs")


def past_configs(folders: Sequence[Path | str], preset_id: str, *, top: int = TOP) -> list[NamedConfig]:
    """The best ``top`` configs of each session in ``folders``, best first; the sessions
    must be of ``preset_id`` (another preset's knobs mean something else)."""
    configs: list[NamedConfig] = []
    for folder in folders:
        info, done = _read(Path(folder))
        if info.preset_id != preset_id:
            raise BracketError(f"--warm-start-from {folder}: that session searched preset {info.preset_id!r}, "
                               f"not {preset_id!r}; give a session of the same preset.")
        if not done:
            raise BracketError(f"--warm-start-from {folder}: that session has no finished config yet.")
        date = time.strftime("%Y-%m-%d", time.localtime(info.created_at))
        for rank, config in enumerate(done[:top], start=1):
            configs.append(NamedConfig(f"{PAST_PREFIX}{info.name}-{rank}", dict(config["params"]),
                                       f"session {info.name} ({date}): its #{rank} config, score {config['value']:.3g}"))
    return configs
