"""Preset table of the ostris/ai-toolkit family: one row per model family (LoRA).

Model fields take a local model folder/file or a Hugging Face id already in the cache (runs are
offline: ``HF_HUB_OFFLINE=1``); their defaults are the ids ai-toolkit's examples use, from
``BRACKET_AITK_*_MODEL`` when set.
"""

from __future__ import annotations

from bracket import settings
from bracket.fields import FieldSpec
from bracket.trainer.ai_toolkit.chroma import ChromaLoRA
from bracket.trainer.ai_toolkit.flux1 import Flux1DevLoRA
from bracket.trainer.ai_toolkit.hidream import HiDreamLoRA
from bracket.trainer.ai_toolkit.ltx2 import Ltx2LoRA
from bracket.trainer.ai_toolkit.omnigen2 import OmniGen2LoRA
from bracket.trainer.ai_toolkit.qwen_image import QwenImageLoRA
from bracket.trainer.ai_toolkit.sdxl import SdxlLoRA
from bracket.trainer.ai_toolkit.wan22 import Wan22FiveBLoRA
from bracket.trainer.preset import ModelPreset
from bracket.trainer.vram import VRAM_TIER_FIELD

AI_TOOLKIT_DIR_FIELD = FieldSpec(
    "ai_toolkit_dir", "ai-toolkit folder", "dir", executable=True,
    default=lambda: str(settings.get_settings().ai_toolkit_dir), required=True,
    help="Checkout of ostris/ai-toolkit (vendor/ai-toolkit after ./install.sh).",
    env_var="BRACKET_AI_TOOLKIT_DIR",
)
AI_TOOLKIT_PYTHON_FIELD = FieldSpec(
    "trainer_python", "Trainer python", "file", executable=True,
    default=lambda: str(settings.get_settings().ai_toolkit_python), required=True,
    help="The python of the ai-toolkit virtualenv (./install.sh --trainers creates it).",
    env_var="BRACKET_AI_TOOLKIT_PYTHON",
)
DATASET = FieldSpec(
    "dataset", "Dataset (folder)", "path", required=True, env_var="BRACKET_DATASET",
    help="A folder of images (or videos) with .txt captions of the same name, as ai-toolkit reads them; "
    "a musubi-style dataset TOML with image_directory/video_directory folders works too.",
)
MODEL_HELP = ("A local model folder or file, or a Hugging Face id already downloaded: Bracket never downloads "
              "during a search (runs are offline).")


def model(label: str, env: str, default: str) -> FieldSpec:
    return FieldSpec("model", label, "text", default=default, required=True, env_var=env, help=MODEL_HELP)


def resolution(default: int) -> FieldSpec:
    return FieldSpec("resolution", "Training resolution", "int", default=str(default), minimum=64, maximum=4096,
                     help="Square training resolution (pixels; ai-toolkit buckets other aspect ratios).")


FRAMES = FieldSpec("frames", "Frames per clip", "int", default="", minimum=1, maximum=257,
                   help="Frames per training clip and sample (empty: 33 for Wan, 41 for LTX-2).")
LLAMA = FieldSpec("llama_model", "Llama 3.1 text encoder", "text", default="unsloth/Meta-Llama-3.1-8B-Instruct",
                  required=True, env_var="BRACKET_AITK_HIDREAM_LLAMA", help=MODEL_HELP)
COMMON = (AI_TOOLKIT_DIR_FIELD, AI_TOOLKIT_PYTHON_FIELD, DATASET, VRAM_TIER_FIELD)
SCRIPT = "run.py (ai-toolkit job file)"


def row(preset_id: str, family: str, display: str, adapter, fields: tuple, notes: str) -> ModelPreset:
    return ModelPreset(preset_id, family, "LoRA", display, adapter, (*COMMON, *fields), notes=notes,
                       trainer_script=SCRIPT)


PRESETS = (
    row("aitk-flux1-dev-lora", "FLUX.1", "FLUX.1-dev LoRA (ai-toolkit)", Flux1DevLoRA,
        (model("FLUX.1-dev model", "BRACKET_AITK_FLUX1_MODEL", "black-forest-labs/FLUX.1-dev"), resolution(1024)),
        "8-bit quantized transformer up to 48 GB, as ai-toolkit's 24 GB example."),
    row("aitk-sdxl-lora", "SDXL", "SDXL LoRA (ai-toolkit)", SdxlLoRA,
        (model("SDXL model", "BRACKET_AITK_SDXL_MODEL", "stabilityai/stable-diffusion-xl-base-1.0"), resolution(1024)),
        "DDPM noise; no timestep type."),
    row("aitk-qwen-image-lora", "Qwen-Image", "Qwen-Image LoRA (ai-toolkit)", QwenImageLoRA,
        (model("Qwen-Image model", "BRACKET_AITK_QWEN_IMAGE_MODEL", "Qwen/Qwen-Image"), resolution(1024)),
        "Text embeddings cached; qfloat8 quantization (a 20B model: 32 GB and up is comfortable)."),
    row("aitk-chroma-lora", "Chroma", "Chroma LoRA (ai-toolkit)", ChromaLoRA,
        (model("Chroma model", "BRACKET_AITK_CHROMA_MODEL", "lodestones/Chroma"), resolution(1024)),
        "A model kohya's pinned trainers have no script for."),
    row("aitk-hidream-i1-lora", "HiDream-I1", "HiDream-I1 LoRA (ai-toolkit)", HiDreamLoRA,
        (model("HiDream-I1 model", "BRACKET_AITK_HIDREAM_MODEL", "HiDream-ai/HiDream-I1-Full"), LLAMA,
         resolution(1024)),
        "Needs 48 GB (the example's tier); the Llama 3.1 8B text encoder is a second model."),
    row("aitk-omnigen2-lora", "OmniGen2", "OmniGen2 LoRA (ai-toolkit)", OmniGen2LoRA,
        (model("OmniGen2 model", "BRACKET_AITK_OMNIGEN2_MODEL", "OmniGen2/OmniGen2"), resolution(1024)),
        "Text encoder quantized, as ai-toolkit's example."),
    row("aitk-wan22-5b-lora", "Wan 2.2", "Wan 2.2 TI2V-5B LoRA (ai-toolkit)", Wan22FiveBLoRA,
        (model("Wan 2.2 TI2V-5B model", "BRACKET_AITK_WAN22_5B_MODEL", "Wan-AI/Wan2.2-TI2V-5B-Diffusers"),
         resolution(512), FRAMES),
        "Video: short clips (33 frames, 24 fps) for a search; samples are animated WebP."),
    row("aitk-ltx2-lora", "LTX-2", "LTX-2 video LoRA (ai-toolkit)", Ltx2LoRA,
        (model("LTX-2 model", "BRACKET_AITK_LTX2_MODEL", "Lightricks/LTX-2"), resolution(512), FRAMES),
        "Video without audio (41 frames, 24 fps); needs 48 GB with quantization; samples are animated WebP."),
)
