"""Creating and re-opening a session: every check happens before anything is written.

``create_session`` validates the preset, its fields, the search settings, the warm-start
configs against the (possibly narrowed) space, the dataset, the output folder and the
storage URL — and only then creates the session folder, the store and the study. A person's
mistake therefore raises a ``BracketError`` and leaves nothing behind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from bracket import settings as app_settings
from bracket.dataset.preflight import preflight_dataset, preflight_for_trainer
from bracket.errors import BracketError, DamagedRowError, DatasetError, SearchSpaceError, StoreError
from bracket.judge.combine import check_weights_score
from bracket.registry import get_preset
from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.search.types import PAST_KIND
from bracket.search.warm_order import order_warm_start
from bracket.session.loop.rung_steps import restart_note, rounded_note, rung_problem, trainer_facts
from bracket.session.loop.trainer_facts import NO_FACTS, TrainerFacts
from bracket.session.past import Ranking, past_configs
from bracket.session.scoring.image_config import (
    apply_references,
    check_image_judges,
    decide_references,
    image_judge_config,
    image_judges_wanted,
    weighed_image_judges,
)
from bracket.session.search_settings import SearchSettings, SettingsError
from bracket.session.store import Store, sqlite_url
from bracket.session.store.folder import SESSION_FILE, open_session_store, read_session_file  # noqa: F401 - re-exported
from bracket.session.store.migrations import nested_settings
from bracket.trainer.base import Trainer, warmup_cap
from bracket.trainer.heldout import ValidationPlan, decide
from bracket.trainer.preset import ModelPreset

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


@dataclass
class SessionParts:
    """Everything a :class:`bracket.session.session.Session` is built from."""

    store: Store
    name: str
    folder: Path
    preset: ModelPreset
    fields: dict[str, str]
    trainer: Trainer
    settings: SearchSettings
    space: SearchSpace
    notes: list[str]
    #: what the dataset pre-flight warns about (the search runs; the CLI prints them)
    warnings: list[str] = field(default_factory=list)
    #: how earlier sessions rank their configs (``bracket.session.past``): the warm start
    #: and the plan's count of ``past`` configs follow it (None: the value each trial ended with)
    rank_past: Ranking | None = None
    #: the trainer's facts a halving plan's cost depends on, decided at creation (``loop.trainer_facts.TrainerFacts``)
    facts: TrainerFacts = NO_FACTS


def fit_warm_start(trainer: Trainer, space: SearchSpace) -> tuple[list[tuple[str, NamedConfig]], list[str]]:
    """Baseline and curated configs fitted to ``space``, with a note for each change.

    A config that does not fit the trainer's *own* space is a bug in the adapter and
    raises; one that only fails the person's bounds is clamped or dropped, with a note.
    """
    full = trainer.declare_search_space()
    configs = [("baseline", trainer.baseline_config())] + [("curated", c) for c in trainer.curated_configs()]
    fitted: list[tuple[str, NamedConfig]] = []
    notes: list[str] = []
    for kind, named in configs:
        problems = full.problems(full.complete(named.knobs))
        if problems:
            raise SearchSpaceError(f"{kind} config {named.name!r} of this trainer is outside its own search "
                                   f"space ({'; '.join(problems)}); fix the adapter.")
        result = space.fit(named.knobs, label=f"{kind} {named.name!r}")
        notes.extend(result.notes)
        if result.config is not None:
            fitted.append((kind, NamedConfig(named.name, result.config, named.source)))
    return fitted, notes


def fit_past(space: SearchSpace, configs: list[NamedConfig], notes: list[str]) -> list[tuple[str, NamedConfig]]:
    """Configs of earlier sessions fitted to ``space`` (clamped or dropped, noted in ``notes``),
    as kind ``past``."""
    fitted: list[tuple[str, NamedConfig]] = []
    for named in configs:
        result = space.fit(named.knobs, label=f"past {named.name!r}")
        notes.extend(result.notes)
        if result.config is not None:
            fitted.append((PAST_KIND, NamedConfig(named.name, result.config, named.source)))
    return fitted


def check_writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        raise BracketError(f"Output folder {folder} is not writable ({error.strerror}); choose another with "
                           "--out or BRACKET_RUNS_DIR.") from None


def _url_without_password(url: str) -> str:
    parsed = sa.engine.make_url(url)
    if not parsed.password:
        return url
    # (URL.set(password=None) keeps the password: None there means "unchanged")
    bare = sa.engine.URL.create(parsed.drivername, username=parsed.username, host=parsed.host, port=parsed.port,
                                database=parsed.database, query=parsed.query)
    return bare.render_as_string(hide_password=False)


def check_dataset(trainer: Trainer, fields: dict[str, str], space: SearchSpace | None = None) -> list[str]:
    """Dataset pre-flight for trainers that read a kohya dataset; raises with every problem.

    Returns the warnings (a search still runs with them).
    """
    report = preflight_for_trainer(trainer, fields, space=space)
    if report is None:
        return []
    if not report.ok:
        raise DatasetError(f"Dataset {fields.get('dataset')}: " + " ".join(report.problems))
    return list(report.warnings)


def decide_validation(trainer: Trainer, fields: dict[str, str], settings: SearchSettings, *,
                      trainer_name: str = "this trainer") -> tuple[SearchSettings, str]:
    """The settings with the validation split decided (stored with the session), and its note."""
    style = getattr(trainer, "dataset_style", None)
    dataset = fields.get("dataset")
    images = preflight_dataset(Path(dataset), style).media if style and dataset else None
    split, note = decide(settings.validation_split, supported=bool(trainer.validation_tags), images=images,
                         seed=settings.base_seed, trainer_name=trainer_name)
    return dataclasses.replace(settings, validation_split=split), note


def apply_validation(trainer: Trainer, settings: SearchSettings) -> None:
    """Give ``trainer`` the session's held-out split (same split and seed for every run)."""
    split = settings.validation_split or 0.0
    trainer.validation = ValidationPlan(split, settings.base_seed) if split and trainer.validation_tags else None


def create_session(preset_id: str, fields: dict[str, str], settings: SearchSettings, *,
                   out_dir: Path | None = None, name: str | None = None,
                   storage_url: str | None = None, rank_past: Ranking | None = None) -> SessionParts:
    """Validate everything, then create the session folder, store and study (``rank_past``:
    how the sessions of ``settings.warm_start_from`` rank their configs, see ``bracket.session.past``).

    Bad input writes nothing: every check that needs no file of ours comes first, and only then
    is what the preset makes itself made (the default demo dataset, missing on a fresh clone) —
    and removed again when the checks that need it refuse the session."""
    preset = get_preset(preset_id)
    settings.validate()
    merged = preset.check_fields(fields)  # nothing made yet (the demo dataset comes once all else is accepted)
    trainer = preset.trainer_factory(merged)
    settings = with_sample_prompts(settings, trainer, preset.display_name)
    images = image_judge_config(settings.weights, settings.image_models)
    images_wanted = images is not None and image_judges_wanted(settings.weights, trainer.sample_kind)
    check_weights_score(settings.weights, sample_kind=trainer.sample_kind,
                        judge_server=bool((settings.vlm or {}).get("base_url")), image_judges=images_wanted,
                        preference=bool(images and images.preference))
    if images_wanted and (problem := check_image_judges(images)):
        zero = ",".join(f"{name}=0" for name in weighed_image_judges(settings.weights))
        raise SettingsError(f"Image judges: {problem} (or set their weights to 0: {zero}).")
    space = trainer.session_space(settings.bounds, steps=settings.steps, warmup_share=settings.warmup_share)
    warm_start, notes = fit_warm_start(trainer, space)
    if settings.warm_start_from:
        warm_start[1:1] = fit_past(space, past_configs(settings.warm_start_from, preset.id, rank=rank_past), notes)
    warm_start = order_warm_start(warm_start, space, notes)
    cap = warmup_cap(trainer.session_space(settings.bounds), settings.steps, settings.warmup_share)
    if cap is not None:
        share = f"{settings.warmup_share:.0%} of the {settings.steps}-step runs"
        notes.insert(0, f"warm-up searched up to {cap} steps ({share}); longer baseline or curated warm-ups are "
                        "clamped to it" if cap > 0 else
                        f"no warm-up: {share} is less than the warm-up knob's smallest non-zero step, so baseline "
                        "and curated warm-ups are set to 0")
    runs_dir = app_settings.absolute_path(out_dir) if out_dir else app_settings.get_settings().runs_dir
    if not name:  # the default: the preset and the time, made unique (two searches started within a second)
        name = stamp = f"{preset_id}-{time.strftime('%Y%m%d-%H%M%S')}"
        for again in range(2, 1000):
            if not (runs_dir / name / SESSION_FILE).exists():
                break
            name = f"{stamp}-{again}"
    if not _NAME.match(name):
        raise BracketError(f"Session name {name!r} may only use letters, digits, '.', '_' and '-', must start with "
                           "a letter or digit and be at most 121 characters long.")
    folder = runs_dir / name
    if (folder / SESSION_FILE).exists():
        raise BracketError(f"Session {folder} already exists; resume it with `python -m bracket resume {folder}` "
                           "or choose another name.")
    check_writable(runs_dir)
    url = storage_url or app_settings.get_settings().storage_url or None
    external = Store.open(url) if url else None  # a bad URL fails here, before anything is written
    if external is not None and external.get_session(name):
        external.close()
        raise StoreError(f"The store already holds a session named {name!r}; choose another name.")
    made_paths = [_first_missing(Path(os.path.expanduser(merged[f]))) for f in preset.prepares if merged.get(f)]
    made = preset.prepare_fields(fields)  # e.g. the demo dataset, missing on a fresh clone
    try:
        if made:  # the fields again, now that what they name exists, and a trainer that sees it
            merged = preset.validate_fields(fields)
            trainer = preset.trainer_factory(merged)
        warnings = check_dataset(trainer, merged, space)
        settings, validation_note = decide_validation(trainer, merged, settings,
                                                     trainer_name=preset.trainer_script or preset.display_name)
        apply_validation(trainer, settings)
        held, references_note = decide_references(trainer, settings.reference_holdout, wanted=images_wanted)
        settings = dataclasses.replace(settings, reference_holdout=held)
        apply_references(trainer, held)
        facts = NO_FACTS
        if settings.halving is not None:
            rungs = rung_problem(settings, trainer)
            if rungs:
                raise SettingsError(rungs)
            facts = trainer_facts(settings, trainer)
            settings.validate(facts)  # what the trainer costs may leave no config the budget buys
        problems = trainer.preflight_problems()
        if problems:
            raise BracketError(" ".join(problems))
    except BaseException:
        if external is not None:
            external.close()
        if made:
            _remove_made(made_paths)
        raise
    if made:
        notes.insert(1 if cap is not None else 0, made)
    notes.append(validation_note)
    if references_note:
        notes.append(references_note)
    trainer_name = preset.trainer_script or preset.display_name
    if settings.halving is not None and (restarts := restart_note(trainer, trainer_name)):
        notes.append(restarts)
    if settings.halving is not None and (rounded := rounded_note(settings, trainer)):
        notes.append(rounded)
    folder.mkdir(parents=True, exist_ok=True)
    store = external or Store.open(sqlite_url(folder / "bracket.db"))
    store.create_session(name, preset_id=preset.id, fields=merged, settings=settings.to_dict(), notes=notes,
                         plan=facts.to_dict() if settings.halving is not None else None)
    from bracket.search.controller import SearchController  # here: opening a session imports no Optuna

    SearchController.enqueue_warm_start(store.study(name), space, warm_start if settings.warm_start else [])
    write_session_file(folder, name, preset.id, external.url if external else None)  # absolute sqlite path
    return SessionParts(store, name, folder, preset, merged, trainer, settings, space, notes, warnings, rank_past,
                        facts)


def with_sample_prompts(settings: SearchSettings, trainer: Trainer, preset_name: str) -> SearchSettings:
    """``settings`` with prompts for ``trainer``'s samples: its own ones (the demo's) when none are
    given; a trainer that renders samples and has none of its own is refused (the prompts belong
    to the dataset: ``bracket.trainer.sample_proposal`` proposes them, the person keeps or edits them)."""
    if settings.prompts() or not trainer.writes_samples:
        return settings
    if trainer.default_sample_prompts:
        return dataclasses.replace(settings, sample_prompts="\n".join(trainer.default_sample_prompts))
    from bracket.session.search_settings import SettingsError
    from bracket.trainer.sample_proposal import KIND_WORDS

    kind = KIND_WORDS.get(trainer.sample_kind, trainer.sample_kind)
    what = ("an instruction (a held-out question of the dataset) per line" if trainer.sample_kind == "text"
            else "a caption-like prompt per line, e.g. with the dataset's trigger word")
    raise SettingsError(f"No sample prompts: every run of {preset_name} renders {kind} from them, and they are "
                        f"rated. Give {what} (--prompts FILE|TEXT, or the Sample prompts field), or point the "
                        "dataset at captioned data so Bracket can propose them.")


def _first_missing(path: Path) -> Path | None:
    """The outermost folder or file on the way to ``path`` that does not exist yet (what making
    ``path`` creates), or None when ``path`` exists."""
    missing = None
    for candidate in (path, *path.parents):
        if candidate.exists():
            break
        missing = candidate
    return missing


def _remove_made(paths: list[Path | None]) -> None:
    """Remove what the preset made for a session that was then refused (see :func:`create_session`)."""
    import shutil

    for path in paths:
        if path is None or not path.exists():
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def open_session(folder: Path, *, storage_url: str | None = None, validate: bool = True,
                 rank_past: Ranking | None = None) -> SessionParts:
    """Re-open a session folder (or a session in an external store) as it was saved."""
    folder = app_settings.absolute_path(folder)  # the runs' folders and commands never depend on the cwd
    store, name = open_session_store(folder, storage_url=storage_url)
    parts = parts_from_store(store, name, folder, validate=validate)
    return dataclasses.replace(parts, rank_past=rank_past) if rank_past is not None else parts


def parts_from_store(store: Store, name: str, folder: Path, *, validate: bool = True) -> SessionParts:
    """The parts of session ``name`` as saved in ``store``, with ``folder`` for its run folders."""
    row = store.get_session(name)
    if row is None:
        raise StoreError(f"The store holds no session named {name!r}.")
    damage = stored_damage(row)
    if damage:
        store.close()
        raise DamagedRowError(f"session {name!r}: {damage}")
    preset = get_preset(row["preset_id"])
    try:
        fields = preset.validate_fields(row["fields"]) if validate else dict(row["fields"])
    except BracketError:
        store.close()
        raise
    trainer = preset.trainer_factory(fields)
    # a session stored before the learning-rate bracket existed resumes without one (it would
    # otherwise spend two slots on its warm-start winner in the middle of its search)
    # (and one stored before warm-ups were limited to a share of the run keeps its full range;
    # one stored before the confirmation round, validation split and held-out likeness references
    # resumes without them)
    settings = SearchSettings.from_dict({"lr_bracket": False, "warmup_share": None, "confirm": 0,
                                         "validation_split": 0.0, "reference_holdout": 0, **row["settings"]})
    apply_validation(trainer, settings)
    apply_references(trainer, settings.reference_holdout or 0)
    space = trainer.session_space(settings.bounds, steps=settings.steps, warmup_share=settings.warmup_share)
    # a read-only store of the release before nesting keeps the facts in its settings (``nested_settings``)
    facts = TrainerFacts.from_dict(row.get("plan") or nested_settings(row["settings"])[1])
    return SessionParts(store, name, folder, preset, fields, trainer, settings, space, list(row["notes"]),
                        facts=facts)


def stored_damage(row: Mapping[str, Any]) -> str | None:
    """What makes a session row unusable though its columns decode (``schema.check_record``):
    field values that are not text, settings of the wrong types (``SearchSettings.stored_problem``)."""
    fields, notes = row.get("fields"), row.get("notes")
    if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
        return f"its field values are {str(fields)[:60]!r}, not names and texts"
    if notes is not None and not all(isinstance(n, str) for n in notes):
        return "its notes are not texts"
    return SearchSettings.stored_problem(row.get("settings"))


def write_session_file(folder: Path, name: str, preset_id: str, storage_url: str | None) -> None:
    """Write ``session.json`` (the storage URL without its password, or the local ``bracket.db``)."""
    info = {"name": name, "preset_id": preset_id,
            "storage": _url_without_password(storage_url) if storage_url else "bracket.db", "created_at": time.time()}
    (Path(folder) / SESSION_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
