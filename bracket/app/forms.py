"""Turning what a person typed into a form into :class:`SearchSettings`.

The UI's Setup tab hands over raw values (numbers that may be floats or None, text boxes
that may be blank); this module converts them with messages that say what to fix, and
the settings' own ``validate`` does the rest. Gradio-free, so the CLI and tests can use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from bracket.app.programs import no_userinfo
from bracket.errors import BracketError
from bracket.judge.combine import parse_weights
from bracket.session import HalvingSettings, SearchSettings, SettingsError
from bracket.session.loop.budget import Budget
from bracket.session.loop.rung_steps import trainer_facts
from bracket.session.loop.trainer_facts import NO_FACTS
from bracket.session.scoring.image_config import chosen_models

#: judgements per sample or answer: more than this is a typo, not a plan (each is a server call)
MAX_JUDGE_REPEATS = 20

#: bound used for a side of the learning-rate range that the person left blank
_OPEN_LOW, _OPEN_HIGH = 0.0, 1e9


def _whole(name: str, value: Any, *, optional: bool = False) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if optional:
            return None
        raise SettingsError(f"{name} is empty; enter a whole number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a whole number, got {value!r}.") from None
    if not math.isfinite(number) or number != int(number):
        raise SettingsError(f"{name} must be a whole number, got {value!r}.")
    return int(number)


def _number(name: str, value: Any) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a number such as 1e-4, got {value!r}.") from None
    if not math.isfinite(number) or number <= 0:
        raise SettingsError(f"{name} must be a positive number, got {value!r}.")
    return number


def parse_bounds(lr_min: Any = None, lr_max: Any = None, batch_sizes: str = "",
                 knobs: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The one bounds parser of the UI and the CLI: ``learning_rate`` (low, high) from the LR
    fields (a blank side stays open), ``batch_size`` choices from ``"1,2,4"``, and any knob
    from ``knobs`` (the CLI's ``--bound KNOB=MIN:MAX`` or ``KNOB=A,B``; no knob of any trainer
    goes below 0, so a negative MIN or MAX is a mistake, not a wish to clamp).

    Every bad value is named: the ``SettingsError`` joins one sentence per bad value, in the
    order LR, batch sizes, knobs (the CLI prints it as one ``error:`` line)."""
    bounds: dict[str, Any] = {}
    problems: list[str] = []

    def check(parse: Any, *args: Any) -> Any:
        try:
            return parse(*args)
        except SettingsError as error:
            problems.append(str(error))
            return None

    low, high = check(_number, "LR min", lr_min), check(_number, "LR max", lr_max)
    if low is not None and high is not None and low > high:
        problems.append(f"LR min {low:g} is above LR max {high:g} (reversed); swap them.")
    elif low is not None or high is not None:
        bounds["learning_rate"] = (low if low is not None else _OPEN_LOW, high if high is not None else _OPEN_HIGH)
    sizes = check(_batch_sizes, batch_sizes)
    if sizes:
        bounds["batch_size"] = sizes
    for name, value in (knobs or {}).items():
        found = check(_knob_bound, name, value)
        if found is not None:
            bounds[name] = found
    if problems:
        raise SettingsError(" ".join(problems))
    return bounds


def _batch_sizes(text: str) -> list[int]:
    """``"4, 1"`` -> [1, 4] ([] when blank)."""
    compact = (text or "").replace(" ", "")
    if not compact:
        return []
    try:
        sizes = [int(part) for part in compact.split(",") if part]
    except ValueError:
        raise SettingsError(f"Batch sizes {text!r} must be whole numbers separated by commas, "
                            "e.g. 1,2,4.") from None
    if not sizes or any(s <= 0 for s in sizes):
        raise SettingsError(f"Batch sizes {text!r} must be positive whole numbers.")
    return sorted(set(sizes))


def _knob_bound(name: str, value: str) -> tuple[float, float] | list[str]:
    """``--bound NAME=value``: (min, max) for ``MIN:MAX``, else the listed choices."""
    if ":" not in value:
        return [v.strip() for v in value.split(",") if v.strip()]
    first, _, second = value.partition(":")
    try:
        low, high = float(first), float(second)
    except ValueError:
        raise SettingsError(f"Bound {name}={value}: write MIN:MAX with numbers.") from None
    if low < 0 or high < 0:
        raise SettingsError(f"Bound {name}={value}: {name} cannot be negative; write MIN:MAX of 0 or more.")
    return low, high


def judge_server_settings(base_url: str = "", model: str = "", api_key: str = "", repeats: Any = None
                          ) -> dict[str, Any]:
    """The judge model server settings (``SearchSettings.vlm``) of the Setup form and the CLI's
    ``--judge-*`` options: empty when no URL is given. The one server serves the VLM judge
    (image and video presets) and the LLM-as-judge (LLM presets). Raises ``SettingsError``."""
    if not (base_url or "").strip():
        if (model or "").strip():
            raise SettingsError("A judge model needs the server's base URL as well (e.g. http://localhost:1234/v1).")
        return {}
    if not (model or "").strip():
        raise SettingsError("A judge model server needs a model name as well as the base URL; fill in the model.")
    if not (base_url or "").strip().lower().startswith(("http://", "https://")):
        raise SettingsError(f"Judge server URL {no_userinfo(base_url.strip())!r} must start with http:// or https://.")
    if "@" in urlsplit(base_url.strip()).netloc:  # it would be stored with the session and shown in messages
        raise SettingsError(f"Judge server URL {no_userinfo(base_url.strip())!r} carries a user or password; "
                            "give the URL without it and the key as the API key (BRACKET_VLM_API_KEY).")
    found: dict[str, Any] = {"base_url": base_url.strip(), "model": model.strip()}
    if (api_key or "").strip():
        found["api_key"] = api_key.strip()
    count = _whole("Judge repeats", repeats, optional=True)
    if count is not None:
        if not 1 <= count <= MAX_JUDGE_REPEATS:
            raise SettingsError(f"Judge repeats must be from 1 to {MAX_JUDGE_REPEATS} (each one asks the judge "
                                f"server again for every sample or answer), got {count}.")
        found["repeats"] = count
    return found


def settings_from_form(*, budget: Any, steps: Any, seeds: Any, prompts: str = "", sample_every: Any = None,
                       algorithm: str = "tpe", bounds: Mapping[str, Any] | None = None,
                       weights: Mapping[str, Any] | None = None, vlm_base_url: str = "", vlm_model: str = "",
                       vlm_api_key: str = "", timeout_s: Any = None, lr_bracket: bool = True,
                       warm_start_from: Sequence[str] | None = None, confirm: Any = None,
                       validation: bool = True, halving: bool = False, judge_text_image: str = "",
                       judge_likeness: str = "", judge_preference: str = "") -> SearchSettings:
    """Validated settings from form values; raises ``SettingsError`` (a ``BracketError``).
    ``bounds`` come from :func:`parse_bounds` (the Setup tab's search-space table gives them
    through ``bracket.app.space_editor``). ``judge_*``: the image judges' models (blank: ``.env``'s)."""
    every = _whole("Sample every N steps", sample_every, optional=True)
    if every == 0:
        every = None  # the form's 0: the trainer's own (with halving, each rung); negatives still fail below
    weight_values = parse_weights(weights)
    vlm = judge_server_settings(vlm_base_url, vlm_model, vlm_api_key)
    settings = SearchSettings(
        budget=_whole("Budget", budget) or 0, steps=_whole("Steps per trial", steps) or 0,
        seeds=_whole("Seeds per config", seeds) or 0, sample_prompts=prompts or "",
        sample_every_n_steps=every, algorithm=algorithm or "tpe",
        bounds=dict(bounds or {}), weights=weight_values,
        timeout_s=_number("Trial timeout", timeout_s), vlm=vlm, lr_bracket=bool(lr_bracket),
        warm_start_from=[str(f) for f in (warm_start_from or []) if f],
        confirm=_whole("Confirmation runs", confirm, optional=True), validation_split=None if validation else 0.0,
        halving=HalvingSettings() if halving else None,
        image_models=chosen_models(judge_text_image or "", judge_likeness or "", judge_preference or ""),
    )
    settings.validate()
    return settings


def plan_text(budget: Any, seeds: Any, confirm: Any = None, preset_id: str | None = None, lr_bracket: Any = True,
              algorithm: str = "tpe", bounds: Mapping[str, Any] | None = None,
              fields: dict[str, str] | None = None, steps: Any = None, warm_start_from: Any = None,
              halving: Any = False, sample_every: Any = None) -> str:
    """``"= 4 configs × 2 seeds — plan: baseline, 3 curated"`` (or ``"= search 18 (18 configs × 1 seed)
    + confirm 6 — plan: …"``) for the budget box (the phases of ``bracket.session.loop.plan`` when a preset
    is given, its warm start fitted to ``bounds`` and ``steps`` as the session will fit it, so a
    curated config the bounds drop is not planned, with the configs of the past sessions in
    ``warm_start_from`` taken as Start takes them), or what is wrong with the numbers. A halving plan is
    the one Start runs (``Budget.plan_text``: the steps, the sample interval and the trainer's facts decided
    as ``create_session`` decides them), its count an upper bound while a launch's start-up is unmeasured."""
    try:
        every = _whole("Sample every N steps", sample_every, optional=True) or None
        length = _whole("Steps per trial", steps, optional=True) if halving else None
        settings = SearchSettings(budget=_whole("Budget", budget) or 0, seeds=_whole("Seeds per config", seeds) or 0,
                                  confirm=_whole("Confirmation runs", confirm, optional=True),
                                  lr_bracket=bool(lr_bracket), algorithm=algorithm or "tpe",
                                  bounds=dict(bounds or {}), warm_start_from=[str(f) for f in warm_start_from or []],
                                  halving=HalvingSettings() if halving else None, sample_every_n_steps=every,
                                  **({"steps": length} if length else {}))
        if settings.budget <= 0 or settings.seeds <= 0:
            return "Budget and seeds must be at least 1."
        if settings.budget < settings.seeds:
            return f"Budget {settings.budget} is smaller than {settings.seeds} seeds: raise the budget."
        trainer = _trainer(preset_id, fields) if settings.halving and preset_id else None
        # as Start decides them: a restart's cost, the interval the rungs round to
        facts = trainer_facts(settings, trainer) if trainer is not None else NO_FACTS
        settings.validate(facts)
    except SettingsError as error:
        return str(error)
    spent = Budget.of(settings, trainer, facts).plan_text().split(" = ", 1)[1]
    text = f"= {settings.budget} full runs: {spent}" if settings.halving else f"= {spent}"  # the unit, with halving
    if preset_id:
        try:
            run_steps = int(steps) if steps not in (None, "") else None
        except (TypeError, ValueError):
            run_steps = None
        phases = preset_plan(preset_id, settings, fields, steps=run_steps)
        if phases:
            text += f" — plan: {phases}"
    return text


def _trainer(preset_id: str, fields: dict[str, str] | None) -> Any:
    """``preset_id``'s trainer with the form's fields (None when it cannot be built yet)."""
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset

    try:
        preset = get_preset(preset_id)
        return preset.trainer_factory(merge_with_defaults(preset.fields, fields or {}))
    except (BracketError, ValueError, TypeError, KeyError):
        return None


def preset_plan(preset_id: str, settings: SearchSettings, fields: dict[str, str] | None = None,
                steps: int | None = None) -> str:
    """The plan's phases in one line for ``preset_id`` with its default (or given) fields, in the
    space a session with ``settings`` (its bounds) and ``steps`` would search, its past
    sessions' configs in their leaderboards' order (``past_ranking``, as Start takes them);
    "" when the trainer cannot be built from them yet (the form is not filled in)."""
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset
    from bracket.session.loop.plan import plan_for
    from bracket.session.loop.plan import plan_text as phases_text
    from bracket.status.ranking import past_ranking

    try:
        preset = get_preset(preset_id)
        trainer = preset.trainer_factory(merge_with_defaults(preset.fields, fields or {}))
        space = trainer.session_space(settings.bounds, steps=steps, warmup_share=settings.warmup_share)
        return phases_text(plan_for(trainer, space, settings, preset.id, rank=past_ranking))
    except (BracketError, ValueError, TypeError, KeyError):
        return ""


def default_budget(preset_id: str, settings: SearchSettings | None = None, fields: dict[str, str] | None = None,
                   steps: int | None = None) -> int:
    """The budget a search of ``preset_id`` starts from (the Setup form and ``bracket run``
    without ``--budget``): the smallest whose plan runs the warm start, the LR bracket and the
    shape draws and gives TPE two proposals of its own (``bracket.session.loop.plan.budget_reaching_search``),
    its warm start fitted to ``settings``' bounds and ``steps`` with ``fields`` (defaults merged
    in); the engine's default when the trainer cannot be built from them."""
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset
    from bracket.session.loop.plan import budget_reaching_search, plan_for

    settings = settings if settings is not None else SearchSettings()
    if isinstance(settings.seeds, bool) or not isinstance(settings.seeds, int) or settings.seeds <= 0:
        return settings.budget  # the settings' own check says what is wrong
    try:
        preset = get_preset(preset_id)
        trainer = preset.trainer_factory(merge_with_defaults(preset.fields, fields or {}))
        space = trainer.session_space(settings.bounds, steps=steps, warmup_share=settings.warmup_share)
    except (BracketError, ValueError, TypeError, KeyError):
        return settings.budget
    return budget_reaching_search(settings, lambda trial: plan_for(trainer, space, trial, preset.id))
