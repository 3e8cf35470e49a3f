"""One unreadable sample image must not break any reader of samples (issue 16, item 6).

A trainer killed while it writes a PNG leaves a truncated file. After a real (fake-trainer)
search, the last samples are cut to half their size; then ``report`` and ``export`` succeed
and the report lists the bad files, the Compare grid shows the cell as "unreadable sample:
<name>" (the other cells stay images), and the VLM judge scores the readable images only and
lists the rest with its record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.app.manager import SessionManager
from bracket.cli import main
from bracket.judge.vlm import VlmConfig
from bracket.session import Session
from bracket.session.scoring import VlmScorer
from tests.reliability.rel_helpers import cli_args

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def damaged(fast_fields, runs_dir, capsys):
    """A finished 2-run search whose final-step samples of prompt 0 are truncated PNGs."""
    code = main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "4",
                 "--sample-every", "4",  # samples at the first and the last step only
                 "--prompts", "a red circle --d 1\na blue square --d 2", "--name", "bad-png", "--out", str(runs_dir),
                 "--quiet"])
    assert code == 0, capsys.readouterr().err
    folder = runs_dir / "bad-png"
    session = Session.open(folder, validate=False)
    runs = session.store.runs(session.name)
    session.close()
    truncated = []
    for run in runs:
        last = max(s["step"] for s in run["samples"])
        for sample in run["samples"]:
            if sample["step"] == last and sample["prompt_index"] == 0:
                path = Path(sample["path"])
                data = path.read_bytes()
                path.write_bytes(data[: len(data) // 2])
                truncated.append(path)
    assert len(truncated) == 2
    capsys.readouterr()
    return folder, runs, truncated


def test_report_and_export_skip_and_list_unreadable_samples(damaged, capsys):
    folder, _, truncated = damaged
    assert main(["report", str(folder)]) == 0, capsys.readouterr().err
    text = (folder / "report" / "report.md").read_text(encoding="utf-8")
    assert "Unreadable sample files" in text and all(str(p) in text for p in truncated)
    assert main(["export", str(folder)]) == 0, capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err


def test_the_compare_grid_shows_which_sample_is_unreadable(damaged):
    folder, runs, truncated = damaged
    manager = SessionManager(folder.parent)
    manager.open(folder)
    grid = manager.compare.grid([r["id"] for r in runs])
    assert [c.kind for c in grid.rows[0]] == ["missing", "missing"]
    assert sorted(c.text for c in grid.rows[0]) == sorted(f"unreadable sample: {p.name}" for p in truncated)
    assert [c.kind for c in grid.rows[1]] == ["image", "image"]
    blind = manager.compare.grid([r["id"] for r in runs], blind=True)
    assert all(c.text == "unreadable sample" for c in blind.rows[0])
    manager.close()


def test_the_vlm_judge_scores_the_readable_images_and_lists_the_rest(damaged):
    folder, runs, truncated = damaged
    session = Session.open(folder, validate=False)
    scorer = VlmScorer(session.store, session.name, VlmConfig(base_url="http://127.0.0.1:1/v1", model="m"),
                       session.settings.prompts())
    asked: list[str] = []

    def score_image(path, prompt):
        asked.append(Path(path).name)
        return {"image": Path(path).name, "means": {"prompt_adherence": 7, "quality": 7, "artifacts": 7},
                "stds": {"prompt_adherence": 0, "quality": 0, "artifacts": 0}, "goodness": 0.7, "disagreement": False}

    scorer.judge.score_image = score_image
    run = runs[0]
    scorer._score(run["id"])
    record = session.store.get_run(run["id"])["judges"]["vlm"]
    bad = next(p for p in truncated if str(p).startswith(run["run_dir"]))
    assert bad.name not in asked and len(asked) == 1
    assert record["score"] is not None and any(bad.name in u for u in record["unreadable"])
    scorer.drain(5)
    session.close()
