"""What a preset is: one searchable (model family, training type) pair, as a row of data.

A :class:`ModelPreset` names its fields (:class:`bracket.fields.FieldSpec`) and the adapter
class that turns their values into commands. Each trainer family keeps its rows in
``<family>/presets.py``; :mod:`bracket.trainer.presets` lists them all and
:mod:`bracket.registry` looks them up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bracket.errors import BracketError
from bracket.fields import FieldSpec, merge_with_defaults, problem_with_value, validate_field_values
from bracket.trainer.base import Trainer

TRAINING_TYPES = ("LoRA", "Full FT")


@dataclass(frozen=True)
class ModelPreset:
    """One searchable (model family, training type) pair and how to build its trainer."""

    id: str
    model_family: str
    training_type: str
    display_name: str
    trainer_factory: Callable[[Mapping[str, str]], Trainer]
    fields: tuple[FieldSpec, ...]
    notes: str = ""
    needs_pre_cache: bool = False
    #: the trainer script (or command) this preset drives, for tables and docs
    trainer_script: str = ""
    #: search settings the Setup form and ``bracket run`` start from for this preset (``steps``);
    #: the rest are ``SearchSettings``' (the budget: the smallest whose plan reaches TPE,
    #: ``bracket.app.forms.default_budget``)
    search_defaults: tuple[tuple[str, int], ...] = ()
    #: makes what the preset can make itself when it is missing — the demo's dataset at its
    #: default place — from the field values (defaults merged in); returns a note saying what it
    #: made, or None. Runs before the fields are checked.
    prepare: Callable[[Mapping[str, str]], str | None] | None = None
    #: what :attr:`prepare` would make from these field values, said before it does (the Setup
    #: form shows it instead of a "does not exist" warning); None when it would make nothing
    made_on_start: Callable[[Mapping[str, str]], str | None] | None = None
    #: the fields whose value :attr:`prepare` makes (the demo's "dataset"): :meth:`check_fields`
    #: does not ask them to exist yet while :attr:`made_on_start` says they will be made
    prepares: tuple[str, ...] = ()

    def prepare_fields(self, values: Mapping[str, str]) -> str | None:
        """Run :attr:`prepare` on ``values`` (defaults merged in); the note, or None."""
        return self.prepare(merge_with_defaults(self.fields, values)) if self.prepare is not None else None

    def made_on_start_note(self, values: Mapping[str, str]) -> str | None:
        """What a search start would make from ``values`` (defaults merged in), or None."""
        if self.made_on_start is None:
            return None
        return self.made_on_start(merge_with_defaults(self.fields, values))

    def check_fields(self, values: Mapping[str, str]) -> dict[str, str]:
        """Defaults merged in and every field checked, *making nothing*: a field that
        :attr:`prepare` would make (:attr:`prepares`, when :attr:`made_on_start` says so) is not
        asked to exist yet. A session is checked this way first, so bad input writes nothing;
        raises ``FieldError``."""
        later = self.prepares if self.made_on_start_note(values) else ()
        return validate_field_values(self.fields, values, unchecked=later)

    def validate_fields(self, values: Mapping[str, str]) -> dict[str, str]:
        """Defaults merged in, what the preset makes itself made (:attr:`prepare`), and every field
        checked; raises ``FieldError``."""
        self.prepare_fields(values)
        return validate_field_values(self.fields, values)

    def field_problem(self, spec: FieldSpec, value: str, values: Mapping[str, str]) -> str | None:
        """What is wrong with one field's ``value`` (the others in ``values``), as the form says it
        under the field: the field's own check and, for the trainer's checkout folder, whether it
        holds the scripts this preset runs (``Trainer.checkout_problem``); None when usable."""
        problem = problem_with_value(spec, value)
        if problem or not value.strip():
            return problem
        try:
            trainer = self.trainer_factory(merge_with_defaults(self.fields, {**values, spec.name: value}))
        except (BracketError, ValueError, TypeError):  # another field the adapter cannot hold: its own line
            return None
        if spec.name != trainer.checkout_field:
            return None
        problem = trainer.checkout_problem()
        return f"{spec.label}: {problem}" if problem else None

    def build_trainer(self, values: Mapping[str, str]) -> Trainer:
        """Validate ``values`` and construct this preset's trainer adapter."""
        return self.trainer_factory(self.validate_fields(values))


#: the dataset of both kohya families (sd-scripts and musubi-tuner): their TOML or a folder
DATASET_FIELD = FieldSpec(
    "dataset", "Dataset (TOML or folder)", "path", required=True,
    help="A dataset TOML of the trainer, or a folder of images with .txt captions.",
    env_var="BRACKET_DATASET",
)
