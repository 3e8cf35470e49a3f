"""Fake ``unsloth`` for the driver test: records calls, loads nothing, needs no GPU."""

import json
from pathlib import Path

CALLS: dict = {}


class FakeTokenizer:
    eos_token = "</s>"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        text = "".join(f"<|{m['role']}|>{m['content']}" for m in messages)
        return text + ("<|assistant|>" if add_generation_prompt else "")

    def save_pretrained(self, folder):
        Path(folder, "tokenizer_config.json").write_text("{}", encoding="utf-8")


class FakeModel:
    peft: dict = {}

    def save_pretrained(self, folder):
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, "adapter_config.json").write_text(json.dumps(self.peft), encoding="utf-8")


class FastLanguageModel:
    @staticmethod
    def from_pretrained(model_name, max_seq_length, load_in_4bit, dtype=None):
        CALLS["from_pretrained"] = {"model_name": model_name, "max_seq_length": max_seq_length,
                                    "load_in_4bit": load_in_4bit}
        return FakeModel(), FakeTokenizer()

    @staticmethod
    def get_peft_model(model, **kwargs):
        model.peft = kwargs
        return model


def is_bfloat16_supported():
    return False
