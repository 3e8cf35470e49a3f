"""The request guard in front of the app: no DNS rebinding, no cross-site requests, no uploads.

Without a login on 127.0.0.1 the app trusts whoever can reach it; a web page cannot reach it
directly (browsers keep sites apart by origin), unless its domain re-resolves to 127.0.0.1
(*DNS rebinding*): the page then is "same-origin" with the app. Every such request still
carries the attacker's name in its ``Host`` header. :class:`HostGuard` is a plain ASGI
middleware that answers **403** before Gradio routes the request when (:class:`HostPolicy`)

* ``Host`` names anything but the address the app serves: ``127.0.0.1``, ``localhost``,
  ``[::1]``, the ``--host`` value, the share link's host (added once it is known) — or, when
  listening on all interfaces (``0.0.0.0``/``::``), any IP literal (a page cannot own an IP);
* ``Origin`` is present and its host fails the same test (another site, or ``null``);
* the path is an upload route, unless the app was built with ``uploads=True``: no component
  of Bracket takes an upload, so none is accepted (``launch(max_file_size=…)`` caps the rest).

It has no Gradio import; ``ui.blocks.launch_options`` installs it with ``app_kwargs``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ANY_INTERFACE = ("0.0.0.0", "::", "")
UPLOAD_SUFFIXES = ("/upload", "/upload_progress")


def host_name(value: str) -> str:
    """The lower-case host of a ``Host`` header or of a URL (no port, no brackets)."""
    value = value.strip()
    if "://" in value:
        value = urlsplit(value).netloc
    value = value.rsplit("@", 1)[-1]
    if value.startswith("["):
        return value[1:value.find("]")].lower() if "]" in value else ""
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".").lower()


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


class HostPolicy:
    """Which hosts the app answers to, and whether it takes uploads (shared by its guards)."""

    def __init__(self, bind_host: str = "127.0.0.1", extra_hosts: Iterable[str] = (), *,
                 uploads: bool = False) -> None:
        self.any_ip = bind_host in ANY_INTERFACE
        self.allowed = {host_name(h) for h in (*LOOPBACK_NAMES, bind_host, *extra_hosts) if host_name(h)}
        self.uploads = uploads

    def allow(self, url_or_host: str) -> None:
        """Also accept this host (the share link, once Gradio has made it)."""
        name = host_name(url_or_host or "")
        if name:
            self.allowed.add(name)

    def host_ok(self, value: str) -> bool:
        name = host_name(value)
        if not name:
            return False
        if name in self.allowed:
            return True
        address = _ip(name)
        return address is not None and (address.is_loopback or self.any_ip)

    def refusal(self, scope) -> str | None:
        """Why this request is refused (None: let it through)."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.host_ok(headers.get("host", "")):
            return "This address is not the one Bracket serves (Host header refused)."
        origin = headers.get("origin")
        if origin is not None and not self.host_ok(origin):
            return "Cross-site request refused (Origin header)."
        if not self.uploads and scope.get("path", "").rstrip("/").endswith(UPLOAD_SUFFIXES):
            return "This app takes no uploads."
        return None


class HostGuard:
    """ASGI middleware: 403 for what :meth:`HostPolicy.refusal` refuses, before the app sees it."""

    def __init__(self, app, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        reason = self.policy.refusal(scope)
        if reason is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = reason.encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
