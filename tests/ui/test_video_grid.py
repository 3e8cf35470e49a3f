"""Compare for a video preset: real .mp4 samples (musubi names) become playable cells, same seed per prompt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bracket.app.grid import build_grid
from bracket.app.thumbs import ThumbnailCache
from bracket.session.process.execute import sample_record
from bracket.session.scoring import collect_samples
from bracket.trainer.prompts import parse_prompt_lines
from ui.render import grid_html

imageio = pytest.importorskip("imageio.v2", reason="imageio-ffmpeg writes the .mp4 fixtures")


def _write_clip(path: Path, colour: tuple[int, int, int], frames: int = 9) -> None:
    """A real H.264 clip: ``frames`` 32x32 frames fading in ``colour``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with imageio.get_writer(path, fps=8, codec="libx264", macro_block_size=16) as writer:
        for index in range(frames):
            frame = np.zeros((32, 32, 3), dtype=np.uint8)
            frame[:] = [int(c * (index + 1) / frames) for c in colour]
            writer.append_data(frame)


def test_video_samples_make_a_playable_grid_with_one_seed_per_prompt(tmp_path):
    prompts = parse_prompt_lines("a red ball rolls --d 11\na blue wave --d 12")
    runs = []
    for run_id, colour in ((1, (255, 0, 0)), (2, (0, 0, 255))):
        sample_dir = tmp_path / "runs" / "s" / "trials" / f"{run_id:04d}" / "output" / "sample"
        for index, prompt in enumerate(prompts):
            for step in (10, 20):
                _write_clip(sample_dir / f"wan_{step:06d}_{index:02d}_20261129120000_{prompt.seed}.mp4", colour)
        samples = [sample_record(s) for s in collect_samples(sample_dir)]
        assert {s["kind"] for s in samples} == {"video"} and len(samples) == 4
        runs.append({"id": run_id, "config_name": f"cfg{run_id}", "seed": 42, "status": "done", "params": {},
                     "samples": samples, "run_dir": str(sample_dir.parent.parent)})
    reader = imageio.get_reader(runs[0]["samples"][0]["path"])
    assert sum(1 for _ in reader) == 9, "the fixture is a real, decodable clip"
    reader.close()

    grid = build_grid(runs, prompts, thumbs=ThumbnailCache(tmp_path / "thumbs"), runs_dir=tmp_path / "runs",
                      sample_kind="video")
    assert grid.steps == [10, 20] and grid.step == 20
    for row_index, row in enumerate(grid.rows):
        assert [cell.kind for cell in row] == ["video", "video"]
        assert {cell.seed for cell in row} == {prompts[row_index].seed}
        assert all(cell.path.endswith(f"_{row_index:02d}_20261129120000_{prompts[row_index].seed}.mp4")
                   and "_000020_" in cell.path for cell in row)
    earlier = build_grid(runs, prompts, thumbs=ThumbnailCache(tmp_path / "thumbs"), runs_dir=tmp_path / "runs",
                         sample_kind="video", step=10)
    assert all("_000010_" in cell.path for row in earlier.rows for cell in row)
    html = grid_html(grid)
    assert html.count("<video") == 4 and "autoplay" in html and "loop" in html and ".mp4" in html
