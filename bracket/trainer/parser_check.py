"""The Bracket side of the parser check: build its command, read its report.

The check itself is ``bracket/trainer/scripts/parser_check.py``, a stand-alone script run in
the trainer's python (which has the trainer's packages but not Bracket)::

    <trainer python> parser_check.py --script <sd-scripts>/sdxl_train_network.py -- <argv...>

It prints one line ``BRACKET_PARSER_CHECK {json}``; :func:`parse_report` reads it back.
The adapters call :func:`make_parser_check_spec` from their ``parser_check_spec()``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bracket.trainer.base import LaunchSpec
from bracket.trainer.scripts.parser_check import MARKER

#: the script, run by path in the trainer's python
RUNNER = Path(__file__).resolve().with_name("scripts") / "parser_check.py"


def make_parser_check_spec(launch: LaunchSpec, *, python: str | os.PathLike[str], script: str | os.PathLike[str],
                           cwd: str | os.PathLike[str] | None = None) -> LaunchSpec:
    """A LaunchSpec running the check script in ``python`` on ``launch``'s trainer arguments.

    The trainer arguments are everything after ``script`` in ``launch.cmd`` (the
    ``accelerate launch`` prefix is dropped).
    """
    script_text = str(script)
    cmd = list(launch.cmd)
    try:
        index = cmd.index(script_text)
    except ValueError:
        raise ValueError(f"{script_text} is not part of the command {cmd[:8]}...") from None
    argv = cmd[index + 1:]
    return LaunchSpec(
        cmd=[str(python), str(RUNNER), "--script", script_text, "--", *argv],
        cwd=Path(cwd) if cwd is not None else launch.cwd, env=dict(launch.env), output_dir=launch.output_dir,
        label="parser check",
    )


def script_in(cmd: list[str]) -> str | None:
    """The trainer script of a command: its first ``.py`` word after the python (None if none)."""
    return next((word for word in cmd[1:] if word.endswith(".py")), None)


def parse_report(text: str) -> dict[str, Any] | None:
    """The report in a parser-check log (None when the runner printed none)."""
    for line in reversed(text.splitlines()):
        if line.startswith(MARKER + " "):
            try:
                return json.loads(line[len(MARKER) + 1:])
            except json.JSONDecodeError:
                return None
    return None
