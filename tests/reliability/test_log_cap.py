"""A launch's trainer log is capped: its head and its tail are kept, and it says what was cut
(issue 44, item 8: 200 MB of one launch were kept whole).

Real processes through the real :class:`~bracket.session.process.runner.Runner`, appending to one
log as a run's launches do (a paused run resumed writes to the same ``logs/stdout.log``), with a
small limit so the test writes megabytes, not the default's tens of them.
"""

from __future__ import annotations

import os
import sys

from bracket.session.process.runner import Runner
from bracket.trainer.base import LaunchSpec

LIMIT = 1 << 20
#: a trainer printing a first line, 6 MB of numbered lines, and a last line
_TALKER = """
import sys, time
tag = sys.argv[1]
print(f"FIRST-{tag}", flush=True)
for i in range(60000):
    print(f"{tag} line {i:06d} " + "x" * 90)
    if i % 20000 == 0:
        sys.stdout.flush(); time.sleep(0.3)  # the runner's polls see the log grow
print(f"LAST-{tag}", flush=True)
"""


def _launch(tmp_path, tag: str) -> None:
    spec = LaunchSpec(cmd=[sys.executable, "-c", _TALKER, tag], cwd=tmp_path, env=dict(os.environ),
                      output_dir=tmp_path)
    result = Runner(spec, tmp_path / "logs" / "stdout.log", log_limit=LIMIT).run(poll_interval=0.05)
    assert result.exit_code == 0
    assert result.log_tail[-1] == f"LAST-{tag}"  # the stored tail is the real end


def test_each_launch_keeps_its_head_and_tail_and_says_what_was_cut(tmp_path):
    log = tmp_path / "logs" / "stdout.log"
    _launch(tmp_path, "one")
    first_size = log.stat().st_size
    assert first_size <= LIMIT + 4096, first_size
    _launch(tmp_path, "two")  # a resume appends: its own part is capped, the first launch's is kept
    text = log.read_text(encoding="utf-8")
    assert log.stat().st_size <= 2 * (LIMIT + 4096)
    for tag in ("one", "two"):
        assert f"FIRST-{tag}" in text and f"LAST-{tag}" in text
        assert f"{tag} line 000000 " in text and f"{tag} line 059999 " in text
        assert f"{tag} line 030000 " not in text  # the middle went
    notes = [line for line in text.splitlines() if line.startswith("[bracket] ")]
    assert len(notes) == 2 and all("bytes of trainer output were cut here" in n for n in notes), notes
    cut = [int(n.split()[1]) for n in notes]
    total_one = len("FIRST-one\n") + 60000 * len("one line 000000 " + "x" * 90 + "\n") + len("LAST-one\n")
    # the count is what left the log (less what the trainer wrote during a cut, lost with the middle)
    assert total_one - LIMIT - (256 << 10) < cut[0] < total_one, (total_one, cut)
    # lines are whole around the note (cut at a line break is not promised; the note starts its own line)
    assert text.count("\n[bracket] ") == 2

