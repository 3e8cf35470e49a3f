"""``bracket doctor``: check that a preset can run on this machine before a search starts.

A search fails late and expensively when the trainer venv lacks accelerate, a model path
has a typo, the disk is full or the installed trainer renamed a flag. :func:`run_doctor`
checks each of those up front, for one preset and the field values a person would pass
(``--set FIELD=VALUE``), and returns a :class:`DoctorReport`: one line per check, each
saying what is wrong and what to do. Nothing trains: the last check hands the baseline
command to the trainer's own argparse parser (:mod:`bracket.trainer.parser_check`).

Subprocesses (the trainer python, the parser check) write to a log file in a temporary
folder, never to a pipe, and run with a timeout.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bracket import settings
from bracket.errors import BracketError
from bracket.preset import merge_with_defaults, problem_with_value
from bracket.registry import get_preset
from bracket.trainer.base import LaunchSpec, Trainer, make_subprocess_env
from bracket.trainer.parser_check import parse_report
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


@dataclass
class DoctorReport:
    preset_id: str
    checks: list[DoctorCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def add(self, name: str, ok: bool, message: str) -> None:
        self.checks.append(DoctorCheck(name, ok, message))

    def render(self) -> str:
        lines = [f"bracket doctor: {self.preset_id}"]
        lines += [f"  [{'ok' if c.ok else 'FAIL'}] {c.name}: {c.message}" for c in self.checks]
        lines.append("All checks passed." if self.ok else "Some checks failed; fix them and run doctor again.")
        return "\n".join(lines)


def _run_logged(cmd: list[str], *, cwd: Path | None, timeout: int, env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """Run ``cmd`` with output to a temporary log file; (exit code, log text). 124 = timeout."""
    with tempfile.TemporaryDirectory(prefix="bracket-doctor-") as folder:
        log_path = Path(folder) / "out.log"
        with log_path.open("w", encoding="utf-8") as log:
            try:
                code = subprocess.run(
                    cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False,
                    env=dict(env) if env is not None else make_subprocess_env(),
                ).returncode
            except subprocess.TimeoutExpired:
                code = 124
            except OSError as error:
                return 126, f"{type(error).__name__}: {error}"
        return code, log_path.read_text(encoding="utf-8", errors="replace")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def check_python(report: DoctorReport, python: str) -> bool:
    if not python or not Path(python).is_file():
        report.add("trainer python", False,
                   f"Trainer python {python or '(empty)'} does not exist; run ./install.sh --trainers "
                   "or set the trainer_python field.")
        return False
    code, text = _run_logged([python, "-c", ACCELERATE_PROBE],
                             cwd=None, timeout=PYTHON_TIMEOUT_S)
    if code != 0:
        report.add("trainer python", False,
                   f"{python} cannot import accelerate ({_last_line(text)}); install the trainer's "
                   "requirements into that venv.")
        return False
    report.add("trainer python", True, f"{python} imports accelerate {_last_line(text)}")
    return True


def check_script(report: DoctorReport, trainer: Trainer) -> bool:
    script_path = getattr(trainer, "script_path", None)
    if not callable(script_path):
        report.add("trainer script", True, "this trainer has no script file to check")
        return True
    path = Path(script_path())
    if not path.is_file():
        report.add("trainer script", False,
                   f"{path.name} is not at {path}; check the trainer folder field "
                   "(git submodule update --init --recursive).")
        return False
    report.add("trainer script", True, str(path))
    return True


def check_inputs(report: DoctorReport, preset, values: Mapping[str, str]) -> bool:
    problems = [p for spec in preset.fields if (p := problem_with_value(spec, values.get(spec.name, "")))]
    if problems:
        report.add("inputs", False, " ".join(problems))
        return False
    report.add("inputs", True, "every model path and field value is usable")
    return True


def check_disk(report: DoctorReport, training_type: str) -> None:
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


def check_vram(report: DoctorReport, trainer: Trainer, values: Mapping[str, str]) -> None:
    need = getattr(trainer, "min_vram_gb", None)
    detected = detect_vram_gb()
    if detected is None:
        report.add("vram", True, "nvidia-smi not found; GPU memory not checked")
        return
    declared = str(values.get("vram_gb", "auto") or "auto")
    if declared != "auto" and detected < int(float(declared)):
        report.add("vram", False,
                   f"The vram_gb field says {declared} GB but the GPU has {detected} GB; set vram_gb to "
                   f"{detected} or auto.")
        return
    if need and detected < need:
        report.add("vram", False,
                   f"The GPU has {detected} GB; this preset needs at least {need} GB even with every "
                   "memory-saving flag. Use a bigger GPU or a LoRA preset.")
        return
    report.add("vram", True, f"{detected} GB (memory tier {vram_tier(values)} GB)")


def check_tokenizers(report: DoctorReport, trainer: Trainer, values: Mapping[str, str]) -> None:
    """The hub tokenizers the trainer loads by name: in ``tokenizer_cache_dir`` or the hub cache."""
    wanted = tuple(trainer.tokenizer_ids)
    if not wanted:
        return
    folder = str(values.get("tokenizer_cache_dir", "") or "")
    missing = missing_tokenizers(wanted, folder)
    if not missing:
        report.add("tokenizers", True, f"{', '.join(wanted)} found locally")
        return
    where = f"in {folder} (tokenizer_cache_dir) nor " if folder else ""
    fix = ("set tokenizer_cache_dir (BRACKET_TOKENIZER_CACHE_DIR) to a folder holding them as "
           "<folder>/<id with / as _> — sd-scripts saves them so after one online run with that folder set"
           if "tokenizer_cache_dir" in values else "run once online so the Hugging Face cache keeps them")
    located = f"neither {where}" if where else "not "
    report.add("tokenizers", False,
               f"The tokenizers {', '.join(missing)} are {located}in the Hugging Face cache; the trainer "
               f"loads them from the hub at start and fails offline. To fix it, {fix}.")


def check_parser(report: DoctorReport, trainer: Trainer, values: Mapping[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bracket-doctor-run-") as folder:
        try:
            config = trainer.config_from_dict(trainer.baseline_config().knobs)
            launch = trainer.prepare_run(run_dir=Path(folder) / "trials" / "doctor", config=config,
                                         dataset_toml=Path(values.get("dataset", "")), max_steps=10, seed=1)
        except BracketError as error:
            report.add("parser check", False, f"The baseline command cannot be built: {error}")
            return
        spec: LaunchSpec | None = trainer.parser_check_spec(launch)
        if spec is None:
            report.add("parser check", True, "this trainer has no parser check")
            return
        code, text = _run_logged(spec.cmd, cwd=spec.cwd, timeout=PARSER_TIMEOUT_S, env=spec.env)
    result = parse_report(text)
    if result is None:
        report.add("parser check", False,
                   f"The parser check gave no report (exit {code}): {_last_line(text)}")
    elif not result.get("ok"):
        report.add("parser check", False,
                   "The trainer's own parser rejects the baseline command: " + "; ".join(result.get("problems", []))
                   + ". Update the trainer checkout to the pinned commit (docs/UPDATING_TRAINERS.md).")
    else:
        report.add("parser check", True, "the trainer's parser accepts the baseline command")


def run_doctor(preset_id: str, values: Mapping[str, str]) -> DoctorReport:
    """Check ``preset_id`` with field ``values`` (defaults filled in) and report every finding."""
    report = DoctorReport(preset_id)
    preset = get_preset(preset_id)
    try:
        merged = merge_with_defaults(preset.fields, values)
    except BracketError as error:
        report.add("inputs", False, str(error))
        return report
    python_ok = check_python(report, merged.get("trainer_python", "")) if "trainer_python" in merged else True
    inputs_ok = check_inputs(report, preset, merged)
    trainer = preset.trainer_factory(merged)
    script_ok = check_script(report, trainer)
    check_disk(report, preset.training_type)
    check_vram(report, trainer, merged)
    check_tokenizers(report, trainer, merged)
    if python_ok and inputs_ok and script_ok:
        check_parser(report, trainer, merged)
    else:
        report.add("parser check", False, "skipped until the checks above pass")
    return report
