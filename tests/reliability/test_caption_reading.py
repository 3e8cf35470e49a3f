"""Captions stay inside the dataset (issue 44, item 2).

A caption ``001.txt`` linked to ``/proc/self/environ`` put the process's environment (an API key)
into ``run``'s proposed prompts, the store and the trainer's prompt file; a 286 MB caption was
read whole; ESC, BEL, NUL, C1 and U+202E went raw into the prompt file. Every caption Bracket
reads goes through ``bracket.dataset.captions.read_caption``: only a regular file whose real path
is inside its folder, at most ``MAX_CAPTION_BYTES``. Proposed prompts (``run`` without
``--prompts`` and the Setup form: ``bracket.app.prompt_field.proposed_prompts``) drop control
characters, which a typed prompt may not hold at all.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from bracket.app.prompt_field import proposed_prompts
from bracket.cli import main
from bracket.dataset.captions import MAX_CAPTION_BYTES, read_caption
from bracket.dataset.preflight import preflight_dataset
from bracket.safe_text import PROMPT_CONTROLS
from bracket.trainer.prompts import parse_prompt_lines
from tests.conftest import make_caption_folder
from tests.reliability.rel_helpers import cli_args

SECRET = "sk-caption-leak-0123456789"
HOSTILE = "a red \x1b]52;c;Y2xpcA==\x07circle\x00 on \x9b31m white \u202eetihw\u202c, \u2066tag\u2069 done"


@pytest.fixture
def hostile_dataset(tmp_path, monkeypatch) -> Path:
    """Six captioned images: a caption linked to /proc/self/environ (holding a key), one linked to
    a file outside the folder, a FIFO, a 300 MB sparse one, one with control characters, a good one."""
    monkeypatch.setenv("BRACKET_TEST_API_KEY", SECRET)
    folder = make_caption_folder(tmp_path / "data", count=6)
    outside = tmp_path / "outside-secret.txt"
    outside.write_text(f"api_key={SECRET}", encoding="utf-8")
    for name, target in (("000.txt", Path("/proc/self/environ")), ("001.txt", outside)):
        (folder / name).unlink()
        (folder / name).symlink_to(target)
    (folder / "002.txt").unlink()
    os.mkfifo(folder / "002.txt")
    with open(folder / "003.txt", "wb") as huge:
        huge.write(b"HUGE caption " + SECRET.encode())
        huge.truncate(300 << 20)  # sparse: nothing is written, a whole read would take 300 MB
    (folder / "004.txt").write_text(HOSTILE, encoding="utf-8")
    return folder


def _with_deadline(call, seconds: float = 60.0):
    """``call()`` in a thread; fail (not hang) when a FIFO caption blocks it."""
    result: list = []

    def run() -> None:
        try:
            result.append(call())
        except Exception as error:  # noqa: BLE001 - raised again below, in the test's thread
            result.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, "reading the captions blocked (a FIFO caption was opened for reading)"
    if isinstance(result[0], Exception):
        raise result[0]
    return result[0]


def test_read_caption_refuses_links_out_fifos_and_large_files(hostile_dataset):
    folder = hostile_dataset
    refused = {name: read_caption(folder / name, folder).refused for name in ("000.txt", "001.txt", "002.txt",
                                                                           "003.txt")}
    assert "outside the dataset folder" in refused["000.txt"] and "outside" in refused["001.txt"], refused
    assert refused["002.txt"] == "is not a regular file", refused
    assert refused["003.txt"] == f"is over {MAX_CAPTION_BYTES // 1024} kB", refused
    assert read_caption(folder / "005.txt", folder).text == "a green circle"
    inner = folder / "sub"
    inner.mkdir()
    (inner / "x.txt").symlink_to(folder / "005.txt")  # a link within the dataset is fine
    assert read_caption(inner / "x.txt", folder).text == "a green circle"


def test_proposed_prompts_read_no_file_outside_the_dataset_and_no_control_character(hostile_dataset):
    proposal = _with_deadline(lambda: proposed_prompts("sdxl-lora", {"dataset": str(hostile_dataset)}))
    assert proposal is not None
    assert SECRET not in proposal.text and "BRACKET_TEST_API_KEY" not in proposal.text and "HUGE" not in proposal.text
    assert not any(PROMPT_CONTROLS.search(line) for line in proposal.text.splitlines()), repr(proposal.text)
    assert "a red ]52;c;Y2xpcA==circle on 31m white etihw, tag done" in proposal.text, proposal.text
    assert "a green circle" in proposal.text
    accepted = parse_prompt_lines(proposal.text)  # what the form and `run` then accept as typed
    assert [p.text for p in accepted if p.kind == "in"] == ["a red ]52;c;Y2xpcA==circle on 31m white etihw, tag done",
                                                            "a green circle"]
    assert all(SECRET not in p.text for p in accepted)  # the held-out prompts too


def test_preflight_reads_no_caption_outside_and_says_which_were_not_read(hostile_dataset):
    report = _with_deadline(lambda: preflight_dataset(hostile_dataset, "sd-scripts"))
    said = " ".join(report.problems + report.warnings)
    assert SECRET not in said
    assert "3 caption(s)" in said and "not read by Bracket" in said, said  # the FIFO is no caption file at all
    assert "over 8 kB" in said and "outside the dataset folder" in said, said


@pytest.mark.parametrize("control", ["\x1b[2J", "\x07", "\x00", "\x9b", "\u202e", "\u2066"])
def test_a_typed_prompt_with_a_control_character_is_refused(fast_fields, runs_dir, capsys, control):
    code = main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "1", "--steps", "2",
                 "--name", "typed", "--out", str(runs_dir), "--prompts", f"a red{control} circle --d 3", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert f"U+{ord(control[0]):04X}" in err
    assert not (runs_dir / "typed").exists()  # nothing made, nothing launched
