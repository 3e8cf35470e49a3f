"""What the web app may launch: only the configured trainer programs, configs and judge server.

A login to the app must not mean a shell (docs/APP.md, "What a login grants"). Every launch the
app makes — Start, Resume, **+N runs**, finals and promote — passes :func:`check_launch`
first, one check at one depth: the executable fields are the configured ones
(``bracket.fields.check_configured_executables``) and the judge server is
``BRACKET_VLM_BASE_URL`` or none (the server would send requests, and samples, wherever the
settings say). A session made by the CLI with another trainer python or judge URL (or before
``.env`` changed) is refused by the app, not run. ``python app.py --allow-custom-executables``
lifts it.

``bracket worker`` makes the same check on the session it joins (:data:`WORKER`): a shared
database names the programs, and whoever can write it must not run code on every worker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bracket import settings as app_settings
from bracket.errors import BracketError
from bracket.fields import FieldSpec, check_configured_executables
from bracket.session import SettingsError
from bracket.session.scoring.vlm import same_judge_url

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session


@dataclass(frozen=True)
class Launcher:
    """Who refuses a launch and how its owner lifts the refusal (the words of the one-line error)."""

    who: str
    opt_in: str
    #: what to do with a stored session this launcher refuses
    instead: str


APP = Launcher("The web app", "start it with `python app.py --allow-custom-executables`",
               "resume it from the command line (`python -m bracket resume FOLDER`) or configure it in .env")
WORKER = Launcher("A worker", "start the worker with `--allow-custom-executables`",
                  "configure the programs it names in this machine's .env")


def no_userinfo(url: str) -> str:
    """``url`` with any ``user:password@`` shown as ``***@`` (a token may stand as the user)."""
    return re.sub(r"://[^/@\s]+@", "://***@", url)


def configured_judge_url() -> str:
    """``BRACKET_VLM_BASE_URL`` (``.env`` or the environment): the one judge server the web app uses."""
    return app_settings.env("BRACKET_VLM_BASE_URL")


def is_configured_judge(url: str) -> bool:
    """``url`` is the configured judge server (:func:`configured_judge_url`), spelled any way."""
    return same_judge_url(url or "", configured_judge_url())


def check_judge_url(vlm: Mapping[str, Any] | None, launcher: Launcher = APP) -> None:
    """Raise (a ``SettingsError``) when the judge server URL of ``vlm`` (``SearchSettings.vlm``)
    is set and is not ``BRACKET_VLM_BASE_URL``."""
    typed = str((vlm or {}).get("base_url") or "")
    configured = configured_judge_url()
    if typed and not is_configured_judge(typed):
        where = f"the configured one ({configured})" if configured else "set in .env (BRACKET_VLM_BASE_URL)"
        raise SettingsError(f"Judge model server URL {no_userinfo(typed)!r} is not {where}; "
                            f"{launcher.who.lower()} sends judge requests only there. To use another, "
                            f"{launcher.opt_in}.")


def check_launch(specs: Sequence[FieldSpec], fields: Mapping[str, str], vlm: Mapping[str, Any] | None = None, *,
                 allow: bool = False, stored: str = "", launcher: Launcher = APP) -> None:
    """Raise (a ``FieldError`` or ``SettingsError``) when an executable field is not the
    configured one or the judge server (``vlm``) is not ``BRACKET_VLM_BASE_URL``, unless
    ``allow`` (``--allow-custom-executables``); ``stored``: the name of the session whose stored
    fields and settings these are (the one-line message then says how to run it)."""
    if allow:
        return
    try:
        check_configured_executables(specs, fields, who=launcher.who, opt_in=launcher.opt_in)
        check_judge_url(vlm, launcher)
    except BracketError as error:
        if not stored:
            raise
        raise type(error)(f"Session {stored} was made with a trainer program, config or judge server that is not "
                          f"the configured one, so {launcher.who.lower()} does not run it; {launcher.instead}. "
                          f"{error}") from None


def check_session_launch(session: "Session", *, allow: bool = False, launcher: Launcher = APP) -> None:
    """:func:`check_launch` for what a stored session runs with (resume, +N runs, finals, promote;
    a worker joining it, ``launcher`` :data:`WORKER`)."""
    check_launch(session.parts.preset.fields, session.parts.fields, session.settings.vlm, allow=allow,
                 stored=session.name, launcher=launcher)
