"""One damaged ``session.json`` must not break the Setup tab for everyone (issue 16, item 7).

Beside a good finished session, copies with a ``session.json`` whose values have the wrong
type (``created_at: "yesterday"``, ``storage: {}``, …). The Setup tab's session list (the
manager's ``list_sessions`` and the tab's refresh handler) lists every folder: the good one
with its status, each damaged one as ``damaged: …`` with the reason. ``status`` on a damaged
one exits 2 with one ``error:`` line naming the bad value; on the good one it works.
"""

from __future__ import annotations

import json
import shutil

import pytest

from bracket.app.manager import SessionManager
from bracket.cli import main
from tests.reliability.rel_helpers import cli_args

pytestmark = pytest.mark.timeout(240)

DAMAGE = {
    "created-yesterday": ({"created_at": "yesterday"}, "'created_at' must be a number"),
    "storage-dict": ({"storage": {}}, "'storage' must be a file name or a URL"),
    "storage-number": ({"storage": 5}, "'storage' must be a file name or a URL"),
    "storage-empty": ({"storage": ""}, "'storage' must be a file name or a URL"),
    "created-list": ({"created_at": [1]}, "'created_at' must be a number"),
    "created-huge": ({"created_at": 1e300}, None),  # a number: listed, its date shown as "?"
    "preset-list": ({"preset_id": ["demo-cpu"]}, "'preset_id' must be a preset name"),
    "name-number": ({"name": 7}, "names no session"),
}


def test_a_damaged_session_is_listed_with_its_reason_and_the_others_work(fast_fields, runs_dir, capsys):
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--name", "good", "--out", str(runs_dir), "--quiet"]) == 0
    good = runs_dir / "good"
    for folder_name, (change, _) in DAMAGE.items():
        copy = runs_dir / folder_name
        shutil.copytree(good, copy)
        info = json.loads((copy / "session.json").read_text())
        (copy / "session.json").write_text(json.dumps({**info, **change}))
    capsys.readouterr()

    manager = SessionManager(runs_dir)
    listed = {info.folder.name: info for info in manager.list_sessions()}
    assert set(listed) == {"good", *DAMAGE}
    assert listed["good"].status == "finished" and listed["good"].runs_spent == 2
    for folder_name, (_, reason) in DAMAGE.items():
        info = listed[folder_name]
        assert info.label  # the dropdown label renders
        if reason is None:
            assert info.status == "finished" and "?" in info.label
        else:
            assert info.status.startswith("damaged: ") and reason in info.status, info.status
    from ui.setup_tab import refresh_sessions

    assert len(refresh_sessions(manager).choices) == len(DAMAGE) + 1
    manager.close()

    for folder_name, (_, reason) in DAMAGE.items():
        code = main(["status", str(runs_dir / folder_name)])
        err = capsys.readouterr().err
        if reason is None:
            assert code == 0, err
            continue
        assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
        assert reason in err and "Traceback" not in err
    assert main(["status", str(good)]) == 0
