"""The embedded CPU demo trainer's adapter (preset ``demo-cpu``).

It drives ``demo_train.py`` — our own tiny DDPM trainer — exactly the way the sd-scripts
adapters drive the real trainers: ``accelerate launch``, a per-run dataset TOML, a
sample-prompt file with fixed seeds, tfevents under ``--logging_dir`` and samples under
``<output_dir>/sample/``. So the demo exercises the whole pipeline on a CPU.

The knob ranges are wide on purpose: at the default 100 steps a learning rate near 1e-5
renders noise, 2e-4 blurry shapes in the wrong colours, 2e-3 (AdamW) clean coloured
shapes and 2e-2 (AdamW) a broken beige pattern, so a grid of trials shows real differences.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from bracket import settings
from bracket.dataset.demo_data import DEMO_PROMPTS, TOML_NAME, make_demo_dataset_once
from bracket.dataset.preflight import preflight_dataset
from bracket.dataset.runtime import derive_run_toml
from bracket.fields import FieldSpec
from bracket.search.configs import NamedConfig
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.trainer.base import (
    LaunchSpec,
    RunRequest,
    Trainer,
    make_accelerate_launch_prefix,
    make_subprocess_env,
    save_resume_args,
)
from bracket.trainer.heldout import VALIDATION_TAGS
from bracket.trainer.prompts import write_prompt_file
from bracket.trainer.sample_steps import sample_every

DEMO_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "demo_train.py"
#: the file ``scripts/demo_state.py`` writes last into a state folder (a complete state)
STATE_COMPLETE_MARKER = "COMPLETE"
OPTIMIZERS = ("AdamW", "Adam", "RAdam", "SGD", "Adagrad")
SCHEDULERS = ("constant", "constant_with_warmup", "cosine", "linear")

FIELDS = (
    FieldSpec(
        "dataset",
        "Demo dataset (TOML or folder)",
        "path",
        default=lambda: str(settings.get_settings().demo_data_dir / "dataset.toml"),
        required=True,
        help="Make one with `python -m bracket demo-data DIR`; the default one (BRACKET_DEMO_DATA_DIR, "
        "else runs/demo-data) is made when a search starts without it.",
    ),
    FieldSpec(
        "trainer_python",
        "Trainer python",
        "file",
        default=lambda: str(settings.get_settings().demo_python),
        required=True,
        executable=True,
        help="A python with torch, diffusers and accelerate (the app's own .venv).",
        env_var="BRACKET_DEMO_PYTHON",
    ),
    FieldSpec(
        "train_script",
        "Training script",
        "file",
        default=str(DEMO_SCRIPT),
        required=True,
        executable=True,
        help="The demo's training script; tests point it at a fake trainer.",
    ),
    FieldSpec("resolution", "Resolution", "int", default="32", minimum=8, maximum=512,
              help="Square image size in pixels."),
    FieldSpec(
        "cpu_threads",
        "CPU threads",
        "int",
        default="0",
        minimum=0,
        maximum=1024,
        help="Torch threads of one run; 0 keeps one per process. A lone run on an idle machine trains "
        "~1.6x faster with 2 threads, but slows down badly when the cores are busy.",
    ),
)
#: the modules the trainer python must import, and how long probing them may take
REQUIRED_MODULES = ("torch", "diffusers", "accelerate")
PROBE_TIMEOUT_S = 180
# find_spec locates a package without importing it: a second instead of ten (torch is big);
# a package that is present but broken still fails its run, with the traceback in the log.
_PROBE = (
    "import importlib.util, sys\n"
    "def absent(name):\n"
    "    try:\n"
    "        return importlib.util.find_spec(name) is None\n"
    "    except (ImportError, ValueError):\n"
    "        return True\n"
    "print(' '.join(name for name in sys.argv[1:] if absent(name)))\n"
)


def resolve_demo_dataset(path: Path) -> Path:
    """The dataset TOML to use: ``path``, or the ``dataset.toml`` inside a demo folder."""
    path = Path(path)
    if path.is_dir() and (path / TOML_NAME).is_file():
        return path / TOML_NAME
    return path


def _missing_default_dataset(values: Mapping[str, str]) -> Path | None:
    """The default demo dataset folder when the form names it and it is missing, else None."""
    default = settings.get_settings().demo_data_dir
    given = str(values.get("dataset") or "").strip()
    if not given:
        return None
    path = Path(os.path.expanduser(given))
    try:
        if path.exists() or path.resolve() not in (default.resolve(), (default / TOML_NAME).resolve()):
            return None
    except (OSError, RuntimeError):  # a name too long to look up, a symlink loop: the field check says why
        return None
    return default


def demo_dataset_made_on_start(values: Mapping[str, str]) -> str | None:
    """What Start will make that the form names but is missing (the default demo dataset), as a
    note for the form, so a fresh clone's Setup does not show a normal state as an error."""
    default = _missing_default_dataset(values)
    return None if default is None else f"the demo dataset {default} is made when the search starts"


def make_missing_demo_dataset(values: Mapping[str, str]) -> str | None:
    """Make the demo dataset when the form names the default one and it is missing (a fresh
    clone, or ``runs/`` cleared): it takes a second and needs nothing from outside, so the
    demo just works. A path typed elsewhere is never written to. Returns a note, or None."""
    default = _missing_default_dataset(values)
    if default is None:
        return None
    try:
        made = make_demo_dataset_once(default)
    except OSError:  # a read-only runs folder: the field check then says what to do
        return None
    return f"made the demo dataset in {default} (it was missing)" if made else None  # else another process did


def demo_dataset_problems(path: Path) -> list[str]:
    """Why ``path`` is not a usable demo dataset, each with the command that makes one."""
    path = Path(path)
    hint = f"make one with `python -m bracket demo-data {path.parent if path.name == TOML_NAME else path}`"
    source = resolve_demo_dataset(path)
    if not source.exists():
        return [f"The demo dataset {path} does not exist; {hint}."]
    report = preflight_dataset(source, "sd-scripts")
    if not report.ok or report.media == 0:
        return [
            f"The demo dataset {path} is not usable ({' '.join(report.problems) or 'no images'}); {hint}."
        ]
    return []


def trainer_python_problems(python: str, timeout_s: float = PROBE_TIMEOUT_S) -> list[str]:
    """Why ``python`` cannot run the demo trainer (missing, or lacking torch/diffusers/accelerate)."""
    fix = f"run ./install.sh (or {python} -m pip install -r requirements.txt)"
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8") as out,
        tempfile.TemporaryFile("w+", encoding="utf-8") as err,
    ):
        try:
            returncode = subprocess.run(
                [python, "-c", _PROBE, *REQUIRED_MODULES],
                env=make_subprocess_env(),
                stdout=out,
                stderr=err,
                timeout=timeout_s,
                check=False,
            ).returncode
        except FileNotFoundError:
            return [f"The trainer python {python} does not exist; {fix}, or set BRACKET_DEMO_PYTHON."]
        except PermissionError:
            return [
                f"The trainer python {python} is not executable; point the Trainer python field at a python."
            ]
        except subprocess.TimeoutExpired:
            return [
                f"The trainer python {python} took over {timeout_s:.0f}s to import "
                f"{', '.join(REQUIRED_MODULES)}; check that machine's load and try again."
            ]
        out.seek(0)
        err.seek(0)
        missing, errors = out.read().split(), err.read()
    if returncode != 0:
        tail = (errors.strip().splitlines() or ["no output"])[-1]
        return [f"The trainer python {python} does not run ({tail}); {fix}."]
    if missing:
        return [f"The trainer python {python} cannot import {', '.join(missing)}: {fix}."]
    return []


class DemoLoRA(Trainer):
    """A tiny UNet2DModel DDPM on CPU, searched over learning rate, optimizer and schedule."""

    loss_tags = ("loss/current", "loss/average")
    dataset_style = "sd-scripts"
    validation_tags = VALIDATION_TAGS
    #: never uses a GPU (``bracket doctor`` skips its GPU memory check)
    cpu_only = True
    #: a resumed run restores model, optimizer, schedule, RNG, batch order and step exactly
    resume_mode = "continue"
    #: a run asked to pause exits by itself at that step (``--stop_at_step``), never past it whatever its
    #: speed (``Trainer.stops_at_pause``)
    stops_at_pause = True
    #: the demo's shapes, one of each colour, at fixed seeds (its dataset is generated)
    default_sample_prompts = DEMO_PROMPTS

    def script_files(self) -> list[Path]:
        """``scripts/demo_train.py``, which ``bracket doctor`` checks is there."""
        return [DEMO_SCRIPT]

    def declare_search_space(self) -> SearchSpace:
        return SearchSpace(
            {
                "optimizer_type": CategoricalKnob(OPTIMIZERS),
                "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
                "lr_scheduler": CategoricalKnob(SCHEDULERS),
                "lr_warmup_steps": IntKnob(0, 20, step=5),
                "batch_size": FixedKnob(16),
            }
        )

    def baseline_config(self) -> NamedConfig:
        # The diffusers unconditional DDPM example's defaults (AdamW, lr 1e-4, cosine).
        return NamedConfig(
            "baseline",
            {
                "optimizer_type": "AdamW",
                "learning_rate": 1e-4,
                "lr_scheduler": "cosine",
                "lr_warmup_steps": 0,
                "batch_size": 16,
            },
            source="diffusers examples/unconditional_image_generation defaults",
        )

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # Small DDPMs tolerate a much higher AdamW rate than the example's default.
            NamedConfig(
                "adamw-fast",
                {
                    "optimizer_type": "AdamW",
                    "learning_rate": 2e-3,
                    "lr_scheduler": "constant_with_warmup",
                    "lr_warmup_steps": 5,
                    "batch_size": 16,
                },
                source="Ho et al. 2020 DDPM (Adam 2e-4, warmup) scaled for a 1M-parameter UNet",
            ),
            # RAdam needs no warmup (Liu et al. 2020).
            NamedConfig(
                "radam",
                {
                    "optimizer_type": "RAdam",
                    "learning_rate": 3e-3,
                    "lr_scheduler": "constant",
                    "lr_warmup_steps": 0,
                    "batch_size": 16,
                },
                source="Liu et al. 2020, RAdam: rectified warmup",
            ),
            # Plain SGD needs a rate roughly 10x that of Adam.
            NamedConfig(
                "sgd",
                {
                    "optimizer_type": "SGD",
                    "learning_rate": 2e-2,
                    "lr_scheduler": "cosine",
                    "lr_warmup_steps": 5,
                    "batch_size": 16,
                },
                source="PyTorch SGD rule of thumb: ~10x the Adam learning rate",
            ),
        ]

    def preflight_problems(self) -> list[str]:
        """A missing or empty demo dataset, a trainer python without torch, a missing script."""
        problems: list[str] = []
        dataset = self.field("dataset")
        if dataset:
            problems += demo_dataset_problems(Path(dataset))
        script = Path(self.field("train_script") or DEMO_SCRIPT)
        if not script.is_file():
            problems.append(
                f"The demo training script {script} does not exist; reset the Training script field."
            )
        problems += trainer_python_problems(self.python)
        return problems

    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        knobs, run_dir, max_steps = request.knobs, request.run_dir, request.max_steps
        resolution = int(self.field("resolution", "32"))
        run_toml = derive_run_toml(
            resolve_demo_dataset(request.dataset),
            run_dir / "dataset.toml",
            style="sd-scripts",
            general={"batch_size": int(knobs["batch_size"]), "resolution": resolution},
        )
        output_dir = run_dir / "output"
        logging_dir = run_dir / "logs" / "tb"
        python = self.python
        cmd = make_accelerate_launch_prefix(python, mixed_precision="no") + [
            self.field("train_script", str(DEMO_SCRIPT)),
            "--dataset_config",
            str(run_toml),
            "--output_dir",
            str(output_dir),
            "--output_name",
            "demo",
            "--logging_dir",
            str(logging_dir),
            "--learning_rate",
            repr(float(knobs["learning_rate"])),
            "--optimizer_type",
            str(knobs["optimizer_type"]),
            "--lr_scheduler",
            str(knobs["lr_scheduler"]),
            "--lr_warmup_steps",
            str(int(knobs["lr_warmup_steps"])),
            "--max_train_steps",
            str(int(max_steps)),
            "--seed",
            str(int(request.seed)),
            "--mixed_precision",
            "no",
        ]
        threads = int(self.field("cpu_threads", "0"))
        if threads > 0:
            cmd += ["--cpu_threads", str(threads)]
        if request.sample_prompts:
            prompt_file = run_dir / "sample_prompts.txt"
            write_prompt_file(prompt_file, request.sample_prompts, letters=("d", "w", "h", "s"))
            cmd += ["--sample_prompts", str(prompt_file), "--sample_at_first"]
            # at the validation's steps too, so the best step it names has samples
            cmd += ["--sample_every_n_steps", str(sample_every(request.sample_every_n_steps, max_steps))]
        cmd += save_resume_args(request)
        if request.stop_at_step:
            cmd += ["--stop_at_step", str(int(request.stop_at_step))]
        plan = self.validation
        if plan:  # the same flags as sd-scripts' network trainers
            every = plan.every(max_steps, request.sample_every_n_steps if request.sample_prompts else None)
            cmd += ["--validation_split", repr(float(plan.split)), "--validation_seed", str(int(plan.seed)),
                    "--validate_every_n_steps", str(every), "--validate_every_n_epochs", str(int(max_steps) + 1)]
        return LaunchSpec(
            cmd=cmd,
            cwd=run_dir,
            env=make_subprocess_env(),
            output_dir=output_dir,
            logging_dir=logging_dir,
            sample_dir=output_dir / "sample",
            loss_tags=self.loss_tags,
            max_steps=int(max_steps),
            eval_loss_tags=self.validation_tags if plan else (),
            pause_step=int(request.stop_at_step) if request.stop_at_step else None,
        )

    def paused_state(self, output_dir: Path, step: int) -> Path | None:
        """``<output_dir>/demo-step<N>-state`` once its COMPLETE marker (written last) is there."""
        folder = Path(output_dir) / f"demo-step{int(step):08d}-state"
        return folder if (folder / STATE_COMPLETE_MARKER).is_file() else None
