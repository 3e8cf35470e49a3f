"""Preset table of the kohya-ss sd-scripts family: SDXL, SD3.5, FLUX.1, Lumina-Image 2.0 and Anima
(LoRA and full FT) and HunyuanImage-2.1 (LoRA).

Model-weight fields take their defaults from ``BRACKET_*`` variables (see .env.example);
the sd-scripts folder and its python default to the ``vendor/`` copy.
"""

from dataclasses import replace

from bracket import settings
from bracket.fields import FieldSpec
from bracket.trainer.cache_key import CACHE_DIR_FIELD
from bracket.trainer.preset import DATASET_FIELD, ModelPreset
from bracket.trainer.sd_scripts.anima import AnimaFull, AnimaLoRA
from bracket.trainer.sd_scripts.flux1 import Flux1Full, Flux1LoRA
from bracket.trainer.sd_scripts.hunyuan_image import HunyuanImageLoRA
from bracket.trainer.sd_scripts.lumina import LuminaFull, LuminaLoRA
from bracket.trainer.sd_scripts.sd35 import Sd35Full, Sd35LoRA
from bracket.trainer.sd_scripts.sdxl import SdxlFull, SdxlLoRA
from bracket.trainer.vram import DEVICE_CHOICES, VRAM_TIER_FIELD

SD_SCRIPTS_DIR_FIELD = FieldSpec(
    "sd_scripts_dir", "sd-scripts folder", "dir", executable=True,
    default=lambda: str(settings.get_settings().sd_scripts_dir), required=True,
    help="Checkout of kohya-ss/sd-scripts (vendor/sd-scripts after ./install.sh).",
    env_var="BRACKET_SD_SCRIPTS_DIR",
)
SD_SCRIPTS_PYTHON_FIELD = FieldSpec(
    "trainer_python", "Trainer python", "file", executable=True,
    default=lambda: str(settings.get_settings().sd_scripts_python), required=True,
    help="The python of the sd-scripts virtualenv (./install.sh --trainers creates it).",
    env_var="BRACKET_SD_SCRIPTS_PYTHON",
)
RESOLUTION_FIELD = FieldSpec(
    "resolution", "Training resolution", "int", default="1024", minimum=64, maximum=8192,
    help="Square training resolution used when the dataset TOML does not set one.",
)

SDXL_MODEL_FIELD = FieldSpec(
    "model_path", "SDXL checkpoint", "path", required=True, env_var="BRACKET_SDXL_MODEL_PATH",
    help="SDXL base checkpoint (.safetensors) or a Diffusers folder.",
)
SDXL_VAE_FIELD = FieldSpec(
    "vae_path", "SDXL VAE (optional)", "file", env_var="BRACKET_SDXL_VAE_PATH",
    help="Replaces the checkpoint's VAE (e.g. the fp16-fix VAE); leave empty to keep it.",
)
SD35_MODEL_FIELD = FieldSpec(
    "model_path", "SD3.5 checkpoint", "file", required=True, env_var="BRACKET_SD35_MODEL_PATH",
    help="SD3.5 Large or Medium .safetensors.",
)
SD35_VARIANT_FIELD = FieldSpec(
    "sd35_variant", "SD3.5 variant", "choice", default="large", choices=("large", "medium"),
    help="Which SD3.5 the checkpoint is; sizes the memory-saving flags.",
)
CLIP_L_FIELD = FieldSpec(
    "clip_l_path", "CLIP-L text encoder", "file", env_var="BRACKET_CLIP_L_PATH",
    help="clip_l.safetensors (needed unless the checkpoint bundles it).",
)
CLIP_G_FIELD = FieldSpec(
    "clip_g_path", "CLIP-G text encoder", "file", env_var="BRACKET_CLIP_G_PATH",
    help="clip_g.safetensors (needed unless the checkpoint bundles it).",
)
T5XXL_FIELD = FieldSpec(
    "t5xxl_path", "T5-XXL text encoder", "file", env_var="BRACKET_T5XXL_PATH",
    help="t5xxl_fp16.safetensors (needed unless the checkpoint bundles it).",
)
FLUX1_MODEL_FIELD = FieldSpec(
    "model_path", "FLUX.1 DiT", "file", required=True, env_var="BRACKET_FLUX1_MODEL_PATH",
    help="flux1-dev.safetensors or flux1-schnell.safetensors.",
)
FLUX1_AE_FIELD = FieldSpec(
    "ae_path", "FLUX.1 autoencoder", "file", required=True, env_var="BRACKET_FLUX1_AE_PATH",
    help="ae.safetensors of FLUX.1.",
)
FLUX1_VARIANT_FIELD = FieldSpec(
    "flux1_variant", "FLUX.1 variant", "choice", default="dev", choices=("dev", "schnell"),
    help="dev or schnell; sets the sample steps (20 / 4).",
)
FLUX1_CLIP_L_FIELD = replace(CLIP_L_FIELD, required=True, help="clip_l.safetensors.")
FLUX1_T5XXL_FIELD = replace(T5XXL_FIELD, required=True, help="t5xxl_fp16.safetensors.")

LUMINA_MODEL_FIELD = FieldSpec(
    "model_path", "Lumina-Image 2.0 DiT", "file", required=True, env_var="BRACKET_LUMINA_MODEL_PATH",
    help="lumina-image-2.safetensors (or the bf16 repackaged lumina_2_model_bf16.safetensors).",
)
LUMINA_GEMMA2_FIELD = FieldSpec(
    "gemma2_path", "Gemma2 2B text encoder", "file", required=True, env_var="BRACKET_LUMINA_GEMMA2_PATH",
    help="gemma_2_2b_fp16.safetensors (--gemma2).",
)
LUMINA_AE_FIELD = FieldSpec(
    "ae_path", "Lumina autoencoder", "file", required=True, env_var="BRACKET_FLUX1_AE_PATH",
    help="ae.safetensors — the FLUX.1 autoencoder (--ae).",
)
ANIMA_MODEL_FIELD = FieldSpec(
    "model_path", "Anima DiT", "file", required=True, env_var="BRACKET_ANIMA_MODEL_PATH",
    help="The Anima DiT .safetensors (circlestone-labs/Anima split_files/diffusion_models).",
)
ANIMA_QWEN3_FIELD = FieldSpec(
    "qwen3_path", "Qwen3-0.6B text encoder", "path", required=True, env_var="BRACKET_ANIMA_QWEN3_PATH",
    help="Qwen3-0.6B: a .safetensors file or a Hugging Face model folder (--qwen3).",
)
ANIMA_VAE_FIELD = FieldSpec(
    "vae_path", "Qwen-Image VAE", "file", required=True, env_var="BRACKET_QWEN_IMAGE_VAE_PATH",
    help="The Qwen-Image VAE (.safetensors or .pth) that Anima uses (--vae).",
)
ANIMA_ADAPTER_FIELD = FieldSpec(
    "llm_adapter_path", "LLM adapter (optional)", "file", env_var="BRACKET_ANIMA_LLM_ADAPTER_PATH",
    help="Separate LLM adapter weights; empty = the adapter inside the DiT file.",
)
HUNYUAN_IMAGE_MODEL_FIELD = FieldSpec(
    "model_path", "HunyuanImage-2.1 DiT", "file", required=True, env_var="BRACKET_HUNYUAN_IMAGE_MODEL_PATH",
    help="hunyuanimage2.1.safetensors (tencent/HunyuanImage-2.1 dit/).",
)
HUNYUAN_IMAGE_TE_FIELD = FieldSpec(
    "text_encoder_path", "Qwen2.5-VL text encoder", "file", required=True,
    env_var="BRACKET_HUNYUAN_IMAGE_TEXT_ENCODER_PATH", help="qwen_2.5_vl_7b.safetensors, bf16 (--text_encoder).",
)
HUNYUAN_IMAGE_BYT5_FIELD = FieldSpec(
    "byt5_path", "byT5 text encoder", "file", required=True, env_var="BRACKET_HUNYUAN_IMAGE_BYT5_PATH",
    help="byt5_small_glyphxl_fp16.safetensors (--byt5).",
)
HUNYUAN_IMAGE_VAE_FIELD = FieldSpec(
    "vae_path", "HunyuanImage-2.1 VAE", "file", required=True, env_var="BRACKET_HUNYUAN_IMAGE_VAE_PATH",
    help="hunyuan_image_2.1_vae_fp16.safetensors (--vae).",
)

TOKENIZER_CACHE_FIELD = FieldSpec(
    "tokenizer_cache_dir", "Tokenizer folder (offline)", "text", env_var="BRACKET_TOKENIZER_CACHE_DIR",
    help="Passed as --tokenizer_cache_dir: sd-scripts reads the CLIP/T5 tokenizers from "
    "<folder>/<hub id with / as _> instead of the Hugging Face hub, and saves them there after one "
    "online run. Needed offline.",
)

SD_DEVICE_FIELD = FieldSpec(
    "device", "Device", "choice", default="auto", choices=DEVICE_CHOICES, env_var="BRACKET_SD_SCRIPTS_DEVICE",
    help="auto: the GPU when nvidia-smi is found, else the CPU. cpu trains in fp32 throughout "
    "(--mixed_precision no; no --full_bf16, fp8 or block swap): slow, meant for tests and checks.",
)

_COMMON = (SD_SCRIPTS_DIR_FIELD, SD_SCRIPTS_PYTHON_FIELD, DATASET_FIELD, RESOLUTION_FIELD, VRAM_TIER_FIELD,
           SD_DEVICE_FIELD, TOKENIZER_CACHE_FIELD, CACHE_DIR_FIELD)
SDXL_FIELDS = (SDXL_MODEL_FIELD, SDXL_VAE_FIELD, *_COMMON)
SD35_FIELDS = (SD35_MODEL_FIELD, SD35_VARIANT_FIELD, CLIP_L_FIELD, CLIP_G_FIELD, T5XXL_FIELD, *_COMMON)
FLUX1_FIELDS = (FLUX1_MODEL_FIELD, FLUX1_VARIANT_FIELD, FLUX1_CLIP_L_FIELD, FLUX1_T5XXL_FIELD, FLUX1_AE_FIELD, *_COMMON)
LUMINA_FIELDS = (LUMINA_MODEL_FIELD, LUMINA_GEMMA2_FIELD, LUMINA_AE_FIELD, *_COMMON)
ANIMA_FIELDS = (ANIMA_MODEL_FIELD, ANIMA_QWEN3_FIELD, ANIMA_VAE_FIELD, ANIMA_ADAPTER_FIELD, *_COMMON)
#: HunyuanImage-2.1 is a 2K model (docs: multi-resolution training is not recommended)
HUNYUAN_IMAGE_FIELDS = (HUNYUAN_IMAGE_MODEL_FIELD, HUNYUAN_IMAGE_TE_FIELD, HUNYUAN_IMAGE_BYT5_FIELD,
                        HUNYUAN_IMAGE_VAE_FIELD, *(replace(f, default="2048") if f is RESOLUTION_FIELD else f
                                                   for f in _COMMON))

PRESETS = (
    ModelPreset(
        "sdxl-lora", "SDXL", "LoRA", "SDXL LoRA (sd-scripts)", SdxlLoRA, SDXL_FIELDS,
        notes="U-Net LoRA (networks.lora) with cached text-encoder outputs; two TE rates would be "
        "--text_encoder_lr a b (nargs), not --text_encoder_lr1/2.",
        trainer_script="sdxl_train_network.py", needs_pre_cache=True,  # tools/cache_*.py, once per session
    ),
    ModelPreset(
        "sdxl-full", "SDXL", "Full FT", "SDXL full fine-tune (sd-scripts)", SdxlFull, SDXL_FIELDS,
        notes="U-Net fine-tune; Adafactor runs with --fused_backward_pass (and --full_bf16 at 24 GB or less).",
        trainer_script="sdxl_train.py", needs_pre_cache=True,  # tools/cache_*.py, once per session
    ),
    ModelPreset(
        "sd35-lora", "SD3.5", "LoRA", "SD3.5 LoRA (sd-scripts)", Sd35LoRA, SD35_FIELDS,
        notes="MMDiT LoRA with networks.lora_sd3 (not networks.lora); searches --training_shift; "
        "SD3 has no FLUX timestep flags. Large and Medium.",
        trainer_script="sd3_train_network.py",
    ),
    ModelPreset(
        "sd35-full", "SD3.5", "Full FT", "SD3.5 full fine-tune (sd-scripts)", Sd35Full, SD35_FIELDS,
        notes="MMDiT fine-tune; Adafactor with --fused_backward_pass; blocks swapped on small GPUs.",
        trainer_script="sd3_train.py",
    ),
    ModelPreset(
        "flux1-lora", "FLUX.1", "LoRA", "FLUX.1 LoRA (sd-scripts)", Flux1LoRA, FLUX1_FIELDS,
        notes="networks.lora_flux; needs DiT, CLIP-L, T5-XXL and AE (--ae); dev and schnell; "
        "searches timestep sampling and flow shift.",
        trainer_script="flux_train_network.py", needs_pre_cache=True,  # tools/cache_*.py, once per session
    ),
    ModelPreset(
        "flux1-full", "FLUX.1", "Full FT", "FLUX.1 full fine-tune (sd-scripts)", Flux1Full, FLUX1_FIELDS,
        notes="The README recipe: Adafactor, --fused_backward_pass, --full_bf16, blocks swapped at 24 GB or less.",
        trainer_script="flux_train.py", needs_pre_cache=True,  # tools/cache_*.py, once per session
    ),
    ModelPreset(
        "lumina-lora", "Lumina", "LoRA", "Lumina-Image 2.0 LoRA (sd-scripts)", LuminaLoRA, LUMINA_FIELDS,
        notes="Next-DiT LoRA (networks.lora_lumina) with Gemma2 (--gemma2) and the FLUX.1 AE; nextdit_shift "
        "sampling, raw prediction and the docs' --system_prompt.",
        trainer_script="lumina_train_network.py",
    ),
    ModelPreset(
        "lumina-full", "Lumina", "Full FT", "Lumina-Image 2.0 full fine-tune (sd-scripts)", LuminaFull,
        LUMINA_FIELDS, notes="Next-DiT fine-tune; Adafactor with --fused_backward_pass, --full_bf16 at 24 GB or less.",
        trainer_script="lumina_train.py",
    ),
    ModelPreset(
        "anima-lora", "Anima", "LoRA", "Anima LoRA (sd-scripts)", AnimaLoRA, ANIMA_FIELDS,
        notes="MiniTrainDIT LoRA (networks.lora_anima) with Qwen3-0.6B and the Qwen-Image VAE; no --fp8_base.",
        trainer_script="anima_train_network.py",
    ),
    ModelPreset(
        "anima-full", "Anima", "Full FT", "Anima full fine-tune (sd-scripts)", AnimaFull, ANIMA_FIELDS,
        notes="Anima fine-tune; Adafactor with --fused_backward_pass, --full_bf16 at 24 GB or less.",
        trainer_script="anima_train.py",
    ),
    ModelPreset(
        "hunyuan-image-lora", "HunyuanImage", "LoRA", "HunyuanImage-2.1 LoRA (sd-scripts)", HunyuanImageLoRA,
        HUNYUAN_IMAGE_FIELDS,
        notes="2K DiT LoRA (networks.lora_hunyuan_image), DiT only; Qwen2.5-VL + byT5; --fp8_scaled and block "
        "swap below 40 GB (the docs' VRAM table). sd-scripts has no HunyuanImage full fine-tune.",
        trainer_script="hunyuan_image_train_network.py",
    ),
)
