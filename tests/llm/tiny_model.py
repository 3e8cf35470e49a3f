"""A tiny, randomly initialised Llama model and its tokenizer, built locally (no downloads).

The real-trainer tests (and the LLM judge tests built on them) train on this model: a
byte-level BPE tokenizer trained on a few strings, saved as a ``PreTrainedTokenizerFast``
with a ChatML chat template, and a 2-layer Llama with hidden size 32. The folder is what a
Hugging Face model folder holds (``config.json``, ``model.safetensors``,
``tokenizer.json``, ``tokenizer_config.json``) plus ``vocab.json``/``merges.txt`` for
torchtune's Qwen2.5-style tokenizer (its ``special_tokens_path`` reads ``tokenizer.json``).

The tokenizer adds a BOS token (``<s>``) to plain text, and the chat template starts with
``{{ bos_token }}``, as Llama 3's does: tokenising a rendered chat template again with
special tokens would double the BOS.

Building needs ``torch``, ``transformers``, ``tokenizers`` and ``safetensors``, which only
the trainer virtualenvs have, so this file is a script run with a trainer venv's python::

    vendor/axolotl/.venv/bin/python tests/llm/tiny_model.py OUT_FOLDER

:func:`build_tiny_model` runs it; the session-scoped ``tiny_llm`` fixture of
``tests/llm/conftest.py`` calls it once per pytest run, into that run's temporary folder
(never the repository). Tests in other folders get the fixture with
``from tests.llm.conftest import tiny_llm  # noqa: F401`` in their own conftest.
:func:`torchtune_config` writes the matching torchtune recipe config.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BOS, EOS, PAD = "<s>", "<|endoftext|>", "<pad>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
#: torchtune's Qwen2.5 tokenizer looks up all of these (tool-call markers included)
SPECIAL_TOKENS = (EOS, IM_START, IM_END, BOS, PAD, "<tool_call>", "</tool_call>")
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: the words the tokenizer learns merges from: alpaca layout, arithmetic rows, chat roles
CORPUS = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.",
    "### Instruction:\n### Input:\n### Response:\n",
    "user assistant system",
    *(f"Add {n} and {n + 1}. show work {2 * n + 1}" for n in range(60)),
    "Name a colour. red green blue. Count to three. one two three.",
)
HIDDEN, LAYERS, HEADS, KV_HEADS, INTERMEDIATE = 32, 2, 4, 2, 64
MAX_POSITIONS = 512
#: the torchtune model builder whose shapes match this model (see :func:`torchtune_model_words`)
TORCHTUNE_ROPE_BASE = 10000.0


def _build(out: Path) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(CORPUS, trainer=trainer)
    bos_id = bpe.token_to_id(BOS)
    bpe.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        additional_special_tokens=[IM_START, IM_END, "<tool_call>", "</tool_call>"],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    bpe.model.save(str(out))  # vocab.json + merges.txt for torchtune's BPE tokenizer

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=HIDDEN, intermediate_size=INTERMEDIATE,
        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
        max_position_embeddings=MAX_POSITIONS, rope_theta=TORCHTUNE_ROPE_BASE, tie_word_embeddings=False,
        bos_token_id=bos_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out, safe_serialization=True)
    (out / "tiny_model.json").write_text(json.dumps({"vocab_size": len(tokenizer), "bos_id": bos_id}),
                                         encoding="utf-8")


def build_tiny_model(python: str | Path, out: Path, timeout: float = 600) -> Path:
    """Build the model into ``out`` with ``python`` (a trainer venv's); skip when already there."""
    out = Path(out)
    if (out / "tiny_model.json").is_file():
        return out
    subprocess.run([str(python), str(Path(__file__).resolve()), str(out)], check=True, timeout=timeout)
    return out


def vocab_size(folder: Path) -> int:
    return int(json.loads((Path(folder) / "tiny_model.json").read_text(encoding="utf-8"))["vocab_size"])


def torchtune_config(folder: Path, path: Path) -> Path:
    """A torchtune recipe config (YAML) for the tiny model: the shapes of :func:`_build`,
    torchtune's Qwen2.5 BPE tokenizer over ``vocab.json``/``merges.txt`` with the special
    tokens of ``tokenizer.json``, the HF checkpointer; everything else Bracket overrides."""
    folder = Path(folder)
    text = f"""\
output_dir: {folder}/torchtune-out
model:
  _component_: torchtune.models.llama3.lora_llama3
  vocab_size: {vocab_size(folder)}
  num_layers: {LAYERS}
  num_heads: {HEADS}
  num_kv_heads: {KV_HEADS}
  embed_dim: {HIDDEN}
  max_seq_len: {MAX_POSITIONS}
  intermediate_dim: {INTERMEDIATE}
  rope_base: {TORCHTUNE_ROPE_BASE}
  lora_attn_modules: [q_proj, v_proj, output_proj]
  apply_lora_to_mlp: True
  apply_lora_to_output: False
  lora_rank: 8
  lora_alpha: 16
  lora_dropout: 0.0
tokenizer:
  _component_: torchtune.models.qwen2_5.qwen2_5_tokenizer
  path: {folder}/vocab.json
  merges_file: {folder}/merges.txt
  special_tokens_path: {folder}/tokenizer.json
  max_seq_len: 128
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: {folder}
  checkpoint_files: [model.safetensors]
  recipe_checkpoint: null
  output_dir: ${{output_dir}}
  model_type: LLAMA3
resume_from_checkpoint: False
save_adapter_weights_only: True
dataset:
  _component_: torchtune.datasets.alpaca_dataset
  packed: False
seed: 0
shuffle: True
batch_size: 2
optimizer:
  _component_: torch.optim.AdamW
  fused: False
  weight_decay: 0.01
  lr: 3e-4
lr_scheduler:
  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup
  num_warmup_steps: 0
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
epochs: 1
max_steps_per_epoch: null
gradient_accumulation_steps: 1
clip_grad_norm: null
compile: False
metric_logger:
  _component_: torchtune.training.metric_logging.DiskLogger
  log_dir: ${{output_dir}}/logs
log_every_n_steps: 1
log_peak_memory_stats: False
device: cpu
dtype: fp32
enable_activation_checkpointing: False
enable_activation_offloading: False
profiler:
  _component_: torchtune.training.setup_torch_profiler
  enabled: False
"""
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)


if __name__ == "__main__":
    _build(Path(sys.argv[1]))
