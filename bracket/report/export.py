"""Exporting a session's winner: a shell script that trains it again, and its config as data.

:func:`export_run` rebuilds the winner run's command (the winner of :mod:`bracket.standings`,
the same the app, ``status`` and the report name) with the adapter's own ``prepare_run`` into an
export folder, at the winner's **best step** (``Winner.step``; the run's own length when no
evidence names an earlier one; a halving winner at its full length) unless the person asks for
another, and writes beside it:

* ``train.sh`` — bash, ``set -euo pipefail``, the adapter's environment (never a variable whose
  name looks like a secret) and the command as a bash array, every argument ``shlex.quote``-d;
* ``train.ps1`` — its Windows twin (:mod:`bracket.report.powershell`);
* ``config.json`` and ``config.toml`` — the knob values, where they came from, the headline
  (``bracket.standings.headline``) and the command as a list.

The command stands on its own (``RunRequest.standalone``): it reads the person's own dataset
folder and file (less the session's held-out likeness references, ``bracket.dataset.references``:
it trains on the images the search's runs trained on, so its checkpoint at the best step is the
one that was judged). A trainer that trains only from caches (musubi-tuner) gets them made first: the
scripts run the adapter's ``Trainer.export_setup_commands`` — the session's own pre-caching
commands — into ``<folder>/cache`` (or ``cache_dir``), the folder the command's dataset TOML names.
Where the adapter offers it (``Trainer.session_cache_variant``) the scripts instead run a faster
twin on the session's caches while they still exist, without those commands. The default folder is
``<session>/export/<config>-run<id>-<steps>steps``; every path is absolute, and each file is
replaced whole and only when its text changed. :func:`promote_weights` copies a run's trained
weights to a folder of the person's choice. docs/CLI.md ("export") says more.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from bracket.errors import BracketError
from bracket.report.files import write_whole
from bracket.report.powershell import SCRIPT_NAME as WINDOWS_SCRIPT_NAME
from bracket.report.powershell import powershell_script
from bracket.report.redaction import looks_secret
from bracket.trainer.base import LaunchSpec, RunRequest

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

EXPORT_FOLDER = "export"
SCRIPT_NAME = "train.sh"
#: variables every adapter's environment sets (``make_subprocess_env``): always written when present
STANDARD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                "PYTHONUNBUFFERED", "PYTHONIOENCODING", "TQDM_DISABLE")
#: variables that decide where a trainer finds models, tokenizers and caches (or whether it goes
#: online): kept in the script even when the person's shell sets them too, so the script reruns
#: the run as it ran on another shell or machine (secrets among them are still left out)
CACHE_ENV = re.compile(
    r"^(HF_|HUGGINGFACE_|TRANSFORMERS_|DIFFUSERS_|TORCH_HOME$|XDG_CACHE_HOME$|TRITON_CACHE_DIR$)")
#: files a trainer writes that hold trained weights (for :func:`promote_weights`)
WEIGHT_SUFFIXES = (".safetensors", ".ckpt", ".pt", ".pth", ".bin", ".gguf")


class ExportError(BracketError):
    """A run or a folder that cannot be exported (unknown run id, nothing scored yet)."""


@dataclass
class ExportResult:
    """What :func:`export_run` wrote and the command it rebuilt."""

    folder: Path
    script: Path
    json_path: Path
    toml_path: Path
    command: list[str]
    cwd: Path
    env: dict[str, str]
    run_id: int
    config_name: str
    steps: int
    dropped_env: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    #: train.ps1, the Windows twin of ``script``
    windows_script: Path | None = None
    #: where the script makes the caches its trainer needs; None when it needs none
    cache_dir: Path | None = None


def safe_env(env: Mapping[str, str], base: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """(variables ``env`` sets or changes relative to ``base``, plus the standard ones; names left out as secrets)."""
    base = os.environ if base is None else base
    needed: dict[str, str] = {}
    dropped: list[str] = []
    for name in sorted(env):
        value = str(env[name])
        if base.get(name) == value and name not in STANDARD_ENV and not CACHE_ENV.match(name):
            continue
        if looks_secret(name, value):  # the one rule of bracket.report.redaction
            dropped.append(name)
            continue
        needed[name] = value
    return needed, dropped


#: one command an export's script runs before training, and the folder it runs in
Step = tuple[Sequence[str], Path]


def _bash_array(name: str, words: Sequence[object], indent: str = "") -> list[str]:
    return [f"{indent}{name}=(", *[f"{indent}  {shlex.quote(str(word))}" for word in words], f"{indent})"]


def shell_script(command: Sequence[str], cwd: Path, env: Mapping[str, str], *, header: Sequence[str] = (),
                 dropped_env: Sequence[str] = (),
                 alternative: tuple[Sequence[Path], Sequence[str]] | None = None,
                 setup: Sequence[Step] = ()) -> str:
    """A bash script that runs ``command`` in ``cwd`` with ``env``; every value is quoted.
    ``setup`` — commands (each with its folder) run first, in order, stopping at the first that
    fails (an export's caching); ``alternative`` — (folders, command): while every folder exists
    run that command instead, without ``setup`` (an export's optional speed-up: the session's caches)."""
    lines = ["#!/usr/bin/env bash"]
    lines += [f"# {' '.join(str(h).split())}" for h in header]
    lines += [f"# {name} is not written here (it looks like a secret); export it yourself if the trainer "
              "needs it." for name in dropped_env]
    lines += ["set -euo pipefail", f"cd -- {shlex.quote(str(cwd))}"]
    lines += [f"export {name}={shlex.quote(str(value))}" for name, value in env.items()
              if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)]
    lines += _bash_array("cmd", command)
    runs = []
    for number, (words, folder) in enumerate(setup, 1):
        lines += _bash_array(f"setup_{number}", words)
        run = f'"${{setup_{number}[@]}}"'
        runs.append(run if Path(folder) == Path(cwd) else f"(cd -- {shlex.quote(str(folder))} && {run})")
    if alternative is not None:
        folders, other = alternative
        test = " && ".join(f"[ -d {shlex.quote(str(folder))} ]" for folder in folders)
        lines.append("# optional speed-up: the session's caches, used only while they are all still there")
        lines += [f"if {test}; then", *_bash_array("cmd", other, "  ")]
        lines += (["else", *[f"  {run}" for run in runs]] if runs else []) + ["fi"]
    else:
        lines += runs
    lines += ['exec "${cmd[@]}"', ""]
    return "\n".join(lines)


def script_command(text: str) -> list[str]:
    """The command of a script written by :func:`shell_script` (the inverse of its quoting)."""
    lines = text.splitlines()
    start = lines.index("cmd=(")
    end = lines.index(")", start)
    return shlex.split("\n".join(lines[start + 1:end]))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value if v is not None]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Path):
        return str(value)
    return value


def export_run(session: "Session", *, run_id: int | None = None, steps: int | None = None,
               out: Path | None = None, cache_dir: Path | None = None) -> ExportResult:
    """Rebuild run ``run_id`` (default: the winner's, from ``bracket.standings``) for
    ``steps`` steps (default: that run's own step count) into ``out`` and write the script.
    ``cache_dir``: where the script makes the caches a trainer needs (musubi-tuner), default
    ``<out>/cache``.

    Without ``run_id`` a missing or disqualified winner is refused (``NoWinnerError``)."""
    from bracket.session.store import stored_rows
    from bracket.standings import require_winner, standings
    from bracket.standings.rungs import restarting, run_rung_text, rung_text, session_rungs

    table = standings(session)
    best_step, basis = None, ""
    if run_id is None:
        winner = require_winner(session, table)
        run_id = winner.run_id
        if steps is None and winner.step:
            steps, best_step, basis = winner.step, winner.step, winner.step_basis
    run_id = int(run_id)
    run = session.store.get_run(run_id)
    if run is None or run.get("session") != session.name or run.get("config_id") is None:
        raise ExportError(f"Run {run_id} is not a training run of session {session.name!r}; "
                          "`python -m bracket status PATH` lists the run ids.")
    config: dict[str, Any] = next((c for c in stored_rows(session)[1]  # the rows of this change
                                   if c["id"] == run["config_id"]), {})
    name = str(config.get("name") or run.get("label") or f"run{run_id}")
    steps = int(steps if steps is not None else (run.get("max_steps") or session.settings.steps))
    if steps <= 0:
        raise ExportError(f"--steps must be at least 1, got {steps}.")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "config"
    folder = (Path(out) if out is not None
              else session.folder / EXPORT_FOLDER / f"{slug}-run{run_id}-{steps}steps")
    folder.mkdir(parents=True, exist_ok=True)
    trainer = session.trainer
    if not str(trainer.fields.get("cache_dir", "")).strip():
        # read the latent caches the session made (keyed by what made them, so only matching ones)
        held = trainer.held_out_references
        trainer = type(trainer)({**trainer.fields, "cache_dir": str(session.folder / "cache")})
        trainer.held_out_references = held  # the export trains on the search's images
    knobs = trainer.config_from_dict(run.get("params") or config.get("params") or {}, session.space)
    seed = int(run["seed"]) if run.get("seed") is not None else session.settings.base_seed
    request = RunRequest(
        run_dir=folder / "run", knobs=knobs, dataset=Path(session.parts.fields.get("dataset", "")),
        max_steps=steps, seed=seed, sample_prompts=session.settings.prompts(),
        sample_every_n_steps=session.settings.sample_every_n_steps, standalone=True,
        cache_dir=Path(cache_dir).expanduser().absolute() if cache_dir is not None else folder / "cache")
    spec: LaunchSpec = trainer.prepare_run(request)
    command = [str(a) for a in spec.cmd]
    cached = trainer.session_cache_variant(request, spec)
    setup = trainer.export_setup_commands(request)
    env, dropped = safe_env({**{k: v for step in setup for k, v in step.env.items()}, **spec.env})
    from bracket.session.scoring import checkpoint_at

    checkpoint = checkpoint_at(run.get("output_dir"), steps) if best_step else None
    standing = next(((row, r) for board in table.boards.values() for row in board.rows for r in row.runs
                     if r.run_id == run_id), None)
    score = standing[1].score if standing else None
    line = standing[0].headline if standing else None  # the config's headline, as the app and status say it
    rung, paused = rung_text(config, session_rungs(session.settings)), run_rung_text(
        run, restarts=restarting(session))
    header = [f"Bracket export of session {session.name!r}, preset {session.parts.preset.id}",
              f"config {name!r} ({config.get('kind', run.get('kind'))}, "
              f"stage {config.get('stage', run.get('stage'))}), "
              f"from run {run_id}, seed {seed}, {steps} training steps",
              (f"config {name!r}: {line.text}" if line is not None and score is not None else "run not scored"),
              *([f"successive halving: {rung}" + (f"; run {run_id} {paused}" if paused else "")] if rung else []),
              *([f"best step {best_step} (by {basis})" + (f"; checkpoint {checkpoint}" if checkpoint else "")]
                if best_step else []),
              f"dataset: {session.parts.fields.get('dataset', '')} (read from there; the session's caches are only "
              "a speed-up, used while they exist)",
              *([f"held out of training as in the search (the likeness references): "
                 f"{', '.join(p.name for p in trainer.held_out_references)}"] if trainer.held_out_references else []),
              *([f"caches: made in {request.cache_dir} by {len(setup)} cache command(s) before training"
                 + (" (skipped while the session's caches exist)" if cached else "")
                 + "; export again after changing the dataset"] if setup else []),
              f"Re-create with: python -m bracket export {shlex.quote(str(session.folder))} --run "
              f"{run_id} --steps {steps}" + (f" --cache-dir {shlex.quote(str(request.cache_dir))}"
                                            if cache_dir is not None and setup else "")]
    steps_before = [([str(a) for a in step.cmd], Path(step.cwd)) for step in setup]
    script = write_whole(folder / SCRIPT_NAME, shell_script(command, spec.cwd, env, header=header, dropped_env=dropped,
                                                            alternative=cached, setup=steps_before).encode("utf-8"),
                         mode=0o755)
    windows_script = write_whole(folder / WINDOWS_SCRIPT_NAME, powershell_script(
        command, spec.cwd, env, header=header, dropped_env=dropped, alternative=cached,
        setup=steps_before).encode("utf-8-sig"))
    document = _plain({
        "session": session.name, "preset_id": session.parts.preset.id, "config_name": name,
        "kind": config.get("kind", run.get("kind")), "stage": config.get("stage", run.get("stage")),
        "run_id": run_id, "seed": seed, "steps": steps, "best_step": best_step, "best_step_basis": basis or None,
        "checkpoint": checkpoint, "rung": rung or None,
        "run_score": score, "headline": line.text if line is not None else None, "knobs": dict(knobs),
        "image_judges": _image_figures(run, best_step or steps),
        "dataset": session.parts.fields.get("dataset", ""),
        "session_cache": {"folders": [str(f) for f in cached[0]], "command": cached[1]} if cached else None,
        "cache_commands": [{"label": step.label, "command": words, "cwd": str(cwd)}
                           for step, (words, cwd) in zip(setup, steps_before)] or None,
        "cache_dir": str(request.cache_dir) if setup else None,
        "command": command, "cwd": str(spec.cwd), "env": env, "output_dir": str(spec.output_dir),
    })
    json_path, toml_path = folder / "config.json", folder / "config.toml"
    write_whole(json_path, json.dumps(document, indent=2).encode("utf-8"))
    write_whole(toml_path, tomli_w.dumps(document).encode("utf-8"))
    files = sorted(p for p in (folder / "run").rglob("*") if p.is_file())
    return ExportResult(folder, script, json_path, toml_path, command, Path(spec.cwd), env, run_id, name, steps,
                        dropped, files, windows_script, request.cache_dir if setup else None)


def _image_figures(run: Mapping[str, Any], step: int) -> dict[str, Any] | None:
    """The image judges' raw figures of ``run`` at the exported ``step`` and at every sampled step
    (``bracket.session.scoring.image_judges.image_parts``); None when they did not judge it."""
    from bracket.session.scoring.image_judges import IMAGE_JUDGES, image_parts, scores_at

    parts = image_parts(run)
    if not parts:
        return None
    judged, scores = scores_at(run, int(step))
    if judged is None or judged > int(step):  # nothing judged up to the exported step
        scores = {}
    return {"at_step": {"step": int(step), **{name: scores.get(name) for name in IMAGE_JUDGES}},
            "steps": {str(k): v for k, v in parts.items()}}


# -- promote ----------------------------------------------------------------------------------
def promote_weights(session: "Session", run_id: int, dest: Path) -> list[Path]:
    """Copy run ``run_id``'s trained weight files (not its samples) into ``dest``; returns the copies."""
    run = session.store.get_run(int(run_id))
    if run is None or run.get("session") != session.name:
        raise ExportError(f"Run {run_id} is not a run of session {session.name!r}.")
    source = Path(run.get("output_dir") or Path(run.get("run_dir") or "") / "output")
    weights = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES
                     and "sample" not in p.relative_to(source).parts) if source.is_dir() else []
    if not weights:
        raise ExportError(f"Run {run_id} left no weight files in {source}; only finished runs that saved a "
                          "model can be promoted.")
    dest = Path(dest)
    copies = []
    for path in weights:
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copies.append(target)
    return copies
