"""Search settings: budget, steps, seeds, prompts, bounds, weights — and their validation.

The budget has one meaning everywhere: the number of training runs. Part of it may be
kept for the **confirmation round** (``confirm`` runs: the top configs re-run with fresh
seeds, :mod:`bracket.session.loop.confirm`); the rest, with ``seeds`` runs per configuration,
buys ``(budget - confirm) // seeds`` configurations. :meth:`SearchSettings.plan` says so in
words ("budget 24 = search 18 (18 configs × 1 seed) + confirm 6"), and the UI and the CLI
both show that sentence.

With **successive halving** (``halving``: a :class:`HalvingSettings`, None when off;
``bracket.search.halving``) the budget counts full-run equivalents instead: every config starts with
the schedule of a full run but pauses at the first rung (``smallest_rung`` of the steps), and only
the top ``1/eta`` at a rung resume to the next, so the same budget tries many more configs ("budget
8 full runs = 27 configs to 1/9 → 9 to 1/3 → 3 to full + confirm 2"). What that costs also depends
on the trainer (a trainer that cannot resume pays for each promotion's rung from step 0; the rungs
cost the steps they are rounded up to): those facts are decided at creation into the plan
(``bracket.session.loop.trainer_facts.TrainerFacts``) and handed to the methods that count, never stored here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bracket.errors import BracketError
from bracket.judge.combine import validate_weights
from bracket.search.halving import DEFAULT_ETA, DEFAULT_SMALLEST, Rungs, share_label, smallest_problem
from bracket.search.types import ALGORITHMS
from bracket.session.loop.trainer_facts import NO_FACTS, TrainerFacts
from bracket.session.scoring import effective_weights
from bracket.session.scoring.image_config import image_models_problems
from bracket.session.store.migrations import nested_settings
from bracket.session.stored_types import type_problem
from bracket.trainer.base import WARMUP_SHARE
from bracket.trainer.prompts import SamplePrompt, parse_prompt_lines

#: hard upper limits that catch a typo (an extra zero) rather than a real plan
MAX_BUDGET = 10_000
MAX_STEPS = 10_000_000
MAX_SEEDS = 100
#: the base seed of the runs (each run adds its index; trainers hand it to numpy, which takes 32 bits)
MAX_SEED = 2**31 - 1
#: the confirmation round is on by default from this many search configurations on
#: (below it, the warm start and the learning-rate bracket alone are 6 configs)
AUTO_CONFIRM_MIN_CONFIGS = 8
#: share of the budget the automatic confirmation round takes
AUTO_CONFIRM_SHARE = 0.25
#: the largest reduction factor accepted (a typo guard: 10 already stops 9 of every 10)
MAX_ETA = 10


def rung_counts(n_configs: int, rungs: int, eta: int) -> list[int]:
    """How many of ``n_configs`` reach each of ``rungs`` rungs when the top ``1/eta`` go on (at least 1)."""
    counts = [int(n_configs)]
    for _ in range(rungs - 1):
        counts.append(max(1, counts[-1] // eta) if counts[-1] else 0)
    return counts


def halving_cost(n_configs: int, fractions: tuple[float, ...], eta: int, *, launch_share: float = 0.0,
                 restarts: bool = False) -> float:
    """Full-run equivalents (per seed) that ``n_configs`` cost when each rung keeps the top ``1/eta``.

    ``launch_share``: a launch's start-up as a share of a full run's steps (0 until the session
    has measured it): every rung a config trains to is one launch, and a full run is one full
    length plus one start-up (``bracket.search.halving.cost``). ``restarts``: the trainer cannot
    resume, so a promotion trains from step 0 to its rung (the whole rung, not the steps between)."""
    previous, cost = 0.0, 0.0
    for share, count in zip(fractions, rung_counts(n_configs, len(fractions), eta)):
        cost += count * (share - (0.0 if restarts else previous) + launch_share)
        previous = share
    return cost / (1 + launch_share)


#: why a halving plan states a range (a trainer that may train past a rung before the session's stop lands)
RACE_NOTE = ("fewer the more runs train on past their rung before Bracket stops them (this trainer's may{unless}; "
             "a new config starts only while a full run of it still fits the budget)")


def race_note(facts: TrainerFacts) -> str:
    """:data:`RACE_NOTE`, naming the configs whose runs stop themselves at their rung (``facts.stops_when``)."""
    unless = " and ".join(f"{name} is {' or '.join(values)}" for name, values in facts.stops_when)
    return RACE_NOTE.format(unless=f", unless their {unless}: those stop themselves at the rung" if unless else "")


class SettingsError(BracketError):
    """Search settings that cannot be used."""


@dataclass(frozen=True)
class HalvingSettings:
    """Successive halving's settings (``SearchSettings.halving``; ``bracket.search.halving``)."""

    #: the reduction factor: the top 1/eta of the configs at a rung go on to the next
    eta: int = DEFAULT_ETA
    #: the first rung, as a share of ``steps``
    smallest_rung: float = DEFAULT_SMALLEST
    #: a launch's start-up (model load, caches) as a share of a full run's steps, counted against
    #: the budget for every launch; None = measured by the session from its own launches
    #: (``bracket.session.launches.startup_steps``), 0 = not counted
    launch_share: float | None = None

    def valid(self) -> bool:
        eta, smallest = self.eta, self.smallest_rung
        return isinstance(eta, int) and not isinstance(eta, bool) and 2 <= eta <= MAX_ETA \
            and not smallest_problem(smallest)

    def rungs(self) -> Rungs:
        return Rungs(int(self.eta), float(self.smallest_rung))

    def problems(self) -> list[str]:
        """What is wrong with these settings, each with what to do."""
        problems = []
        eta, smallest = self.eta, self.smallest_rung
        if not isinstance(eta, int) or isinstance(eta, bool) or not 2 <= eta <= MAX_ETA:
            problems.append(f"the reduction factor (--eta) must be a whole number from 2 to {MAX_ETA}, got {eta!r}.")
        if smallest_problem(smallest):
            problems.append(smallest_problem(smallest) + ".")
        return problems

    @classmethod
    def stored_problem(cls, data: Any) -> str | None:
        """What is wrong with the types of stored halving settings (an object of these fields)."""
        if not isinstance(data, dict):
            return f"its setting halving is {str(data)[:60]!r}, not an object"
        return type_problem(cls, data, "halving.")


@dataclass
class SearchSettings:
    """How one search is run; every field has a sensible default."""

    budget: int = 4
    steps: int = 100
    seeds: int = 1
    #: prompt lines every run renders; "" takes the trainer's own (the demo's) and a preset
    #: without any is refused at create (``bracket.session.create``): real prompts are proposed
    #: from the dataset (``bracket.trainer.sample_proposal``), never another preset's
    sample_prompts: str = ""
    sample_every_n_steps: int | None = None
    algorithm: str = "tpe"
    bounds: dict[str, Any] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    timeout_s: float | None = None
    base_seed: int = 42
    divergence_stop: bool = True
    vlm: dict[str, Any] = field(default_factory=dict)
    #: the image judges' models this session reads — ``text_image``, ``likeness``, ``preference``:
    #: a model folder or a Hugging Face name in the local cache (data, never run nor downloaded);
    #: one not given is ``.env``'s (``bracket.session.scoring.image_config``)
    image_models: dict[str, str] = field(default_factory=dict)
    #: train the trainer's baseline and curated configs first (False: the sampler from trial 1)
    warm_start: bool = True
    #: after the warm start, train its best config at a lower and a higher learning rate
    #: (``bracket.search.lr_bracket``); no effect without a warm start
    lr_bracket: bool = True
    #: hedge the warm start (``bracket.search.hedge``): when its first configs read flat, skip the
    #: rest of it and explore the whole space; False: the warm start and bracket always run out
    hedge: bool = True
    #: the longest warm-up searched, as a share of ``steps`` (baseline and curated warm-ups
    #: beyond it are clamped, with a note); None: the trainer's own range
    warmup_share: float | None = WARMUP_SHARE
    #: folders of earlier sessions of the same preset whose best configs join the warm start
    #: right after the baseline (``bracket.session.past``)
    warm_start_from: list[str] = field(default_factory=list)
    #: runs of the budget kept for the confirmation round (top configs re-run with fresh
    #: seeds, ``bracket.session.loop.confirm``); None = automatic (a quarter of the budget from
    #: 8 search configs on), 0 = off
    confirm: int | None = None
    #: share of the dataset held out for a validation loss, where the trainer supports it:
    #: None = automatic (decided once when the session is created, ``bracket.session.validation``),
    #: 0 = off. A created session stores the decision, so every run uses the same split and seed.
    validation_split: float | None = None
    #: dataset images held out of training as the likeness references (``bracket.dataset.references``):
    #: None = decided when the session is created (image judges on, a trainer that can, a dataset
    #: big enough), 0 = none. Stored as a count; the images follow from the dataset by one rule.
    reference_holdout: int | None = None
    #: successive halving (``bracket.search.halving``): configs pause at rungs, the top ``1/eta``
    #: resume; the budget then counts full-run equivalents. None: off
    halving: HalvingSettings | None = None
    #: the config (its id) the person picked from the front of fidelity against flexibility as the
    #: answer (``bracket.standings.front``); None: the winner by combined score
    pick: int | None = None

    @property
    def confirm_runs(self) -> int:
        """Runs of the budget that the confirmation round gets (0 when it is off)."""
        wanted = self.confirm
        if wanted is None:
            if not isinstance(self.budget, int) or not isinstance(self.seeds, int) or self.seeds <= 0:
                return 0
            if self.budget // self.seeds < AUTO_CONFIRM_MIN_CONFIGS:
                return 0
            wanted = max(2, round(self.budget * AUTO_CONFIRM_SHARE))
        wanted = min(wanted, self.budget)
        if wanted <= 0:
            return 0
        # runs the search cannot use (budget not a multiple of the seeds) go to the confirmation round too
        return self.budget - ((self.budget - wanted) // self.seeds) * self.seeds

    @property
    def search_runs(self) -> int:
        return self.budget - self.confirm_runs

    @property
    def n_configs(self) -> int:
        """Configs the search starts: ``search_runs // seeds``; with halving, the most whose rungs fit
        the search's full-run equivalents, before the trainer's facts (:meth:`configs_planned`)."""
        return self.configs_planned(NO_FACTS)

    def configs_planned(self, facts: TrainerFacts) -> int:
        """:attr:`n_configs` with the trainer's ``facts`` (a restart's cost, the rungs' rounding)."""
        if self.halving is None or not self.halving.valid():  # bad rungs: ``validate`` says so
            return self.search_runs // self.seeds
        return self.configs_within(facts=facts)

    def configs_within(self, launch_share: float = 0.0, *, facts: TrainerFacts = NO_FACTS) -> int:
        """With halving: the most configs whose rungs fit the search's full-run equivalents, each
        launch costing ``launch_share`` of a full run's steps more (``halving_cost``)."""
        halving = self.halving or HalvingSettings()
        fractions, per_seed = self.rung_fractions(facts), self.search_runs / self.seeds
        count = 0
        while count < MAX_BUDGET and halving_cost(count + 1, fractions, halving.eta, launch_share=launch_share,
                                                  restarts=facts.restarts) <= per_seed + 1e-9:
            count += 1
        return count

    def rungs(self) -> Rungs:
        """The rungs of a halving search (``Rungs(eta, smallest_rung)``; the defaults without halving)."""
        return (self.halving or HalvingSettings()).rungs()

    def rung_fractions(self, facts: TrainerFacts = NO_FACTS) -> tuple[float, ...]:
        """The rungs as the shares of the steps they train to: rounded up to ``facts.rung_every`` (the
        steps ``Rungs.steps`` gives a run of ``steps``), the planned shares where not rounded."""
        planned = self.rungs().fractions()
        if not facts.rung_every or not isinstance(self.steps, int) or self.steps <= 0:
            return planned
        steps = self.rungs().steps(self.steps, every=int(facts.rung_every))
        return tuple(step / self.steps for step in steps) if len(steps) == len(planned) else planned

    def configs_if_runs_race(self) -> int:
        """With halving: the configs started where every run trains to its end before the stop at its
        rung lands (``TrainerFacts.stops_at_rung`` False; ``Budget.pays``): one full run each."""
        return int(self.search_runs // self.seeds)

    def plan(self, configs: int | None = None, *, up_to: bool = False, facts: TrainerFacts = NO_FACTS,
             at_least: int | None = None, reached: Sequence[int] | None = None) -> str:
        """``"budget 8 = 4 configs × 2 seeds"``, or with a confirmation round
        ``"budget 24 = search 18 (18 configs × 1 seed) + confirm 6"``; with halving
        ``"budget 8 full runs = 27 configs to 1/9 → 9 to 1/3 → 3 to full + confirm 2"`` (with
        ``facts.restarts``, ``" (restarts: a promoted config trains again from step 0)"`` after it).
        ``configs``: a halving search's count as its budget buys it (``Budget.configs``); ``up_to``:
        the count before a launch's start-up is known; ``at_least``: the range's low end where runs may
        train past their rungs (:meth:`configs_if_runs_race`); ``reached``: the configs at each rung of
        a search that ended, said as what it ran (all three: ``Budget.plan_text``)."""
        if self.halving is not None and self.halving.valid():
            fractions = self.rungs().fractions()
            counts = list(reached) if reached is not None else rung_counts(
                self.configs_planned(facts) if configs is None else configs, len(fractions), self.halving.eta)
            steps = " → ".join(f"{count}{' configs' if i == 0 else ''} to {share_label(share)}"
                               for i, (count, share) in enumerate(zip(counts, fractions)))
            seeds = f" × {self.seeds} seeds" if self.seeds > 1 else ""
            confirm = f" + confirm {self.confirm_runs}" if self.confirm_runs else ""
            restarts = " (restarts: a promoted config trains again from step 0)" if facts.restarts else ""
            fewer = (" (up to: each launch's start-up, measured from the first runs, may buy fewer configs; "
                     "--launch-cost fixes it)") if up_to else ""
            if reached is not None:
                return f"budget {self.budget} full runs: ran {steps}{seeds}{confirm}{restarts}"
            bound = "up to " if up_to else ""
            count = self.configs_planned(facts) if configs is None else configs
            if at_least is not None and at_least < count:
                return (f"budget {self.budget} full runs = {at_least} to {count} configs: up to {steps}{seeds}"
                        f"{confirm}{restarts}{fewer}; {race_note(facts)}, {at_least} if all do")
            return f"budget {self.budget} full runs = {bound}{steps}{seeds}{confirm}{restarts}{fewer}"
        seeds = (f"{self.n_configs} config{'s' if self.n_configs != 1 else ''} × "
                 f"{self.seeds} seed{'s' if self.seeds > 1 else ''}")
        if self.confirm_runs:
            return (f"budget {self.budget} = search {self.n_configs * self.seeds} ({seeds}) "
                    f"+ confirm {self.confirm_runs}")
        text = f"budget {self.budget} = {seeds}"
        left = self.budget - self.n_configs * self.seeds
        return text + (f" ({left} run{'s' if left > 1 else ''} left over)" if left else "")

    def prompts(self) -> list[SamplePrompt]:
        return parse_prompt_lines(self.sample_prompts or "")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        vlm = dict(data.get("vlm") or {})
        vlm.pop("api_key", None)  # secrets are never stored
        data["vlm"] = vlm
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SearchSettings":
        """Settings as stored (``to_dict``). A store this Bracket could not migrate (opened read-only)
        may still hold them flat, as the release before nesting wrote them (``halving: true`` beside
        ``eta``...): read the same way the store's migration rewrites them (``nested_settings``)."""
        data, _ = nested_settings(data)
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        halving = values.get("halving")
        if isinstance(halving, dict):
            values["halving"] = HalvingSettings(**{k: v for k, v in halving.items()
                                                   if k in HalvingSettings.__dataclass_fields__})
        return cls(**values)

    @classmethod
    def stored_problem(cls, data: Any) -> str | None:
        """What is wrong with the types of stored settings ``data`` (a session row's), or None: a
        value of a known field that its type cannot hold (``{"budget": "lots"}``), a number out
        of every sensible range. Checked where a session is opened, before anything uses them."""
        if not isinstance(data, dict):
            return f"its settings are {type(data).__name__}, not an object"
        data, _ = nested_settings(data)
        halving = data.get("halving")
        if halving is not None:
            problem = HalvingSettings.stored_problem(halving)
            if problem:
                return problem
        return type_problem(cls, {k: v for k, v in data.items() if k != "halving"})

    def validate(self, facts: TrainerFacts = NO_FACTS) -> None:
        """Raise :class:`SettingsError` naming every problem and what to do (with the trainer's
        ``facts`` once decided: what a restart costs may leave no config the budget buys)."""
        problems: list[str] = []
        for name, limit in (("budget", MAX_BUDGET), ("steps", MAX_STEPS), ("seeds", MAX_SEEDS)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(f"{name} must be a whole number, got {value!r}.")
            elif value <= 0:
                problems.append(f"{name} must be at least 1, got {value}.")
            elif value > limit:
                problems.append(f"{name} {value} is larger than {limit}; is there an extra zero?")
        if not problems and self.budget < self.seeds:
            problems.append(f"budget {self.budget} is smaller than seeds per config {self.seeds}; "
                            "the budget counts training runs, so raise it to at least the seed count.")
        confirm = self.confirm
        if confirm is not None and (isinstance(confirm, bool) or not isinstance(confirm, int) or confirm < 0):
            problems.append(f"confirmation runs must be a whole number >= 0 (0: off), got {confirm!r}.")
        elif not problems and confirm and self.budget - confirm < self.seeds:
            problems.append(f"confirmation runs {confirm} leave less than one config ({self.seeds} seed"
                            f"{'s' if self.seeds > 1 else ''}) of the budget {self.budget} for the search; "
                            "lower the confirmation runs (--confirm) or raise the budget.")
        split = self.validation_split
        if split is not None and (isinstance(split, bool) or not isinstance(split, (int, float))
                                  or not 0.0 <= split < 0.5):
            problems.append(f"validation split must be a share from 0 to 0.5 (0: off), got {split!r}.")
        every = self.sample_every_n_steps
        if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every <= 0):
            problems.append(f"sample every N steps must be a positive whole number, got {every!r}.")
        seed = self.base_seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            problems.append(f"seed must be a whole number from 0 to {MAX_SEED}, got {seed!r}.")
        share = self.warmup_share
        if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1):
            problems.append(f"warm-up share must be a number in (0, 1], got {share!r}.")
        halving = self.halving
        if halving is not None and not isinstance(halving, HalvingSettings):
            problems.append(f"halving must be off or its settings, got {halving!r}.")
        elif halving is not None and halving.problems():
            problems.extend(halving.problems())
        elif halving is not None and not problems and self.configs_planned(facts) < 1 and facts.restarts:
            one = halving_cost(1, self.rung_fractions(facts), halving.eta, restarts=True)
            problems.append(f"budget {self.budget} buys no config with halving: the trainer trains a promoted config "
                            f"again from step 0, so one config to full length costs {one:.2f} full runs; raise the "
                            "budget, lower the confirmation runs (--confirm) or search without halving (--no-halving).")
        elif halving is not None and not problems and self.configs_planned(facts) < 1:
            problems.append(f"budget {self.budget} leaves no full run for the search with halving; raise the budget "
                            "or lower the confirmation runs (--confirm).")
        if self.algorithm not in ALGORITHMS:
            problems.append(f"search algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}.")
        if self.timeout_s is not None and not (isinstance(self.timeout_s, (int, float)) and self.timeout_s > 0):
            problems.append(f"trial timeout must be a positive number of seconds, got {self.timeout_s!r}.")
        problems.extend(image_models_problems(self.image_models))
        try:
            validate_weights(effective_weights(self.weights))
        except BracketError as error:
            problems.append(str(error) + ".")
        try:
            self.prompts()
        except BracketError as error:
            problems.append(str(error))
        if problems:
            raise SettingsError(" ".join(problems))
