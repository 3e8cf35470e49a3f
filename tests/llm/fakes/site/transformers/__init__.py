"""Fake ``transformers``: TrainerCallback for the driver; tokenizer, model, set_seed for generation.

The fake tokenizer maps characters to code points and writes ``^`` as its BOS token (as
special token on encoding, and at the start of its chat template); the fake model's
``generate`` appends text naming the torch seed, the adapter it runs and how many BOS
tokens its input held, so the tests can see all three.

With ``FAKE_LLM_ANSWERS=sum`` it answers an alpaca ``Add X and Y.`` instruction instead, as a
fine-tune of varying skill would: the right sum when the adapter's rank (``r`` in its
``adapter_config.json``) is at least 16, one too many below that (the task judges' tests).
"""

import json
import os
import re

import torch

__version__ = os.environ.get("FAKE_TRANSFORMERS_VERSION", "5.5.0")


class TrainerCallback:
    pass


def set_seed(seed):
    torch.manual_seed(seed)


class _Encoding(dict):
    def to(self, device):
        return self


BOS = "^"


class AutoTokenizer:
    pad_token_id = None
    eos_token_id = 0
    bos_token = BOS

    @classmethod
    def from_pretrained(cls, name):
        tokenizer = cls()
        tokenizer.name = name
        return tokenizer

    def __call__(self, text, return_tensors="pt", add_special_tokens=True):
        text = (BOS if add_special_tokens else "") + text
        return _Encoding(input_ids=torch.tensor([[ord(c) for c in text]]))

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids)

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        text = BOS + "".join(f"<|{m['role']}|>{m['content']}" for m in messages)
        return text + ("<|assistant|>" if add_generation_prompt else "")


class AutoModelForCausalLM:
    @classmethod
    def from_pretrained(cls, name, dtype=None):  # no torch_dtype: deprecated in transformers 5
        model = cls()
        model.name, model.adapter = name, None
        return model

    def to(self, device):
        return self

    def eval(self):
        return self

    def generate(self, input_ids, max_new_tokens, pad_token_id, do_sample, temperature, top_p, **kwargs):
        if os.environ.get("FAKE_LLM_ANSWERS") == "sum":
            found = re.findall(r"Add (\d+) and (\d+)\.", "".join(chr(int(i)) for i in input_ids[0]))
            if found:
                config = os.path.join(self.adapter, "adapter_config.json")
                rank = json.load(open(config)).get("r", 0) if os.path.isfile(config) else 0
                total = int(found[-1][0]) + int(found[-1][1]) + (0 if rank >= 16 else 1)
                new = torch.tensor([[ord(c) for c in str(total)]])
                return torch.cat([input_ids, new], dim=1)
        bos = int((input_ids == ord(BOS)).sum())
        adapter = os.path.basename(self.adapter)
        text = f" seed={torch.initial_seed()} adapter={adapter} base={self.name} bos={bos}"
        new = torch.tensor([[ord(c) for c in text[:max_new_tokens]]])
        return torch.cat([input_ids, new], dim=1)
