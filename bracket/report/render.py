"""The report's layout rendered twice: Markdown and one self-contained HTML page.

A report is a list of sections ``(title, blocks)``; a block is a small tuple:
``("p", text)``, ``("quote", text)``, ``("code", text)``, ``("table", headers, rows)`` or
``("img", Picture)``. This module knows nothing of sessions or scores: :mod:`bracket.report.document`
decides what the sections say, this module only writes them out.
"""

from __future__ import annotations

import base64
import html as html_text
from collections.abc import Sequence
from dataclasses import dataclass

Block = tuple  # ("p", text) | ("quote", text) | ("code", text) | ("table", headers, rows) | ("img", Picture)
Section = tuple[str, list[Block]]


@dataclass
class Picture:
    """One PNG of the report: ``<stem>.png`` beside report.md, embedded in report.html."""

    stem: str
    title: str
    png: bytes


def markdown(title: str, intro: str, sections: Sequence[Section]) -> str:
    """Markdown; pictures are referenced as ``<stem>.png`` beside the file."""
    cell = lambda value: str(value).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = [f"# {title}", "", intro, ""]
    for heading, blocks in sections:
        lines += [f"## {heading}", ""]
        for block in blocks:
            if block[0] == "p":
                lines += [block[1], ""]
            elif block[0] == "quote":
                lines += [f"> {block[1]}", ""]
            elif block[0] == "code":
                lines += ["```", block[1], "```", ""]
            elif block[0] == "img":
                lines += [f"![{cell(block[1].title)}]({block[1].stem}.png)", ""]
            elif block[0] == "table":
                lines += ["| " + " | ".join(cell(h) for h in block[1]) + " |", "|" + "---|" * len(block[1])]
                lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in block[2]] + [""]
    return "\n".join(lines)


STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
         "text-align:left;font-size:14px}th{background:#f3f3f3}blockquote{border-left:4px solid #2ca02c;"
         "margin:0;padding:.3em 1em;background:#f6fbf6}pre{background:#f5f5f5;padding:.6em;"
         "white-space:pre-wrap;word-break:break-all}img{max-width:100%}")


def html(title: str, intro: str, sections: Sequence[Section]) -> str:
    """One self-contained HTML page; pictures are embedded as base64 PNG data URLs."""
    e = html_text.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{e(title)}</title><style>{STYLE}</style></head><body>", f"<h1>{e(title)}</h1>",
             f"<p>{e(intro)}</p>"]
    for heading, blocks in sections:
        parts.append(f"<h2>{e(heading)}</h2>")
        for block in blocks:
            if block[0] == "p":
                parts.append(f"<p>{e(block[1])}</p>")
            elif block[0] == "quote":
                parts.append(f"<blockquote>{e(block[1])}</blockquote>")
            elif block[0] == "code":
                parts.append(f"<pre><code>{e(block[1])}</code></pre>")
            elif block[0] == "img":
                data = base64.b64encode(block[1].png).decode("ascii")
                parts.append(f'<figure><img alt="{e(block[1].title)}" src="data:image/png;base64,{data}">'
                             f"<figcaption>{e(block[1].title)}</figcaption></figure>")
            elif block[0] == "table":
                head = "".join(f"<th>{e(str(h))}</th>" for h in block[1])
                body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in block[2])
                parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts.append("</body></html>")
    return "\n".join(parts)
