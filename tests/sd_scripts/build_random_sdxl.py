"""Build a randomly initialised SDXL checkpoint and offline CLIP tokenizers (run in the sd-scripts venv).

Usage: ``<sd-scripts venv python> build_random_sdxl.py OUT_DIR`` (working folder: the sd-scripts
checkout). Writes ``OUT_DIR/sdxl-random.ckpt`` and ``OUT_DIR/tokenizers/<hub id with / as _>``.

The checkpoint is full size on purpose: sd-scripts builds its SDXL U-Net from module constants
(``SdxlUNet2DConditionModel()`` takes no config) and its text encoders and VAE from fixed
configs in ``load_models_from_sdxl_checkpoint``, so a smaller model would not load. The
modules are sd-scripts' own (its U-Net class, the ``CLIPTextConfig``s and VAE config its loader
uses) and the file is written by its own ``save_stable_diffusion_checkpoint``, so loading it is
exactly what a real SDXL checkpoint goes through. Parameters are created in fp16 (half the
memory of an fp32 build) and saved as they are. The file is a ``.ckpt`` (the writer's
``torch.save`` branch, which streams each tensor to the file) rather than a ``.safetensors``
(whose ``save_file`` first copies every tensor to bytes: ~14 GB at peak instead of ~7 GB).

The tokenizers are byte-level CLIP BPE tokenizers without merges (every byte a token, plus
the two special tokens): tiny, offline, and accepted by ``CLIPTokenizer`` where sd-scripts
reads them with ``--tokenizer_cache_dir``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch
from diffusers import AutoencoderKL
from library import model_util, sdxl_model_util, sdxl_original_unet
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer
from transformers.models.clip.tokenization_clip import bytes_to_unicode

TOKENIZER_IDS = ("openai/clip-vit-large-patch14", "laion/CLIP-ViT-bigG-14-laion2B-39B-b160k")


def write_tokenizers(out: Path) -> None:
    folder = out / "tokenizer-source"
    folder.mkdir(parents=True, exist_ok=True)
    symbols = list(bytes_to_unicode().values())
    vocab = {token: n for n, token in enumerate(symbols + [s + "</w>" for s in symbols])}
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=77)
    for model_id in TOKENIZER_IDS:
        tokenizer.save_pretrained(str(out / "tokenizers" / model_id.replace("/", "_")))


def text_config(hidden: int, intermediate: int, layers: int, heads: int, act: str) -> CLIPTextConfig:
    # the configs of sdxl_model_util.load_models_from_sdxl_checkpoint
    return CLIPTextConfig(
        vocab_size=49408, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, max_position_embeddings=77, hidden_act=act, layer_norm_eps=1e-05,
        dropout=0.0, attention_dropout=0.0, initializer_range=0.02, initializer_factor=1.0, pad_token_id=1,
        bos_token_id=0, eos_token_id=2, model_type="clip_text_model", projection_dim=hidden,
    )


def write_checkpoint(out: Path) -> Path:
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float16)
    unet = sdxl_original_unet.SdxlUNet2DConditionModel()
    text1 = CLIPTextModel(text_config(768, 3072, 12, 12, "quick_gelu"))
    text2 = CLIPTextModelWithProjection(text_config(1280, 5120, 32, 20, "gelu"))
    vae = AutoencoderKL(**model_util.create_vae_diffusers_config())
    torch.set_default_dtype(torch.float32)
    path = out / "sdxl-random.ckpt"
    # save_dtype None: the weights are fp16 already, and a cast would copy all of them (twice the memory)
    sdxl_model_util.save_stable_diffusion_checkpoint(
        str(path), text1, text2, unet, 0, 0, None, vae, torch.tensor(4.6052, dtype=torch.float16), None,
        save_dtype=None)
    return path


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    write_tokenizers(out)
    path = write_checkpoint(out)
    print(f"wrote {path} ({path.stat().st_size / 1e9:.1f} GB) in {time.monotonic() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
