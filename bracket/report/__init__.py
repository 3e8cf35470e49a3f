"""The session report and the exported winner: what was found, how sure, and how to run it.

``document`` gathers a :class:`Report` from the store and writes it; ``render`` lays it out
(Markdown, HTML) and ``charts`` draws its pictures, both from plain data only; ``export``
writes the winner's ``train.sh`` (``powershell``: ``train.ps1``) and config; ``redaction``
is the one rule for secrets all of them follow.
"""

from __future__ import annotations

from bracket.lazy_exports import lazy_exports

#: public name -> the module (of this package) that defines it
_WHERE = {
    "Report": "document",
    "ReportFiles": "writing",
    "build_report": "document",
    "write_report": "writing",
    "report_markdown": "writing",
    "ExportError": "export",
    "ExportResult": "export",
    "export_run": "export",
    "promote_weights": "export",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
