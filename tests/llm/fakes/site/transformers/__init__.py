"""Fake ``transformers``: TrainerCallback for the driver; tokenizer, model, set_seed for generation.

The fake tokenizer maps characters to code points; the fake model's ``generate`` appends
text naming the torch seed and the adapter it runs, so the tests can see both.
"""

import os

import torch

__version__ = os.environ.get("FAKE_TRANSFORMERS_VERSION", "5.5.0")


class TrainerCallback:
    pass


def set_seed(seed):
    torch.manual_seed(seed)


class _Encoding(dict):
    def to(self, device):
        return self


class AutoTokenizer:
    pad_token_id = None
    eos_token_id = 0

    @classmethod
    def from_pretrained(cls, name):
        tokenizer = cls()
        tokenizer.name = name
        return tokenizer

    def __call__(self, text, return_tensors="pt"):
        return _Encoding(input_ids=torch.tensor([[ord(c) for c in text]]))

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids)

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        text = "".join(f"<|{m['role']}|>{m['content']}" for m in messages)
        return text + ("<|assistant|>" if add_generation_prompt else "")


class AutoModelForCausalLM:
    @classmethod
    def from_pretrained(cls, name, torch_dtype=None):
        model = cls()
        model.name, model.adapter = name, None
        return model

    def to(self, device):
        return self

    def eval(self):
        return self

    def generate(self, input_ids, max_new_tokens, pad_token_id, do_sample, temperature, top_p, **kwargs):
        text = f" seed={torch.initial_seed()} adapter={os.path.basename(self.adapter)} base={self.name}"
        new = torch.tensor([[ord(c) for c in text[:max_new_tokens]]])
        return torch.cat([input_ids, new], dim=1)
