"""Find a run's sample images and videos and read step, prompt and seed from their names.

sd-scripts and musubi-tuner write samples to ``<output_dir>/sample/`` named

    [<output_name>_]<NNNNNN | eNNNNNN>_<ii>_<YYYYmmddHHMMSS>[_<seed>].png     sd-scripts
    [<output_name>_]<NNNNNN | eNNNNNN>_<ii>_<YYYYmmddHHMMSS>[_<seed>]_<fff>.png  musubi frame
    [<output_name>_]<NNNNNN | eNNNNNN>_<ii>_<YYYYmmddHHMMSS>[_<seed>].mp4    musubi video

and ostris/ai-toolkit ``<samples folder>/<ms>__<NNNNNNNNN>_<i>.jpg`` (``.webp`` for a clip; no
seed). ``NNNNNN`` is the step, ``eNNNNNN`` an epoch, ``ii`` the prompt index.
:func:`samples_by_step` builds what the Compare grid needs: every prompt's sample per step.

Names are read from the right (``output_name`` may hold underscores and digits): the anchor is
the right-most ``<step|eN>_<ii>_<timestamp>`` with a valid timestamp and at most two all-digit
tokens after it. One token after an image's timestamp is the frame with ``frames=True``
(musubi), the seed with ``frames=False`` (sd-scripts), else three digits with a leading zero
read as a frame (a seed is never zero-padded; Bracket's held-out prompts have seeds 101 and up);
Bracket gives every prompt a seed, so a musubi frame of its own runs always follows a seed. ``e000000``
(``--sample_at_first``) is step 0; other epoch samples have ``step=None``. Anything else is not
a sample: :func:`parse_sample_name` returns None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
VIDEO_SUFFIXES = (".mp4", ".webm")

_STEP = re.compile(r"(e?)(\d{6,})")
_INDEX = re.compile(r"\d{2,}")
_TIMESTAMP = re.compile(r"\d{14}")
_NUMBER = re.compile(r"\d+")
_AI_TOOLKIT = re.compile(r"(\d{10,})__(\d{9,})_(\d+)")


@dataclass(frozen=True)
class SampleFile:
    """One sample file and what its name says."""

    path: Path
    #: global step; 0 for the ``e000000`` sample of ``--sample_at_first``; None for epoch samples
    step: int | None
    #: epoch of an epoch-triggered sample (0 for ``--sample_at_first``), else None
    epoch: int | None
    prompt_index: int
    seed: int | None
    #: musubi frame index (``_000``), None for sd-scripts images and videos
    frame: int | None
    #: "image" or "video"
    kind: str
    #: ``YYYYmmddHHMMSS`` as written in the name
    timestamp: str
    #: the ``--output_name`` prefix ("" when the trainer had none)
    output_name: str = ""

    @property
    def order(self) -> tuple[int, int]:
        """Chronological key: step samples by step, then epoch samples by epoch."""
        if self.step is not None:
            return (0, self.step)
        return (1, self.epoch if self.epoch is not None else 0)


def _is_timestamp(token: str) -> bool:
    if not _TIMESTAMP.fullmatch(token):
        return False
    try:
        datetime.strptime(token, "%Y%m%d%H%M%S")
    except ValueError:
        return False
    return True


def parse_sample_name(name: str, *, frames: bool | None = None) -> SampleFile | None:
    """Read a sample file name (see the module docstring); None if it is not one.

    ``frames``: True for musubi-tuner (a lone number after the timestamp of an image is a
    frame index), False for sd-scripts (it is a seed), None to guess.
    """
    path = Path(name)
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        kind = "image"
    elif suffix in VIDEO_SUFFIXES:
        kind = "video"
    else:
        return None
    ai_toolkit = _AI_TOOLKIT.fullmatch(path.name[: -len(path.suffix)])
    if ai_toolkit:
        written = datetime.fromtimestamp(int(ai_toolkit.group(1)) / 1000, tz=timezone.utc)
        return SampleFile(path=path, step=int(ai_toolkit.group(2)), epoch=None, prompt_index=int(ai_toolkit.group(3)),
                          seed=None, frame=None, kind=kind, timestamp=written.strftime("%Y%m%d%H%M%S"))
    tokens = path.name[: -len(path.suffix)].split("_")
    max_trailing = 2 if kind == "image" else 1
    for trailing in range(0, max_trailing + 1):
        t = len(tokens) - 1 - trailing  # index of the timestamp
        if t < 2:
            break
        after = tokens[t + 1 :]
        if not all(_NUMBER.fullmatch(tok) for tok in after):
            continue
        if not (_is_timestamp(tokens[t]) and _INDEX.fullmatch(tokens[t - 1])):
            continue
        step_match = _STEP.fullmatch(tokens[t - 2])
        if step_match is None:
            continue
        seed, frame = _read_trailing(after, kind=kind, frames=frames)
        number = int(step_match.group(2))
        if step_match.group(1):  # eNNNNNN
            epoch: int | None = number
            step: int | None = 0 if number == 0 else None
        else:
            epoch, step = None, number
        return SampleFile(
            path=path,
            step=step,
            epoch=epoch,
            prompt_index=int(tokens[t - 1]),
            seed=seed,
            frame=frame,
            kind=kind,
            timestamp=tokens[t],
            output_name="_".join(tokens[: t - 2]),
        )
    return None


def _read_trailing(after: list[str], *, kind: str, frames: bool | None) -> tuple[int | None, int | None]:
    """(seed, frame) from the tokens after the timestamp."""
    if not after:
        return None, None
    if len(after) == 2:
        return int(after[0]), int(after[1])
    token = after[0]
    if kind == "video":
        return int(token), None
    # guessed: musubi writes a frame zero-padded to three digits (``_000``); a seed is never padded
    is_frame = frames if frames is not None else (len(token) == 3 and token.startswith("0"))
    return (None, int(token)) if is_frame else (int(token), None)


def sample_sort_key(sample: SampleFile) -> tuple:
    """(step/epoch order, prompt index, frame, time written, name)."""
    frame = sample.frame if sample.frame is not None else -1
    return (*sample.order, sample.prompt_index, frame, sample.timestamp, sample.path.name)


def collect_samples(sample_dir: Path | None, *, frames: bool | None = None) -> list[SampleFile]:
    """Every sample in ``sample_dir`` (not recursive), sorted by :func:`sample_sort_key`.

    A missing folder gives []; files whose names are not sample names are ignored.
    """
    if sample_dir is None:
        return []
    sample_dir = Path(sample_dir)
    if not sample_dir.is_dir():
        return []
    found: list[SampleFile] = []
    for entry in sample_dir.iterdir():
        if not entry.is_file():
            continue
        parsed = parse_sample_name(entry.name, frames=frames)
        if parsed is not None:
            found.append(replace(parsed, path=entry))
    return sorted(found, key=sample_sort_key)


def samples_by_step(samples: Iterable[SampleFile]) -> dict[int, dict[int, SampleFile]]:
    """step -> prompt index -> the sample to show (the Compare grid's cells).

    Per (step, prompt) a video wins over frames, and otherwise the lowest frame (then the
    earliest written) is taken. Epoch samples without a step (``step=None``) are left out;
    ``e000000`` counts as step 0. Keys come out in ascending order.
    """
    chosen: dict[int, dict[int, SampleFile]] = {}
    for sample in sorted(samples, key=sample_sort_key):
        if sample.step is None:
            continue
        cells = chosen.setdefault(sample.step, {})
        current = cells.get(sample.prompt_index)
        if current is None or (sample.kind == "video" and current.kind != "video"):
            cells[sample.prompt_index] = sample
    return {step: dict(sorted(cells.items())) for step, cells in sorted(chosen.items())}


def image_problem(path: Path | str) -> str | None:
    """Why the image at ``path`` cannot be read (None when it decodes): a trainer killed while it
    wrote a PNG leaves a truncated file. Every reader of samples skips such files and lists them."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.load()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        return f"{Path(path).name}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return None
