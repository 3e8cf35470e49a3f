"""The order of the warm start: a curated config that repeats an earlier bet comes last.

What a fine-tune's outcome depends on most is the size of its update: the optimizer's
algorithm and its effective step. For LoRA that step is the learning rate times
``alpha / rank`` (kohya-ss, musubi-tuner and PEFT scale the LoRA output by alpha/rank), and
at a given step the rank itself matters little (Hu et al. 2021), nor do small regularisers
(LoRA dropout, weight decay). Implementations of one algorithm are one algorithm here:
8-bit, paged and fused AdamW train like AdamW (bitsandbytes' 8-bit optimizers match 32-bit
ones; Dettmers et al. 2021). So two configs with the same optimizer, effective step and
batch that differ only in :data:`SECONDARY_KNOBS` make the same bet; a config that also
changes the schedule, the warm-up, the timestep sampling or the flow shift makes another
one (those are what many curated configs are there to test).

A curated config that repeats the bet of a config before it (the baseline, an earlier
session's config, an earlier curated one) tells the search little new while it is early,
so :func:`order_warm_start` moves it behind the other curated configs; nothing is dropped,
and the preset's order holds otherwise. Measured by ``python -m bench presets``
(docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bracket.search.configs import NamedConfig
from bracket.search.lr_bracket import BATCH_KNOBS, OPTIMIZER_KNOBS, SAME_RATE_DECADES, step_of
from bracket.search.space import SearchSpace

#: knobs that do not change the bet at a given optimizer, effective step and batch: the LoRA
#: rank (its ratio to alpha is in the step), LoRA dropout, weight decay
SECONDARY_KNOBS = ("network_dim", "network_alpha", "lora_r", "lora_alpha_ratio", "lora_dropout", "weight_decay")


def bet_of(params: Mapping[str, Any], space: SearchSpace) -> tuple | None:
    """What ``params`` bets on: :func:`step_of` and every other searched knob's value outside
    :data:`SECONDARY_KNOBS` (None without a step knob)."""
    step = step_of(params, space)
    if step is None:
        return None
    ignored = {step[1], *SECONDARY_KNOBS, *OPTIMIZER_KNOBS, *BATCH_KNOBS}
    rest = tuple(sorted((k, repr(params.get(k))) for k in space.searched() if k not in ignored))
    return step, rest


def _repeats(a: tuple | None, b: tuple | None) -> bool:
    if a is None or b is None or a[1] != b[1]:
        return False
    (fa, ka, xa, ba), (fb, kb, xb, bb) = a[0], b[0]
    return fa == fb and ka == kb and ba == bb and abs(xa - xb) < SAME_RATE_DECADES


def order_warm_start(configs: Sequence[tuple[str, NamedConfig]], space: SearchSpace,
                     notes: list[str] | None = None) -> list[tuple[str, NamedConfig]]:
    """``configs`` ((kind, config) pairs in queue order) with every curated config that
    repeats an earlier config's bet (:func:`bet_of`) moved behind the other curated configs
    (their order kept); each move is said in ``notes``."""
    steps = [bet_of(space.complete(named.knobs), space) for _, named in configs]
    kept: list[tuple[str, NamedConfig]] = []
    later: list[tuple[str, NamedConfig]] = []
    seen: list[tuple[str, tuple | None]] = []
    for (kind, named), step in zip(configs, steps):
        repeated = next((name for name, other in seen if _repeats(step, other)), None)
        if kind == "curated" and repeated is not None:
            later.append((kind, named))
            if notes is not None:
                notes.append(f"curated {named.name!r} comes after the other curated configs: it repeats the "
                             f"optimizer, effective step (rate x alpha/rank) and schedule of {repeated!r}")
        else:
            kept.append((kind, named))
            seen.append((named.name, step))
    last_curated = max((i for i, (kind, _) in enumerate(kept) if kind == "curated"), default=len(kept) - 1)
    return kept[:last_curated + 1] + later + kept[last_curated + 1:]
