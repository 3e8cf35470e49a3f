"""The one rule for showing text Bracket did not write (a trainer's output, a path, a name)
on a terminal or in a document: control characters are shown escaped, never sent raw.

A trainer's log line can carry terminal escape sequences — colours, cursor moves, an OSC 52
write to the clipboard, a title change — and a path or a name can hold a newline. Printed
raw, they act on the terminal of whoever reads ``run``, ``status`` or report.md, or split an
``error:`` line in two. :func:`shown` writes every C0 and C1 control character (and DEL)
except newline and tab as a visible escape (``\\x1b``, ``\\x07``, ``\\x9b``); :func:`one_line`
escapes newlines and tabs as well, for text that must stay on one line.

A sample prompt goes raw into the trainer's prompt file and into a model, so it holds none of
:data:`PROMPT_CONTROLS` (every C0 and C1 control, DEL, and the invisible direction and line
controls such as U+202E): a typed prompt holding one is refused (``bracket.trainer.prompts``),
and :func:`without_controls` drops them from prompts proposed from captions.
"""

from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL, and the C1 controls (U+0080–U+009F: U+009B is CSI)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_OR_BREAK = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


#: what a sample prompt may not hold: C0 and C1 controls, DEL, the bidirectional embeddings,
#: overrides and isolates (U+202A–U+202E, U+2066–U+2069), marks (U+200E/F, U+061C) and the
#: line and paragraph separators (U+2028/U+2029)
PROMPT_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def without_controls(text: str) -> str:
    """``text`` with every :data:`PROMPT_CONTROLS` character dropped (a tab or newline becomes a space)."""
    return PROMPT_CONTROLS.sub(lambda m: " " if m.group() in "\t\n\r" else "", text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char)
    if named:
        return named
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def shown(text: object) -> str:
    """``text`` with every control character but newline and tab written as a visible escape."""
    return _CONTROL.sub(_escape, str(text))


def one_line(text: object) -> str:
    """``text`` on one line: newlines, tabs and every other control character escaped."""
    return _CONTROL_OR_BREAK.sub(_escape, str(text))


__all__ = ["PROMPT_CONTROLS", "shown", "one_line", "without_controls"]
