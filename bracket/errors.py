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


class SessionBusyError(BracketError):
    """A session folder that another Bracket process is already running."""
