"""Opening the session a command names (``PATH``, ``--storage``): the one way every command does it."""

from __future__ import annotations

import argparse

from bracket.errors import BracketError, MissingStoreError
from bracket.session import Session


def open_session(args: argparse.Namespace, cannot: str, **kw: object) -> Session:
    """The session in ``args.path``; a missing store file says what this command ``cannot`` do."""
    try:
        return Session.open(args.path, storage_url=args.storage, **kw)
    except MissingStoreError as error:
        raise BracketError(error.saying(cannot)) from None
