"""A search run through ``bracket run`` in the test's process, and the rows a test reads back."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from bracket.cli import main
from bracket.session import Session


def cli_search(args: list[str], fields: dict[str, str], folder: Path) -> Session:
    """``bracket run ARGS --set FIELD=VALUE ...`` (its output captured; it must exit 0), then the
    session in ``folder`` opened."""
    for name, value in fields.items():
        args = [*args, "--set", f"{name}={value}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert code == 0, err.getvalue() + out.getvalue()
    return Session.open(folder, validate=False)


def configs_by_name(session: Session) -> dict[str, dict]:
    return {c["name"]: c for c in session.store.configs(session.name, stage="search")}


def run_of(session: Session, config: dict) -> dict:
    return next(r for r in session.store.runs(session.name) if r["config_id"] == config["id"])
