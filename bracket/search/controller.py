"""The search controller: which configuration to train next.

The order: the trainer's baseline first (what a person would run by hand), then the best
configs of earlier sessions when asked for (kind ``past``, :mod:`bracket.session.past`), then
the trainer's curated known-good configs in order (together the warm start), then the best of
those at a lower and a higher learning rate (the learning-rate bracket, :mod:`bracket.search.lr_bracket`; with
several workers it may come a config or two late), then four shape draws — the best config's
optimizer and effective step with its other knobs spread (:mod:`bracket.search.shapes`; kind
``search``, named ``shape-N``; not with random search) — then Optuna's TPE (or random search)
for the rest of the budget. Two rules widen TPE's good set from Optuna's 10 % to 25 %: for ten
proposals once the warm start is beaten (:mod:`bracket.search.explore`), and for good once a
person has rated a run (:data:`WIDE_GAMMA_FRACTION`). Ratings that disagree with the loss bring
focus draws (:mod:`bracket.search.rated_focus`). A warm start that reads flat is cut
short (:mod:`bracket.search.hedge`): a probe, hedge draws, then TPE; a diverged baseline
skips other families' curated configs.

Warm-start configs are *enqueued* into the session's Optuna study when the session is
created, so that several workers sharing one study on PostgreSQL pop each of them exactly
once (Optuna pops waiting trials under a row lock).

Scores in Bracket change after a trial finished — human ratings arrive late and the loss
judge normalises across all runs — but an Optuna trial, once told, is frozen. So the
suggestion is not made on the stored study's values: before each suggestion,
:class:`CurrentScoreSampler` rebuilds a throw-away in-memory study from the store's
*current* scores (plus the configs still running, which TPE's constant liar keeps it away
from) and asks TPE there; the stored study then records the chosen params. The stored
study stays a faithful log that optuna-dashboard can open.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, GPSampler, RandomSampler, TPESampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from bracket.optuna_access.private import trial_id
from bracket.optuna_access.quiet import optuna_module
from bracket.search.configs import NamedConfig
from bracket.search.explore import DEFAULT_RULE, ExploreRule, explore_now
from bracket.search.hedge import DEFAULT_RULE as HEDGE_RULE
from bracket.search.hedge import NAME_PREFIX as HEDGE_PREFIX
from bracket.search.hedge import SOURCE as HEDGE_SOURCE
from bracket.search.hedge import HedgeRule, hedge_cut, hedge_draw, hedge_explores, hedge_probe, hedge_verdict
from bracket.search.lr_bracket import DEFAULT_RULE as BRACKET_RULE
from bracket.search.lr_bracket import KIND as BRACKET_KIND
from bracket.search.lr_bracket import next_bracket
from bracket.search.rated_focus import DEFAULT_RULE as FOCUS_RULE
from bracket.search.rated_focus import NAME_PREFIX as FOCUS_PREFIX
from bracket.search.rated_focus import SOURCE as FOCUS_SOURCE
from bracket.search.rated_focus import FocusRule, focus_draw
from bracket.search.shapes import DEFAULT_RULE as SHAPES_RULE
from bracket.search.shapes import NAME_PREFIX as SHAPE_PREFIX
from bracket.search.shapes import SOURCE as SHAPE_SOURCE
from bracket.search.shapes import ShapeRule, shape_draw
from bracket.search.skip_rule import SKIPPABLE_KINDS, skip_note, skip_reason
from bracket.search.space import SearchSpace
from bracket.search.types import ALGORITHMS, SEARCH_KINDS, Proposal, ScoredConfig, stored_kind
from bracket.search.why_line import WHY_ATTR

__all__ = ["ALGORITHMS", "SEARCH_KINDS", "CurrentScoreSampler", "Proposal", "ScoredConfig", "SearchController",
           "tpe_good_count"]

optuna_module()  # its INFO lines off

#: TPE starts modelling after this many scored configs (warm-start configs count);
#: tuned with bench/search_efficiency.py (see docs/BENCHMARKS.md).
DEFAULT_N_STARTUP_TRIALS = 4
#: the model-based sampler after the warm start: ``"tpe"`` (multivariate TPE) or ``"gp"`` (Optuna's
#: GPSampler); TPE by measurement (docs/SEARCH.md, bench/hedge.py)
MODELS = ("tpe", "gp")
DEFAULT_MODEL = "tpe"
#: Multivariate TPE: the optima of real preset spaces couple optimizer, schedule and step
#: (Prodigy with a decay, lr x alpha/rank), which univariate TPE models one knob at a time
#: (docs/BENCHMARKS.md).
DEFAULT_MULTIVARIATE = True
#: Share of the scored configs TPE treats as "good" (its gamma; Optuna's default is 0.1, at
#: most 25). TPE proposes near the good ones and ignores values inside each group, so with a
#: dozen configs a rating only steers when it moves a config into or out of the good set.
#: Equal to Optuna's own default, so a session that looks narrow leaves TPE's gamma alone.
DEFAULT_GAMMA_FRACTION = 0.1
#: TPE's good share when it should look wider (Hyperopt's original TPE used 25 %):
#: once a person has rated (or compared) a run — with 10 % a rating steers only when it moves
#: a config into the one or two best — and while the warm start disagrees with what the search
#: finds (:mod:`bracket.search.explore`). Its effect: docs/BENCHMARKS.md.
WIDE_GAMMA_FRACTION = 0.25


def tpe_good_count(n: int, *, wide: bool = False) -> int:
    """How many of ``n`` scored configs TPE counts as good (its ``gamma`` function); ``wide``:
    somebody has rated a run, or the search explores (:data:`WIDE_GAMMA_FRACTION` applies)."""
    return min(math.ceil((WIDE_GAMMA_FRACTION if wide else DEFAULT_GAMMA_FRACTION) * n), 25)


def _wide_good_count(n: int) -> int:
    return tpe_good_count(n, wide=True)


def _single_objective(study: Study) -> None:
    if len(study.directions) > 1:  # Optuna's rule for a single-objective sampler
        raise ValueError("CurrentScoreSampler samples single-objective studies only (one combined score)")


class CurrentScoreSampler(BaseSampler):
    """Samples each new trial from a study rebuilt from the current scores.

    ``history`` returns the configs as they should be seen *now*; ``make_inner(seed, history)``
    builds the real sampler (TPE or random) for that history. Values of warm-start trials
    that were enqueued are never asked of this sampler: Optuna hands out their fixed params.
    """

    def __init__(self, space: SearchSpace, history: Callable[[], Sequence[ScoredConfig]],
                 make_inner: Callable[[int, Sequence[ScoredConfig]], BaseSampler], seed: int,
                 first: Callable[[Sequence[ScoredConfig], int], dict[str, Any] | None] | None = None) -> None:
        self._space = space
        #: a rule that may propose the config itself (:mod:`bracket.search.shapes`), before the sampler
        self._first = first
        self._history = history
        self._make_inner = make_inner
        self._seed = seed
        self._plans: dict[int, dict[str, Any]] = {}
        #: whether the newest plan came from ``first`` (a shape draw), and for which trial
        self._drew = False
        self._drawn_trial: int | None = None

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        return {}

    def sample_relative(self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
                        ) -> dict[str, Any]:
        _single_objective(study)
        return {}

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        _single_objective(study)
        plan = self._plans.get(trial_id(trial))
        if plan is None:
            plan = self.plan(extra_seed=trial.number)
            self._plans = {trial_id(trial): plan}
            self._drawn_trial = trial_id(trial) if self._drew else None
        if param_name in plan:
            return plan[param_name]
        # a knob the plan did not activate but the caller asks for: sample it plainly
        return RandomSampler(seed=self._seed + trial.number).sample_independent(
            study, trial, param_name, param_distribution)

    def drew(self, trial_id: int) -> bool:
        """Whether the config of trial ``trial_id`` came from ``first`` (a shape draw)."""
        return self._drawn_trial == trial_id

    def plan(self, *, extra_seed: int = 0) -> dict[str, Any]:
        """A full configuration proposed from the current history."""
        history = list(self._history())
        drawn = self._first(history, self._seed) if self._first is not None else None
        self._drew = drawn is not None
        if drawn is not None:
            return drawn
        view = optuna.create_study(direction="minimize", sampler=self._make_inner(self._seed + extra_seed, history))
        trials = []
        searched = self._space.distributions()  # of every searched knob
        for item in history:
            params = {k: v for k, v in item.params.items() if k in self._space and k in self._space.searched()}
            distributions = {k: searched[k] for k in params}
            try:
                trials.append(optuna.trial.create_trial(
                    state=item.state, value=item.value if item.state == TrialState.COMPLETE else None,
                    params=params, distributions=distributions))
            except ValueError:
                continue  # a param outside today's (narrowed) space: not informative here
        if trials:
            view.add_trials(trials)
        return self._space.suggest(view.ask())


class SearchController:
    """Hands out configurations for one session: warm start first, then the sampler."""

    def __init__(self, *, study: Study, space: SearchSpace, algorithm: str = "tpe", seed: int = 0,
                 history: Callable[[], Sequence[ScoredConfig]] = lambda: (),
                 n_startup_trials: int = DEFAULT_N_STARTUP_TRIALS, lr_bracket: bool = True,
                 multivariate: bool | None = None, explore: ExploreRule | None = DEFAULT_RULE,
                 rated_gamma: bool = True, bracket_rule: str = BRACKET_RULE, skip_diverged: bool = True,
                 shapes: ShapeRule | None = SHAPES_RULE, note: Callable[[str], None] = lambda text: None,
                 describe: Callable[[Proposal], str] | None = None, hedge: HedgeRule | None = HEDGE_RULE,
                 model: str = DEFAULT_MODEL, focus: FocusRule | None = FOCUS_RULE) -> None:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}")
        if model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}")
        #: stop betting on a warm start that reads flat (:mod:`bracket.search.hedge`)
        self._hedge = hedge
        self.space = space
        self.algorithm = algorithm
        self._history = history
        #: False once the learning-rate bracket has nothing more to propose (saves a history read)
        self._bracket_open = lr_bracket
        self._bracket_rule = bracket_rule
        #: told, when the bracket closes, each side the bounds skipped (a session note)
        self._note = note
        #: skip queued warm-start configs a divergence has answered (:mod:`bracket.search.skip_rule`)
        self._skip_diverged = skip_diverged
        #: the config's one-line "why" as it reads when it is proposed, kept with its trial
        #: (``WHY_ATTR``: the app shows it later, whatever the scores are then)
        self._describe = describe
        #: the reasons of the configs the last :meth:`next` skipped (the session notes them
        #: once the config it handed out is recorded)
        self.skipped: list[str] = []

        def make_inner(inner_seed: int, seen: Sequence[ScoredConfig]) -> BaseSampler:
            exploring = explore_now(seen, explore)
            explore_random = exploring and explore is not None and explore.action == "random"
            if algorithm == "random" or explore_random or hedge_explores(seen, hedge):
                return RandomSampler(seed=inner_seed)
            if model == "gp":  # measured against TPE by bench/hedge.py; conditional knobs fall back to random
                return GPSampler(seed=inner_seed, n_startup_trials=n_startup_trials, warn_independent_sampling=False)
            options: dict[str, Any] = {}
            if exploring or (rated_gamma and any(h.rated for h in seen)):
                options["gamma"] = _wide_good_count
            with warnings.catch_warnings():  # Optuna 4.9 marks a custom gamma as deprecated (kept until v6)
                warnings.simplefilter("ignore", FutureWarning)
                chosen = DEFAULT_MULTIVARIATE if multivariate is None else multivariate
                return TPESampler(n_startup_trials=n_startup_trials, multivariate=chosen,
                                  constant_liar=True, seed=inner_seed, **options)

        def first(seen: Sequence[ScoredConfig], session_seed: int) -> dict[str, Any] | None:
            if algorithm != "tpe":
                return None
            if hedge_verdict(seen, hedge) is not None:
                self._draw = (HEDGE_PREFIX, HEDGE_SOURCE)
                return hedge_draw(seen, space, hedge, session_seed)
            self._draw = (SHAPE_PREFIX, SHAPE_SOURCE)
            drawn = shape_draw(seen, space, shapes, session_seed)
            if drawn is None:  # ratings that disagree with the loss: near the best-rated config
                self._draw = (FOCUS_PREFIX, FOCUS_SOURCE)
                drawn = focus_draw(seen, space, focus, session_seed)
            return drawn

        #: the name prefix and source of the sampler's newest own draw (shape or hedge draw)
        self._draw = (SHAPE_PREFIX, SHAPE_SOURCE)

        self.sampler = CurrentScoreSampler(space, history, make_inner, seed, first)
        self.study = study
        self.study.sampler = self.sampler

    @staticmethod
    def enqueue_warm_start(study: Study, space: SearchSpace, configs: Sequence[tuple[str, NamedConfig]]) -> None:
        """Enqueue (kind, config) pairs, in order, for exactly-once popping by any worker."""
        for kind, named in configs:
            params = space.searched_params(space.complete(named.knobs))
            study.enqueue_trial(params, user_attrs={"kind": kind, "name": named.name, "source": named.source})

    def next(self) -> Proposal:
        """The next configuration: a waiting warm-start trial if any (one a divergence has
        answered is skipped, :mod:`bracket.search.skip_rule`), then the learning-rate
        bracket, else a sampled one."""
        self.skipped = []
        while True:
            trial, proposal = self._ask()
            reason = None
            if proposal.kind in SKIPPABLE_KINDS:
                verdict = hedge_verdict(self._history(), self._hedge) or hedge_cut(
                    self._history(), proposal.kind, self.space.searched_params(proposal.config), self._hedge)
                reason = f"skipped: {verdict}" if verdict else None
            if reason is None and self._skip_diverged and proposal.kind in SKIPPABLE_KINDS:
                reason = skip_reason(self.space.searched_params(proposal.config), self._history(), self.space)
            if reason is None:
                line = self._line(proposal)
                if line:
                    trial.set_user_attr(WHY_ATTR, line)
                return proposal
            # popped (so no other worker gets it) and closed untrained, the reason kept with it
            trial.set_user_attr("bracket_note", reason)  # as study_sync.close_waiting notes leftovers
            self.study.tell(trial, state=TrialState.PRUNED, skip_if_finished=True)
            self.skipped.append(skip_note(proposal.kind, proposal.name, reason))

    def _line(self, proposal: Proposal) -> str:
        """The why line of ``proposal``, or "" — a line that cannot be made never stops a search
        (the trial table then rebuilds one from the scores of the day, marked so)."""
        if self._describe is None:
            return ""
        try:
            return self._describe(proposal)
        except Exception as error:  # noqa: BLE001 - a sentence for the table is not worth a failed search
            self._note(f"why line of {proposal.name} not recorded: {type(error).__name__}: {error}")
            return ""

    def _ask(self) -> tuple[optuna.Trial, Proposal]:
        if self._bracket_open and not self.waiting_count() and hedge_verdict(self._history(), self._hedge):
            self._bracket_open = False  # the warm start reads flat: no bracket, one probe along its slope
            probe = hedge_probe(self._history(), self.space, self._hedge)
            if probe is not None:  # enqueued, so the ask below hands it out
                self.study.enqueue_trial(probe.params,
                                         user_attrs={"kind": BRACKET_KIND, "name": probe.name, "source": probe.source})
        if self._bracket_open and not self.waiting_count():
            step = next_bracket(self._history(), self.space, rule=self._bracket_rule)
            if step.params is not None:  # enqueued, so the ask below hands it out (and the study logs it)
                self.study.enqueue_trial(step.params,
                                         user_attrs={"kind": BRACKET_KIND, "name": step.name, "source": step.source})
            elif step.finished:
                self._bracket_open = False
                # with TPE the sampler's first proposals are shape draws (bracket.search.shapes)
                sampler = "shape draw or TPE" if self.algorithm == "tpe" else "random"
                for side in step.skipped:
                    self._note(f"LR bracket: {side}; one more {sampler} trial instead")
        trial = self.study.ask()
        config = self.space.suggest(trial)
        # numbered from 1 like runs and the plan (trial 4 is the fifth config: "search-5")
        drawn = self.sampler.drew(trial_id(trial))  # a shape (hedge) draw is named shape-N (hedge-N), kind search
        prefix, source = self._draw
        name = str(trial.user_attrs.get("name", f"{prefix if drawn else 'search-'}{trial.number + 1}"))
        kind = stored_kind(str(trial.user_attrs.get("kind", "search")), name)  # a study enqueued before kind past
        if kind == "search":
            trial.set_user_attr("kind", "search")
            trial.set_user_attr("name", name)
            if drawn:
                trial.set_user_attr("source", source)
        return trial, Proposal(trial_number=trial.number, config=config, kind=kind, name=name)

    def waiting_count(self, kind: str | None = None) -> int:
        """Warm-start configs not yet handed out (of ``kind`` only, when given)."""
        waiting = self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        return len(waiting) if kind is None else sum(
            1 for t in waiting if stored_kind(str(t.user_attrs.get("kind")), str(t.user_attrs.get("name", ""))) == kind)

    def finish(self, trial_number: int, value: float | None, state: TrialState = TrialState.COMPLETE) -> None:
        """Record the outcome of a configuration in the stored study (idempotent)."""
        if state == TrialState.COMPLETE and value is None:
            state = TrialState.FAIL
        self.study.tell(trial_number, value if state == TrialState.COMPLETE else None, state=state,
                        skip_if_finished=True)
