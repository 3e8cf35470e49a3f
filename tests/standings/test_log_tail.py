"""The log tail without accelerate's launch defaults (issue 34 item 8)."""

from __future__ import annotations

from types import SimpleNamespace

from bracket.app.log_view import LogTail, without_launch_noise

ACCELERATE = [
    "The following values were not passed to `accelerate launch` and had defaults used instead:",
    "\t`--num_processes` was set to a value of `1`",
    "\t`--num_machines` was set to a value of `1`",
    "\t`--mixed_precision` was set to a value of `'no'`",
    "\t`--dynamo_backend` was set to a value of `'no'`",
    "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.",
]


def test_log_tail_leaves_out_accelerates_launch_defaults(tmp_path):
    log = tmp_path / "stdout.log"
    lines = ACCELERATE + [f"steps: {i}%" for i in range(1, 30)]
    log.write_text("\n".join(lines) + "\n")
    assert without_launch_noise(ACCELERATE + ["import network module: networks.lora"]) == [
        "import network module: networks.lora"]
    snap = SimpleNamespace(current={"log_path": str(log)}, runs=[])
    tail = LogTail().read(snap, memo=None, lines=35)  # more lines than the log has past the warnings
    assert tail[0] == "steps: 1%" and tail[-1] == "steps: 29%" and len(tail) == 29
    assert LogTail().read(snap, memo=None, lines=5) == [f"steps: {i}%" for i in range(25, 30)]
