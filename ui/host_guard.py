"""The request guard in front of the app: no DNS rebinding, no cross-origin requests, no
stored bodies, slowed-down password guessing.

Without a login on 127.0.0.1 the app trusts whoever can reach it; a web page cannot reach it
directly (browsers keep sites apart by origin), unless its domain re-resolves to 127.0.0.1
(*DNS rebinding*): the page then is "same-origin" with the app. Every such request still
carries the attacker's name in its ``Host`` header. :class:`HostGuard` is a plain ASGI
middleware that answers before Gradio routes the request (:meth:`HostPolicy.refusal`):

* **403** when ``Host`` names anything but the address the app serves: ``127.0.0.1``,
  ``localhost``, ``[::1]``, the ``--host`` value, the share link's host (added once it is
  known) — or, when listening on all interfaces (``0.0.0.0``/``::``), any IP literal;
* **403** when ``Origin`` is present and is not the app's own origin: the scheme and the
  ``Host`` (name *and* port) of the request itself, or the share link's origin. A page on
  another port, on ``localhost`` while the app is used as ``127.0.0.1``, on another IP of the
  machine, or ``null`` is refused — Gradio's CORS layer would have let such a page read the
  answer;
* **403** for the upload routes (``upload``, ``upload_progress``, ``process_recording``) and
  for any ``multipart/form-data`` body but the login form's, unless the app was built with
  ``uploads=True``; **413** for a body over :data:`MAX_BODY` (:data:`MAX_LOGIN_BODY` for the
  login). A body is read into memory here, within that bound, before Gradio sees it, so no
  route spools one to disk;
* **429** for a login while its client is locked out after repeated wrong passwords
  (:mod:`ui.login_throttle`).

It has no Gradio import; ``ui.blocks.launch_options`` installs it with ``app_kwargs``.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterable
from urllib.parse import urlsplit

from ui.login_throttle import LoginThrottle

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ANY_INTERFACE = ("0.0.0.0", "::", "")
UPLOAD_SUFFIXES = ("/upload", "/upload_progress", "/process_recording")
LOGIN_PATHS = ("/login", "/login/")
#: the largest request body taken (the form's values as JSON are a few kB), and a login's
MAX_BODY = 1 << 20
MAX_LOGIN_BODY = 16 << 10
DEFAULT_PORTS = {"http": 80, "https": 443}
WEB_SCHEMES = {"ws": "http", "wss": "https"}


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


def origin_of(url: str, scheme: str = "") -> str:
    """``scheme://host:port`` of a URL or of a ``Host`` value (with ``scheme``), lower-case, the
    port always written; "" when it has none (``null``, garbage)."""
    url = url.strip()
    try:
        parts = urlsplit(url if "://" in url else f"{scheme}://{url}")
        port = parts.port
    except ValueError:
        return ""
    scheme = WEB_SCHEMES.get(parts.scheme.lower(), parts.scheme.lower())
    name = host_name(parts.netloc) if parts.netloc else ""
    if scheme not in DEFAULT_PORTS or not name or "@" in parts.netloc:
        return ""
    shown = f"[{name}]" if ":" in name else name
    return f"{scheme}://{shown}:{port or DEFAULT_PORTS[scheme]}"


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


class HostPolicy:
    """Which hosts the app answers to, and whether it takes uploads (shared by its guards)."""

    def __init__(self, bind_host: str = "127.0.0.1", extra_hosts: Iterable[str] = (), *,
                 uploads: bool = False, logins: LoginThrottle | None = None) -> None:
        self.any_ip = bind_host in ANY_INTERFACE
        self.allowed = {host_name(h) for h in (*LOOPBACK_NAMES, bind_host, *extra_hosts) if host_name(h)}
        self.origins: set[str] = set()  # besides the request's own: the share link's
        self.uploads = uploads
        self.logins = logins or LoginThrottle()

    def allow(self, url_or_host: str) -> None:
        """Also accept this host (the share link, once Gradio has made it), and its origin."""
        name = host_name(url_or_host or "")
        if name:
            self.allowed.add(name)
        if "://" in (url_or_host or "") and origin_of(url_or_host):
            self.origins.add(origin_of(url_or_host))

    def host_ok(self, value: str) -> bool:
        name = host_name(value)
        if not name:
            return False
        if name in self.allowed:
            return True
        address = _ip(name)
        return address is not None and (address.is_loopback or self.any_ip)

    def origin_ok(self, origin: str, host: str, scheme: str) -> bool:
        """Whether ``Origin`` is the app's own: the request's scheme and ``Host``, or the share link's."""
        given = origin_of(origin)
        return bool(given) and (given == origin_of(host, WEB_SCHEMES.get(scheme, scheme)) or given in self.origins)

    def refusal(self, scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """Why this request is refused: (status, reason), or None to let it through."""
        host = headers.get("host", "")
        if not self.host_ok(host):
            return 403, "This address is not the one Bracket serves (Host header refused)."
        origin = headers.get("origin")
        if origin is not None and not self.origin_ok(origin, host, scope.get("scheme", "http")):
            return 403, "Cross-origin request refused (Origin header): only the app's own page may use it."
        if self.uploads:
            return None
        path = scope.get("path", "")
        if path.rstrip("/").endswith(UPLOAD_SUFFIXES):
            return 403, "This app takes no uploads."
        if headers.get("content-type", "").lower().startswith("multipart/") and path not in LOGIN_PATHS:
            return 403, "This app takes no uploads (multipart body refused)."
        length = headers.get("content-length", "0").strip()
        if not length.isdigit() or int(length) > self.body_limit(scope):
            return 413, "Request body too large (or its length unreadable)."
        return None

    def body_limit(self, scope) -> int:
        return MAX_LOGIN_BODY if scope.get("path", "") in LOGIN_PATHS else MAX_BODY


class HostGuard:
    """ASGI middleware: what :meth:`HostPolicy.refusal` refuses is answered before the app sees
    it; a body is read (within its bound) before the app is called; logins go through the
    policy's :class:`~ui.login_throttle.LoginThrottle`."""

    def __init__(self, app, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refused = self.policy.refusal(scope, headers)
        if refused is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _answer(send, *refused)
            return
        if scope["type"] == "http" and ("transfer-encoding" in headers or headers.get("content-length", "0") != "0"):
            body = await _read_body(receive, self.policy.body_limit(scope))
            if body is None:
                await _answer(send, 413, "Request body too large.")
                return
            receive = _replay(body, receive)
        if scope["type"] == "http" and scope.get("method") == "POST" and scope.get("path") in LOGIN_PATHS:
            client = str((scope.get("client") or ("",))[0])
            logins = self.policy.logins
            if not logins.attempt(client):
                wait = max(1, math.ceil(logins.retry_after(client)))
                await _answer(send, 429, f"Too many failed logins from this address; try again in {wait} s.",
                              [(b"retry-after", str(wait).encode())])
                return
            send = _on_status(send, lambda status: status == 200 and logins.succeeded(client))
        await self.app(scope, receive, send)


async def _answer(send, status: int, reason: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = reason.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive, limit: int) -> bytes | None:
    """The whole request body, or None once it grows past ``limit`` bytes (nothing kept)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the app sees an empty body
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive):
    """A ``receive`` that gives the app the body already read, then the client's own messages."""
    given = False

    async def replayed():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _on_status(send, seen):
    """A ``send`` that tells ``seen`` the response's status code."""
    async def sending(message):
        if message["type"] == "http.response.start":
            seen(message["status"])
        await send(message)

    return sending


def guard_first(app) -> bool:
    """Move :class:`HostGuard` in front of every other middleware of ``app`` (a Starlette app
    whose guard came in with ``app_kwargs``), so no layer of Gradio's runs before it: its CORS
    layer would otherwise answer preflights itself and add ``Access-Control-Allow-*`` headers to
    the guard's refusals. The stack is built again and swapped in one assignment (requests in
    flight finish on the old one, which is guarded too). False when ``app`` has no guard."""
    middleware = list(getattr(app, "user_middleware", []))
    guards = [m for m in middleware if m.cls is HostGuard]
    if not guards:
        return False
    app.user_middleware = [guards[0], *[m for m in middleware if m.cls is not HostGuard]]
    app.middleware_stack = app.build_middleware_stack()
    return True


def forwarded_allow_ips(proxies: str) -> str:
    """The ``FORWARDED_ALLOW_IPS`` uvicorn gets: the proxies the operator names (``--trusted-proxy``,
    ``BRACKET_TRUSTED_PROXIES``: IP addresses or networks, comma-separated), else none. Uvicorn
    trusts ``X-Forwarded-For`` from 127.0.0.1 by default, which would let any local client (the
    ``--share`` tunnel included) choose the address the login throttle counts; raises ValueError
    naming an entry that is not an address or a network (``*`` is refused: it trusts everyone)."""
    entries = [p.strip() for p in (proxies or "").split(",") if p.strip()]
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(f"trusted proxy {entry!r} is not an IP address or network (e.g. 10.0.0.5 or "
                             "10.0.0.0/24)") from None
    return ",".join(entries)
