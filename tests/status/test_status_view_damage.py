"""A row damaged by hand after ``status`` kept its view (issue 44, guarantee 6): the hand edit
moves nothing the change marker reads, so the view's key stays current — yet ``status`` and
``status --json`` say the one ``error: The session's store is damaged (…)`` line instead of
answering from the view, and a sound store still answers from its kept view alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.session.store import open_session_store
from bracket.status.view import view_key
from tests.fakes.view_helpers import cold_status, execute, kept_row, status_outputs

pytestmark = pytest.mark.timeout(240)

FIRST_RUN = "(SELECT min(id) FROM bracket_runs)"
FIRST_CONFIG = "(SELECT min(id) FROM bracket_configs)"
#: hand edits of a run or a config row that leave the change marker as it was
HAND_DAMAGE = {
    "run-params-not-json": f"UPDATE bracket_runs SET params_json = '{{hand' WHERE id = {FIRST_RUN}",
    "run-judges-a-list": f"UPDATE bracket_runs SET judges_json = '[]' WHERE id = {FIRST_RUN}",
    "run-samples-an-object": f"UPDATE bracket_runs SET samples_json = '{{}}' WHERE id = {FIRST_RUN}",
    "run-pause-four": f"UPDATE bracket_runs SET pause_step = 'four' WHERE id = {FIRST_RUN}",
    "run-pause-huge": f"UPDATE bracket_runs SET pause_step = 25000000000000000 WHERE id = {FIRST_RUN}",
    "run-started-infinite": f"UPDATE bracket_runs SET started_at = 9e999 WHERE id = {FIRST_RUN}",
    "config-params-a-number": f"UPDATE bracket_configs SET params_json = '7' WHERE id = {FIRST_CONFIG}",
    "config-rung-text": f"UPDATE bracket_configs SET rung = 'two' WHERE id = {FIRST_CONFIG}",
}


@pytest.fixture
def kept(runs_dir, demo_fields) -> Path:
    """A session of 6 finished configs whose status view is kept in its store."""
    from bracket.session import SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=8, sample_prompts="", warm_start=False),
                             out_dir=runs_dir, name="kept")
    fill_store(session, 6, 10)
    folder = session.folder
    session.close()
    assert main(["status", str(folder)]) == 0
    assert kept_row(folder) is not None
    return folder


def _key(folder: Path) -> list:
    store, name = open_session_store(folder)
    try:
        return view_key(store, name, ((store.get_session(name) or {}).get("settings") or {}).get("weights"))
    finally:
        store.close()


@pytest.mark.parametrize("damage", sorted(HAND_DAMAGE))
def test_a_row_damaged_after_the_view_was_kept_gives_the_one_line_error(kept, capsys, damage):
    copy = kept.parent / damage
    shutil.copytree(kept, copy)
    key = _key(copy)
    execute(copy, HAND_DAMAGE[damage])
    assert _key(copy) == key  # the kept view still looks current: only the rows can tell
    capsys.readouterr()
    for extra in ([], ["--json"]):
        code = main(["status", *extra, str(copy)])
        out, err = capsys.readouterr()
        assert code in (1, 2), (damage, extra, code, out, err)  # 1: text that is not JSON at all
        assert err.startswith("error: The session's store is damaged (") and len(err.strip().splitlines()) == 1, \
            (damage, extra, err)
        assert not out, (damage, extra, out)
    status_outputs(kept, capsys, kept_only=True)  # the sound one: from its kept view alone


def test_json_python_reads_but_the_database_does_not_vouch_for_is_answered_from_the_rows(kept, capsys, tmp_path):
    """``NaN`` in a run's judges is JSON to Python, not to SQLite: no kept view is served for it,
    and ``status`` answers what a cold computation answers, every time."""
    execute(kept, f"UPDATE bracket_runs SET judges_json = '{{\"note\": NaN}}' WHERE id = {FIRST_RUN}")
    cold = cold_status(kept, capsys, tmp_path)
    assert status_outputs(kept, capsys) == cold
    assert status_outputs(kept, capsys) == cold
