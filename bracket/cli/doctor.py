"""``bracket doctor``: check that a preset can run on this machine before a search starts.

A search fails late and expensively when the trainer venv lacks accelerate, a model path
has a typo, the disk is full or the installed trainer renamed a flag. :func:`run_doctor`
checks each of those up front, for one preset and the field values a person would pass
(``--set FIELD=VALUE``), and returns a :class:`DoctorReport`: one line per check, each
saying what is wrong and what to do. Nothing trains: the dataset gets the same pre-flight
as ``run`` (its warnings are shown, its problems fail), and the last checks hand the
baseline command and each pre-cache command to the trainer's own argparse parser
(:mod:`bracket.trainer.parser_check`). A package missing from the trainer venv is named,
with the pip command that installs it there.

The checks are the rows of :data:`CHECKS`, run in order; each names the checks it needs,
and one that does not apply to a preset (no trainer python, no pre-cache) adds no line.

Subprocesses (the trainer python, the parser check) write to a log file in a temporary
folder, never to a pipe, and run with a timeout.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bracket import settings
from bracket.dataset.preflight import preflight_for_trainer
from bracket.errors import BracketError
from bracket.fields import merge_with_defaults, problem_with_value
from bracket.registry import get_preset
from bracket.session.scoring.image_config import doctor_check as judge_models
from bracket.trainer.base import LaunchSpec, RunRequest, Trainer, make_subprocess_env
from bracket.trainer.parser_check import parse_report
from bracket.trainer.preset import ModelPreset
from bracket.trainer.tokenizers import missing_tokenizers
from bracket.trainer.vram import detect_vram_gb, vram_tier

PYTHON_TIMEOUT_S = 120
PARSER_TIMEOUT_S = 600
#: what the trainer python must be able to run
ACCELERATE_PROBE = "import accelerate; print(accelerate.__version__)"
#: free disk wanted in the runs folder: checkpoints and caches of a LoRA vs a full fine-tune
MIN_FREE_GB = {"LoRA": 10, "Full FT": 60}


@dataclass(frozen=True)
class DoctorCheck:
    name: str
    ok: bool
    message: str
    #: passed, with something a person should know (dataset warnings)
    warning: bool = False
    #: not run because a check it needs failed (that one is the failure; a skip is not counted)
    skipped: bool = False

    @property
    def label(self) -> str:
        """``skip``, ``FAIL``, ``warn`` or ``ok``: the tag ``render`` prints."""
        return "skip" if self.skipped else "FAIL" if not self.ok else "warn" if self.warning else "ok"


@dataclass
class DoctorReport:
    preset_id: str
    checks: list[DoctorCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No check failed (skipped checks are not failures: what they wait for is)."""
        return all(check.ok or check.skipped for check in self.checks)

    def add(self, name: str, ok: bool, message: str, *, warning: bool = False) -> None:
        self.checks.append(DoctorCheck(name, ok, message, warning))

    def skip(self, name: str, reason: str) -> None:
        """Record that check ``name`` did not run, and why."""
        self.checks.append(DoctorCheck(name, False, reason, skipped=True))

    def render(self) -> str:
        lines = [f"bracket doctor: {self.preset_id}"]
        lines += [f"  [{c.label}] {c.name}: {c.message}" for c in self.checks]
        lines.append("All checks passed." if self.ok else "Some checks failed; fix them and run doctor again.")
        return "\n".join(lines)


def _run_logged(cmd: list[str], *, cwd: Path | None, timeout: int,
                env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """Run ``cmd`` with output to a temporary log file; (exit code, log text). 124 = timeout."""
    with tempfile.TemporaryDirectory(prefix="bracket-doctor-") as folder:
        log_path = Path(folder) / "out.log"
        with log_path.open("w", encoding="utf-8") as log:
            try:
                code = subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False,
                                      env=dict(env) if env is not None else make_subprocess_env()).returncode
            except subprocess.TimeoutExpired:
                code = 124
            except OSError as error:
                return 126, f"{type(error).__name__}: {error}"
        return code, log_path.read_text(encoding="utf-8", errors="replace")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


#: import name -> pip name, where they differ (what doctor tells a person to install)
PIP_NAMES = {"cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml", "sklearn": "scikit-learn",
             "google": "protobuf", "skimage": "scikit-image"}


def install_hint(python: str, module: str) -> str:
    """How to put the package that provides ``module`` into the trainer venv of ``python``."""
    package = PIP_NAMES.get(module.split(".")[0], module.split(".")[0])
    return f"install it into that venv: {python} -m pip install {package}"


@dataclass
class DoctorContext:
    """What the checks share: the preset, the field values, the trainer, the report, the image models."""

    preset: ModelPreset
    values: dict[str, str]
    trainer: Trainer
    report: DoctorReport
    image_models: dict[str, str] = field(default_factory=dict)


def check_python(ctx: DoctorContext) -> bool | None:
    if "trainer_python" not in ctx.values:
        return None
    python = ctx.values.get("trainer_python", "")
    report = ctx.report
    if not python or not Path(python).is_file():
        report.add("trainer python", False,
                   f"Trainer python {python or '(empty)'} does not exist; run ./install.sh --trainers "
                   "or set the trainer_python field.")
        return False
    code, text = _run_logged([python, "-c", ACCELERATE_PROBE],
                             cwd=None, timeout=PYTHON_TIMEOUT_S)
    if code != 0:
        report.add("trainer python", False,
                   f"{python} cannot import accelerate ({_last_line(text)}); {install_hint(python, 'accelerate')} "
                   "(or ./install.sh --trainers for all the trainer's requirements).")
        return False
    report.add("trainer python", True, f"{python} imports accelerate {_last_line(text)}")
    return True


def check_script(ctx: DoctorContext) -> bool | None:
    report = ctx.report
    paths = [Path(p) for p in ctx.trainer.script_files()]
    if not paths:
        report.add("trainer script", True, "this trainer has no script file to check")
        return True
    missing = [p for p in paths if not p.is_file()]
    if missing:
        report.add("trainer script", False,
                   " ".join(f"{p.name} is not at {p};" for p in missing)
                   + " check the trainer folder field (git submodule update --init --recursive).")
        return False
    report.add("trainer script", True, ", ".join(str(p) for p in paths))
    return True


def check_inputs(ctx: DoctorContext) -> bool:
    problems = [p for s in ctx.preset.fields if (p := problem_with_value(s, ctx.values.get(s.name, "")))]
    problems += ctx.trainer.model_problems()  # model ids a run would download (runs are offline)
    if problems:
        ctx.report.add("inputs", False, " ".join(problems))
        return False
    ctx.report.add("inputs", True, "every model path and field value is usable (no model needs a download)")
    return True


#: the fields the dataset pre-flight reads (``preflight_for_trainer``): it waits only for these,
#: so a missing trainer venv or model file never hides what is wrong with the dataset
DATASET_FIELDS = ("dataset", "control_dir")


def check_dataset(ctx: DoctorContext) -> bool | None:
    """The dataset pre-flight of ``run``: problems fail, warnings are shown. It runs whatever
    else is wrong, unless a field it reads is itself unusable (``inputs`` names that)."""
    unusable = [spec.label for spec in ctx.preset.fields if spec.name in DATASET_FIELDS
                and problem_with_value(spec, str(ctx.values.get(spec.name, "")))]
    if unusable:
        ctx.report.skip("dataset", f"skipped: {', '.join(unusable)} cannot be used (see inputs)")
        return False
    try:
        result = preflight_for_trainer(ctx.trainer, ctx.values)
    except BracketError as error:
        ctx.report.add("dataset", False, str(error))
        return False
    if result is None:
        return None
    if not result.ok:
        ctx.report.add("dataset", False, result.summary())
        return False
    ctx.report.add("dataset", True, result.summary(), warning=bool(result.warnings))
    return True


def check_disk(ctx: DoctorContext) -> bool:
    report, training_type = ctx.report, ctx.preset.training_type
    runs = settings.get_settings().runs_dir
    probe = runs
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free_gb = shutil.disk_usage(probe).free / 1024**3
    need = MIN_FREE_GB.get(training_type, 10)
    if free_gb < need:
        report.add("disk", False,
                   f"Only {free_gb:.0f} GB free under {runs}; a {training_type} search wants {need} GB. "
                   "Free space or set BRACKET_RUNS_DIR to a bigger disk.")
    else:
        report.add("disk", True, f"{free_gb:.0f} GB free under {runs}")
    return free_gb >= need


def check_vram(ctx: DoctorContext) -> bool:
    report, trainer, values = ctx.report, ctx.trainer, ctx.values
    need = getattr(trainer, "min_vram_gb", None)
    if getattr(trainer, "cpu_only", False):  # a preset that never uses a GPU: nothing to check
        report.skip("vram", "CPU preset")
        return True
    if getattr(trainer, "on_cpu", False):
        report.add("vram", True, "device cpu: runs train on the CPU in fp32; GPU memory not checked")
        return True
    detected = detect_vram_gb()
    if detected is None:
        report.add("vram", True, "nvidia-smi not found; GPU memory not checked")
        return True
    declared = str(values.get("vram_gb", "auto") or "auto")
    if declared != "auto" and detected < int(float(declared)):
        report.add("vram", False,
                   f"The vram_gb field says {declared} GB but the GPU has {detected} GB; set vram_gb to "
                   f"{detected} or auto.")
        return False
    if need and detected < need:
        report.add("vram", False,
                   f"The GPU has {detected} GB; this preset needs at least {need} GB even with every "
                   "memory-saving flag. Use a bigger GPU or a LoRA preset.")
        return False
    report.add("vram", True, f"{detected} GB (memory tier {vram_tier(values)} GB)")
    return True


def check_tokenizers(ctx: DoctorContext) -> bool | None:
    """The hub tokenizers the trainer loads by name: in ``tokenizer_cache_dir`` or the hub cache."""
    report, values = ctx.report, ctx.values
    wanted = tuple(ctx.trainer.tokenizer_ids)
    if not wanted:
        return None
    folder = str(values.get("tokenizer_cache_dir", "") or "")
    missing = missing_tokenizers(wanted, folder)
    if not missing:
        report.add("tokenizers", True, f"{', '.join(wanted)} found locally")
        return True
    where = f"in {folder} (tokenizer_cache_dir) nor " if folder else ""
    fix = ("set tokenizer_cache_dir (BRACKET_TOKENIZER_CACHE_DIR) to a folder holding them as "
           "<folder>/<id with / as _> — sd-scripts saves them so after one online run with that folder set"
           if "tokenizer_cache_dir" in values else "run once online so the Hugging Face cache keeps them")
    located = f"neither {where}" if where else "not "
    report.add("tokenizers", False,
               f"The tokenizers {', '.join(missing)} are {located}in the Hugging Face cache; the trainer "
               f"loads them from the hub at start and fails offline. To fix it, {fix}.")
    return False


def _parser_verdict(trainer: Trainer, launch: LaunchSpec, what: str) -> tuple[bool, str]:
    """Run the parser check of ``launch``; (ok, message)."""
    try:
        spec: LaunchSpec | None = trainer.parser_check_spec(launch)
    except ValueError as error:  # an adapter that cannot find its script in the command
        return False, f"The parser check of {what} cannot be built: {error}"
    if spec is None:
        return True, "this trainer has no parser check"
    code, text = _run_logged(spec.cmd, cwd=spec.cwd, timeout=PARSER_TIMEOUT_S, env=spec.env)
    result = parse_report(text)
    if result is None:
        return False, f"The parser check of {what} gave no report (exit {code}): {_last_line(text)}"
    if result.get("missing_module"):
        python = spec.cmd[0]
        return False, (f"The trainer venv lacks the package {result['missing_module']!r}, which {what} imports; "
                       f"{install_hint(python, result['missing_module'])}.")
    if not result.get("ok"):
        problems = "; ".join(result.get("problems", []))
        if code == 3:
            return False, f"The trainer python cannot load the script of {what}: {problems}"
        return False, (f"The trainer's own parser rejects {what}: {problems}. Check that the trainer folder is "
                       "the pinned checkout (docs/UPDATING_TRAINERS.md).")
    return True, f"the trainer's parser accepts {what}"


def check_parser(ctx: DoctorContext) -> bool:
    trainer, values = ctx.trainer, ctx.values
    with tempfile.TemporaryDirectory(prefix="bracket-doctor-run-") as folder:
        try:
            config = trainer.config_from_dict(trainer.baseline_config().knobs)
            launch = trainer.prepare_run(RunRequest(run_dir=Path(folder) / "trials" / "0", knobs=config,
                                                    dataset=Path(values.get("dataset", "")), max_steps=10, seed=1))
        except BracketError as error:
            ctx.report.add("parser check", False, f"The baseline command cannot be built: {error}")
            return False
        ok, message = _parser_verdict(trainer, launch, "the baseline command")
    ctx.report.add("parser check", ok, message)
    return ok


def check_setup_parsers(ctx: DoctorContext) -> bool | None:
    """The parser check of each pre-cache command (musubi-tuner latents and text encoders)."""
    trainer, values = ctx.trainer, ctx.values
    with tempfile.TemporaryDirectory(prefix="bracket-doctor-setup-") as folder:
        try:
            commands = trainer.session_setup_commands(dataset=Path(values.get("dataset", "")),
                                                      run_dir=Path(folder) / "setup")
        except BracketError as error:
            ctx.report.add("pre-cache parser check", False, f"The pre-cache commands cannot be built: {error}")
            return False
        if not commands:
            return None
        verdicts = [_parser_verdict(trainer, c, f"the {c.label or 'pre-cache'} command") for c in commands]
    failed = [message for ok, message in verdicts if not ok]
    ctx.report.add("pre-cache parser check", not failed,
                   " ".join(failed) if failed else "; ".join(message for _, message in verdicts))
    return not failed


def _has_setup_commands(trainer: Trainer) -> bool:
    """Whether the adapter runs commands before the first trial (it overrides the base's none)."""
    return type(trainer).session_setup_commands is not Trainer.session_setup_commands


@dataclass(frozen=True)
class Check:
    """One row of the doctor: a name, the function, and the checks it needs to have passed.

    ``run`` adds its line to the report and returns whether it passed, or None when it does
    not apply to this preset (then it adds nothing). A check whose ``needs`` did not all
    pass is reported as ``[skip]`` with the checks it waits for; a skip is not a failure.
    """

    name: str
    run: Callable[[DoctorContext], bool | None]
    needs: tuple[str, ...] = ()
    #: whether the check concerns this preset at all (default: every preset)
    applies: Callable[[DoctorContext], bool] = lambda ctx: True


#: every check, in order; a new check (or one only some trainers answer) is a new row
CHECKS: tuple[Check, ...] = (
    Check("trainer python", check_python),
    Check("inputs", check_inputs),
    Check("trainer script", check_script),
    Check("dataset", check_dataset),
    Check("disk", check_disk),
    Check("vram", check_vram),
    Check("tokenizers", check_tokenizers),
    Check("image judges", judge_models, applies=lambda ctx: ctx.trainer.sample_kind != "text"),
    Check("parser check", check_parser, needs=("trainer python", "inputs", "trainer script", "dataset")),
    Check("pre-cache parser check", check_setup_parsers,
          needs=("trainer python", "inputs", "trainer script", "dataset"),
          applies=lambda ctx: _has_setup_commands(ctx.trainer)),
)


def run_doctor(preset_id: str, values: Mapping[str, str], image_models: Mapping[str, str] | None = None
               ) -> DoctorReport:
    """Check ``preset_id`` with field ``values`` (defaults filled in) and ``image_models`` (as ``run``'s)."""
    report = DoctorReport(preset_id)
    preset = get_preset(preset_id)
    try:
        made = preset.prepare_fields(values)  # what a search would make itself (the demo's dataset)
        if made:
            report.add("setup", True, made)
        merged = merge_with_defaults(preset.fields, values)
        trainer = preset.trainer_factory(merged)
    except (BracketError, ValueError, TypeError) as error:  # a value the adapter cannot even hold
        problems = [p for spec in preset.fields if (p := problem_with_value(spec, str(values.get(spec.name, ""))))]
        report.add("inputs", False, " ".join(problems) or str(error))
        return report
    ctx = DoctorContext(preset, dict(merged), trainer, report, dict(image_models or {}))
    outcome: dict[str, bool | None] = {}
    for check in CHECKS:
        if not check.applies(ctx):
            continue
        failed = [name for name in check.needs if outcome.get(name) is False]
        if failed:
            report.skip(check.name, f"skipped: it needs {', '.join(failed)} to pass first")
            outcome[check.name] = False  # checks that need this one are skipped too
            continue
        try:
            outcome[check.name] = check.run(ctx)
        except BracketError as error:
            report.add(check.name, False, str(error))
            outcome[check.name] = False
    return report
