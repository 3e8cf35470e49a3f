"""Errors a person can cause, each carrying a message that says what to do.

The CLI prints a ``BracketError`` as one line and exits 2; the UI shows it with
``gr.Error``. Anything that is not a ``BracketError`` is a bug or a machine fault.
"""


class BracketError(Exception):
    """Base class of every error caused by input a person can fix."""


class UnknownPresetError(BracketError):
    """A preset id that is not in the registry."""


class FieldError(BracketError):
    """A preset field value that is missing, malformed or points at nothing."""


class SearchSpaceError(BracketError):
    """A config or a bound that does not fit the search space."""


class DatasetError(BracketError):
    """A dataset folder or dataset TOML that cannot be used."""


class StoreError(BracketError):
    """A store (database) that cannot be opened or is not a Bracket store."""


class MissingStoreError(StoreError):
    """A session folder whose ``session.json`` names a store file that is not there."""

    def __init__(self, store: object, cannot: str = "the session cannot be opened") -> None:
        self.store = store
        super().__init__(self.saying(cannot))

    def saying(self, cannot: str) -> str:
        """The message, with what the command at hand ``cannot`` do (e.g. "status cannot show it")."""
        return (f"The store {self.store} is missing (a session's runs, scores and ratings are kept there), so "
                f"{cannot}. Put that file back into the session folder (from a backup, or from where it was "
                "moved), then try again.")


class DamagedRowError(StoreError):
    """A stored row whose JSON or number column has the wrong type or an impossible value."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"The session's store is damaged ({reason}). Restore bracket.db from a backup; the other "
                         "sessions are not affected.")


class SessionBusyError(BracketError):
    """A session folder that another Bracket process is already running."""


DISK_FULL_TEXTS = ("No space left on device", "database or disk is full", "disk is full")


def disk_full_error(error: BaseException) -> BaseException | None:
    """The full-disk error (``ENOSPC``, SQLite's "database or disk is full") behind ``error``, if
    any — looked for along its causes, since a store wraps the driver's error in its own."""
    import errno

    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 10:
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return current
        if any(text in str(current) for text in DISK_FULL_TEXTS):
            return current
        current, seen = current.__cause__ or current.__context__, seen + 1
    return None


def store_locked_message(error: BaseException) -> str | None:
    """One line for a SQLite store that another program kept locked past the busy timeout (a
    database browser or ``sqlite3`` shell with a write open), found along ``error``'s causes."""
    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 10:
        if "database is locked" in str(current) or "database table is locked" in str(current):
            return ("The store is locked: another program kept bracket.db locked for over a minute "
                    f"({type(current).__name__}: database is locked). Close whatever holds it open for "
                    "writing (a database browser, a sqlite3 shell), then run the command again (a search: "
                    "resume it; finished runs are kept).")
        current, seen = current.__cause__ or current.__context__, seen + 1
    return None


def machine_state_message(error: BaseException) -> str | None:
    """What to do about a state of the machine behind ``error`` — a full disk, a store locked by
    another program, a damaged store — as one line (None: none of these, a bug to show in full)."""
    return disk_full_message(error) or store_locked_message(error) or damaged_store_message(error)


#: what SQLite and PostgreSQL say about a store whose tables or file are damaged (a lost
#: connection, also a ``DatabaseError``, is not that)
DAMAGED_STORE_TEXTS = ("no such table", "no such column", "malformed", "file is not a database",
                       "does not exist", "UndefinedTable", "UndefinedColumn")


def damaged_store_reason(error: BaseException) -> str | None:
    """Why a session's store cannot be read, when ``error`` says it is damaged: a table dropped or
    a file garbled (the database driver's ``DatabaseError``), a stored value that is not JSON —
    looked for along its causes; None when it is not that."""
    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 10:
        if isinstance(current, DamagedRowError):
            return current.reason
        names = {cls.__name__ for cls in type(current).__mro__}
        damaged = "DatabaseError" in names and any(text in str(current) for text in DAMAGED_STORE_TEXTS)
        if damaged or "JSONDecodeError" in names:
            text = str(current).splitlines()[0] if str(current) else ""
            return f"{type(current).__name__}: {text[:300]}"
        current, seen = current.__cause__ or current.__context__, seen + 1
    return None


def damaged_store_message(error: BaseException) -> str | None:
    """One line for a damaged store behind ``error`` (None: not that)."""
    reason = damaged_store_reason(error)
    if reason is None:
        return None
    return (f"The session's store is damaged ({reason}). Restore bracket.db from a backup; the other sessions "
            "are not affected.")


def disk_full_message(error: BaseException) -> str | None:
    """One line that says what to do about a full disk behind ``error`` (None: not a full disk)."""
    found = disk_full_error(error)
    if found is None:
        return None
    detail = str(found).splitlines()[0] if str(found) else ""
    return (f"The disk is full ({type(found).__name__}: {detail}). Free some space, then run the command again "
            "(a search: resume it; finished runs are kept).")


def path_too_long_message(error: BaseException) -> str | None:
    """One line for a path the file system refuses as too long (``ENAMETOOLONG``) behind ``error``
    — a folder or file a person typed — saying what to do (None: not that)."""
    import errno

    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 10:
        if isinstance(current, OSError) and current.errno == errno.ENAMETOOLONG:
            where = f" {current.filename}" if current.filename else ""
            return (f"The path{where} is too long for the file system (a name in it longer than 255 bytes, or the "
                    "whole path longer than the system allows); give a shorter one.")
        current, seen = current.__cause__ or current.__context__, seen + 1
    return None
