"""Dataset pre-flight: one test per thing that breaks (or quietly spoils) a real run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image

from bracket.cli import main
from bracket.dataset.preflight import largest_batch, preflight_dataset, preflight_for_trainer
from bracket.registry import get_preset
from bracket.search.space import CategoricalKnob, FixedKnob, SearchSpace


def _folder(root: Path, names: dict[str, str | None], name: str = "data") -> Path:
    """A folder of 16×16 PNGs; ``{"img_1": "a caption"}``, None = no caption file."""
    folder = root / name
    folder.mkdir(parents=True)
    for stem, caption in names.items():
        Image.new("RGB", (16, 16), "red").save(folder / f"{stem}.png")
        if caption is not None:
            (folder / f"{stem}.txt").write_text(caption, encoding="utf-8")
    return folder


def test_a_clean_folder_passes(tmp_path):
    report = preflight_dataset(_folder(tmp_path, {"a": "x", "b": "y"}), "sd-scripts")
    assert report.ok and not report.warnings and (report.media, report.captions) == (2, 2)


def test_an_empty_folder_is_a_problem(tmp_path):
    (tmp_path / "empty").mkdir()
    report = preflight_dataset(tmp_path / "empty", "musubi")
    assert not report.ok and "holds no images or videos" in report.problems[0]


def test_captions_named_unlike_their_images(tmp_path):
    folder = _folder(tmp_path, {"img_1": None, "img_2": None})
    for n in (1, 2):
        (folder / f"cap_{n}.txt").write_text("a caption", encoding="utf-8")
    report = preflight_dataset(folder, "sd-scripts")
    assert not report.ok
    assert "No image" in report.problems[0] and "cap_1.txt" in report.problems[0]
    assert "img_1.png → img_1.txt" in report.problems[0]


def test_some_orphan_captions_are_a_warning(tmp_path):
    folder = _folder(tmp_path, {"a": "x", "b": None})
    (folder / "cap_b.txt").write_text("meant for b", encoding="utf-8")
    report = preflight_dataset(folder, "sd-scripts")
    assert report.ok
    text = " ".join(report.warnings)
    assert "1 file(s)" in text and "b.png" in text and "cap_b.txt" in text


def test_captions_from_a_metadata_file_are_not_expected_beside_the_images(tmp_path):
    folder = _folder(tmp_path, {"a": None, "b": None})
    toml = tmp_path / "dataset.toml"
    toml.write_text(f"[[datasets]]\n[[datasets.subsets]]\nimage_dir = '{folder}'\nmetadata_file = 'meta.json'\n",
                    encoding="utf-8")
    report = preflight_dataset(toml, "sd-scripts")
    assert report.ok and not report.warnings


def test_empty_captions(tmp_path):
    report = preflight_dataset(_folder(tmp_path, {"a": "x", "b": "  \n"}), "musubi")
    assert report.ok and any("are empty (b.txt)" in w for w in report.warnings)


def test_unsupported_files_are_listed(tmp_path):
    folder = _folder(tmp_path, {"a": "x"})
    (folder / "notes.pdf").write_bytes(b"%PDF")
    (folder / "anim.gif").write_bytes(b"GIF89a")
    (folder / "dataset_cache.npz").write_bytes(b"")  # a trainer cache: expected, not listed
    (folder / ".DS_Store").write_bytes(b"")
    report = preflight_dataset(folder, "sd-scripts")
    warning = next(w for w in report.warnings if "neither images" in w)
    assert "2 file(s)" in warning and "anim.gif, notes.pdf" in warning


def test_images_pil_cannot_open(tmp_path):
    folder = _folder(tmp_path, {"a": "x", "b": "y", "c": "z"})
    data = (folder / "b.png").read_bytes()
    (folder / "b.png").write_bytes(data[: len(data) // 2])  # right signature, truncated
    (folder / "c.png").write_bytes(b"not an image at all")
    report = preflight_dataset(folder, "sd-scripts")
    assert not report.ok
    assert "2 file(s)" in report.problems[0] and "are not images" in report.problems[0]
    assert "b.png, c.png" in report.problems[0]


def test_control_pairs(tmp_path):
    targets = _folder(tmp_path, {"img_1": "x", "img_10": "y", "img_2": "z"})
    control = tmp_path / "control"
    control.mkdir()
    for name in ("img_1.png", "img_10_0.png", "img_10_1.png", "stray.png"):
        shutil.copy(targets / "img_1.png", control / name)
    report = preflight_dataset(targets, "musubi", control_dir=str(control), needs_control=True)
    assert not report.ok
    assert "1 target image(s) have no control image" in report.problems[0] and "img_2.png" in report.problems[0]
    assert any("stray.png" in w and "match no target" in w for w in report.warnings)


def test_an_edit_preset_without_control_images(tmp_path):
    dataset = _folder(tmp_path, {"a": "x"})
    trainer = get_preset("flux1-kontext-lora").trainer_factory({"dataset": str(dataset), "control_dir": ""})
    report = preflight_for_trainer(trainer, {"dataset": str(dataset), "control_dir": ""})
    assert not report.ok and "needs control images" in report.problems[0]
    trainer = get_preset("qwen-image-lora").trainer_factory({"dataset": str(dataset)})
    assert preflight_for_trainer(trainer, {"dataset": str(dataset)}).ok  # not an edit model


def test_control_directory_from_a_musubi_toml(tmp_path):
    targets = _folder(tmp_path, {"a": "x"})
    (tmp_path / "ctl").mkdir()
    toml = tmp_path / "dataset.toml"
    toml.write_text(f"[[datasets]]\nimage_directory = '{targets}'\ncontrol_directory = 'ctl'\n", encoding="utf-8")
    report = preflight_dataset(toml, "musubi", needs_control=True)
    assert not report.ok and "have no control image" in report.problems[0]


def test_fewer_images_than_a_batch(tmp_path):
    folder = _folder(tmp_path, {"a": "x", "b": "y"})
    assert not preflight_dataset(folder, "sd-scripts", batch_size=2).warnings
    report = preflight_dataset(folder, "sd-scripts", batch_size=4)
    assert report.ok and any("Only 2 image(s)/video(s) for batches of up to 4" in w for w in report.warnings)


@pytest.mark.parametrize("knob, expected", [(FixedKnob(1), 1), (CategoricalKnob((1, 2, 4)), 4)])
def test_largest_batch(knob, expected):
    assert largest_batch(SearchSpace({"batch_size": knob})) == expected
    assert largest_batch(SearchSpace({})) == 1


def test_run_prints_the_dataset_warnings(capsys, demo_fields, runs_dir):
    (Path(demo_fields["dataset"]) / "cap_9.txt").write_text("an orphan caption", encoding="utf-8")
    argv = ["run", "--preset", "demo-cpu", "--budget", "1", "--steps", "2", "--name", "warned", "--out",
            str(runs_dir), "--quiet"]
    for name, value in demo_fields.items():
        argv += ["--set", f"{name}={value}"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning: 1 caption file(s) match no image (cap_9.txt)" in err
