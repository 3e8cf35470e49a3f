"""The VLM judge on video samples: frames read from real .mp4 files, sent to a stand-in server."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from bracket.judge.server import JudgeServerConfig
from bracket.judge.vlm import VIDEO_CRITERIA, VlmJudge, frame_indices, video_frame_urls
from bracket.session.scoring.vlm import final_samples
from bracket.trainer.prompts import SamplePrompt
from tests.judge import stand_in_server

RED, GREEN, BLUE = (220, 20, 20), (20, 220, 20), (20, 20, 220)


def write_mp4(path, colours, size=64):
    """A real H.264 .mp4 whose frames are flat colours, written with imageio's ffmpeg."""
    import imageio.v2 as imageio

    with imageio.get_writer(str(path), fps=8, codec="libx264", macro_block_size=16) as writer:
        for colour in colours:
            writer.append_data(np.full((size, size, 3), colour, dtype=np.uint8))
    return path


def colour_of(url):
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        return tuple(int(v) for v in np.asarray(image.convert("RGB")).reshape(-1, 3).mean(axis=0))


def close(a, b, tolerance=24):
    return max(abs(x - y) for x, y in zip(a, b)) <= tolerance


@pytest.fixture(scope="module")
def server():
    server = stand_in_server.start()
    yield server
    server.shutdown()


def test_frame_indices_are_first_middle_last_or_evenly_spaced():
    assert frame_indices(9, 3) == [0, 4, 8]
    assert frame_indices(10, 4) == [0, 3, 6, 9]
    assert frame_indices(2, 3) == [0, 1]
    assert frame_indices(1, 3) == [0] and frame_indices(0, 3) == []


def test_frames_come_from_the_video_in_time_order(tmp_path):
    video = write_mp4(tmp_path / "clip.mp4", [RED] * 5 + [GREEN] * 5 + [BLUE] * 5)
    urls = video_frame_urls(video, 3)
    assert [u.startswith("data:image/png;base64,") for u in urls] == [True] * 3
    first, middle, last = map(colour_of, urls)
    assert close(first, RED) and close(middle, GREEN) and close(last, BLUE)
    assert len(video_frame_urls(video, 5)) == 5


def test_video_samples_are_judged_from_frames_with_temporal_consistency(server, tmp_path):
    steady = write_mp4(tmp_path / "steady.mp4", [GREEN] * 12)
    flicker = write_mp4(tmp_path / "flicker.mp4", [RED] * 4 + [BLUE] * 4 + [GREEN] * 4)
    judge = VlmJudge(JudgeServerConfig(server.url(), "vlm", repeats=1, timeout_s=5), video_frames=4)
    start = len(server.requests)
    good = judge.score_run([(steady, "a green wall")])
    bad = judge.score_run([(flicker, "a green wall")])
    sent = server.requests[start]["body"]["messages"]
    assert "temporal_consistency" in sent[0]["content"]
    parts = sent[1]["content"]
    assert parts[0]["type"] == "text" and "a green wall" in parts[0]["text"]
    assert [p["type"] for p in parts[1:]] == ["image_url"] * 4
    assert set(good.details["criteria_means"]) == set(VIDEO_CRITERIA)
    assert good.details["images"][0]["frames"] == 4
    assert good.details["criteria_means"]["temporal_consistency"] == 10
    assert bad.details["criteria_means"]["temporal_consistency"] == 1
    assert good.score == pytest.approx(1 - (7 + 8 + 9 + 10) / 40)
    assert bad.score == pytest.approx(1 - (7 + 8 + 9 + 1) / 40)


def test_the_session_picks_each_prompts_video_over_its_frames(tmp_path):
    prompts = [SamplePrompt("a cat", seed=1), SamplePrompt("a dog", seed=2)]
    samples = [
        {"path": str(tmp_path / "p0_f0.png"), "step": 10, "prompt_index": 0, "frame": 0, "kind": "image"},
        {"path": str(tmp_path / "p0.mp4"), "step": 10, "prompt_index": 0, "frame": None, "kind": "video"},
        {"path": str(tmp_path / "p1.mp4"), "step": 10, "prompt_index": 1, "frame": None, "kind": "video"},
        {"path": str(tmp_path / "old.mp4"), "step": 5, "prompt_index": 0, "frame": None, "kind": "video"},
    ]
    assert [(p.name, text) for p, text in final_samples(samples, prompts)] == [("p0.mp4", "a cat"),
                                                                                ("p1.mp4", "a dog")]
    assert [p.name for p, _ in final_samples(samples, prompts, step=5)] == ["old.mp4"]
