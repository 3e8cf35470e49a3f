"""Parameter importance: which searched knobs moved the score, over the search's configs.

One method: PED-ANOVA (``optuna.importance.PedAnovaImportanceEvaluator``; needs only scipy),
computed on the configs' *current* mean scores (the search leaderboard), not on the values
the stored Optuna study froze when each trial finished — ratings given later count. Below
:data:`MIN_CONFIGS` scored configs the numbers come with a warning: with few configs an
importance mostly reflects which knobs happened to vary.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from bracket.standings.rows import ConfigRow

#: fewer scored search configs than this and the importance is shown with a warning
MIN_CONFIGS = 8
METHOD = "PED-ANOVA importance (optuna.importance) over the current scores of the search configs"


def parameter_importance(rows: Sequence[ConfigRow], space: Any) -> tuple[dict[str, float], str]:
    """(importance per searched knob, best first; a note saying how it was made or why there is none)."""
    from bracket.optuna_access.quiet import optuna_module

    optuna = optuna_module()  # here: the standings without their importance (status) import no Optuna

    trials = []
    for row in rows:
        if row.rank is None or row.mean is None:
            continue
        try:
            params = space.searched_params(row.params)
            distributions = {k: v for k, v in space.distributions(params).items() if k in params}
            trials.append(optuna.trial.create_trial(params={k: params[k] for k in distributions},
                                                    distributions=distributions, value=float(row.mean)))
        except (ValueError, KeyError):
            continue  # a config from an older (or narrowed) space: not informative here
    if len(trials) < 2:
        return {}, f"Parameter importance needs at least 2 scored search configs; there are {len(trials)}."
    study = optuna.create_study(direction="minimize")
    study.add_trials(trials)
    try:
        with warnings.catch_warnings(record=True) as caught:  # said in the note, not on stderr
            warnings.simplefilter("always")
            importance = optuna.importance.get_param_importances(
                study, evaluator=optuna.importance.PedAnovaImportanceEvaluator())
    except (ValueError, RuntimeError) as error:
        return {}, f"Parameter importance is not available ({type(error).__name__}: {error})."
    if not importance:
        return {}, "No searched parameter varied between the scored configs."
    note = f"{METHOD}, {len(trials)} configs."
    if len(trials) < MIN_CONFIGS:
        note += (f" Warning: fewer than {MIN_CONFIGS} configs — treat this as a hint, not a finding; "
                 "it mostly shows which knobs happened to vary.")
    for said in dict.fromkeys(str(w.message).strip() for w in caught):
        note += f" Optuna: {said}"
    return {k: float(v) for k, v in importance.items()}, note
