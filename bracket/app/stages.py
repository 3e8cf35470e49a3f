"""Finals and promotion as the app and the CLI start them: chosen by the standings, trained
by the session's run pipeline.

The engine (``bracket.session.finals``, ``bracket.session.winner_training``) trains what it is
given; which configs deserve it is the standings' answer (``bracket.standings``), the same
one the Results tab, ``status``, the report and ``export`` give. These two functions join
them: they check the request, pick from the standings, and train inside the session's
exclusive section (no search, finals or promotion of the same session runs meanwhile).
"""

from __future__ import annotations

from pathlib import Path

from bracket.errors import BracketError
from bracket.session import Session
from bracket.session.finals import train_finals
from bracket.session.search_settings import MAX_BUDGET, MAX_SEEDS, MAX_STEPS
from bracket.session.winner_training import scaled_steps
from bracket.session.winner_training import train_winner as train_source
from bracket.standings import require_winner, standings


def check_finals(session: Session, *, top_k: int = 3, steps: int | None = None, seeds: int = 2) -> None:
    """Refuse a finals request that cannot be right (``BracketError`` saying what to give),
    before any job starts: the app checks here, then trains in the background."""
    if top_k < 1 or seeds < 1:
        raise BracketError("Finals need at least one config and one seed (--top and --seeds >= 1).")
    if steps is not None and steps < 1:
        raise BracketError("Finals need a positive step count.")
    for name, value, limit in (("--steps", steps or session.settings.steps * 4, MAX_STEPS),
                               ("--seeds", seeds, MAX_SEEDS), ("--top x --seeds runs", top_k * seeds, MAX_BUDGET)):
        if value > limit:
            raise BracketError(f"Finals {name} {value} is larger than {limit}; is there an extra zero?")
    if steps is not None and steps < session.settings.steps:  # finals check that a lead survives longer runs
        raise BracketError(f"Finals are at least as long as the search runs ({session.settings.steps} steps); "
                           f"{steps} is shorter. Give {session.settings.steps} or more (default "
                           f"{session.settings.steps * 4}).")


def run_finals(session: Session, *, top_k: int = 3, steps: int | None = None, seeds: int = 2) -> list[int]:
    """Train the top ``top_k`` search configs for ``steps`` (default 4× the search's) with
    ``seeds`` new seeds (``bracket.session.finals``); returns the final-stage config ids."""
    check_finals(session, top_k=top_k, steps=steps, seeds=seeds)
    steps = steps or session.settings.steps * 4
    configs = {c["id"]: c for c in session.store.configs(session.name, stage="search")}
    chosen = [configs[row.config_id] for row in standings(session).top("search", top_k) if row.config_id in configs]
    if not chosen:
        raise BracketError("No configuration has a score yet; run the search before the finals.")
    with session.exclusive("running finals") as pipeline:
        session.worker.recover()  # a killed earlier attempt: its runs interrupted, what is left of them killed
        return train_finals(pipeline, chosen, steps=steps, seeds=seeds)


def _source(session: Session, run_id: int | None) -> tuple[dict, int | None]:
    """(the config to train, its step count): the winner's, at its best step, unless ``run_id`` is given."""
    if run_id is None:
        winner = require_winner(session, standings(session))
        return (next(c for c in session.store.configs(session.name) if c["id"] == winner.config_id),
                winner.step or winner.steps)
    run = session.store.get_run(int(run_id))
    if run is None or run["session"] != session.name or run["config_id"] is None:
        raise BracketError(f"Run {run_id} is not a trained run of session {session.name}; pick one from the table.")
    return next(c for c in session.store.configs(session.name) if c["id"] == run["config_id"]), run.get("max_steps")


def train_winner(session: Session, *, steps: int | None = None, run_id: int | None = None,
                 save_every_n_steps: int | None = None, dataset: Path | None = None) -> int:
    """Train (or resume) the winner's run (``bracket.session.winner_training``); returns its run id.

    Trains the winner of the standings (or run ``run_id``'s config) for ``steps`` steps —
    by default the winner's best step (or that run's own step count), scaled to ``dataset``
    when one is given. A missing or disqualified winner is refused with a ``NoWinnerError``.
    """
    if steps is not None and steps < 1:
        raise BracketError("Training the winner needs a positive step count (--steps).")
    if save_every_n_steps is not None and save_every_n_steps < 1:
        raise BracketError("--save-every must be a positive number of steps.")
    if dataset is not None and not Path(dataset).exists():
        raise BracketError(f"Dataset {dataset} does not exist; give the full dataset's TOML or folder.")
    source, own_steps = _source(session, run_id)
    with session.exclusive("training the winner") as pipeline:
        session.worker.recover()  # a killed earlier attempt: its runs interrupted, what is left of them killed
        steps = int(steps or scaled_steps(pipeline, int(own_steps or session.settings.steps), dataset))
        return train_source(pipeline, source, steps=steps, save_every_n_steps=save_every_n_steps, dataset=dataset)
