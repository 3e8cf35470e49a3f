"""The hub tokenizers each musubi architecture loads by name, as ``bracket doctor`` checks them.

musubi-tuner (at our pin) has no tokenizer flag: every architecture calls
``from_pretrained("<hub id>", subfolder=...)`` for its tokenizer, so offline a run needs it in
the local Hugging Face cache. The ids below were read in the pinned source (the module named
beside each id in the adapters); a subfolder is written after the repository id.
"""

from __future__ import annotations

import pytest

from bracket.cli import doctor
from bracket.registry import get_preset
from bracket.trainer.tokenizers import missing_tokenizers, tokenizer_location
from tests.musubi.helpers import MUSUBI_IDS

UMT5 = "Wan-AI/Wan2.1-T2V-14B/google/umt5-xxl"


#: Kandinsky 5 loads its tokenizers from the text-encoder folders it is given, not from the hub
FROM_MODEL_FOLDERS = ("kandinsky5-lora",)


@pytest.mark.parametrize("preset_id", [p for p in MUSUBI_IDS if p not in FROM_MODEL_FOLDERS])
def test_every_musubi_preset_declares_its_hub_tokenizers(preset_id):
    assert get_preset(preset_id).trainer_factory.tokenizer_ids


def test_the_tokenizers_follow_the_model_fields(tmp_path):
    def ids(preset_id, **fields):
        return get_preset(preset_id).trainer_factory(fields).tokenizer_ids

    assert ids("flux2-klein-lora") == ("Qwen/Qwen3-8B",)  # klein-base-9b: Qwen3 8B
    assert ids("flux2-klein-lora", model_version="klein-4b") == ("Qwen/Qwen3-4B",)
    assert ids("hidream-o1-lora", hidream_model_type="dev") == ("HiDream-ai/HiDream-O1-Image-Dev",)
    assert ids("flux2-dev-lora") == ("mistralai/Mistral-Small-3.1-24B-Instruct-2503",)
    assert ids("wan22-lora", task="i2v-A14B") == (UMT5,)
    assert ids("wan21-lora", task="i2v-14B", clip="clip.pth") == (UMT5, "Wan-AI/Wan2.1-I2V-14B-720P/xlm-roberta-large")
    assert ids("qwen-image-edit-lora")[-1] == "Qwen/Qwen-Image-Edit/processor"
    # a HunyuanVideo text encoder given as a model folder brings its own tokenizer
    files = ids("hunyuan-video-lora", text_encoder1="llava.safetensors", text_encoder2="clip_l.safetensors")
    assert files == ("xtuner/llava-llama-3-8b-v1_1-transformers", "openai/clip-vit-large-patch14")
    (tmp_path / "text_encoder").mkdir()
    assert ids("hunyuan-video-lora", text_encoder1=str(tmp_path / "text_encoder"),
               text_encoder2="clip_l.safetensors") == ("openai/clip-vit-large-patch14",)


def test_a_subfolder_id_is_found_only_in_its_subfolder(tmp_path):
    hub = tmp_path / "hub"
    snapshot = hub / "models--Wan-AI--Wan2.1-T2V-14B" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "tokenizer_config.json").write_text("{}", encoding="utf-8")  # the repository's top, not umT5's
    environ = {"HF_HUB_CACHE": str(hub)}
    assert tokenizer_location(UMT5, environ=environ) is None
    (snapshot / "google" / "umt5-xxl").mkdir(parents=True)
    (snapshot / "google" / "umt5-xxl" / "spiece.model").write_bytes(b"x")
    assert tokenizer_location(UMT5, environ=environ) == snapshot / "google" / "umt5-xxl"
    assert missing_tokenizers([UMT5, "Qwen/Qwen3-8B"], environ=environ) == ["Qwen/Qwen3-8B"]


def test_doctor_names_a_missing_musubi_tokenizer(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    preset = get_preset("wan22-lora")
    report = doctor.DoctorReport(preset.id)
    context = doctor.DoctorContext(preset, {}, preset.trainer_factory({"task": "t2v-A14B"}), report)
    assert doctor.check_tokenizers(context) is False
    check = report.checks[-1]
    assert UMT5 in check.message and "run once online" in check.message
