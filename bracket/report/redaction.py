"""What counts as a secret, and the one way it is kept out of what Bracket writes.

The exported scripts (:mod:`bracket.report.export`, :mod:`bracket.report.powershell`) and the report
(:mod:`bracket.report.document`) follow the same three rules:

* a **name** that looks secret (:data:`SECRET_NAME`: key, token, password, …) never has its
  value written: an environment variable is left out of ``train.sh`` with a note, a setting
  or field is left out of the report (:func:`looks_secret`, :func:`without_secrets`);
* a **URL with a password** shows ``***`` in its place (``redact_url``); an environment
  variable holding one is left out like a secret name;
* the **known secret values** of a session — the VLM key, the store's password — are
  replaced by ``***`` in any text as a last guard (:func:`known_secrets`, :func:`scrub`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from bracket import settings as app_settings
from bracket.session.store import redact_url

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

#: names whose values are never written (environment variables, settings, fields)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION_ID", re.IGNORECASE)
#: a URL that carries a password (``scheme://user:password@host``)
URL_WITH_PASSWORD = re.compile(r"://[^/@\s]*:[^/@\s]*@")
#: what a secret is replaced with
HIDDEN = "***"
#: shorter values are not scrubbed from text: they would blank out ordinary words and numbers
MIN_SECRET_LENGTH = 4


def looks_secret(name: str, value: Any = "") -> bool:
    """Whether ``name`` (or a URL in ``value`` carrying a password) makes this a secret."""
    return bool(SECRET_NAME.search(str(name)) or URL_WITH_PASSWORD.search(str(value)))


def without_secrets(value: Any) -> Any:
    """``value`` (mappings and lists, recursively) without secret-named keys, with the password
    of any URL hidden."""
    if isinstance(value, Mapping):
        return {k: without_secrets(v) for k, v in value.items() if not SECRET_NAME.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [without_secrets(v) for v in value]
    if isinstance(value, str) and "://" in value and "@" in value:
        return redact_url(value)
    return value


def known_secrets(session: "Session") -> list[str]:
    """The secret values this session knows of (the VLM key, store passwords), longest first."""
    import sqlalchemy as sa

    found = [str(session.settings.vlm.get("api_key") or ""), app_settings.env("BRACKET_VLM_API_KEY")]
    for url in (session.store.url, app_settings.env("BRACKET_STORAGE_URL")):
        try:
            found.append(str(sa.engine.make_url(url).password or "") if url else "")
        except Exception:  # noqa: BLE001 - an unparsable URL has no password we can find
            pass
    return sorted({s for s in found if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every value of ``secrets`` replaced by :data:`HIDDEN` (longest first, so a
    secret holding another is hidden whole)."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return text
