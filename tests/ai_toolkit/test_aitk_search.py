"""Whole searches and an export through the fake ai-toolkit ``run.py`` (tests/fakes/fake_ai_toolkit.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.registry import get_preset
from bracket.session.scoring.samples import collect_samples, parse_sample_name
from tests.ai_toolkit.helpers import image_folder
from tests.fakes.ai_toolkit import make_fake_ai_toolkit
from tests.fakes.cli_search import cli_search, configs_by_name, run_of
from tests.fakes.waiting import wait_until

pytestmark = pytest.mark.timeout(240)


def _fields(tmp_path: Path, images: int = 3) -> dict[str, str]:
    model = tmp_path / "sdxl-model"
    model.mkdir(exist_ok=True)
    return {"ai_toolkit_dir": str(make_fake_ai_toolkit(tmp_path / "ai-toolkit")), "trainer_python": sys.executable,
            "dataset": str(image_folder(tmp_path, count=images)), "model": str(model), "vram_gb": "24"}


def _search(tmp_path: Path, name: str, *extra: str, images: int = 3):
    args = ["run", "--preset", "aitk-sdxl-lora", "--name", name, "--out", str(tmp_path / "runs"), "--steps", "12",
            "--sample-every", "4", "--confirm", "0", "--prompts", "a photo of sks --d 5", "--seed", "1",
            "--launch-cost", "0", "--quiet", *extra]
    return cli_search(args, _fields(tmp_path, images), tmp_path / "runs" / name)


def test_a_whole_search_scores_every_run_and_shows_its_samples(tmp_path):
    session = _search(tmp_path, "whole", "--budget", "3")
    runs = [r for r in session.store.runs(session.name) if r["config_id"] is not None]
    assert len(runs) >= 3
    assert all(r["status"] == "done" for r in runs), [(r["status"], r["failure_reason"]) for r in runs]
    for run in runs:
        assert [step for step, _ in run["loss"]] == list(range(1, 12))  # log_every 1; no loss on a launch's first step
        assert sorted({s["step"] for s in run["samples"]}) == [0, 4, 8, 12]  # step-0 baseline, every 4, the end
        output = Path(run["output_dir"])
        assert (output / f"{output.name}.safetensors").is_file() and (output / "loss_log.db").is_file()
    names = {json.loads(p.read_text())["config"]["name"] for r in runs for p in Path(r["run_dir"]).glob("job-*.json")}
    assert len(names) == len(runs)  # every run its own name
    assert {c["name"] for c in configs_by_name(session).values()} >= {"baseline", "kohya-example"}
    session.close()


def test_a_search_on_20_images_scores_the_validation_loss_ai_toolkit_logs(tmp_path):
    session = _search(tmp_path, "validated", "--budget", "2", images=20)
    runs = [r for r in session.store.runs(session.name) if r["config_id"] is not None]
    assert runs and all(r["status"] == "done" for r in runs), [(r["status"], r["failure_reason"]) for r in runs]
    for run in runs:  # every sample step (4, 8) and none on the first step of the launch
        assert [step for step, _ in run["eval_loss"]] == [4, 8]
        job = json.loads(next(Path(run["run_dir"]).glob("job-*.json")).read_text())
        assert len(job["config"]["process"][0]["train"]["validation_config"]["validation_items"]) == 2
    session.close()


def test_a_halving_search_pauses_at_the_rung_and_restarts_under_a_new_name(tmp_path):
    session = _search(tmp_path, "halved", "--halving", "--eta", "2", "--smallest-rung", "1/2", "--budget", "4")
    configs = configs_by_name(session)
    assert len(configs) == 3 and all(c["rung_state"] for c in configs.values())
    runs = [run_of(session, c) for c in configs.values()]
    paused = [r for r in runs if r["status"] == "paused"]
    restarted = [r for r in runs if len(list(Path(r["run_dir"]).glob("job-*.json"))) == 2]
    assert paused and restarted
    for run in paused:  # paused at the rung: the weights of that step saved, the series cut there
        output = Path(run["output_dir"])
        assert (output / f"{output.name}_{run['pause_step']:09d}.safetensors").is_file()
        assert max(step for step, _ in run["loss"]) <= run["pause_step"]
    for run in restarted:  # trained again from step 0 under a name of its own, to the end
        output = Path(run["output_dir"])
        assert output.name.endswith("-l2") and (output / f"{output.name}.safetensors").is_file()
        assert run["status"] == "done" and [step for step, _ in run["loss"]][:2] == [1, 2]
        assert sorted({s["step"] for s in run["samples"]}) == [0, 4, 8, 12]
    session.close()


def test_the_export_runs_run_py_on_its_own_job_file(tmp_path):
    session = _search(tmp_path, "exported", "--budget", "1")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["export", str(session.folder), "--out", str(tmp_path / "export")]) == 0
    script = tmp_path / "export" / "train.sh"
    text = script.read_text(encoding="utf-8")
    jobs = list((tmp_path / "export" / "run").glob("job-*.json"))
    assert len(jobs) == 1 and str(jobs[0]) in text and "run.py" in text and "HF_HUB_OFFLINE" in text
    assert (tmp_path / "export" / "train.ps1").is_file()
    log = tmp_path / "export.log"
    with open(log, "w", encoding="utf-8") as handle:
        subprocess.run(["bash", str(script)], stdout=handle, stderr=subprocess.STDOUT, timeout=120, check=True)
    name = json.loads(jobs[0].read_text())["config"]["name"]
    assert (tmp_path / "export" / "run" / "output" / name / f"{name}.safetensors").is_file(), log.read_text()
    session.close()


def test_sigint_exits_0_without_the_final_save_and_the_adapter_says_it_did_not_finish(tmp_path):
    from bracket.trainer.base import RunRequest

    fields = _fields(tmp_path)
    trainer = get_preset("aitk-sdxl-lora").trainer_factory(fields)
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=trainer.config_from_dict(
        trainer.baseline_config().knobs), dataset=Path(fields["dataset"]), max_steps=2000, seed=1))
    env = {**spec.env, "BRACKET_FAKE_STEP_S": "0.01"}
    with open(tmp_path / "log", "w", encoding="utf-8") as handle:
        process = subprocess.Popen(spec.cmd, cwd=spec.cwd, env=env, stdout=handle, stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: "step 3/" in (tmp_path / "log").read_text(), 60, "step 3 in the log")
            os.kill(process.pid, signal.SIGINT)
            assert process.wait(timeout=60) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert "Job stopped" in (tmp_path / "log").read_text()
    assert "without its final save" in trainer.unfinished_reason(spec.output_dir)
    (spec.output_dir / f"{spec.output_dir.name}.safetensors").write_text("{}")
    assert trainer.unfinished_reason(spec.output_dir) is None


def test_ai_toolkit_sample_names_are_read(tmp_path):
    parsed = parse_sample_name("1733490000123__000000250_3.jpg")
    assert (parsed.step, parsed.prompt_index, parsed.seed, parsed.kind) == (250, 3, None, "image")
    assert parsed.timestamp == "20241206130000"
    assert parse_sample_name("1733490000123__000000250_3.jpg.jpg") is None  # its .thumbs copies
    folder = tmp_path / "samples"
    (folder / ".thumbs").mkdir(parents=True)
    for name in ("1733490000123__000000000_0.jpg", "1733490000999__000000004_0.webp", "config.yaml"):
        (folder / name).write_bytes(b"x")
    assert [(s.step, s.path.suffix) for s in collect_samples(folder)] == [(0, ".jpg"), (4, ".webp")]


def test_the_executor_records_a_run_that_exited_0_unfinished_as_interrupted(tmp_path):
    from bracket.session.process import RunExecutor
    from bracket.session.search_settings import SearchSettings
    from bracket.session.store import Store, sqlite_url
    from bracket.trainer.base import LaunchSpec

    trainer = get_preset("aitk-sdxl-lora").trainer_factory(_fields(tmp_path))
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    executor = RunExecutor(store, "s", SearchSettings(), trainer=trainer, worker_id="w")
    statuses = []
    for name, code in (("stopped", "print('Job stopped')"),
                       ("finished", "import pathlib,sys; p=pathlib.Path(sys.argv[1]); p.mkdir(parents=True); "
                                    "(p / (p.name + '.safetensors')).write_text('x')")):
        output = tmp_path / name / "output" / f"{name}-l1"
        spec = LaunchSpec(cmd=[sys.executable, "-c", code, str(output)], cwd=tmp_path, env=dict(os.environ),
                          output_dir=output, logging_dir=tmp_path / name / "logs", loss_tags=("loss",))
        run_id = store.add_run("s", kind="search", stage="search", label=name, seed=1, status="queued")
        statuses.append(executor.execute(run_id, spec, scored=False, run_dir=tmp_path / name))
        if name == "stopped":
            assert "without its final save" in store.get_run(run_id)["failure_reason"]
    assert statuses == ["interrupted", "done"]
    store.close()


def test_the_fake_resumes_by_name_as_ai_toolkit_does_and_a_new_launch_does_not(tmp_path):
    from bracket.trainer.base import RunRequest

    fields = _fields(tmp_path)
    trainer = get_preset("aitk-sdxl-lora").trainer_factory(fields)
    request = RunRequest(run_dir=tmp_path / "run", knobs=trainer.config_from_dict(trainer.baseline_config().knobs),
                         dataset=Path(fields["dataset"]), max_steps=12, seed=1, save_every_n_steps=5)
    spec = trainer.prepare_run(request)
    job = json.loads(Path(spec.cmd[-1]).read_text())
    job["config"]["process"][0]["train"]["steps"] = 7  # a first launch that ends after the step-5 save
    Path(spec.cmd[-1]).write_text(json.dumps(job))
    subprocess.run(spec.cmd, cwd=spec.cwd, env=spec.env, stdout=subprocess.DEVNULL, check=True, timeout=60)
    job["config"]["process"][0]["train"]["steps"] = 12
    Path(spec.cmd[-1]).write_text(json.dumps(job))
    os.remove(spec.output_dir / f"{spec.output_dir.name}.safetensors")  # keep only the step-5 save
    again = subprocess.run(spec.cmd, cwd=spec.cwd, env=spec.env, capture_output=True, text=True, timeout=60)
    assert "resuming at step 5" in again.stdout  # the same name picks up the save
    fresh = trainer.prepare_run(request)  # Bracket's next launch of the run folder: a new name, from 0
    assert fresh.output_dir != spec.output_dir
    first = subprocess.run(fresh.cmd, cwd=fresh.cwd, env=fresh.env, capture_output=True, text=True, timeout=60)
    assert "resuming" not in first.stdout and "Generating baseline samples" not in first.stdout  # no prompts
    assert "step 1/12" in first.stdout
