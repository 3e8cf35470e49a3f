"""The first real search: its prompts come from its dataset, its default budget reaches TPE, and
its wall-time estimate only from runs like its own (issue 34, items 1, 4 and 5)."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import optuna
import pytest

from bracket.app.forms import default_budget
from bracket.app.prompt_field import prompt_help, prompt_label, proposed_prompts
from bracket.errors import BracketError
from bracket.fields import merge_with_defaults
from bracket.registry import get_preset
from bracket.search.controller import SearchController
from bracket.search.types import ScoredConfig
from bracket.session import SearchSettings
from bracket.session.create import fit_warm_start, with_sample_prompts
from bracket.session.loop.plan import plan_for
from bracket.trainer.llm.dataset import split_dataset
from bracket.trainer.presets import PRESETS
from bracket.trainer.prompts import parse_prompt_lines
from bracket.trainer.sample_proposal import propose_prompts
from tests.cli.test_cli import _sets, run_cli

REAL = ("sdxl-lora", "flux1-lora", "axolotl-lora", "wan21-lora")


def _trainer(preset_id: str, **fields: str):
    preset = get_preset(preset_id)
    return preset.trainer_factory(merge_with_defaults(preset.fields, fields))


# -- item 1: the prompts -----------------------------------------------------------------------
def test_no_real_preset_is_sampled_with_the_demos_red_circles():
    assert SearchSettings().sample_prompts == ""
    for preset_id in REAL:
        trainer = _trainer(preset_id)
        assert not trainer.default_sample_prompts
        with pytest.raises(BracketError, match="No sample prompts"):
            with_sample_prompts(SearchSettings(), trainer, preset_id)
        proposal = propose_prompts(trainer)
        assert proposal is None or "circle" not in proposal.text  # no dataset set: nothing proposed
    demo = with_sample_prompts(SearchSettings(), _trainer("demo-cpu"), "demo")
    assert "a red circle --d 1" in demo.sample_prompts  # the demo keeps its own shapes


def test_image_prompts_are_captions_of_the_dataset_with_the_shared_trigger_word(tmp_path):
    data = tmp_path / "photos"
    data.mkdir()
    for i in range(10):
        (data / f"{i:02}.png").write_bytes(b"\x89PNG")
        (data / f"{i:02}.txt").write_text(f"ohwx woman, photo {i} --in a park\n", encoding="utf-8")
    proposal = proposed_prompts("sdxl-lora", {"dataset": str(data)})
    prompts = parse_prompt_lines(proposal.text)  # lines the trainers read (a caption's `--in` is not an option)
    inside = [p for p in prompts if p.kind == "in"]
    assert len(inside) == 4 and all(p.text.startswith("ohwx woman, photo") for p in inside)
    assert {p.seed for p in inside} == {1, 2, 3, 4}
    # then held-out prompts: the trigger word in contexts no caption shows (a caption's "park" is one)
    held_out = [p for p in prompts if p.kind == "held_out"]
    assert [p.kind for p in prompts] == ["in"] * 4 + ["held_out"] * 3
    assert all(p.text.startswith("ohwx woman, ") and "photo" not in p.text for p in held_out)
    assert "held-out" in proposal.source
    assert str(data) in proposal.source and "'ohwx woman'" in proposal.source
    assert "images" in prompt_label("image") and "video frames" in prompt_label("video")
    assert str(data) in prompt_help("image", proposal)


def test_llm_prompts_are_the_held_out_instructions_of_its_eval_split(tmp_path):
    rows = [{"instruction": f"question {i}?", "output": f"answer {i}"} for i in range(50)]
    source = tmp_path / "data.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fields = {"dataset": str(source), "eval_size": "10", "split_seed": "7"}
    proposal = proposed_prompts("axolotl-lora", fields)
    held_out = split_dataset(source, tmp_path / "split", dataset_format="alpaca", eval_size=10, split_seed=7).eval
    questions = {json.loads(line)["instruction"] for line in held_out.read_text().splitlines()}
    asked = [p.text for p in parse_prompt_lines(proposal.text)]
    assert len(asked) == 4 and set(asked) <= questions and "held-out" in proposal.source
    assert "instructions" in prompt_label("text") and "eval" in prompt_help("text", proposal)


def test_run_says_which_prompts_it_used(capsys, demo_fields, runs_dir):
    code, out, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "1",
                             "--steps", "4", "--out", str(runs_dir))
    assert code == 0, err
    assert "prompts: 4, proposed from the demo's shapes" in out and "  a red circle --d 1" in out
    code, out, err = run_cli(capsys, "run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "1",
                             "--steps", "4", "--prompts", "a tiny moon --d 3", "--out", str(runs_dir))
    assert code == 0, err
    assert "prompts: 1, --prompts:" in out and "  a tiny moon --d 3" in out


# -- item 5: default budgets that search -------------------------------------------------------
@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_each_presets_default_budget_is_the_smallest_that_reaches_tpe_past_the_shape_draws(preset):
    trainer = _trainer(preset.id)
    steps = int(dict(preset.search_defaults).get("steps", SearchSettings.steps))
    settings = SearchSettings(steps=steps)
    space = trainer.session_space({}, steps=steps, warmup_share=settings.warmup_share)
    budget = default_budget(preset.id, settings, steps=steps)

    def phases(runs: int) -> dict[str, int]:
        return dict(plan_for(trainer, space, dataclasses.replace(settings, budget=runs), preset.id))

    plan = phases(budget)
    assert plan["LR bracket"] == 2 and plan["shape draws"] == 4 and plan["TPE"] >= 2, plan
    assert phases(budget - 1).get("TPE", 0) < 2


def _controller_kinds(preset_id: str, budget: int) -> list[str]:
    """The kinds (shape draws apart) the controller hands out for the default budget's configs,
    every config scored at once (a fake score: this is about the order, not the answer)."""
    trainer = _trainer(preset_id)
    settings = SearchSettings(budget=budget)
    space = trainer.session_space({}, steps=settings.steps, warmup_share=settings.warmup_share)
    fitted, _ = fit_warm_start(trainer, space)
    study = optuna.create_study(direction="minimize")
    history: list[ScoredConfig] = []
    controller = SearchController(study=study, space=space, seed=3, history=lambda: list(history))
    SearchController.enqueue_warm_start(study, space, fitted)
    rng, kinds = random.Random(0), []
    for _ in range(settings.n_configs):
        proposal = controller.next()
        value = rng.random()
        controller.finish(proposal.trial_number, value)
        history.append(ScoredConfig(space.searched_params(proposal.config), value,
                                    optuna.trial.TrialState.COMPLETE, proposal.kind))
        kinds.append("shape" if proposal.name.startswith("shape-") else proposal.kind)
    return kinds


@pytest.mark.parametrize("preset_id", ["demo-cpu", "sdxl-lora", "flux1-lora", "axolotl-lora"])
def test_the_default_budgets_plan_is_what_the_controller_does(preset_id):
    budget = default_budget(preset_id, steps=int(dict(get_preset(preset_id).search_defaults).get("steps", 100)))
    trainer = _trainer(preset_id)
    settings = SearchSettings(budget=budget)
    space = trainer.session_space({}, steps=settings.steps, warmup_share=settings.warmup_share)
    kinds = _controller_kinds(preset_id, budget)
    names = {"baseline": "baseline", "curated": "curated", "LR bracket": "bracket", "shape draws": "shape",
             "TPE": "search"}
    planned = [names[phase] for phase, count in plan_for(trainer, space, settings, preset_id) if phase in names
               for _ in range(count)]
    assert kinds == planned and kinds.count("search") >= 2


def test_the_cli_and_the_app_start_the_demo_from_the_same_budget_and_steps():
    import ui.setup_preset as setup_preset
    from bracket.cli.args import build_parser

    args = build_parser().parse_args(["run", "--preset", "demo-cpu"])
    assert args.budget is None and args.steps is None  # the preset's, as the Setup form's
    form = setup_preset.search_defaults("demo-cpu")
    assert form == {"budget": default_budget("demo-cpu", steps=50), "steps": 50}
    assert setup_preset.search_defaults("sdxl-lora")["budget"] == default_budget("sdxl-lora") > 4


def test_install_hints_run_the_demo_at_its_defaults():
    root = Path(__file__).resolve().parents[2]
    for script in ("install.sh", "install.ps1"):
        hint = next(line for line in (root / script).read_text(encoding="utf-8").splitlines() if "headless" in line)
        assert "--preset demo-cpu" in hint and "--budget" not in hint and "--steps" not in hint


def test_a_real_preset_without_prompts_or_captions_is_refused_and_one_with_captions_gets_them(
        capsys, tmp_path, runs_dir, monkeypatch):
    from tests.musubi.helpers import image_folder
    from tests.session.test_precache_session import _fake_musubi

    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", "musubi")
    dataset = image_folder(tmp_path)
    fields, _ = _fake_musubi(tmp_path, "zimage-lora", dataset)
    sets = [word for name, value in fields.items() for word in ("--set", f"{name}={value}")]
    captions = {path: path.read_text() for path in dataset.glob("*.txt")}
    for path in captions:
        path.unlink()
    code, out, err = run_cli(capsys, "run", "--preset", "zimage-lora", *sets, "--budget", "1", "--steps", "2",
                             "--out", str(runs_dir))
    assert code == 2 and err.strip().startswith("error: No sample prompts") and "--prompts" in err
    assert not runs_dir.exists() or not any(runs_dir.iterdir())  # nothing created
    for path, text in captions.items():
        path.write_text(text)
    code, out, err = run_cli(capsys, "run", "--preset", "zimage-lora", *sets, "--budget", "1", "--steps", "2",
                             "--out", str(runs_dir))
    assert code == 0, err
    assert f"prompts: 5, proposed from 2 captions of {dataset}" in out and "  caption 0 --d 1\n" in out
    assert "  caption, standing on a snowy mountain top at dawn --d 101  (held-out)" in out  # 3 held-out prompts
    assert "circle" not in out


def test_edit_and_image_to_video_proposals_say_where_each_samples_control_input_comes_from(tmp_path):
    data = tmp_path / "pairs"
    data.mkdir()
    (data / "a.png").write_bytes(b"\x89PNG")
    (data / "a.txt").write_text("make it blue", encoding="utf-8")
    edit = propose_prompts(_trainer("qwen-image-edit-lora", dataset=str(data)))
    assert edit.text == "make it blue --d 1" and "control image" in edit.source
    i2v = propose_prompts(_trainer("framepack-lora", dataset=str(data)))
    assert "start image" in i2v.source and "control image" not in i2v.source
