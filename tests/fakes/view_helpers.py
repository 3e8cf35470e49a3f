"""Helpers of the status-view tests: the view ``status`` keeps in the store (``bracket_views``)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest


def store_file(folder: Path) -> Path:
    """The SQLite store of the session in ``folder`` (as its ``session.json`` names it)."""
    info = json.loads((Path(folder) / "session.json").read_text(encoding="utf-8"))
    stored = info.get("storage", "bracket.db")
    return Path(stored.split("sqlite:///", 1)[1]) if stored.startswith("sqlite:///") else Path(folder) / stored


def execute(folder: Path, sql: str, params: tuple = ()) -> list[tuple]:
    connection = sqlite3.connect(store_file(folder), timeout=60)
    try:
        with connection:
            return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


def kept_row(folder: Path) -> tuple[Any, Any] | None:
    """(key, data) of the status view kept in the store of ``folder``'s session, decoded; None when none is."""
    rows = execute(folder, "SELECT key_json, data_json FROM bracket_views WHERE name = 'status'")
    assert len(rows) <= 1
    return (json.loads(rows[0][0]), json.loads(rows[0][1])) if rows else None


def cold_copy(folder: Path, tmp_path: Path) -> Path:
    """A copy of ``folder`` with nothing kept: no ``views`` folder, no kept views in its store."""
    copy = tmp_path / f"cold-{time.monotonic_ns()}" / Path(folder).name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("views"))
    if execute(copy, "SELECT name FROM sqlite_master WHERE name = 'bracket_views'"):
        execute(copy, "DELETE FROM bracket_views")
    return copy


def status_outputs(folder: Path, capsys, *, kept_only: bool = False) -> tuple[str, str]:
    """(``status``, ``status --json``) as printed, in this process; ``kept_only``: fail if either
    needed the full command (the kept view was not current)."""
    from bracket import cli
    from bracket.cli import commands as cli_commands

    def full(_args):
        raise AssertionError("status opened the session: the kept view was not current")

    outputs = []
    with pytest.MonkeyPatch.context() as patch:
        if kept_only:
            patch.setitem(cli_commands.COMMANDS, "status", full)
        for extra in ([], ["--json"]):
            assert cli.main(["status", *extra, str(folder)]) == 0
            outputs.append(capsys.readouterr().out)
    return outputs[0], outputs[1]


def cold_status(folder: Path, capsys, tmp_path: Path) -> tuple[str, str]:
    """The same answer computed from the store alone: ``status_outputs`` of a :func:`cold_copy`."""
    return status_outputs(cold_copy(folder, tmp_path), capsys)
