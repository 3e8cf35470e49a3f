"""Where the report goes and how it is written: ``<session>/report/`` (the app's and
``bracket report``'s one place), each file written whole or not at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bracket.report.document import Report, build_report, render_html, render_markdown
from bracket.report.files import write_whole

if TYPE_CHECKING:
    from bracket.session import Session

REPORT_FOLDER = "report"


@dataclass
class ReportFiles:
    markdown: Path
    html: Path
    images: list[Path]
    report: Report


def report_folder(session: "Session") -> Path:  # the app's and `bracket report`'s one place
    return session.folder / REPORT_FOLDER


def write_report(session: "Session", folder: Path | None = None) -> ReportFiles:
    """Write report.md (its PNGs beside it) and report.html into :func:`report_folder` (or ``--out``)."""
    folder = Path(folder) if folder is not None else report_folder(session)
    folder.mkdir(parents=True, exist_ok=True)
    report = build_report(session, None if folder == report_folder(session) else folder / "export")
    images = []
    for picture in report.pictures:
        images.append(write_whole(folder / f"{picture.stem}.png", picture.png))
    markdown, page = folder / "report.md", folder / "report.html"
    write_whole(markdown, render_markdown(report))  # a full disk leaves no empty or cut report
    write_whole(page, render_html(report))
    return ReportFiles(markdown, page, images, report)


def report_markdown(session: "Session", image_url: Callable[[Path], str] | None = None) -> str:
    """Write the report files and return the markdown (what the Results tab shows).

    ``image_url`` turns each picture's path into the link the markdown should use (the UI
    gives a served URL); by default the links stay relative to the report file.
    """
    files = write_report(session)
    text = files.markdown.read_text(encoding="utf-8")
    if image_url is not None:
        for image in files.images:
            text = text.replace(f"]({Path(image).name})", f"]({image_url(Path(image))})")
    return text
