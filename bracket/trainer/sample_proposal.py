"""Sample prompts proposed from a preset's dataset, so a search is rated on what it trains.

Every run renders the same prompts (:mod:`bracket.trainer.prompts`); they belong to the dataset
and the preset, so nothing here falls back to another preset's prompts. :func:`propose_prompts`
reads them from the trainer's dataset and says where they came from:

* **images and video frames** (kohya datasets: a TOML or a folder with ``.txt`` captions): a few
  captions spread over the dataset (*in-distribution* prompts), with the trigger word or class
  token every caption shares named, then, after a ``# held-out`` line, a few *held-out* prompts:
  that subject in settings, styles and compositions no caption mentions (:func:`held_out_lines`),
  whose following measures how far a run still follows new prompts (none for an edit or
  image-to-video preset, whose prompt says what to do with its input); an edit or image-to-video
  preset's control or start image is filled in by the trainer from the dataset (or its *Sample
  control/start image* field) when each run samples;
* **text answers** (LLM presets): instructions of the held-out eval rows, cut with the preset's
  own split size and seed, so the answers are to questions it does not train on;
* a trainer's own :attr:`default_sample_prompts` (the CPU demo's shapes) come first.

The person edits the lines before Start; a search of a preset that samples refuses to start
with none (``bracket.session.create``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket.dataset.captions import read_caption
from bracket.errors import BracketError
from bracket.safe_text import without_controls
from bracket.trainer.prompts import HELD_OUT_MARKER

#: how many prompts are proposed (every run renders every prompt)
COUNT = 4
#: how many held-out prompts are proposed besides them (image and video presets)
HELD_OUT_COUNT = 3
#: contexts for held-out prompts: (the words a caption must not mention, the context); settings,
#: styles and compositions far from a typical LoRA dataset, tried in this order
CONTEXTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("snow", "mountain", "winter"), "standing on a snowy mountain top at dawn"),
    (("watercolor", "watercolour", "painting", "painted"), "as a watercolor painting"),
    (("underwater", "ocean", "sea", "fish"), "underwater, surrounded by fish"),
    (("market", "night", "neon"), "in a crowded night market lit by neon signs"),
    (("pencil", "sketch", "drawing"), "as a rough pencil sketch"),
    (("desert", "sand", "above", "aerial"), "seen from high above in an empty desert"),
    (("astronaut", "space", "moon"), "as an astronaut on the moon"),
    (("library", "books", "reading"), "reading in an old library, wide shot"),
)
#: a proposed prompt is cut to this many characters (a caption or an instruction can be long)
MAX_CHARS = 300
_MEDIA = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".mp4", ".webm", ".mov", ".avi", ".mkv"}
#: text that the prompt-line syntax would read as an option (`` --x``)
_OPTION = re.compile(r"\s--(?=[A-Za-z])")
#: what each sample kind is called where the prompts are typed and explained
KIND_WORDS = {"image": "images", "video": "video frames", "text": "text answers"}


@dataclass(frozen=True)
class ProposedPrompts:
    """Prompt lines (trainer line syntax, fixed seeds) and where they came from."""

    text: str
    source: str


def _line(text: str, seed: int) -> str:
    """One proposed prompt line: control characters dropped (a typed prompt holding one is refused),
    whitespace collapsed, option-like text defused, cut to :data:`MAX_CHARS`."""
    flat = _OPTION.sub(" - ", " ".join(without_controls(str(text)).split()))[:MAX_CHARS].strip()
    return f"{flat} --d {seed}"


def _spread(items: Sequence[Any], count: int) -> list[Any]:
    """``count`` items spread evenly over ``items`` (all of them when there are fewer)."""
    if len(items) <= count:
        return list(items)
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)] if count > 1 else [items[0]]


#: leading words captions share that name no subject ("a red circle", "the dog")
_ARTICLES = frozenset({"a", "an", "the", "this", "that", "some"})


def shared_token(captions: Sequence[str]) -> str:
    """The leading word or comma-separated tag every caption shares (a trigger word or a class
    token such as ``sks dog``), or "" when they share none."""
    if len(captions) < 2:
        return ""
    heads = [c.strip().split(",")[0].strip() for c in captions]
    if all(h == heads[0] for h in heads) and heads[0]:
        return heads[0]
    first = captions[0].split()
    if first and first[0].lower() not in _ARTICLES and all(c.split()[:1] == first[:1] for c in captions):
        return first[0]
    return ""


def _captions(dataset: Path, style: str) -> list[tuple[Path, str]]:
    """(media file, caption) of every captioned image or video of a kohya dataset, in name order;
    each caption read by ``bracket.dataset.captions.read_caption`` (inside its folder, a regular
    file, a few kB at most; others are left out)."""
    from bracket.dataset.runtime import load_dataset_spec

    document = load_dataset_spec(dataset, style)
    extension = str(document.get("general", {}).get("caption_extension") or ".txt")
    found: list[tuple[Path, str]] = []
    for block in document.get("datasets", []):
        for entry in block.get("subsets", [block]):
            ext = str(entry.get("caption_extension") or block.get("caption_extension") or extension)
            for key in ("image_dir", "image_directory", "video_directory"):
                folder = entry.get(key)
                if not isinstance(folder, str) or not Path(folder).expanduser().is_dir():
                    continue
                for media in sorted(Path(folder).expanduser().iterdir()):
                    caption = media.with_suffix(ext)
                    if media.suffix.lower() in _MEDIA and caption.exists():
                        text = read_caption(caption, Path(folder).expanduser()).text.strip()
                        if text:
                            found.append((media, text))
    return found


def held_out_lines(captions: Sequence[str], subject: str, *, count: int = HELD_OUT_COUNT,
                   first_seed: int = 101) -> list[str]:
    """Prompt lines that put ``subject`` (the trigger word, or the first caption's lead) in contexts
    none of ``captions`` mention: a context is skipped when a caption holds any of its words."""
    subject = subject.strip() or "the subject"
    words = {w.strip(".,;:!?()\"'").lower() for c in captions for w in c.split()}
    fresh = [context for avoid, context in CONTEXTS if not words & set(avoid)]
    return [_line(f"{subject}, {context}", first_seed + i) for i, context in enumerate(fresh[:count])]


def _instruction(row: Mapping[str, Any], data_format: str) -> str:
    """The question of one LLM dataset row (its first user turn), or ""."""
    if data_format == "alpaca":
        extra = str(row.get("input") or "").strip()
        return f"{row.get('instruction', '')} {extra}".strip()
    if data_format == "completion":
        words = str(row.get("text") or "").split()
        return " ".join(words[: max(1, len(words) // 2)][:60])  # the first half: the model continues it
    turns = row.get("messages") if data_format == "chat" else row.get("conversations")
    for turn in turns if isinstance(turns, list) else []:
        if isinstance(turn, Mapping) and str(turn.get("role", turn.get("from", ""))) in ("user", "human"):
            return str(turn.get("content", turn.get("value", ""))).strip()
    return ""


def _text_prompts(trainer: Any, count: int) -> ProposedPrompts | None:
    from bracket.trainer.llm.dataset import eval_row_count, read_rows

    source = Path(str(trainer.field("dataset", "") or "")).expanduser()
    data_format = str(trainer.field("data_format", "alpaca"))
    rows = read_rows(source)
    if len(rows) < 2:
        return None
    order = list(range(len(rows)))  # the split the runs use (bracket.trainer.llm.dataset.split_dataset)
    random.Random(int(trainer.field("split_seed", "42"))).shuffle(order)
    held_out = sorted(order[: eval_row_count(len(rows), float(trainer.field("eval_size", "200")))])
    questions = [q for q in (_instruction(rows[i], data_format) for i in held_out) if q]
    if not questions:
        return None
    picked = _spread(questions, count)
    lines = [_line(q, 1 + i) for i, q in enumerate(picked)]
    return ProposedPrompts("\n".join(lines), f"{len(picked)} held-out instructions of {source} "
                                             f"({len(held_out)} eval rows, "
                                             f"split seed {trainer.field('split_seed', '42')})")


def _media_prompts(trainer: Any, count: int) -> ProposedPrompts | None:
    source = Path(str(trainer.field("dataset", "") or "")).expanduser()
    captioned = _captions(source, str(trainer.dataset_style))
    if not captioned:
        return None
    picked = _spread(captioned, count)
    lines = [_line(text, 1 + i) for i, (_, text) in enumerate(picked)]
    what = f"{len(picked)} captions of {source} ({', '.join(m.name for m, _ in picked)})"
    texts = [text for _, text in captioned]
    token = shared_token(texts)
    if token:
        what += f"; every caption starts with {token!r} (the trigger word or class token)"
    start = getattr(trainer, "needs_start_image", None)
    conditioned = getattr(trainer, "needs_control_images", False) or (callable(start) and start())
    # an edit or image-to-video preset's prompt says what to do with its input: no held-out contexts
    held_out = [] if conditioned else held_out_lines(texts, token or texts[0].split(",")[0])
    if held_out:
        lines += [HELD_OUT_MARKER, *held_out]
        what += (f"; then {len(held_out)} held-out prompts (that subject in contexts no caption shows: "
                 "how well a run still follows new prompts)")
    if getattr(trainer, "needs_control_images", False):
        what += "; each sample's control image: the 'Sample control image' field, else the dataset's first"
    start = getattr(trainer, "needs_start_image", None)
    if callable(start) and start():
        what += "; each sample's start image: the 'Sample start image' field, else the dataset's first"
    return ProposedPrompts("\n".join(lines), what)


def propose_prompts(trainer: Any, *, count: int = COUNT) -> ProposedPrompts | None:
    """Prompts for ``trainer``'s samples from its own dataset (see the module), or None when
    there is nothing to propose them from (no dataset yet, no captions, a trainer that renders
    no samples) — the person then types them."""
    if not getattr(trainer, "writes_samples", True):
        return None
    own = tuple(getattr(trainer, "default_sample_prompts", ()) or ())
    if own:
        return ProposedPrompts("\n".join(own), "the demo's shapes (its generated dataset's captions)")
    try:
        if getattr(trainer, "sample_kind", "image") == "text":
            return _text_prompts(trainer, count)
        if getattr(trainer, "dataset_style", None):
            return _media_prompts(trainer, count)
    except (BracketError, OSError, ValueError, TypeError):
        return None
    return None
