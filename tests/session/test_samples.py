"""Sample file names of sd-scripts and musubi-tuner: parsing, collecting, the Compare cells."""

from __future__ import annotations

import pytest

from bracket.session.scoring.samples import collect_samples, parse_sample_name, samples_by_step

TS = "20240315123456"


def test_step_sample_with_seed():
    s = parse_sample_name(f"my_lora_000250_03_{TS}_42.png")
    assert (s.step, s.epoch, s.prompt_index, s.seed, s.frame, s.kind) == (250, None, 3, 42, None, "image")
    assert s.timestamp == TS and s.output_name == "my_lora"


def test_sample_at_first_is_epoch_zero_and_step_zero():
    s = parse_sample_name(f"demo_e000000_00_{TS}_1000.png")
    assert (s.step, s.epoch, s.seed) == (0, 0, 1000)


def test_epoch_sample_has_no_step():
    s = parse_sample_name(f"demo_e000002_01_{TS}.png")
    assert (s.step, s.epoch, s.prompt_index, s.seed) == (None, 2, 1, None)


def test_no_output_name_prefix():
    s = parse_sample_name(f"000010_00_{TS}_7.png")
    assert (s.step, s.prompt_index, s.seed, s.output_name) == (10, 0, 7, "")


@pytest.mark.parametrize("output_name", ["a_1", "lora_000100_00", f"x_000100_00_{TS}", "v2_e000001_12"])
def test_output_names_with_underscores_and_digits(output_name):
    s = parse_sample_name(f"{output_name}_000500_02_{TS}_1234.png")
    assert (s.output_name, s.step, s.prompt_index, s.seed) == (output_name, 500, 2, 1234)


def test_more_than_six_digit_steps_and_many_prompts():
    s = parse_sample_name(f"big_1000000_123_{TS}.png")
    assert (s.step, s.prompt_index) == (1_000_000, 123)


def test_musubi_frames_and_video():
    frame = parse_sample_name(f"wan_000100_01_{TS}_42_003.png")
    assert (frame.step, frame.prompt_index, frame.seed, frame.frame, frame.kind) == (100, 1, 42, 3, "image")
    video = parse_sample_name(f"wan_000100_01_{TS}_42.mp4")
    assert (video.step, video.seed, video.frame, video.kind) == (100, 42, None, "video")
    unseeded = parse_sample_name(f"wan_000100_01_{TS}.mp4")
    assert (unseeded.seed, unseeded.kind) == (None, "video")


def test_lone_number_after_timestamp_is_ambiguous_and_documented():
    # default guess: three zero-padded digits is a musubi frame, anything else an sd-scripts seed
    guessed = parse_sample_name(f"n_000100_00_{TS}_000.png")
    assert (guessed.frame, guessed.seed) == (0, None)
    assert parse_sample_name(f"n_000100_00_{TS}_1000.png").seed == 1000
    assert parse_sample_name(f"n_000100_00_{TS}_123.png", frames=False).seed == 123
    assert parse_sample_name(f"n_000100_00_{TS}_1000.png", frames=True).frame == 1000


@pytest.mark.parametrize("name", [
    "notes.txt",
    "grid.png",
    f"x_000100_00_{TS}_42.txt",
    "x_000100_00_20241399123456_42.png",  # month 13
    "x_000100_00_2024031512345_42.png",   # 13-digit timestamp
    "x_00100_00_20240315123456.png",      # 5-digit step
    "x_000100_0_20240315123456.png",      # 1-digit prompt index
    f"x_000100_00_{TS}_1_2_3.png",        # too many trailing numbers
    f"x_000100_00_{TS}_42_001.mp4",       # a video has no frame index
    f"x_000100_00_{TS}_seed.png",
    f"x_f000100_00_{TS}.png",
    f"00_{TS}.png",
])
def test_junk_names_are_not_samples(name):
    assert parse_sample_name(name) is None


def test_collect_samples_sorts_and_groups(tmp_path):
    folder = tmp_path / "sample"
    folder.mkdir()
    names = [
        f"r_000020_01_{TS}_2.png", f"r_000020_00_{TS}_1.png", f"r_e000000_01_{TS}_2.png",
        f"r_e000000_00_{TS}_1.png", f"r_000100_00_{TS}_1.png", f"r_e000003_00_{TS}_1.png",
        "r.safetensors", "readme.md",
    ]
    for name in names:
        (folder / name).write_bytes(b"x")
    (folder / f"sub_000001_00_{TS}.png").mkdir()  # a folder is not a sample
    samples = collect_samples(folder)
    assert [(s.step, s.epoch, s.prompt_index) for s in samples] == [
        (0, 0, 0), (0, 0, 1), (20, None, 0), (20, None, 1), (100, None, 0), (None, 3, 0),
    ]
    assert all(s.path.parent == folder for s in samples)
    grid = samples_by_step(samples)
    assert list(grid) == [0, 20, 100]
    assert list(grid[20]) == [0, 1] and grid[20][1].seed == 2
    assert collect_samples(tmp_path / "missing") == [] and collect_samples(None) == []


def test_samples_by_step_takes_the_first_frame_or_the_video(tmp_path):
    frames = [parse_sample_name(f"w_000010_00_{TS}_5_{i:03d}.png") for i in (2, 0, 1)]
    grid = samples_by_step(frames)
    assert grid[10][0].frame == 0
    video = parse_sample_name(f"w_000010_00_{TS}_5.mp4")
    assert samples_by_step([*frames, video])[10][0].kind == "video"


def test_a_three_digit_seed_of_an_sd_scripts_sample_is_a_seed():
    """Seen in review (SDXL LoRA, prompts proposed from the captions): the held-out prompts' seeds
    101–103 were read as musubi frame numbers, so the Compare grid named no seed for their rows.
    A frame is written zero-padded (``_000``); a seed never is."""
    held_out = parse_sample_name(f"bracket_000030_04_{TS}_101.png")
    assert (held_out.seed, held_out.frame) == (101, None)
    assert (parse_sample_name(f"n_000100_00_{TS}_007.png").frame, parse_sample_name(f"n_000100_00_{TS}_999.png").seed) \
        == (7, 999)
