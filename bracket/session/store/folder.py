"""A session folder: its ``session.json`` and the store that holds the session.

The light half of re-opening a session (``bracket.session.create.open_session`` does the
rest: preset, trainer, search space): reading the folder's ``session.json`` and opening the
store it names. ``python -m bracket status`` answers from here alone while its kept view is
current (``bracket.status.view``), without importing the preset registry or Optuna.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bracket import settings as app_settings
from bracket.errors import BracketError, MissingStoreError, StoreError
from bracket.session.store.database import Store, sqlite_url

SESSION_FILE = "session.json"


def read_session_file(folder: Path) -> dict[str, Any]:
    path = Path(folder) / SESSION_FILE
    if not path.is_file():
        raise BracketError(f"{folder} is not a Bracket session folder (no {SESSION_FILE}); give the folder that "
                           "`python -m bracket run` printed.")
    reason: str | None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        info, reason = None, f"{type(error).__name__}: {error}"
    else:
        reason = "it names no session"
    if isinstance(info, dict) and isinstance(info.get("name"), str) and info["name"]:
        reason = _session_file_problem(info)
        if reason is None:
            return info
    raise BracketError(f"The session file {path} is damaged ({reason}). Restore it, or write "
                       '{"name": "<session name>", "storage": "bracket.db"} into it (the name is usually the '
                       "folder's name), then try again.")


def _session_file_problem(info: dict[str, Any]) -> str | None:
    """What is wrong with the values of a parsed ``session.json`` (None: nothing)."""
    storage = info.get("storage", "bracket.db")
    if not isinstance(storage, str) or not storage.strip():
        return f"'storage' must be a file name or a URL, not {storage!r}"
    created = info.get("created_at", 0.0)
    if isinstance(created, bool) or not isinstance(created, (int, float)) or created != created:
        return f"'created_at' must be a number (seconds since 1970), not {created!r}"
    if not isinstance(info.get("preset_id", ""), str):
        return f"'preset_id' must be a preset name, not {info['preset_id']!r}"
    return None


def open_session_store(folder: Path, *, storage_url: str | None = None) -> tuple[Store, str]:
    """The store of the session in ``folder`` (as its ``session.json`` names it) and the
    session's name; raises ``StoreError`` when the store lacks the session, ``MissingStoreError``
    when its file is missing (each command says what that stops it doing)."""
    folder = Path(folder)
    info = read_session_file(folder)
    stored = info.get("storage", "bracket.db")
    url = storage_url or (sqlite_url(folder / stored) if "://" not in stored else
                          app_settings.get_settings().storage_url or stored)
    if "://" not in stored and not (folder / stored).is_file():
        raise MissingStoreError(folder / stored)
    store = Store.open(url, create=False)
    if store.get_session(info["name"]) is None:
        store.close()
        raise StoreError(f"The store {url.split('@')[-1]} holds no session named {info['name']!r}.")
    return store, info["name"]
