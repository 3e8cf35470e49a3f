"""The headless command line: the same engine as the app, for terminals and scripts.

``python -m bracket presets | run | status | resume | finals | report | export | train-winner (promote) |
doctor | demo-data | worker``. This module only dispatches: the parser is in
:mod:`bracket.cli.args`, what each command does in :mod:`bracket.cli.commands`. A person's
mistake prints one line starting with ``error:`` and exits 2; a search that failed exits 1; a finished search exits 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from bracket.cli.args import build_parser
from bracket.errors import BracketError, machine_state_message, path_too_long_message
from bracket.safe_text import one_line, shown

#: commands that train: SIGTERM (``kill``, a service manager, a closed terminal) stops them the way
#: Ctrl-C does — the trainer is stopped and the run recorded as interrupted — instead of killing
#: Bracket and leaving the trainer running with its run marked "running"
TRAINING_COMMANDS = ("run", "resume", "finals", "train-winner", "promote", "worker")


def main(argv: Sequence[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapedStream(sys.stdout), EscapedStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


class EscapedStream:
    """A terminal stream through which no control character of untrusted text passes raw: a
    trainer's log line in a failure reason, a name, a path (:func:`bracket.safe_text.shown`;
    ``\r`` is kept for the progress line that redraws itself)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write("\r".join(shown(part) for part in text.split("\r")))
        return len(text)

    def __getattr__(self, name: str) -> object:  # flush, isatty, fileno, encoding, ...
        return getattr(self._stream, name)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return dispatch(args)
    except BracketError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)  # a newline in a path stays on the one line
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - a full disk is a machine state, not a bug: one line
        too_long = path_too_long_message(error)  # a typed path the file system refuses: bad input
        if too_long is not None:
            print(f"error: {one_line(too_long)}", file=sys.stderr)
            return 2
        message = machine_state_message(error) or _read_only_message(error)
        if message is None:
            raise
        print(f"error: {one_line(message)}", file=sys.stderr)
        return 1


def dispatch(args: argparse.Namespace) -> int:
    """Run the parsed command; the exit code."""
    if args.command == "status":
        return _status(args)
    from bracket.cli.commands import COMMANDS  # after parsing: --help and a mistyped flag answer at once

    if args.command in TRAINING_COMMANDS:
        _stop_on_signals()
    return COMMANDS[args.command](args)


def _status(args: argparse.Namespace) -> int:
    from bracket.status import quick_status

    code = quick_status(args)  # from the view it keeps, with only the store opened (bracket.status.view)
    if code is not None:
        return code
    from bracket.cli.commands import COMMANDS

    return COMMANDS["status"](args)


def _stop_on_signals() -> None:
    """Ctrl-C (SIGINT) and SIGTERM both become KeyboardInterrupt, which winds the search down.

    SIGINT is set explicitly: a process started in the background by a non-interactive shell
    (``nohup … &``, some CI runners and service wrappers) inherits SIGINT as *ignored*, and
    Python then leaves it ignored, so ``kill -INT`` and a second Ctrl-C would do nothing."""
    import signal
    import threading

    def _terminate(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():  # signal handlers belong to the main thread
        signal.signal(signal.SIGTERM, _terminate)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _read_only_message(error: BaseException) -> str | None:
    import errno

    if isinstance(error, OSError) and error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        where = f" {error.filename}" if error.filename else ""
        return (f"Cannot write{where}: {error.strerror}. Write the files elsewhere with --out FOLDER (report, "
                "export), or copy the session folder to a writable place.")
    return None


__all__ = ["main", "dispatch"]
