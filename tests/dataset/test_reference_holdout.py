"""The held-out likeness references' rule, choice and link folder (``bracket.dataset.references``)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from bracket.dataset.references import (
    MIN_IMAGES,
    choose,
    dataset_images,
    held_count,
    held_out_references,
    training_folder,
)


def images(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        Image.new("RGB", (8, 8), (n, 0, 0)).save(folder / f"img{n:02d}.png")
        (folder / f"img{n:02d}.txt").write_text(f"zqx {n}", encoding="utf-8")
    return folder


def test_the_rule_holds_ten_percent_out_from_twelve_images_at_least_two_at_most_eight():
    assert [held_count(n) for n in (0, 5, MIN_IMAGES - 1)] == [0, 0, 0]
    assert [held_count(n) for n in (12, 20, 35, 50, 80, 200)] == [2, 2, 4, 5, 8, 8]


def test_the_choice_is_spread_over_the_dataset_and_the_same_on_every_read(tmp_path):
    folder = images(tmp_path / "data", 40)
    first = held_out_references(folder, "sd-scripts", held_count(40))
    assert first == held_out_references(folder, "sd-scripts", held_count(40))  # no seed, one rule
    assert [p.name for p in first] == ["img05.png", "img15.png", "img25.png", "img35.png"]
    assert all(p.is_absolute() for p in first)
    assert choose(list(range(3)), 5) == [0, 1, 2] and choose(list(range(9)), 0) == []
    assert held_out_references(folder, "sd-scripts", 0) == []
    assert len(dataset_images(folder, "musubi")) == 40 and dataset_images(folder, None) == []


def test_the_training_folder_links_everything_but_the_held_out_images_and_their_captions(tmp_path):
    folder = images(tmp_path / "data", 12)
    (folder / "img03_1024x1024_sdxl.npz").write_bytes(b"cache")
    held = held_out_references(folder, "sd-scripts", held_count(12))
    dest = training_folder(folder, held, tmp_path / "links", skip_suffixes=(".npz",))
    names = {p.name for p in dest.iterdir()}
    held_names = {p.name for p in held} | {p.with_suffix(".txt").name for p in held}
    assert len(held) == 2 and not names & held_names
    assert names == {p.name for p in folder.iterdir() if p.suffix != ".npz"} - held_names
    assert all((dest / n).resolve().parent == folder.resolve() for n in names)  # links, not copies
    (dest / held[0].name).symlink_to(held[0])  # left by an older rule: taken away again
    training_folder(folder, held, dest)
    assert not (dest / held[0].name).exists()
