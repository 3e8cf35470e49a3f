"""Tiny random judge models built in a test: a few-layer CLIP (with a local byte-level tokenizer and
an image processor) and a DINOv2, saved with ``save_pretrained`` to a folder, so the image judges'
real loading and forward code runs on them exactly as on a user's weights. No download."""

from __future__ import annotations

import json
from pathlib import Path


def _byte_vocab() -> dict[str, int]:
    """A CLIP BPE vocabulary of single bytes (each also as a word end), without merges."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    # byte-level BPE shows every byte as a printable character: the printable ones as themselves,
    # the rest as the characters from 256 on
    chars = [chr(b) for b in printable] + [chr(256 + n) for n in range(256 - len(printable))]
    tokens = chars + [c + "</w>" for c in chars] + ["<|startoftext|>", "<|endoftext|>"]
    return {token: index for index, token in enumerate(tokens)}


def tiny_clip(folder: Path, *, seed: int = 0) -> Path:
    """A 2-layer CLIP (32-pixel images, 16-dim embeddings) with its processor, saved to ``folder``."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = _byte_vocab()
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    images = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)
    torch.manual_seed(seed)
    config = CLIPConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 77,
                     "bos_token_id": vocab["<|startoftext|>"], "eos_token_id": vocab["<|endoftext|>"],
                     "pad_token_id": vocab["<|endoftext|>"]},
        vision_config={"image_size": 32, "patch_size": 8, "hidden_size": 32, "intermediate_size": 37,
                       "num_hidden_layers": 2, "num_attention_heads": 2},
        projection_dim=16)
    CLIPModel(config).save_pretrained(folder)
    return folder


def tiny_dinov2(folder: Path, *, seed: int = 0) -> Path:
    """A 2-layer DINOv2 (32-pixel images) with its image processor, saved to ``folder``."""
    import torch
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    Dinov2Model(Dinov2Config(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                             mlp_ratio=2)).save_pretrained(folder)
    BitImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}, do_center_crop=True,
                      image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225]).save_pretrained(folder)
    return folder


def _sentencepiece_model(folder: Path) -> Path:
    """A tiny SentencePiece model trained here on a few lines (SigLIP's tokenizer reads one)."""
    import sentencepiece

    text = folder / "corpus.txt"
    text.write_text("\n".join(["zqx in the snow", "zqx, a watercolor", "zqx underwater", "a photo of zqx",
                               "Good photo.", "Bad photo.", "a cat on a sofa", "the quick brown fox"] * 4),
                    encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(input=str(text), model_prefix=str(folder / "spiece"), vocab_size=32,
                                             model_type="unigram", character_coverage=1.0, pad_id=0, eos_id=1,
                                             unk_id=2, bos_id=-1, minloglevel=2)
    text.unlink()
    (folder / "spiece.vocab").unlink()
    return folder / "spiece.model"


def tiny_siglip(folder: Path, *, seed: int = 0) -> Path:
    """A 2-layer SigLIP (32-pixel images, 32-dim embeddings) with its SentencePiece tokenizer and image
    processor, saved to ``folder`` as google/siglip-* checkpoints are laid out."""
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor, SiglipTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = SiglipTokenizer(str(_sentencepiece_model(folder)), model_max_length=16)
    images = SiglipImageProcessor(size={"height": 32, "width": 32})
    SiglipProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)
    torch.manual_seed(seed)
    config = SiglipConfig(
        text_config={"vocab_size": 32, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 16, "pad_token_id": 0, "eos_token_id": 1},
        vision_config={"image_size": 32, "patch_size": 8, "hidden_size": 32, "intermediate_size": 37,
                       "num_hidden_layers": 2, "num_attention_heads": 2})
    SiglipModel(config).save_pretrained(folder)
    return folder
