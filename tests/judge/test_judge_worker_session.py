"""The session's one image-judge worker: started on the first job, its models loaded once for
several runs, answering each run's images in turn, ended at the search's end; a worker that dies is
started again for the next run. The real worker process runs with the deterministic stand-in
backbone (``tests.fakes.image_backbone``), which writes a line per load."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from PIL import Image

from bracket.errors import BracketError
from bracket.session.scoring.image_config import ImageJudgeConfig
from bracket.session.scoring.image_scorer import ImageScorer
from bracket.trainer.prompts import parse_prompt_lines
from tests.fakes.image_backbone import LOADS_FILE

pytestmark = pytest.mark.timeout(300)

STAND_IN = ImageJudgeConfig(module="tests.fakes.image_backbone:Backbone")
PROMPTS = parse_prompt_lines("zqx, a red square --d 1\n# held-out\nzqx on a snowy mountain --d 2")


def _run(store, folder: Path, shade: int) -> int:
    """A finished run with samples of two prompts at steps 2 and 4."""
    samples = []
    for step in (2, 4):
        for index in range(2):
            path = folder / "sample" / f"x_{step:06d}_{index:02d}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (24, 24), (shade, 30 * index, 60)).save(path)
            samples.append({"step": step, "prompt_index": index, "kind": "image", "path": str(path)})
    return store.add_run("s", kind="search", status="done", run_dir=str(folder), last_step=4, samples=samples)


@pytest.fixture
def scorer(store, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    monkeypatch.setenv(LOADS_FILE, str(tmp_path / "loads.txt"))
    reference = tmp_path / "ref.png"
    Image.new("RGB", (24, 24), (250, 0, 0)).save(reference)
    made = ImageScorer(store, "s", tmp_path / "session", STAND_IN, PROMPTS, [reference])
    yield made
    made.drain(60)


def test_one_worker_loads_the_models_once_for_several_runs(scorer, store, tmp_path):
    runs = [_run(store, tmp_path / f"run{n}", 60 * n) for n in range(3)]
    for run_id in runs:
        scorer.submit(run_id)
    assert scorer.settle(240)
    pid = scorer.worker.pid
    records = [store.get_run(run_id)["judges"]["image"] for run_id in runs]
    assert all("error" not in r and sorted(r["steps"]) == ["2", "4"] for r in records), records
    assert len({r["steps"]["4"]["likeness"] for r in records}) == 3  # each run's own images were judged
    loads = (tmp_path / "loads.txt").read_text(encoding="utf-8").split()
    assert loads == [str(pid)]  # loaded once, in the one worker process that judged all three runs
    assert scorer.worker.starts == 1 and scorer.last_timing["loads"] == 1
    assert psutil.pid_exists(pid)  # kept for the next run while the search goes on
    scorer.drain(60)
    assert scorer.worker.pid is None
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_worker_gone_between_runs_is_started_again_and_one_gone_mid_job_fails_that_job(scorer, store, tmp_path):
    first = _run(store, tmp_path / "run1", 40)
    scorer.submit(first)
    assert scorer.settle(240)
    pid = scorer.worker.pid
    psutil.Process(pid).kill()
    psutil.Process(pid).wait(30)
    second = _run(store, tmp_path / "run2", 200)
    scorer.submit(second)
    assert scorer.settle(240)
    assert "error" not in store.get_run(second)["judges"]["image"]
    assert scorer.worker.starts == 2 and scorer.worker.pid != pid
    assert len((tmp_path / "loads.txt").read_text(encoding="utf-8").split()) == 2
    crashing = {**STAND_IN.backbone(), "module": "tests.fakes.image_backbone:Crashing"}
    job = {"backbone": crashing, "references": [], "images": [{"path": str(tmp_path / "ref.png"), "prompt": "zqx",
                                                                 "kind": "in"}]}
    with pytest.raises(BracketError, match=r"image-judge worker ended \(exit 3\); see .*image-judges.log"):
        scorer.worker.ask(job)
    assert scorer.worker.pid is None  # the next job starts another


def test_a_job_the_worker_cannot_do_is_one_answer_and_it_keeps_serving(scorer, tmp_path):
    with pytest.raises(BracketError, match="image judges: .*no such folder"):
        scorer.worker.ask({"backbone": {"text_image": str(tmp_path / "no-clip")}, "references": [], "images": []})
    pid = scorer.worker.pid
    answer = scorer.worker.ask({"backbone": STAND_IN.backbone(), "references": [], "images": []})
    assert answer["images"] == {} and scorer.worker.pid == pid and scorer.worker.starts == 1


def test_a_scorer_dropped_without_drain_leaves_no_worker(store, tmp_path, monkeypatch):
    import gc

    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    dropped = ImageScorer(store, "s", tmp_path / "session", STAND_IN, PROMPTS, [])
    dropped.worker.ask({"backbone": STAND_IN.backbone(), "references": [], "images": []})
    pid = dropped.worker.pid
    assert psutil.pid_exists(pid)
    del dropped
    gc.collect()
    assert not psutil.pid_exists(pid)  # ended and reaped with the object
