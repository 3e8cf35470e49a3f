"""A preset's fields (the inputs a person fills in) and their validation.

A :class:`FieldSpec` is data: a name, a label, a kind (``dir``, ``file``, ``path``,
``text``, ``int``, ``float``, ``choice``), a default and help. The UI renders a form from
it; the CLI takes ``--set name=value``. :func:`validate_field_values` checks a whole form
at once and names every problem, before anything runs.

Defaults of model-weight fields come from ``BRACKET_*_PATH`` variables through
:mod:`bracket.settings`; trainer-infrastructure fields default to the ``vendor/`` copies.
This module sits below both the trainer adapters (which declare their fields) and the
forms and CLI (which fill them in); it imports neither.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bracket import settings
from bracket.errors import FieldError

FIELD_KINDS = ("dir", "file", "path", "text", "int", "float", "choice")
#: the kinds whose value is a local path: made absolute when the form or ``--set`` hands it in
PATH_KINDS = ("dir", "file", "path")


@dataclass(frozen=True)
class FieldSpec:
    """One input of a preset."""

    name: str
    label: str
    kind: str = "text"
    default: str | Callable[[], str] = ""
    required: bool = False
    help: str = ""
    #: the ``BRACKET_*`` variable whose value, when set, is this field's default
    env_var: str | None = None
    choices: tuple[str, ...] = field(default_factory=tuple)
    #: names code a trainer runs — a program (trainer python, training script, trainer folder)
    #: or a config that imports code (torchtune's recipe config): the web app takes only its
    #: configured value (or one of ``builtin``) unless started with ``--allow-custom-executables``
    executable: bool = False
    #: an executable field's values that are always allowed: names the trainer resolves to its
    #: own files (torchtune's built-in configs), never a file Bracket or a web user wrote
    builtin: tuple[str, ...] = field(default_factory=tuple)
    #: the sane range of an ``int``/``float`` field, checked by the form and the CLI alike
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"FieldSpec {self.name}: kind {self.kind!r} is not one of {FIELD_KINDS}")

    def resolved_default(self) -> str:
        """The default shown in the form: the environment variable, else the built-in."""
        if self.env_var:
            from_env = settings.env(self.env_var)
            if from_env:  # a relative path in .env or the environment: from the project folder
                return str(settings.absolute_path(from_env, settings.PROJECT_ROOT)) if self.kind in PATH_KINDS \
                    else from_env
        return self.default() if callable(self.default) else self.default

    def given(self, value: object) -> str:
        """A value a person typed, stripped; a path made absolute (against the current folder),
        since every trainer runs in a folder of its own."""
        text = str(value).strip()
        return str(settings.absolute_path(text)) if text and self.kind in PATH_KINDS else text


def problem_with_value(spec: FieldSpec, value: str) -> str | None:
    """Why ``value`` is not acceptable for ``spec`` (None when it is)."""
    value = value.strip()
    if not value:
        return f"{spec.label} is required; fill it in." if spec.required else None
    if spec.kind in ("int", "float"):
        try:
            number = int(value) if spec.kind == "int" else float(value)
        except ValueError:
            return f"{spec.label} must be {'a whole number' if spec.kind == 'int' else 'a number'}, got {value!r}."
        if number != number or (spec.minimum is not None and number < spec.minimum) or (
                spec.maximum is not None and number > spec.maximum):
            low = "" if spec.minimum is None else f"{spec.minimum:g}"
            high = "" if spec.maximum is None else f"{spec.maximum:g}"
            return f"{spec.label} must be from {low or '…'} to {high or '…'}, got {value}."
    elif spec.kind == "choice" and spec.choices and value not in spec.choices:
        return f"{spec.label} must be one of {', '.join(spec.choices)}; got {value!r}."
    elif spec.kind in PATH_KINDS:
        return _problem_with_path(spec, value)
    return None


def _problem_with_path(spec: FieldSpec, value: str) -> str | None:
    path = Path(os.path.expanduser(value))
    try:
        path.exists()
    except OSError as error:  # e.g. ENAMETOOLONG: the file system refuses to look the path up at all
        return f"{spec.label}: {value} cannot be used as a path ({error.strerror}); give a shorter path."
    if not path.exists():  # the help is a sentence of its own: it may hold parentheses itself
        hint = f" {spec.help.rstrip('.')}." if spec.help else ""
        return f"{spec.label}: {value} does not exist; check the path.{hint}"
    if spec.kind == "dir" and not path.is_dir():
        return f"{spec.label}: {value} is a file; give the folder."
    if spec.kind == "file" and not path.is_file():
        return f"{spec.label}: {value} is a folder; give the file."
    if not os.access(path, os.R_OK):
        return f"{spec.label}: {value} cannot be read; check its permissions."
    return None


def _same_path(a: str, b: str) -> bool:
    try:
        return Path(os.path.expanduser(a)).resolve() == Path(os.path.expanduser(b)).resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def allowed_values(spec: FieldSpec) -> list[str]:
    """What an executable field may hold in the web app: the configured value, then ``builtin``."""
    configured = spec.resolved_default()
    return [configured, *[b for b in spec.builtin if b != configured]]


def _configured(spec: FieldSpec, given: str) -> bool:
    configured = spec.resolved_default()
    if given == configured or given in spec.builtin:
        return True
    # a path field may spell the configured path another way; a text field (a config name the
    # trainer looks up before any file) only exactly: ``./name`` would be read as a file
    return spec.kind in ("dir", "file", "path") and _same_path(given, configured)


def configured_executable_problems(specs: Sequence[FieldSpec], values: Mapping[str, str]) -> list[str]:
    """One line per executable field whose value is neither configured nor built in."""
    problems = []
    for spec in specs:
        given = str(values.get(spec.name) or "").strip()
        if spec.executable and given and not _configured(spec, given):
            hint = f" ({spec.env_var} in .env)" if spec.env_var else ""
            problems.append(f"{spec.label}: {given} is not the configured one{hint}.")
    return problems


def check_configured_executables(specs: Sequence[FieldSpec], values: Mapping[str, str], *,
                                 who: str = "The web app",
                                 opt_in: str = "start it with `python app.py --allow-custom-executables`") -> None:
    """Refuse an executable field whose value is not the configured one (``.env``/settings).

    A login to the web app must not mean a shell, nor write access to a shared database a way
    to run code on every worker: the form (or the stored session a worker joins) may only name
    the trainer python, training script, trainer folder and trainer config configured on this
    machine (or a config the trainer has built in). ``who`` runs it; ``opt_in``: how to lift it.
    """
    problems = configured_executable_problems(specs, values)
    if problems:
        raise FieldError(" ".join(problems) + f" {who} runs only the trainer programs and configs set in "
                         f".env or the settings; to run others, {opt_in}.")


def merge_with_defaults(specs: Sequence[FieldSpec], values: Mapping[str, str]) -> dict[str, str]:
    """Every field's value: the given one, else its default; unknown names raise."""
    known = {s.name for s in specs}
    unknown = [name for name in values if name not in known]
    if unknown:
        raise FieldError(
            f"Unknown field(s) {', '.join(sorted(unknown))}; this preset has: {', '.join(sorted(known))}."
        )
    merged: dict[str, str] = {}
    for spec in specs:
        given = values.get(spec.name)
        merged[spec.name] = spec.given(given) if given is not None else spec.resolved_default()
    return merged


def validate_field_values(specs: Sequence[FieldSpec], values: Mapping[str, str], *,
                          unchecked: Collection[str] = ()) -> dict[str, str]:
    """Merge defaults and check every field (but those named in ``unchecked``: made later);
    raise one :class:`FieldError` naming all problems."""
    merged = merge_with_defaults(specs, values)
    problems = [p for s in specs if s.name not in unchecked and (p := problem_with_value(s, merged[s.name]))]
    if problems:
        raise FieldError(" ".join(problems))
    return merged
