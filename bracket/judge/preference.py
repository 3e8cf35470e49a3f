"""The preference judge: a PickScore-style CLIP preference model, compared only within one prompt.

A preference model (PickScore, HPSv2) is a CLIP fine-tuned on people's choices between two images
**of the same prompt**: its figure — the logit ``scale × cos(image, prompt)`` — orders images of one
prompt well, and says little across prompts (some prompts simply score higher). So this judge
never compares figures of different prompts: for each prompt, it counts which of the compared runs
(or steps) beats which on that prompt's sample (a tie is half a win each way); a run's figure is
its **share of wins**, averaged over the prompts on which it met another run; the score is
``1 − share`` (0: it beats every other run on every prompt). A run that met no other run on any
prompt has no data. Off by default (weight 0, ``bracket.judge.combine``); the worker computes the
figures only where a preference model is configured (``BRACKET_JUDGE_PREFERENCE``). Pure functions,
as every judge.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from bracket.judge.base import JudgeResult

NAME = "preference"
SCALE = "share of same-prompt comparisons won, 0..1, higher is better (preference model's logit)"

K = TypeVar("K", bound=Hashable)


def win_shares(figures: Mapping[K, Mapping[str, float]]) -> dict[K, tuple[float, int]]:
    """Key -> (mean share of wins over the prompts where it met another key, how many prompts), from
    ``figures``: key -> prompt -> the preference figure of its sample of that prompt. Keys that met
    no other key on any prompt are left out."""
    prompts = {prompt for table in figures.values() for prompt in table}
    shares: dict[K, list[float]] = {}
    for prompt in sorted(prompts):
        mine = {key: float(table[prompt]) for key, table in figures.items() if prompt in table}
        if len(mine) < 2:
            continue
        for key, value in mine.items():
            others = [v for other, v in mine.items() if other != key]
            wins = sum(1.0 if value > v else 0.5 if value == v else 0.0 for v in others)
            shares.setdefault(key, []).append(wins / len(others))
    return {key: (sum(values) / len(values), len(values)) for key, values in shares.items()}


def score_preference(figures: Mapping[K, Mapping[str, float]]) -> dict[K, JudgeResult]:
    """The judge's result per key (run or step) of ``figures`` (see :func:`win_shares`)."""
    shares = win_shares(figures)
    out: dict[K, JudgeResult] = {}
    for key in figures:
        if key in shares:
            share, prompts = shares[key]
            out[key] = JudgeResult.scored(1.0 - share, {"raw": round(share, 5), "prompts": prompts, "scale": SCALE})
        else:
            out[key] = JudgeResult.no_data("no sample shares a prompt with another run's")
    return out
