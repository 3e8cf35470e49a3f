"""The VLM judge: a vision-language model on the user's own machine scores each sample image or video.

It talks to the judge model server (:mod:`bracket.judge.server`: LM Studio, Ollama, vLLM,
llama.cpp -- any OpenAI-compatible chat-completions endpoint, with retries, backoff and a
hidden API key).

For every sample (image path, prompt) the judge sends the image as a base64 data URL in an
``image_url`` content part, with the prompt and a fixed rubric, and asks for strict JSON
``{"prompt_adherence": 0-10, "quality": 0-10, "artifacts": 0-10}`` (10 is best for all three;
for ``artifacts`` 10 means none visible). A reply inside a ```json fence is accepted.

A **video** sample (``.mp4``, ``.webm``, ``.mov``, ``.gif``) is sent as ``video_frames``
frames read with ``imageio`` (its ffmpeg plugin): evenly spaced from the first to the last
frame (3 frames = first, middle, last), each as a PNG ``image_url`` part in time order. The
video rubric adds a fourth criterion, ``temporal_consistency`` (the same subject, identity
and scene from frame to frame, no flicker or sudden jumps).

Each sample is asked ``repeats`` times; its goodness is the mean of its criteria over the
repeats / 10, and the run's score is ``1 - mean goodness`` over its samples (lower is better).
When the repeats disagree (a criterion's standard deviation above ``disagreement_std``) the
sample is listed in ``details["disagreements"]``; the score still counts.

If any sample still cannot be scored after the retries, the whole run is left **unscored by
this judge** (score None and the reason), never raised, so runs are not compared on different
prompt subsets. The judge holds no mutable state: one instance can score runs from several
threads at once (the session uses a ThreadPoolExecutor beside training).
"""


from __future__ import annotations

import base64
import io
import logging
import statistics
import time
from pathlib import Path
from typing import Any, Sequence

from bracket.judge.base import JudgeResult
from bracket.judge.server import JudgeServer, JudgeServerConfig, ReplyError, json_object, number_0_10

log = logging.getLogger(__name__)

CRITERIA = ("prompt_adherence", "quality", "artifacts")
VIDEO_CRITERIA = CRITERIA + ("temporal_consistency",)
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
VIDEO_TYPES = (".mp4", ".webm", ".mov", ".mkv", ".avi", ".gif")
#: frames sent per video sample by default: first, middle, last
DEFAULT_VIDEO_FRAMES = 3
RUBRIC = (
    "You are a strict judge of images made by a fine-tuned image model. You are given the text "
    "prompt and the image made from it. Score three things from 0 to 10, where 10 is always best:\n"
    "- prompt_adherence: how completely and exactly the image shows what the prompt asks for.\n"
    "- quality: overall visual quality: composition, detail, lighting, coherent anatomy and objects.\n"
    "- artifacts: absence of defects (noise, smears, extra limbs, garbled text, banding); "
    "10 = no visible artifacts, 0 = the image is ruined by them.\n"
    'Reply with only one JSON object and nothing else, e.g. {"prompt_adherence": 7, "quality": 6, '
    '"artifacts": 8}.'
)
VIDEO_RUBRIC = (
    "You are a strict judge of videos made by a fine-tuned video model. You are given the text "
    "prompt and frames of the video made from it, evenly spaced from the first to the last, in time "
    "order. Score four things from 0 to 10, where 10 is always best:\n"
    "- prompt_adherence: how completely and exactly the video shows what the prompt asks for.\n"
    "- quality: overall visual quality of the frames: composition, detail, lighting, coherent anatomy.\n"
    "- artifacts: absence of defects (noise, smears, extra limbs, garbled text, banding); "
    "10 = no visible artifacts.\n"
    "- temporal_consistency: the same subject, identity, scene and style from frame to frame, "
    "plausible motion, no flicker or sudden jumps; 10 = perfectly consistent.\n"
    'Reply with only one JSON object and nothing else, e.g. {"prompt_adherence": 7, "quality": 6, '
    '"artifacts": 8, "temporal_consistency": 7}.'
)
#: kept for callers of the first version of this module
VlmConfig = JudgeServerConfig
VlmReplyError = ReplyError


def parse_reply(text: str, criteria: Sequence[str] = CRITERIA) -> dict[str, float]:
    """The criteria from a model reply: plain JSON, or JSON inside a ```json fence."""
    data = json_object(text)
    return {key: number_0_10(data, key, text) for key in criteria}


def image_data_url(path: Path) -> str:
    """A ``data:<mime>;base64,...`` URL of an image file."""
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is None:
        raise ValueError(f"{path.name}: the VLM judge reads {', '.join(IMAGE_TYPES)} images only")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def frame_indices(total: int, count: int) -> list[int]:
    """``count`` frame numbers evenly spaced over ``total`` frames, first and last included."""
    if total <= 0:
        return []
    if count <= 1 or total == 1:
        return [0]
    return sorted({round(i * (total - 1) / (count - 1)) for i in range(count)})


def video_frames(path: Path, count: int = DEFAULT_VIDEO_FRAMES) -> list[Any]:
    """``count`` evenly spaced frames of a video (first, ..., last) as RGB PIL images."""
    import imageio.v2 as imageio
    from PIL import Image

    try:
        reader = imageio.get_reader(str(path))
    except (OSError, RuntimeError, ValueError) as exc:  # ffmpeg's message runs to pages: keep its first line
        raise ValueError(f"{path.name}: cannot read the video ({str(exc).splitlines()[0][:120]})") from None
    try:
        try:
            # the ffmpeg plugin's reader counts frames; imageio's typed base Reader has no such method
            total = int(reader.count_frames())  # type: ignore[attr-defined]
        except (AttributeError, RuntimeError, ValueError):
            total = reader.get_length()
        if not isinstance(total, int) or total <= 0 or total == float("inf"):
            total = sum(1 for _ in reader)
            reader.close()
            reader = imageio.get_reader(str(path))
        wanted = set(frame_indices(total, count))
        frames = [Image.fromarray(frame).convert("RGB") for index, frame in enumerate(reader) if index in wanted]
    finally:
        reader.close()
    if not frames:
        raise ValueError(f"{path.name}: the video has no frames")
    return frames


def video_frame_urls(path: Path, count: int = DEFAULT_VIDEO_FRAMES) -> list[str]:
    """PNG data URLs of ``count`` evenly spaced frames of a video (first, ..., last)."""
    urls = []
    for frame in video_frames(path, count):
        buffer = io.BytesIO()
        frame.save(buffer, format="PNG")
        urls.append("data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"))
    return urls


def is_video(path: Path) -> bool:
    return Path(path).suffix.lower() in VIDEO_TYPES


class VlmJudge:
    """Scores a run's samples with an OpenAI-compatible vision model (see the module docstring)."""

    def __init__(self, config: JudgeServerConfig, *, sleep=time.sleep, video_frames: int = DEFAULT_VIDEO_FRAMES
                 ) -> None:
        self.config = config
        self.video_frames = max(1, int(video_frames))
        self.server = JudgeServer(config, sleep=sleep)

    def __repr__(self) -> str:
        return f"VlmJudge({self.config!r})"

    def ask(self, image_urls: Sequence[str], prompt: str, *, video: bool = False) -> dict[str, float]:
        """One judgement of one sample (an image, or a video's frames), with retries; raises
        RuntimeError with a safe message."""
        criteria = VIDEO_CRITERIA if video else CRITERIA
        label = f"Prompt: {prompt}" + (f"\n(The {len(image_urls)} frames of the video follow in time order.)"
                                       if video else "")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": VIDEO_RUBRIC if video else RUBRIC},
            {"role": "user", "content": [{"type": "text", "text": label},
                                         *({"type": "image_url", "image_url": {"url": url}} for url in image_urls)]},
        ]
        return self.server.ask(messages, lambda text: parse_reply(text, criteria))

    # -- one run -------------------------------------------------------------------------

    def score_image(self, path: Path, prompt: str) -> dict[str, Any]:
        """Mean and spread of the criteria over ``repeats`` judgements of one sample (an image,
        or a video judged from its frames)."""
        video = is_video(path)
        urls = video_frame_urls(path, self.video_frames) if video else [image_data_url(path)]
        criteria = VIDEO_CRITERIA if video else CRITERIA
        replies = [self.ask(urls, prompt, video=video) for _ in range(max(1, self.config.repeats))]
        means = {k: statistics.fmean(r[k] for r in replies) for k in criteria}
        stds = {k: statistics.pstdev([r[k] for r in replies]) for k in criteria}
        return {
            "image": path.name,
            **({"frames": len(urls)} if video else {}),
            "means": means,
            "stds": stds,
            "goodness": statistics.fmean(means.values()) / 10.0,
            "disagreement": any(s > self.config.disagreement_std for s in stds.values()),
        }

    def score_run(self, samples: Sequence[tuple[Path, str]]) -> JudgeResult:
        """Score one run's (sample path, prompt) pairs; never raises for server or file trouble."""
        if not samples:
            return JudgeResult.no_data("no sample images to judge")
        images = []
        for path, prompt in samples:
            try:
                images.append(self.score_image(Path(path), prompt))
            except (RuntimeError, OSError, ValueError) as exc:
                reason = self.server.redact(f"VLM judge could not score {Path(path).name}: {exc}")
                log.warning("%s", reason)
                return JudgeResult.no_data(reason, {"model": self.config.model, "images_scored": len(images)})
        goodness = statistics.fmean(image["goodness"] for image in images)
        criteria = [k for k in VIDEO_CRITERIA if all(k in i["means"] for i in images)]
        details = {
            "model": self.config.model,
            "repeats": self.config.repeats,
            "images": images,
            "criteria_means": {k: statistics.fmean(i["means"][k] for i in images) for k in criteria},
            "disagreements": [i["image"] for i in images if i["disagreement"]],
        }
        note = "the VLM's repeats disagree on some samples" if details["disagreements"] else ""
        return JudgeResult.scored(1.0 - goodness, details, reason=note)
