"""What the web app may launch: only the configured trainer programs and configs.

A login to the app must not mean a shell (docs/APP.md, "What a login grants"). Every launch the
app makes — Start, Resume, **+N runs**, finals and promote — passes :func:`check_programs`
first, so a session made by the CLI with another trainer python (or before ``.env`` changed)
is refused by the app, not run. ``python app.py --allow-custom-executables`` lifts it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from bracket.errors import BracketError
from bracket.fields import FieldSpec, check_configured_executables

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session


def check_programs(specs: Sequence[FieldSpec], fields: Mapping[str, str], *, allow: bool = False,
                   stored: str = "") -> None:
    """Raise (a ``FieldError``) when an executable field is not the configured one, unless
    ``allow`` (``--allow-custom-executables``); ``stored``: the name of the session whose stored
    fields these are (the message then says how to run it)."""
    if allow:
        return
    try:
        check_configured_executables(specs, fields)
    except BracketError as error:
        if not stored:
            raise
        raise type(error)(f"Session {stored} was made with a trainer program or config that is not the "
                          f"configured one, so the web app does not run it; resume it from the command line "
                          f"(`python -m bracket resume FOLDER`) or configure it in .env. {error}") from None


def check_session_programs(session: "Session", *, allow: bool = False) -> None:
    """:func:`check_programs` for the fields a stored session runs with (resume, +N runs, finals, promote)."""
    check_programs(session.parts.preset.fields, session.parts.fields, allow=allow, stored=session.name)
