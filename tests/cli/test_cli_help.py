"""The CLI's help names what its options accept."""

from __future__ import annotations

import pytest

from bracket.cli import main
from bracket.judge.combine import JUDGE_NAMES


def test_run_help_names_every_judge_the_weights_take(capsys):
    """``--weights`` accepts every judge of ``JUDGE_NAMES``; the help must name them all."""
    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "judges: " + ", ".join(JUDGE_NAMES) in text
    assert {"likeness", "image_quality", "face_identity"} <= set(JUDGE_NAMES)
