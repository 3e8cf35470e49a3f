"""A session's store filled with finished configs, written the way the session writes them.

:func:`fill_store` adds ``count`` search configs — an Optuna trial, a config row and one
finished run with a loss series each — without training anything, for the tests (and the
benchmarks) that need a long session's store: ``status``'s kept view, the app's polls, the
report. Params are drawn from the session's own space; the loss curve is a plain decay
towards a floor set by how far the learning rate is from a best one, with noise.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

#: the learning rate the synthetic curves like best
BEST_LR = 3e-3

Params = Callable[[random.Random], dict[str, Any]]
Curve = Callable[[dict[str, Any], int, int], list[float]]


def space_params(space: Any) -> Params:
    """A draw of a complete config of ``space`` (Optuna's random sampler, seeded by the rng)."""
    import optuna

    def draw(rng: random.Random) -> dict[str, Any]:
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=rng.randrange(2**31)))
        return space.complete(space.suggest(study.ask()))

    return draw


def decay_curve(params: dict[str, Any], points: int, index: int) -> list[float]:
    """Loss of steps 1..points: from 1.0 down to a floor that rises with the distance of the
    learning rate from :data:`BEST_LR` (in decades), with 5 % noise seeded by ``index``."""
    rng = random.Random(index * 7919 + 17)
    lr = float(params.get("learning_rate") or BEST_LR)
    floor = 0.1 + 0.2 * abs(math.log10(lr / BEST_LR))
    return [max(1e-4, (floor + (1.0 - floor) * math.exp(-4.0 * step / points)) * (1 + rng.gauss(0.0, 0.05)))
            for step in range(1, points + 1)]


def fill_store(session: Any, count: int, series_points: int, seed: int = 0, *, params: Params | None = None,
               curve: Curve = decay_curve) -> None:
    """``count`` finished configs in ``session``'s store and study, ``series_points`` logged steps each."""
    import optuna
    from optuna.trial import TrialState

    rng = random.Random(seed)
    draw = params or space_params(session.space)
    study = session.store.study(session.name)
    space = session.space
    now = time.time()
    for index in range(count):
        config = draw(rng)
        searched = space.searched_params(config)
        losses = curve(config, series_points, index)
        value = rng.random()
        study.add_trial(optuna.trial.create_trial(
            params=searched, distributions={k: space[k].distribution() for k in searched}, value=value,
            state=TrialState.COMPLETE, user_attrs={"kind": "search", "name": f"search-{index}"}))
        config_id = session.store.add_config(session.name, trial_number=index, kind="search",
                                             name=f"search-{index}", params=config, worker="bench")
        session.store.update_config(config_id, status="done", value=value)
        session.store.add_run(
            session.name, config_id=config_id, kind="search", stage="search", label=f"search-{index} seed 42",
            seed=42, seed_index=0, params=config, status="done", exit_code=0, max_steps=series_points,
            last_step=series_points, started_at=now, finished_at=now, duration_s=1.0,
            loss=[[step, v] for step, v in enumerate(losses, start=1)], worker="bench")
