"""Terminal escape sequences from a trainer are shown escaped (issue 35, item 8).

A trainer that writes an OSC 52 clipboard write, a screen clear and a C1 CSI into its error
line: ``run`` and ``status`` (what reaches the terminal) and report.md / report.html carry
them as visible ``\\x1b``-style escapes, never raw; the error text itself is still there.
"""

from __future__ import annotations

import re

import pytest

from bracket.cli import main
from tests.reliability.rel_helpers import cli_args

pytestmark = pytest.mark.timeout(240)

NASTY = "RuntimeError: CUDA out of memory \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b31m\x00 done"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

HOSTILE_TRAINER = f"""import sys
print({NASTY!r}, file=sys.stderr, flush=True)
sys.exit(1)
"""


def test_control_characters_from_a_trainer_are_shown_escaped(fast_fields, runs_dir, tmp_path, capsys):
    script = tmp_path / "hostile_train.py"
    script.write_text(HOSTILE_TRAINER, encoding="utf-8")
    fields = {**fast_fields, "train_script": str(script)}
    code = main(["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "2", "--steps", "3", "--name", "esc",
                 "--out", str(runs_dir), "--quiet", "--no-warm-start"])
    run_out = capsys.readouterr()
    assert code == 1
    folder = runs_dir / "esc"
    assert main(["status", str(folder)]) == 0
    status_out = capsys.readouterr()
    assert main(["report", str(folder)]) == 0
    capsys.readouterr()
    texts = {"run": run_out.out + run_out.err, "status": status_out.out + status_out.err,
             "report.md": (folder / "report" / "report.md").read_text(encoding="utf-8"),
             "report.html": (folder / "report" / "report.html").read_text(encoding="utf-8")}
    for where, text in texts.items():
        assert not RAW.search(text), f"{where} carries a raw control character: {RAW.search(text)!r}"
    for where in ("run", "status", "report.md"):
        assert "\\x1b]52;c;" in texts[where] and "CUDA out of memory" in texts[where], (where, texts[where])
