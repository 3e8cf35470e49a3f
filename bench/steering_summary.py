"""The figures of the steering benchmark, from its per-session records.

:mod:`bench.steering` runs the sessions (``control``, ``rated``, ``late`` and variants) and
writes one record per session: every config it trained (``kind``, ``params``, ``taste`` = the
rater's noise-free dislike ÷ the rater's optimum, ``picked``), the rater's events and the
config each pick rule names. This module turns those records into the reported figures
(:func:`summarise`); :mod:`bench.rater_ceiling` asks what the rater's own ratings allow at best.

* **trials to the rater's optimum** (:func:`trials_to_target`): first trial whose config is
  within ``TARGET`` (5 %) of the rater's optimum, a miss counting as budget + 1;
* **pick ratio** (:func:`pick_ratio`): the rater's value of the session's final pick ÷ optimum;
* **proposals move** (:func:`proposals_after`): the sampler proposals after the first rating,
  compared with the control's at the same trial numbers (share within ``PREFERRED``).
"""

from __future__ import annotations

from typing import Any

from bench.common import median
from bench.raters import TASTES

MODES = ("control", "rated", "late")
#: the order of the modes in a summary: those run by default, then the perfect rater (bench/oracle.py)
ORDER = MODES + ("oracle",)
TARGET = 1.05
PREFERRED = 1.2
MOVE_WINDOW = 4

def trials_to_target(record: dict[str, Any]) -> int:
    hit = next((i + 1 for i, t in enumerate(record["trials"]) if t["taste"] <= TARGET), None)
    return hit if hit is not None else record["budget"] + 1


def pick_ratio(record: dict[str, Any]) -> float:
    return next((t["taste"] for t in record["trials"] if t["picked"]), float("inf"))


def picked_params(record: dict[str, Any]) -> dict[str, Any] | None:
    return next((t["params"] for t in record["trials"] if t["picked"]), None)


def proposals_after(record: dict[str, Any], trial: int, k: int = MOVE_WINDOW) -> list[int]:
    """Indices of the first ``k`` sampler proposals (kind 'search') from trial ``trial`` on."""
    return [i for i, t in enumerate(record["trials"]) if i + 1 >= trial and t["kind"] == "search"][:k]


def _moved(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, float] | None:
    """Share of the k sampler proposals after the first rating in the rater's preferred region,
    in the rated session and in the control at the same trial numbers."""
    control: list[bool] = []
    rated: list[bool] = []
    for c, r in pairs:
        if not r["first_rating_trial"]:
            continue
        for i in proposals_after(r, r["first_rating_trial"]):
            if i < len(c["trials"]):
                rated.append(r["trials"][i]["taste"] <= PREFERRED)
                control.append(c["trials"][i]["taste"] <= PREFERRED)
    if not rated:
        return None
    return {"control": sum(control) / len(control), "rated": sum(rated) / len(rated), "proposals": len(rated)}


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per taste: the figures of the module docstring."""
    out: dict[str, Any] = {}
    for taste_name in TASTES:
        mine = {(r["mode"], r["repetition"]): r for r in records if r["taste"] == taste_name}
        if not mine:
            continue
        reps = sorted({rep for _, rep in mine})
        row: dict[str, Any] = {"repetitions": len(reps), "loss_landscape": TASTES[taste_name].loss_landscape,
                               "description": TASTES[taste_name].description,
                               "optimum_params": TASTES[taste_name].optimum()[1]}
        modes = sorted({m for m, _ in mine}, key=lambda m: (ORDER.index(m.partition("@")[0]), m))
        row["modes"] = modes
        for mode in modes:
            got = [mine[(mode, rep)] for rep in reps if (mode, rep) in mine]
            if not got:
                continue
            row[mode] = {
                "median_trials_to_target": median([trials_to_target(r) for r in got]),
                "reached": sum(trials_to_target(r) <= r["budget"] for r in got),
                "pick_within_5pct": sum(pick_ratio(r) <= TARGET for r in got) / len(got),
                "median_pick_ratio": median([pick_ratio(r) for r in got]),
                "pick_rules_within_5pct": {rule: sum((r.get("picks") or {}).get(rule, float("inf")) <= TARGET
                                                     for r in got) / len(got)
                                           for rule in sorted({k for r in got for k in r.get("picks") or {}})},
                "best_trained_within_5pct": (sum(min(t["taste"] for t in r["trials"]) <= TARGET for r in got)
                                             / len(got)),
                "ratings_per_session": sum(r["ratings"] for r in got) / len(got),
                "ratings_again_per_session": sum(r.get("ratings_again", 0) for r in got) / len(got),
                "pairs_per_session": sum(r["pairs"] for r in got) / len(got),
                "mean_session_seconds": sum(r["seconds"] for r in got) / len(got),
            }
        for mode in modes[1:]:
            pairs = [(mine[("control", rep)], mine[(mode, rep)]) for rep in reps
                     if ("control", rep) in mine and (mode, rep) in mine]
            if not pairs:
                continue
            row[f"{mode}_vs_control"] = {
                "trials_ratio": (median([trials_to_target(r) for _, r in pairs])
                                 / median([trials_to_target(c) for c, _ in pairs])),
                "pick_changed": sum(picked_params(c) != picked_params(r) for c, r in pairs) / len(pairs),
                "pick_better": sum(pick_ratio(r) < pick_ratio(c) for c, r in pairs) / len(pairs),
                "pick_worse": sum(pick_ratio(r) > pick_ratio(c) for c, r in pairs) / len(pairs),
                "preferred_share_next_proposals": _moved(pairs),
            }
        out[taste_name] = row
    return out
