"""The store: one database, the single source of truth of a search, and the session folder.

``database`` opens it (:class:`Store`), ``schema`` its tables and migrations, ``records`` its
rows and kept views (``sound_rows`` whether a kept view may still be served), ``folder`` a
folder's ``session.json`` and its store, ``lock`` the folder's lock, ``change_memo`` what is
derived from the store once per change in a process.
"""

from __future__ import annotations

from bracket.lazy_exports import lazy_exports

#: public name -> the module (of this package) that defines it
_WHERE = {
    "Store": "database",
    "sqlite_url": "database",
    "redact_url": "database",
    "Records": "records",
    "open_session_store": "folder",
    "read_session_file": "folder",
    "SessionLock": "lock",
    "CHANGE_MEMO": "change_memo",
    "per_change": "change_memo",
    "stored_rows": "change_memo",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
