"""``python app.py`` — the Bracket web app (Gradio), on http://127.0.0.1:7860 by default.

Options: ``--port N``; ``--allow-custom-executables`` to let the form type any trainer python,
training script or trainer folder (by default only the ones configured in ``.env``/settings
run); ``--host ADDRESS`` to listen on other interfaces and ``--share`` for a
public Gradio link — both only when asked, with a warning, and only with a login
(``--auth user:pass`` or ``BRACKET_AUTH=user:pass`` in ``.env``). The app serves files from
the runs folder (``BRACKET_RUNS_DIR``, default ``runs/``) and nothing else, and answers only
requests addressed to it (``Host`` 127.0.0.1, localhost, [::1], the ``--host`` value or the
share link) from its own origin, stores no request body, and locks a client out of the login
for a while after repeated wrong passwords (see ``ui/host_guard.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from bracket import settings as app_settings
from bracket.errors import BracketError

if TYPE_CHECKING:
    from bracket.app.manager import SessionManager

#: the app's one session holder, shared by every browser tab (never per-tab state)
MANAGER: SessionManager | None = None
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, exit 2 (as `python -m bracket`)
        self.exit(2, f"error: {message} (see `python app.py --help`)\n")


class AppError(Exception):
    """A mistake in how the app was started: one ``error:`` line, exit 2."""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 65535, got {text!r}")
    return port


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = _Parser(prog="python app.py", description="Bracket web app")
    parser.add_argument("--port", type=_port, default=7860, help="port to listen on (default 7860)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on; anything but 127.0.0.1 needs --auth (default 127.0.0.1)")
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link (needs --auth)")
    parser.add_argument("--auth", help="user:password login (or BRACKET_AUTH in .env)")
    parser.add_argument("--trusted-proxy", default=None,
                        help="IP addresses or networks (comma-separated) of a reverse proxy whose X-Forwarded-For "
                             "names the client (or BRACKET_TRUSTED_PROXIES); default: none, forwarded headers are "
                             "ignored")
    parser.add_argument("--allow-custom-executables", action="store_true",
                        help="let the web form type any trainer python, training script or trainer folder "
                             "(default: only those configured in .env/settings; a login then means a shell)")
    return parser.parse_args(argv)


def parse_auth(text: str) -> tuple[str, str] | None:
    if not text:
        return None
    user, sep, password = text.partition(":")
    if not sep or not user or not password:
        raise AppError("--auth / BRACKET_AUTH must be user:password with both parts non-empty.")
    return user, password


@contextlib.contextmanager
def startup_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the app imports, builds and launches, and
    what startup made moved out of its sight afterwards (``gc.freeze``).

    Importing Gradio and building the Blocks create a few hundred thousand long-lived objects
    and almost no garbage, yet each full collection on the way walks all of them, a good share
    of the CPU time until the page is served. Frozen, they are never walked again, so later
    collections while the app runs stay cheap too; the startup garbage they hold is a few MB.
    Only here, before the server answers anything: nothing pauses the collector while it serves.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.freeze()


def main(argv: list[str] | None = None) -> int:
    try:
        return _serve(parse_args(argv))
    except (AppError, BracketError) as error:  # BracketError: a damaged .env, BRACKET_RUNS_DIR a file
        print(f"error: {error}", file=sys.stderr)
        return 2


def served_text(local_url: str | None, share_url: str | None) -> str:
    """Where the app answers, and how to get a public link: this app's ``--share`` (with ``--auth``)."""
    lines = [f"* Running on local URL:  {local_url or '(unknown)'}"]
    lines.append(f"* Public link: {share_url}" if share_url else
                 "* For a public gradio.live link: python app.py --share --auth user:password")
    return "\n".join(lines)


def _serve(args: argparse.Namespace) -> int:
    global MANAGER
    auth = parse_auth(args.auth or app_settings.env("BRACKET_AUTH"))
    from ui.host_guard import forwarded_allow_ips

    proxies = args.trusted_proxy if args.trusted_proxy is not None else app_settings.env("BRACKET_TRUSTED_PROXIES")
    try:  # read by uvicorn when Gradio starts it: a client may not name its own address
        os.environ["FORWARDED_ALLOW_IPS"] = forwarded_allow_ips(proxies)
    except ValueError as error:
        raise AppError(f"--trusted-proxy / BRACKET_TRUSTED_PROXIES: {error}.") from None
    exposed = args.share or args.host not in LOCAL_HOSTS
    if exposed and auth is None:
        raise AppError("refusing to listen beyond this machine without a login: add --auth user:password "
                       "(or set BRACKET_AUTH in .env).")
    if exposed:
        where = "a public gradio.live link" if args.share else f"address {args.host}"
        print(f"WARNING: the app is reachable through {where}; anyone with the login can start trainer runs "
              "on this machine.", file=sys.stderr)
    from bracket.session.process.groups import containment_note

    if note := containment_note():  # no cgroup per run here: say what may outlive a run
        print(note, file=sys.stderr)
    # Gradio asks matplotlib for its backend around every event; left unset, the page's first
    # load event imports pyplot to pick one (~0.3 CPU-s). The app draws on Agg canvases only.
    os.environ.setdefault("MPLBACKEND", "Agg")
    runs_dir = app_settings.get_settings().runs_dir  # BRACKET_RUNS_DIR a file: one line, before any import
    with startup_gc():  # imports, the Blocks and launch; collections resume once the page is served
        from bracket.app.manager import SessionManager
        from ui.blocks import build_app, launch_options  # gradio is imported only when the app runs
        from ui.host_guard import HostPolicy, guard_first

        runs_dir.mkdir(parents=True, exist_ok=True)
        MANAGER = SessionManager(runs_dir, allow_custom_executables=args.allow_custom_executables)
        demo = build_app(MANAGER)
        policy = HostPolicy(args.host)  # requests naming another host are refused (DNS rebinding)
        try:
            # quiet: Gradio's own lines tell a person to "set share=True in launch()"; ours name --share
            demo.launch(server_name=args.host, server_port=args.port, share=args.share, auth=auth,
                        prevent_thread_lock=True, quiet=True, **launch_options(runs_dir, policy))
        except OSError as error:  # Gradio's "Cannot find empty port in range: N-N" and the like
            MANAGER.close()
            raise AppError(f"cannot serve on {args.host}:{args.port}: the port is in use (another app running?) "
                           f"or not allowed ({str(error).split('. ')[0]}); pass a free one, e.g. "
                           f"--port {args.port + 1 if args.port < 65535 else 7860}.") from None
        except BaseException:
            MANAGER.close()
            raise
        guard_first(getattr(demo, "server_app", None))  # before Gradio's CORS layer too (none: not served)
    try:
        policy.allow(getattr(demo, "share_url", None) or "")
        print(served_text(getattr(demo, "local_url", None), getattr(demo, "share_url", None)), flush=True)
        demo.block_thread()
    finally:
        MANAGER.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
