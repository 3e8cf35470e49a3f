"""Post-run generation for LLM trials: base model + the run's LoRA adapter, fixed prompts, fixed seeds.

Run in the *trainer's* virtualenv (torch, transformers, peft; never ``bracket``) after a run
finished, or paused at a rung (``--adapter`` its ``checkpoint-<step>``, output in the rung's folder)::

    python llm_generate.py --base-model M --adapter OUTPUT_DIR --prompts prompts.json \
        --output OUTPUT_DIR/sample/generations.json --format alpaca --max-new-tokens 200

``--prompts`` is a JSON list of ``{"prompt_index": int, "prompt": str, "seed": int}``.
The output (shown side by side in Compare) is a JSON list, one entry per prompt, in order::

    [{"prompt_index": 0, "prompt": "...", "seed": 1000, "completion": "..."}, ...]

``--heldout FILE --heldout-output FILE`` answers the session's held-out rows in the same
model load (for the task and LLM judges); their ``input``, ``messages`` and ``reference`` are
copied to the output beside ``completion``.

Every run generates the same prompts with the same seeds. ``--adapter`` may be a folder with
``adapter_config.json`` or a folder whose subfolders hold one (torchtune's ``epoch_N``):
the highest-numbered such subfolder is used.

The prompt is laid out the way the trainer laid out its training rows (``--format``):

* ``alpaca``: the alpaca preamble and ``### Instruction:``/``### Response:`` layout, as
  Axolotl's ``type: alpaca`` prompter, torchtune's ``alpaca_dataset`` and the Unsloth
  driver (which formats rows with :func:`alpaca_prompt`) write it; with
  ``--alpaca-in-chat-template`` (torchtune, whose tokenizer renders every message through
  the model's chat format) that text is the user turn of the tokenizer's chat template;
* ``chat``/``sharegpt``: the tokenizer's chat template with the generation prompt;
* ``completion``: the raw text.

A rendered chat template (which writes the BOS itself) is encoded with
``add_special_tokens=False``; plain text with the tokenizer's special tokens, as the trainers did.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

#: the alpaca layout (Axolotl's AlpacaPrompter and torchtune's AlpacaToMessages write the same text)
ALPACA_WITH_INPUT = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"
)
ALPACA_NO_INPUT = (
    "Below is an instruction that describes a task. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Response:\n"
)
SAMPLING = {"do_sample": True, "temperature": 0.7, "top_p": 0.9}


def alpaca_prompt(instruction: str, input_text: str = "") -> str:
    """The alpaca-format prompt (everything before the response)."""
    if input_text:
        return ALPACA_WITH_INPUT.format(instruction=instruction, input=input_text)
    return ALPACA_NO_INPUT.format(instruction=instruction)


def chat_prompt(text: str, tokenizer: Any, messages: list[dict[str, str]] | None = None) -> str:
    """``text`` as the user turn (or ``messages`` as the conversation) of the tokenizer's chat
    template, ready for the answer."""
    return tokenizer.apply_chat_template(
        messages or [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )


def format_prompt(text: str, dataset_format: str, tokenizer: Any, *, alpaca_in_chat_template: bool = False,
                  input_text: str = "", messages: list[dict[str, str]] | None = None) -> tuple[str, bool]:
    """``(prompt, add_special_tokens)``: ``text`` in the layout the adapter was trained on,
    and whether encoding it should add the tokenizer's special tokens (not after a chat
    template, which wrote them already)."""
    if dataset_format == "alpaca":
        if alpaca_in_chat_template:
            return chat_prompt(alpaca_prompt(text, input_text), tokenizer), False
        return alpaca_prompt(text, input_text), True
    if dataset_format in ("chat", "sharegpt"):
        return chat_prompt(text, tokenizer, messages), False
    return text, True


def find_adapter_dir(path: Path) -> Path:
    """``path`` if it holds ``adapter_config.json``, else its last numbered subfolder that does."""
    if (path / "adapter_config.json").is_file():
        return path
    candidates = [p.parent for p in path.glob("*/adapter_config.json")]
    if not candidates:
        raise FileNotFoundError(f"No LoRA adapter (adapter_config.json) in {path} or its subfolders.")

    def number(folder: Path) -> int:
        found = re.findall(r"\d+", folder.name)
        return int(found[-1]) if found else -1

    return max(candidates, key=lambda p: (number(p), p.name))


def read_prompts(path: Path) -> list[dict[str, Any]]:
    entries = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(entries, list):
        raise ValueError(f"{path} must hold a JSON list of prompts.")
    return [{"prompt_index": int(e["prompt_index"]), "prompt": str(e["prompt"]), "seed": int(e["seed"]),
             **{k: e[k] for k in ("input", "messages", "reference") if k in e}}
            for e in entries]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Generate completions with a base model plus a LoRA adapter.")
    parser.add_argument("--base-model", required=True, help="hub id or local folder of the base model")
    parser.add_argument("--adapter", required=True, type=Path, help="folder of the trained adapter")
    parser.add_argument("--prompts", required=True, type=Path, help="JSON list of {prompt_index, prompt, seed}")
    parser.add_argument("--output", required=True, type=Path, help="where generations.json is written")
    parser.add_argument("--format", default="alpaca", choices=("alpaca", "chat", "sharegpt", "completion"))
    parser.add_argument("--alpaca-in-chat-template", action="store_true",
                        help="alpaca prompts go inside the chat template (torchtune's tokenizers do this)")
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument("--heldout", type=Path, help="JSON list of held-out {prompt_index, prompt, seed, ...}")
    parser.add_argument("--heldout-output", type=Path, help="where the held-out answers are written")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    prompts = read_prompts(args.prompts)
    adapter = find_adapter_dir(args.adapter)
    # Run as a script, this folder is first on sys.path; keep Bracket's modules there
    # (torchtune.py, unsloth.py, ...) from shadowing the trainer venv's packages.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(args.base_model)
    model = AutoModelForCausalLM.from_pretrained(args.base_model, dtype=dtype)
    model = PeftModel.from_pretrained(model, str(adapter))
    model.to(device)
    model.eval()
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def answer(entry: dict[str, Any]) -> dict[str, Any]:
        text, special = format_prompt(entry["prompt"], args.format, tokenizer,
                                      alpaca_in_chat_template=args.alpaca_in_chat_template,
                                      input_text=entry.get("input", ""), messages=entry.get("messages"))
        inputs = tokenizer(text, return_tensors="pt", add_special_tokens=special).to(device)
        set_seed(entry["seed"])
        with torch.no_grad():
            output = model.generate(**inputs, max_new_tokens=args.max_new_tokens, pad_token_id=pad_id, **SAMPLING)
        new_tokens = output[0][inputs["input_ids"].shape[1]:]
        completion = tokenizer.decode(new_tokens, skip_special_tokens=True)
        print(f"prompt {entry['prompt_index']}: {len(completion)} characters", flush=True)
        return {**entry, "completion": completion}

    jobs = [(prompts, args.output)]
    if args.heldout and args.heldout_output:
        jobs.append((read_prompts(args.heldout), args.heldout_output))
    for entries, output_path in jobs:
        results = [answer(entry) for entry in entries]
        output_path.parent.mkdir(parents=True, exist_ok=True)
        output_path.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
