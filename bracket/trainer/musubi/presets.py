"""Preset table of the kohya-ss musubi-tuner family: one row per (model, LoRA/full, mode).

Every row pre-caches latents and text-encoder outputs once per session
(``needs_pre_cache=True``). Model paths default to ``BRACKET_*_PATH`` variables; files that
are literally the same across presets (the HunyuanVideo VAE and text encoders used by
FramePack, the Wan VAE and T5, the Qwen-Image VAE and text encoder) share one variable.
"""

from __future__ import annotations

from bracket import settings
from bracket.fields import FieldSpec
from bracket.trainer.cache_key import CACHE_DIR_FIELD
from bracket.trainer.musubi.flux2 import MODEL_VERSIONS as FLUX2_VERSIONS
from bracket.trainer.musubi.flux2 import Flux2DevLoRA, Flux2KleinLoRA
from bracket.trainer.musubi.framepack import FramePack1fLoRA, FramePackLoRA
from bracket.trainer.musubi.hidream_o1 import MODEL_TYPES as HIDREAM_MODEL_TYPES
from bracket.trainer.musubi.hidream_o1 import HiDreamO1Full, HiDreamO1LoRA
from bracket.trainer.musubi.hunyuan_video import HunyuanVideoFull, HunyuanVideoLoRA
from bracket.trainer.musubi.hunyuan_video_15 import TASKS as HV15_TASKS
from bracket.trainer.musubi.hunyuan_video_15 import HunyuanVideo15LoRA
from bracket.trainer.musubi.ideogram4 import Ideogram4LoRA
from bracket.trainer.musubi.kandinsky5 import TASKS as KANDINSKY5_TASKS
from bracket.trainer.musubi.kandinsky5 import Kandinsky5LoRA
from bracket.trainer.musubi.kontext import FluxKontextLoRA
from bracket.trainer.musubi.krea2 import Krea2LoRA
from bracket.trainer.musubi.qwen_image import EDIT_VERSIONS, QwenImageEditLoRA, QwenImageFull, QwenImageLoRA
from bracket.trainer.musubi.wan import WAN21_TASKS, WAN22_TASKS, WAN_1F_TASKS, Wan1fLoRA, Wan21LoRA, Wan22LoRA
from bracket.trainer.musubi.zimage import ZImageFull, ZImageLoRA
from bracket.trainer.preset import DATASET_FIELD, ModelPreset
from bracket.trainer.vram import VRAM_TIER_FIELD

MUSUBI_DIR_FIELD = FieldSpec(
    "musubi_dir", "musubi-tuner folder", "dir", executable=True,
    default=lambda: str(settings.get_settings().musubi_dir), required=True,
    help="Checkout of kohya-ss/musubi-tuner (vendor/musubi-tuner after ./install.sh).",
    env_var="BRACKET_MUSUBI_DIR",
)
MUSUBI_PYTHON_FIELD = FieldSpec(
    "trainer_python", "Trainer python", "file", executable=True,
    default=lambda: str(settings.get_settings().musubi_python), required=True,
    help="The python of the musubi-tuner virtualenv (./install.sh --trainers creates it).",
    env_var="BRACKET_MUSUBI_PYTHON",
)


def model(name: str, label: str, env: str, *, kind: str = "file", required: bool = True, help: str = "") -> FieldSpec:
    """A model-weight field whose default comes from ``env``."""
    return FieldSpec(name, label, kind, required=required, env_var=env, help=help)


def resolution(default: int) -> FieldSpec:
    return FieldSpec("resolution", "Training resolution", "int", default=str(default), minimum=64, maximum=8192,
                     help="Square training resolution (pixels); also the resolution the caches are made at.")


def choice(name: str, label: str, choices: tuple[str, ...], help: str) -> FieldSpec:
    return FieldSpec(name, label, "choice", default=choices[0], choices=choices, help=help)


COMMON = (MUSUBI_DIR_FIELD, MUSUBI_PYTHON_FIELD, DATASET_FIELD, VRAM_TIER_FIELD, CACHE_DIR_FIELD)
EDIT = (
    FieldSpec("control_dir", "Control images folder", "dir", env_var="BRACKET_CONTROL_DIR",
              help="Source images of the edit pairs, same base names as the targets; empty = the dataset "
              "TOML's control_directory."),
    FieldSpec("sample_control_image", "Sample control image", "file",
              help="The image every sample edits (--ci); empty = the first image of the control folder."),
)
START_IMAGE = FieldSpec("sample_start_image", "Sample start image", "file",
                        help="First frame of every image-to-video sample (--i); empty = the first dataset image.")

ZIMAGE = (
    model("dit", "Z-Image DiT", "BRACKET_ZIMAGE_DIT_PATH", help="Base DiT, or ostris' De-Turbo DiT for Turbo."),
    model("vae", "Z-Image VAE", "BRACKET_ZIMAGE_VAE_PATH"),
    model("text_encoder", "Qwen3 text encoder", "BRACKET_ZIMAGE_TEXT_ENCODER_PATH", kind="path"),
    choice("zimage_variant", "Z-Image variant", ("base", "turbo"), "Sets the sample defaults (CFG for base)."),
    resolution(1024),
)
QWEN = (
    model("vae", "Qwen-Image VAE", "BRACKET_QWEN_IMAGE_VAE_PATH"),
    model("text_encoder", "Qwen2.5-VL text encoder", "BRACKET_QWEN_IMAGE_TEXT_ENCODER_PATH", kind="path"),
    resolution(1024),
)
HV_ENCODERS = (
    model("vae", "HunyuanVideo VAE", "BRACKET_HUNYUAN_VIDEO_VAE_PATH"),
    model("text_encoder1", "LLaVA-LLaMA-3 text encoder", "BRACKET_HUNYUAN_VIDEO_TEXT_ENCODER1_PATH", kind="path"),
    model("text_encoder2", "CLIP-L text encoder", "BRACKET_HUNYUAN_VIDEO_TEXT_ENCODER2_PATH", kind="path"),
)
HV = (model("dit", "HunyuanVideo DiT", "BRACKET_HUNYUAN_VIDEO_DIT_PATH"), *HV_ENCODERS, resolution(512))
WAN_ENCODERS = (
    model("vae", "Wan VAE", "BRACKET_WAN_VAE_PATH"),
    model("t5", "umT5-XXL text encoder", "BRACKET_WAN_T5_PATH"),
    resolution(512),
)

#: one-frame modes: image pairs (start images in the control folder), samples edit a start image
ONE_FRAME = (
    FieldSpec("control_dir", "Start images folder", "dir", env_var="BRACKET_CONTROL_DIR",
              help="Start images of the one-frame pairs, same base names as the changed images in the dataset "
              "(with their captions); empty = the dataset TOML's control_directory."),
    FieldSpec("sample_control_image", "Sample start image", "file",
              help="The start image every sample edits (--i and --ci); empty = the first image of the start folder."),
)
HIDREAM = (
    model("dit", "HiDream-O1 checkpoint", "BRACKET_HIDREAM_O1_DIT_PATH",
          help="hidream_o1_image_bf16.safetensors (or _dev_); the only model file HiDream-O1 needs."),
    choice("hidream_model_type", "HiDream-O1 model", HIDREAM_MODEL_TYPES,
           "full or dev: sets --model_type and the docs' noise parameters; must match the checkpoint."),
    resolution(1024),
)


def _row(preset_id, family, kind, name, factory, fields, script, note) -> ModelPreset:
    return ModelPreset(preset_id, family, kind, name, factory, (*COMMON, *fields), notes=note,
                       needs_pre_cache=True, trainer_script=f"musubi-tuner src/musubi_tuner/{script}")


PRESETS = (
    _row("zimage-lora", "Z-Image", "LoRA", "Z-Image LoRA (base / Turbo)", ZImageLoRA,
         (*ZIMAGE, model("base_weights", "Turbo training adapter (optional)", "BRACKET_ZIMAGE_BASE_WEIGHTS_PATH",
                         required=False, help="ostris' Turbo training adapter LoRA, passed as --base_weights.")),
         "zimage_train_network.py",
         "Z-Image LoRA (networks.lora_zimage); for Turbo use the De-Turbo DiT or the training adapter."),
    _row("zimage-full", "Z-Image", "Full FT", "Z-Image full fine-tune", ZImageFull, ZIMAGE, "zimage_train.py",
         "Z-Image full fine-tune: --full_bf16, Adafactor with --fused_backward_pass by default."),
    _row("flux2-klein-lora", "FLUX.2", "LoRA", "FLUX.2 Klein LoRA (9B)", Flux2KleinLoRA, (
        model("dit", "FLUX.2 Klein DiT", "BRACKET_FLUX2_KLEIN_DIT_PATH"),
        model("vae", "FLUX.2 AE", "BRACKET_FLUX2_VAE_PATH", help="Goes in --vae (not --ae)."),
        model("text_encoder", "Qwen3 text encoder", "BRACKET_FLUX2_KLEIN_TEXT_ENCODER_PATH", kind="path"),
        choice("model_version", "Klein model", FLUX2_VERSIONS, "Must match the DiT; base models train best."),
        resolution(1024),
    ), "flux_2_train_network.py", "FLUX.2 Klein LoRA (networks.lora_flux_2); --model_version on trainer and caches."),
    _row("flux2-dev-lora", "FLUX.2", "LoRA", "FLUX.2 [dev] LoRA (32B)", Flux2DevLoRA, (
        model("dit", "FLUX.2 [dev] DiT", "BRACKET_FLUX2_DEV_DIT_PATH", help="flux2-dev.safetensors."),
        model("vae", "FLUX.2 AE", "BRACKET_FLUX2_VAE_PATH", help="Goes in --vae (not --ae)."),
        model("text_encoder", "Mistral 3 text encoder", "BRACKET_FLUX2_DEV_TEXT_ENCODER_PATH", kind="path",
              help="The first of the split files (00001-of-00010.safetensors)."),
        resolution(1024),
    ), "flux_2_train_network.py",
        "FLUX.2 [dev] LoRA (--model_version dev, networks.lora_flux_2); fp8 DiT, up to 29 blocks swapped."),
    _row("flux1-kontext-lora", "FLUX.1 Kontext", "LoRA", "FLUX.1 Kontext [dev] LoRA (image edit)", FluxKontextLoRA, (
        model("dit", "FLUX.1 Kontext DiT", "BRACKET_FLUX_KONTEXT_DIT_PATH"),
        model("vae", "FLUX.1 AE", "BRACKET_FLUX1_AE_PATH", help="ae.safetensors; goes in --vae."),
        model("text_encoder1", "T5-XXL", "BRACKET_T5XXL_PATH"),
        model("text_encoder2", "CLIP-L", "BRACKET_CLIP_L_PATH"),
        *EDIT, resolution(1024),
    ), "flux_kontext_train_network.py",
        "Image-edit LoRA on source/target pairs (control_directory); samples edit a --ci control image."),
    _row("qwen-image-lora", "Qwen-Image", "LoRA", "Qwen-Image LoRA (20B)", QwenImageLoRA,
         (model("dit", "Qwen-Image DiT", "BRACKET_QWEN_IMAGE_DIT_PATH"), *QWEN), "qwen_image_train_network.py",
         "Qwen-Image 20B LoRA (networks.lora_qwen_image); fp8 + block swap below 48 GB."),
    _row("qwen-image-full", "Qwen-Image", "Full FT", "Qwen-Image full fine-tune (20B)", QwenImageFull,
         (model("dit", "Qwen-Image DiT", "BRACKET_QWEN_IMAGE_DIT_PATH"), *QWEN), "qwen_image_train.py",
         "Qwen-Image full fine-tune: --full_bf16, Adafactor + --fused_backward_pass; needs a big GPU and RAM."),
    _row("qwen-image-edit-lora", "Qwen-Image", "LoRA", "Qwen-Image-Edit LoRA (image edit)", QwenImageEditLoRA, (
        model("dit", "Qwen-Image-Edit DiT", "BRACKET_QWEN_IMAGE_EDIT_DIT_PATH"), *QWEN,
        choice("model_version", "Edit model", EDIT_VERSIONS, "Must match the DiT (--model_version)."), *EDIT,
    ), "qwen_image_train_network.py",
        "Qwen-Image-Edit / 2509 / 2511 LoRA on source/target pairs; --model_version on trainer and caches."),
    _row("hunyuan-video-lora", "HunyuanVideo", "LoRA", "HunyuanVideo LoRA", HunyuanVideoLoRA, HV,
         "hv_train_network.py", "HunyuanVideo LoRA (networks.lora); short clips (target_frames [1, 17]) for search."),
    _row("hunyuan-video-full", "HunyuanVideo", "Full FT", "HunyuanVideo full fine-tune", HunyuanVideoFull, HV,
         "hv_train.py", "Older hv_train.py: writes no samples, so trials are scored by loss only."),
    _row("hunyuan-video-15-lora", "HunyuanVideo", "LoRA", "HunyuanVideo 1.5 LoRA", HunyuanVideo15LoRA, (
        model("dit", "HunyuanVideo 1.5 DiT", "BRACKET_HV15_DIT_PATH", help="720p t2v or i2v transformer (bf16)."),
        model("vae", "HunyuanVideo 1.5 VAE", "BRACKET_HV15_VAE_PATH"),
        model("text_encoder", "Qwen2.5-VL text encoder", "BRACKET_HV15_TEXT_ENCODER_PATH",
              help="qwen_2.5_vl_7b.safetensors."),
        model("byt5", "byT5 text encoder", "BRACKET_HV15_BYT5_PATH", help="byt5_small_glyphxl_fp16.safetensors."),
        choice("task", "HunyuanVideo 1.5 task", HV15_TASKS, "t2v or i2v; must match the DiT."),
        model("image_encoder", "SigLIP image encoder (I2V)", "BRACKET_HV15_IMAGE_ENCODER_PATH", required=False,
              help="sigclip_vision_patch14_384.safetensors; only for i2v."),
        START_IMAGE, resolution(512),
    ), "hv_1_5_train_network.py",
        "HunyuanVideo 1.5 LoRA (networks.lora_hv_1_5), T2V or I2V; byT5 on trainer and cache."),
    _row("wan22-lora", "Wan", "LoRA", "Wan 2.2 A14B LoRA (both DiTs)", Wan22LoRA, (
        model("dit", "Wan 2.2 low-noise DiT", "BRACKET_WAN22_DIT_PATH"),
        model("dit_high_noise", "Wan 2.2 high-noise DiT", "BRACKET_WAN22_DIT_HIGH_NOISE_PATH"),
        choice("task", "Wan 2.2 task", WAN22_TASKS, "t2v-A14B or i2v-A14B (not the 2.1 default t2v-14B)."),
        START_IMAGE, *WAN_ENCODERS,
    ), "wan_train_network.py", "Wan 2.2 A14B LoRA on both DiTs (--dit low, --dit_high_noise high); I2V needs --i."),
    _row("wan21-lora", "Wan", "LoRA", "Wan 2.1 LoRA", Wan21LoRA, (
        model("dit", "Wan 2.1 DiT", "BRACKET_WAN21_DIT_PATH"),
        choice("task", "Wan 2.1 task", WAN21_TASKS, "Must match the DiT."),
        model("clip", "CLIP (Wan 2.1 I2V)", "BRACKET_WAN_CLIP_PATH", required=False,
              help="open-clip XLM-RoBERTa ViT-H; only for i2v-14B."),
        START_IMAGE, *WAN_ENCODERS,
    ), "wan_train_network.py", "Wan 2.1 LoRA (t2v-14B, t2v-1.3B, i2v-14B, t2i-14B); I2V caches with --i2v --clip."),
    _row("wan21-1f-lora", "Wan", "LoRA", "Wan 2.1 one-frame LoRA (image edit)", Wan1fLoRA, (
        model("dit", "Wan 2.1 I2V 14B DiT", "BRACKET_WAN21_I2V_DIT_PATH"),
        choice("task", "Wan 2.1 task", WAN_1F_TASKS, "One-frame training uses the I2V 14B model."),
        model("clip", "CLIP (Wan 2.1 I2V)", "BRACKET_WAN_CLIP_PATH", help="open-clip XLM-RoBERTa ViT-H."),
        *ONE_FRAME, *WAN_ENCODERS,
    ), "wan_train_network.py", "Wan 2.1 I2V one-frame training (docs/wan_1f.md): image pairs, --one_frame."),
    _row("framepack-lora", "FramePack", "LoRA", "FramePack LoRA (image-to-video)", FramePackLoRA, (
        model("dit", "FramePack DiT", "BRACKET_FRAMEPACK_DIT_PATH"), *HV_ENCODERS,
        model("image_encoder", "SigLIP image encoder", "BRACKET_FRAMEPACK_IMAGE_ENCODER_PATH", kind="path"),
        choice("framepack_variant", "FramePack variant", ("framepack", "f1"), "f1 adds --f1 (FramePack-F1)."),
        START_IMAGE, resolution(512),
    ), "fpack_train_network.py", "Anchor-frame conditioned video LoRA (networks.lora_framepack); samples need --i."),
    _row("framepack-1f-lora", "FramePack", "LoRA", "FramePack one-frame LoRA (image edit)", FramePack1fLoRA, (
        model("dit", "FramePack DiT", "BRACKET_FRAMEPACK_DIT_PATH"), *HV_ENCODERS,
        model("image_encoder", "SigLIP image encoder", "BRACKET_FRAMEPACK_IMAGE_ENCODER_PATH", kind="path"),
        *ONE_FRAME, resolution(512),
    ), "fpack_train_network.py",
        "One-frame (1f) training: start/changed image pairs, --one_frame caches and samples; FramePack, not F1."),
    _row("hidream-o1-lora", "HiDream-O1", "LoRA", "HiDream-O1-Image LoRA", HiDreamO1LoRA, HIDREAM,
         "hidream_o1_train_network.py",
         "One checkpoint (--dit), no VAE or text-encoder files; pixel-patch and prompt-token caches; t2i."),
    _row("hidream-o1-full", "HiDream-O1", "Full FT", "HiDream-O1-Image full fine-tune", HiDreamO1Full, HIDREAM,
         "hidream_o1_train.py", "HiDream-O1 full fine-tune: --full_bf16, Adafactor + --fused_backward_pass; no fp8."),
    _row("kandinsky5-lora", "Kandinsky 5", "LoRA", "Kandinsky 5 video LoRA", Kandinsky5LoRA, (
        model("dit", "Kandinsky 5 DiT", "BRACKET_KANDINSKY5_DIT_PATH",
              help="e.g. kandinsky5pro_t2v_pretrain_5s.safetensors; must fit the task."),
        model("vae", "HunyuanVideo 3D VAE (Diffusers)", "BRACKET_KANDINSKY5_VAE_PATH",
              help="hunyuanvideo-community/HunyuanVideo vae/diffusion_pytorch_model.safetensors."),
        FieldSpec("text_encoder_qwen", "Qwen2.5-VL-7B (hub id or folder)", "text", required=True,
                  default="Qwen/Qwen2.5-VL-7B-Instruct", env_var="BRACKET_KANDINSKY5_QWEN_PATH",
                  help="A Hugging Face model id or a local snapshot folder (--text_encoder_qwen)."),
        FieldSpec("text_encoder_clip", "CLIP-L (hub id or folder)", "text", required=True,
                  default="openai/clip-vit-large-patch14", env_var="BRACKET_KANDINSKY5_CLIP_PATH",
                  help="A Hugging Face model id or a local snapshot folder (--text_encoder_clip)."),
        choice("task", "Kandinsky 5 task", KANDINSKY5_TASKS, "Model configuration (--task); --dit names the weights."),
        START_IMAGE, resolution(512),
    ), "kandinsky5_train_network.py",
        "Kandinsky 5 Pro/Lite T2V or I2V LoRA (networks.lora_kandinsky); --task required."),
    _row("krea2-lora", "Krea 2", "LoRA", "Krea 2 LoRA (RAW model)", Krea2LoRA, (
        model("dit", "Krea 2 RAW DiT", "BRACKET_KREA2_DIT_PATH", help="raw.safetensors (train on RAW, not Turbo)."),
        model("vae", "Qwen-Image VAE", "BRACKET_QWEN_IMAGE_VAE_PATH"),
        model("text_encoder", "Qwen3-VL-4B text encoder", "BRACKET_KREA2_TEXT_ENCODER_PATH",
              help="A single .safetensors file (qwen3vl_4b_bf16.safetensors), not a folder."),
        resolution(1024),
    ), "krea2_train_network.py", "Krea 2 LoRA (networks.lora_krea2) on the RAW DiT; shift 2.5 or krea2_shift."),
    _row("ideogram4-lora", "Ideogram 4", "LoRA", "Ideogram 4 LoRA", Ideogram4LoRA, (
        model("dit", "Ideogram 4 DiT (fp8)", "BRACKET_IDEOGRAM4_DIT_PATH", help="ideogram4_fp8_scaled.safetensors."),
        model("vae", "Flux2 VAE", "BRACKET_IDEOGRAM4_VAE_PATH",
              help="flux2-vae.safetensors (Comfy-Org/Ideogram-4 vae/)."),
        model("text_encoder", "Qwen3-VL 8B text encoder", "BRACKET_IDEOGRAM4_TEXT_ENCODER_PATH",
              help="qwen3vl_8b_fp8_scaled.safetensors."),
        resolution(1024),
    ), "ideogram4_train_network.py",
        "Ideogram 4 LoRA on the fp8-only DiT (networks.lora_ideogram4); non-commercial weights."),
)
