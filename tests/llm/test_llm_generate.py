"""The post-run generation step: its LaunchSpec and the generations.json it writes (faked models)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bracket.trainer.base import RunRequest
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.scripts import llm_generate
from tests.llm.llm_helpers import FAKES, fake_module_env

PROMPTS = [SamplePrompt("Name a colour.", seed=1000), SamplePrompt("Count to three.", seed=1001)]


@pytest.mark.parametrize("preset_id", ["axolotl-lora", "torchtune-lora", "unsloth-lora"])
def test_post_run_command(make_trainer, tmp_path, preset_id):
    trainer = make_trainer(preset_id)
    run_dir = tmp_path / "run"
    spec = trainer.prepare_run(RunRequest(run_dir=run_dir,
                                          knobs=trainer.config_from_dict(trainer.baseline_config().knobs),
                                          dataset=trainer.dataset_source(None), max_steps=10, seed=3))
    assert trainer.post_run_commands(run_dir=run_dir, launch=spec, sample_prompts=None) == []
    (post,) = trainer.post_run_commands(run_dir=run_dir, launch=spec, sample_prompts=PROMPTS)
    assert post.cmd[0] == trainer.python
    assert post.cmd[1] == str(run_dir / "scripts" / "llm_generate.py")
    args = llm_generate.parse_args(post.cmd[2:])
    assert args.output == spec.output_dir / "sample" / "generations.json"
    assert args.adapter == spec.output_dir and args.format == "alpaca"
    assert json.loads(args.prompts.read_text()) == [
        {"prompt_index": 0, "prompt": "Name a colour.", "seed": 1000},
        {"prompt_index": 1, "prompt": "Count to three.", "seed": 1001},
    ]
    assert post.sample_dir == spec.sample_dir


def test_generation_output_format_with_fakes(make_trainer, tmp_path):
    trainer = make_trainer("torchtune-lora")
    run_dir = tmp_path / "run"
    spec = trainer.prepare_run(RunRequest(run_dir=run_dir,
                                          knobs=trainer.config_from_dict(trainer.baseline_config().knobs),
                                          dataset=trainer.dataset_source(None), max_steps=10, seed=3))
    for epoch in (0, 1, 10):  # torchtune writes one adapter per epoch; the last one is used
        (spec.output_dir / f"epoch_{epoch}").mkdir(parents=True)
        (spec.output_dir / f"epoch_{epoch}" / "adapter_config.json").write_text("{}")
    (post,) = trainer.post_run_commands(run_dir=run_dir, launch=spec, sample_prompts=PROMPTS)
    result = subprocess.run([sys.executable, *post.cmd[1:]], cwd=post.cwd, env=fake_module_env(),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    generations = json.loads((spec.sample_dir / "generations.json").read_text())
    assert [sorted(g) for g in generations] == [["completion", "prompt", "prompt_index", "seed"]] * 2
    assert [(g["prompt_index"], g["prompt"], g["seed"]) for g in generations] == [
        (0, "Name a colour.", 1000), (1, "Count to three.", 1001)]
    assert "seed=1000" in generations[0]["completion"] and "seed=1001" in generations[1]["completion"]
    assert "adapter=epoch_10" in generations[0]["completion"]
    assert "### Instruction" not in generations[0]["completion"]  # only the new tokens
    # torchtune put the alpaca prompt inside the chat template: its BOS, and no second one
    assert "--alpaca-in-chat-template" in post.cmd
    assert all("bos=1" in g["completion"] for g in generations)


@pytest.mark.parametrize(("preset_id", "data_format", "wrapped"), [
    ("axolotl-lora", "alpaca", False), ("unsloth-lora", "alpaca", False), ("torchtune-lora", "alpaca", True),
    ("axolotl-lora", "chat", False), ("axolotl-lora", "completion", False),
])
def test_generation_encodes_one_bos(make_trainer, tmp_path, preset_id, data_format, wrapped):
    """Plain text gets the tokenizer's BOS; a rendered chat template is not given a second one."""
    trainer = make_trainer(preset_id, data_format=data_format)
    run_dir = tmp_path / "run"
    dataset = tmp_path / f"{data_format}.jsonl"
    row = {"alpaca": {"instruction": "i", "output": "o"}, "chat": {"messages": []},
           "completion": {"text": "t"}}[data_format]
    dataset.write_text((json.dumps(row) + "\n") * 20)
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    spec = trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=config, dataset=dataset, max_steps=10, seed=3))
    (spec.output_dir / "adapter_config.json").parent.mkdir(parents=True, exist_ok=True)
    (spec.output_dir / "adapter_config.json").write_text("{}")
    (post,) = trainer.post_run_commands(run_dir=run_dir, launch=spec, sample_prompts=PROMPTS[:1])
    assert ("--alpaca-in-chat-template" in post.cmd) is wrapped
    result = subprocess.run([sys.executable, *post.cmd[1:]], cwd=post.cwd, env=fake_module_env(),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    (generation,) = json.loads((spec.sample_dir / "generations.json").read_text())
    assert "bos=1" in generation["completion"]


ALPACA_HI = ("Below is an instruction that describes a task. Write a response that appropriately completes "
             "the request.\n\n### Instruction:\nHi\n\n### Response:\n")


def test_prompt_layouts():
    class Tokenizer:
        def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
            return f"<u>{messages[0]['content']}<a>" if add_generation_prompt else "?"

    assert llm_generate.format_prompt("Hi", "alpaca", None) == (ALPACA_HI, True)
    assert llm_generate.format_prompt("Hi", "alpaca", Tokenizer(), alpaca_in_chat_template=True) == (
        f"<u>{ALPACA_HI}<a>", False)
    assert llm_generate.format_prompt("Hi", "chat", Tokenizer()) == ("<u>Hi<a>", False)
    assert llm_generate.format_prompt("Hi", "sharegpt", Tokenizer(), alpaca_in_chat_template=True) == (
        "<u>Hi<a>", False)
    assert llm_generate.format_prompt("Once", "completion", None) == ("Once", True)
    with_input = llm_generate.alpaca_prompt("Add.", "2 and 3")
    assert with_input.startswith("Below is an instruction that describes a task, paired with an input")
    assert with_input.endswith("### Instruction:\nAdd.\n\n### Input:\n2 and 3\n\n### Response:\n")


def test_missing_adapter_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        llm_generate.find_adapter_dir(tmp_path)


@pytest.mark.parametrize("data_format", ["alpaca", "chat"])
def test_heldout_rows_are_answered_in_their_training_layout(make_trainer, tmp_path, data_format):
    """The session's held-out prompts go to the same generation step; answers keep their references."""
    from bracket.judge.references import ANSWERS_FILE, PROMPTS_FILE, write_heldout_prompts

    trainer = make_trainer("axolotl-lora", data_format=data_format)
    dataset = tmp_path / f"{data_format}.jsonl"
    rows = [{"instruction": f"Add {n} and 1.", "input": "digits" if n % 2 else "", "output": str(n + 1)}
            if data_format == "alpaca" else
            {"messages": [{"role": "user", "content": f"Add {n} and 1."}, {"role": "assistant", "content": str(n + 1)}]}
            for n in range(20)]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_dir = tmp_path / "run"
    knobs = trainer.config_from_dict(trainer.baseline_config().knobs)
    spec = trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=knobs, dataset=dataset, max_steps=10, seed=3))
    (post,) = trainer.post_run_commands(run_dir=run_dir, launch=spec, sample_prompts=PROMPTS[:1])
    assert "--heldout" not in post.cmd  # no held-out prompts written: samples only
    assert write_heldout_prompts(trainer.eval_split_file(run_dir), data_format, run_dir) == run_dir / PROMPTS_FILE
    (post,) = trainer.post_run_commands(run_dir=run_dir, launch=spec, sample_prompts=PROMPTS[:1])
    args = llm_generate.parse_args(post.cmd[2:])
    assert args.heldout == run_dir / PROMPTS_FILE and args.heldout_output == spec.sample_dir / ANSWERS_FILE
    spec.output_dir.mkdir(parents=True, exist_ok=True)
    (spec.output_dir / "adapter_config.json").write_text("{}")
    result = subprocess.run([sys.executable, *post.cmd[1:]], cwd=post.cwd, env=fake_module_env(FAKE_LLM_ANSWERS="sum"),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    answers = json.loads((spec.sample_dir / ANSWERS_FILE).read_text())
    held = [json.loads(line) for line in trainer.eval_split_file(run_dir).read_text().splitlines()]
    assert len(answers) == len(held) == 4
    expected = [r["output"] if data_format == "alpaca" else r["messages"][-1]["content"] for r in held]
    assert [a["reference"] for a in answers] == expected
    # the fake model answers "Add X and Y." one too high without a rank-16 adapter: it read the held-out prompt
    assert [int(a["completion"]) for a in answers] == [int(e) + 1 for e in expected]
    assert [a["seed"] for a in answers] == [7000, 7001, 7002, 7003]
    assert len(json.loads((spec.sample_dir / "generations.json").read_text())) == 1  # samples unchanged


def test_heldout_prompt_layouts():
    class Tokenizer:
        def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
            return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    text, _ = llm_generate.format_prompt("Add.", "alpaca", None, input_text="2 and 3")
    assert text == llm_generate.alpaca_prompt("Add.", "2 and 3")
    history = [{"role": "system", "content": "brief"}, {"role": "user", "content": "hi"}]
    assert llm_generate.format_prompt("hi", "chat", Tokenizer(), messages=history) == (
        "<system>brief<user>hi<assistant>", False)


@pytest.mark.parametrize("preset_id", ["axolotl-lora", "unsloth-lora"])
def test_rung_command_generates_from_the_paused_checkpoint(make_trainer, tmp_path, monkeypatch, preset_id):
    """At a rung the generation step loads the adapter of ``checkpoint-<step>`` (which holds its
    ``adapter_config.json``, as the HF Trainer saves it), not the output folder's, and writes the
    generations and held-out answers into the folder it is given."""
    monkeypatch.syspath_prepend(str(FAKES))
    import hf_checkpoints

    trainer = make_trainer(preset_id)
    run_dir, rung_dir = tmp_path / "run", tmp_path / "run" / "rungs" / "step-4"
    spec = trainer.prepare_run(RunRequest(run_dir=run_dir,
                                          knobs=trainer.config_from_dict(trainer.baseline_config().knobs),
                                          dataset=trainer.dataset_source(None), max_steps=10, seed=3))
    heldout = [{"prompt_index": 0, "prompt": "Add 1 and 2.", "seed": 7000, "reference": "3"}]
    (run_dir / "heldout_prompts.json").write_text(json.dumps(heldout))
    ask = {"run_dir": run_dir, "output_dir": spec.output_dir, "step": 4, "sample_dir": rung_dir}
    assert trainer.rung_commands(**ask, sample_prompts=PROMPTS) == []  # no checkpoint of step 4 yet
    hf_checkpoints.save_checkpoint(spec.output_dir, 4)
    (spec.output_dir / "adapter_config.json").write_text("{}")  # a later launch's final adapter
    assert trainer.rung_commands(**ask, sample_prompts=None) == []
    (post,) = trainer.rung_commands(**ask, sample_prompts=PROMPTS[:1])
    args = llm_generate.parse_args(post.cmd[2:])
    assert args.adapter == spec.output_dir / "checkpoint-4" and post.label == "generate answers at step 4"
    assert (args.output, args.heldout_output) == (rung_dir / "generations.json", rung_dir / "heldout_answers.json")
    result = subprocess.run([sys.executable, *post.cmd[1:]], cwd=post.cwd, env=fake_module_env(),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    for name in ("generations.json", "heldout_answers.json"):
        assert "adapter=checkpoint-4" in json.loads((rung_dir / name).read_text())[0]["completion"]


def test_torchtune_makes_no_answers_at_a_rung(make_trainer, tmp_path):
    trainer = make_trainer("torchtune-lora")  # it never pauses: a promoted config trains again from 0
    (tmp_path / "out" / "epoch_0").mkdir(parents=True)
    (tmp_path / "out" / "epoch_0" / "adapter_config.json").write_text("{}")
    assert trainer.rung_commands(run_dir=tmp_path, output_dir=tmp_path / "out", step=4, sample_dir=tmp_path / "r",
                                 sample_prompts=PROMPTS) == []
