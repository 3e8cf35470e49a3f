"""Sample prompts: the fixed prompts and seeds every run of a session renders.

A session writes one list of :class:`SamplePrompt` and every trial renders exactly those
prompts with exactly those seeds; that is what makes a side-by-side grid a fair comparison.
People type prompts in the trainers' own line syntax (``a red circle --d 42 --w 512``);
:func:`parse_prompt_lines` reads it and :func:`format_prompt_line` writes it back for the
trainer (sd-scripts and musubi-tuner share the ``--<letter> value`` syntax).

Prompts come in two kinds (:attr:`SamplePrompt.kind`): *in-distribution* (captions like the
dataset's) and *held-out* (the subject in contexts the captions never show, which measure how
far a run still follows new prompts). The lines after a comment line ``# held-out`` are held-out
prompts, those after ``# in-distribution`` (and before any marker) in-distribution ones; the
marker is a comment, so the trainers never see it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bracket.errors import BracketError
from bracket.safe_text import PROMPT_CONTROLS

#: option letter -> (attribute, type); the subset both sd-scripts and musubi-tuner accept
_OPTIONS: dict[str, tuple[str, type]] = {
    "d": ("seed", int),
    "w": ("width", int),
    "h": ("height", int),
    "f": ("frames", int),
    "s": ("steps", int),
    "l": ("cfg_scale", float),
    "g": ("guidance", float),
    "fs": ("flow_shift", float),
    "n": ("negative", str),
    "ci": ("control_images", str),
    "i": ("image", str),
    #: musubi-tuner's one-frame inference options (``target_index=1,control_index=0``)
    "of": ("one_frame", str),
}
#: sane ranges of the numeric options (a sample of 100000 px or 10**6 steps is a typo, not a wish)
_LIMITS: dict[str, tuple[int, int]] = {"seed": (0, 2**32 - 1), "width": (16, 8192), "height": (16, 8192),
                                       "frames": (1, 1025), "steps": (1, 1000)}
#: at most this many prompts, each at most this many characters (every run renders every prompt)
MAX_PROMPTS = 64
MAX_PROMPT_CHARS = 4000
_SPLIT = re.compile(r"\s+--(?=[A-Za-z]+\b)")
#: the comment line that starts the held-out prompts, and the one that goes back to in-distribution
HELD_OUT_MARKER = "# held-out"
IN_DISTRIBUTION_MARKER = "# in-distribution"
#: the two prompt kinds (what the image judges and the stored sample records call them)
PROMPT_KINDS = ("in", "held_out")


class PromptError(BracketError):
    """A sample-prompt line that the trainers would not understand."""


@dataclass(frozen=True)
class SamplePrompt:
    """One prompt, rendered by every run with the same seed and size."""

    text: str
    seed: int
    width: int | None = None
    height: int | None = None
    frames: int | None = None
    steps: int | None = None
    cfg_scale: float | None = None
    guidance: float | None = None
    flow_shift: float | None = None
    negative: str | None = None
    image: str | None = None
    one_frame: str | None = None
    control_images: tuple[str, ...] = field(default_factory=tuple)
    #: "in" (in-distribution: like the dataset's captions) or "held_out" (contexts it never shows)
    kind: str = "in"

    def with_defaults(self, **defaults: Any) -> "SamplePrompt":
        """A copy with ``defaults`` filled in where this prompt leaves them unset."""
        missing: dict[str, Any] = {k: v for k, v in defaults.items() if getattr(self, k) in (None, ())}
        return replace(self, **missing) if missing else self


def parse_prompt_line(line: str, *, default_seed: int) -> SamplePrompt:
    """Parse ``text --d 42 --w 512`` into a prompt; unknown or malformed options raise."""
    parts = _SPLIT.split(line.strip())
    text = parts[0].strip()
    if not text:
        raise PromptError(f"Sample prompt line {line!r} has no prompt text before its options.")
    values: dict[str, Any] = {"seed": default_seed}  # each option's value is of its _OPTIONS type
    controls: list[str] = []
    for part in parts[1:]:
        letter, _, raw = part.partition(" ")
        letter = letter.lower()
        raw = raw.strip()
        if letter not in _OPTIONS:
            known = ", ".join(f"--{k}" for k in _OPTIONS)
            raise PromptError(f"Sample prompt {text!r}: unknown option --{letter}; use one of {known}.")
        attribute, kind = _OPTIONS[letter]
        if not raw:
            raise PromptError(f"Sample prompt {text!r}: option --{letter} needs a value.")
        try:
            value = kind(raw)
        except ValueError:
            raise PromptError(
                f"Sample prompt {text!r}: --{letter} {raw!r} is not a valid {kind.__name__}."
            ) from None
        if attribute in ("width", "height", "frames", "steps") and int(value) <= 0:
            raise PromptError(f"Sample prompt {text[:60]!r}: --{letter} must be a positive number.")
        limit = _LIMITS.get(attribute)
        if limit is not None and not limit[0] <= value <= limit[1]:
            raise PromptError(f"Sample prompt {text[:60]!r}: --{letter} {raw} is outside {limit[0]}..{limit[1]}.")
        if attribute == "control_images":
            controls.append(str(value))
        else:
            values[attribute] = value
    return SamplePrompt(text=text, control_images=tuple(controls), **values)


def parse_prompt_lines(lines: Iterable[str] | str, *, first_seed: int = 1000) -> list[SamplePrompt]:
    """Parse a block of prompt lines; blank and ``#`` lines are skipped.

    A prompt without ``--d`` gets a fixed seed (``first_seed`` + its index) so that the
    same prompt is always rendered with the same seed in every run.
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    prompts: list[SamplePrompt] = []
    kind = "in"
    for raw in lines:
        line = raw.strip()
        if line.startswith("#"):
            kind = _marker_kind(line, kind)
            continue
        if not line:
            continue
        control = PROMPT_CONTROLS.search(line.replace("\t", " "))
        if control:
            raise PromptError(f"Sample prompt {PROMPT_CONTROLS.sub('?', line[:40])!r} holds the control character "
                              f"U+{ord(control.group()):04X}; remove it (prompts go raw into the trainer's prompt "
                              "file).")
        if len(line) > MAX_PROMPT_CHARS:
            raise PromptError(f"Sample prompt {line[:40]!r}… is {len(line)} characters long; keep each prompt under "
                              f"{MAX_PROMPT_CHARS}.")
        if len(prompts) == MAX_PROMPTS:
            raise PromptError(f"More than {MAX_PROMPTS} sample prompts; every run renders every prompt, so keep a "
                              "few that show what matters.")
        prompts.append(replace(parse_prompt_line(line, default_seed=first_seed + len(prompts)), kind=kind))
    return prompts


def _marker_kind(comment: str, current: str) -> str:
    """The prompt kind after the comment line ``comment`` (a kind marker, else ``current``)."""
    words = " ".join(comment.lstrip("#").replace("_", "-").lower().split())
    if words in ("held-out", "held out", "held-out prompts", "held out prompts"):
        return "held_out"
    if words in ("in-distribution", "in distribution", "in-distribution prompts", "in distribution prompts"):
        return "in"
    return current


def format_prompt_block(prompts: Sequence[SamplePrompt]) -> str:
    """The prompt lines of ``prompts`` with their kind markers, as :func:`parse_prompt_lines` reads them."""
    lines: list[str] = []
    kind = "in"
    for prompt in prompts:
        if prompt.kind != kind:
            lines.append(HELD_OUT_MARKER if prompt.kind == "held_out" else IN_DISTRIBUTION_MARKER)
            kind = prompt.kind
        lines.append(format_prompt_line(prompt))
    return "\n".join(lines)


def _format_number(value: float | int) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def format_prompt_line(prompt: SamplePrompt, *, letters: Sequence[str] | None = None) -> str:
    """The trainer line for ``prompt``; ``letters`` limits which options are written."""
    allowed = set(letters) if letters is not None else set(_OPTIONS)
    words = [prompt.text.replace("\n", " ")]
    for letter, (attribute, _kind) in _OPTIONS.items():
        if letter not in allowed:
            continue
        value = getattr(prompt, attribute)
        if value in (None, ()):
            continue
        if attribute == "control_images":
            words.extend(f"--ci {path}" for path in value)
        elif isinstance(value, (int, float)):
            words.append(f"--{letter} {_format_number(value)}")
        else:
            words.append(f"--{letter} {value}")
    return " ".join(words)


def write_prompt_file(path, prompts: Sequence[SamplePrompt], *, letters: Sequence[str] | None = None) -> None:
    """Write ``prompts`` one per line, in the trainers' ``.txt`` prompt-file syntax."""
    text = "\n".join(format_prompt_line(p, letters=letters) for p in prompts) + "\n"
    path.write_text(text, encoding="utf-8")
