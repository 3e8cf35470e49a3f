"""What every ostris/ai-toolkit adapter shares: one job file per launch, run by ``run.py``.

ai-toolkit is driven by a job file: ``python run.py <job file>`` in its checkout.
:meth:`AiToolkitTrainer.prepare_run` writes it (JSON, which ai-toolkit loads like YAML) as
``job: extension`` with one ``config.process[]`` of type ``sd_trainer``, every key one the pinned
checkout reads (``bracket/trainer/inventory/ai-toolkit.json``: ai-toolkit silently ignores the
others). A model module states data: its ``model`` section per VRAM tier, noise scheduler,
sample defaults, learning-rate range, baseline and curated configs.

Read at the pin (27a03a91): a launch whose ``<training_folder>/<config.name>`` holds a save
resumes from it, so every launch gets its own name (:meth:`job_name`) and halving restarts a
promoted config (``resume_mode = "restart"``); ``logging.log_every`` is set to 1 and the loss
read from TensorBoard under ``log_dir``, ``val/loss`` from ``loss_log.db``
(:mod:`bracket.trainer.ai_toolkit.validation`); samples are
``samples/<ms>__<step:09d>_<i>.<jpg|webp>`` from step 0; ``<name>.safetensors`` after the last
step marks a finished run (SIGINT exits 0 without saving). Runs get ``HF_HUB_OFFLINE=1``: model
ids must be local or cached. docs/TRAINERS.md ("ostris/ai-toolkit") has the details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from bracket.dataset.references import training_folder
from bracket.dataset.runtime import dataset_image_dirs
from bracket.errors import BracketError
from bracket.search.space import SearchSpace
from bracket.trainer.ai_toolkit.models_cache import model_problem
from bracket.trainer.ai_toolkit.space import lora_space, network_section, train_section
from bracket.trainer.ai_toolkit.validation import (
    VALIDATION_TAGS,
    held_out,
    images_of,
    validation_items,
)
from bracket.trainer.base import LaunchSpec, RunRequest, Trainer, make_subprocess_env
from bracket.trainer.pause import logged_past, pause_save_every
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.sample_steps import sample_every
from bracket.trainer.vram import vram_tier

#: run in the trainer's python by ``bracket doctor``: the job file through ai-toolkit's own config classes
CONFIG_CHECK = Path(__file__).resolve().parents[1] / "scripts" / "ai_toolkit_config_check.py"
#: the process type of ai-toolkit's examples (``extensions_built_in/sd_trainer``)
PROCESS_TYPE = "sd_trainer"
JOB_PREFIX = "job-"
LOSS_TAGS = ("loss",)
#: ``[(largest VRAM tier, {"model": {...}, "train": {...}})]``: the first row at or above the GPU's tier applies
MemoryPlan = tuple[tuple[int, Mapping[str, Mapping[str, Any]]], ...]


class AiToolkitTrainer(Trainer):
    """Base of the ai-toolkit adapters; subclasses are mostly data."""

    checkout_field = "ai_toolkit_dir"
    checkout_hint = ("it is not a checkout of ostris/ai-toolkit: check the ai-toolkit folder "
                     "(git submodule update --init vendor/ai-toolkit).")
    loss_tags = LOSS_TAGS
    holds_out_references = True
    dataset_style = "musubi"  # a folder of media with .txt captions, or flat [[datasets]] folders
    resume_mode = "restart"
    sample_kind = "image"
    #: ``train.validation_config``: ``val/loss`` in ``loss_log.db`` (images only: not the video families)
    validation_tags: ClassVar[tuple[str, ...]] = VALIDATION_TAGS
    #: its loop logs step ``k`` after the ``k+1``-th optimizer step: the last loss is at ``max_steps - 1``
    last_loss_step_offset = 1
    #: the ``model`` keys every tier shares (``arch``); the name/path comes from the ``model`` field
    model_keys: ClassVar[Mapping[str, Any]] = {}
    memory_plan: ClassVar[MemoryPlan] = ()
    noise_scheduler: ClassVar[str] = "flowmatch"
    learning_rate: ClassVar[tuple[float, float]] = (2e-5, 1e-3)
    timestep_types: ClassVar[tuple[str, ...]] = ("sigmoid", "linear", "shift", "weighted")
    sample_defaults: ClassVar[Mapping[str, Any]] = {"width": 1024, "height": 1024, "sample_steps": 25,
                                                    "guidance_scale": 4.0}
    #: keys of every ``datasets[]`` entry (video frames, latent caching)
    dataset_defaults: ClassVar[Mapping[str, Any]] = {"cache_latents_to_disk": True}
    #: ``train`` keys every run of the model sets (text-embedding caching, ...)
    train_defaults: ClassVar[Mapping[str, Any]] = {}
    default_resolution: ClassVar[int] = 1024

    # -- paths -------------------------------------------------------------------------------------
    @property
    def checkout(self) -> Path:
        return Path(self.field("ai_toolkit_dir", ".")).expanduser()

    def script_files(self) -> list[Path]:
        return [self.checkout / "run.py"]

    def tier(self) -> int:
        if not hasattr(self, "_tier"):
            self._tier = vram_tier(self.fields)
        return self._tier

    # -- the search ---------------------------------------------------------------------------------
    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=self.learning_rate, timestep_types=self.timestep_types)

    # -- the job file -------------------------------------------------------------------------------
    def model_names(self) -> dict[str, str]:
        """The model keys filled from preset fields (``name_or_path`` and the family's extras)."""
        return {"name_or_path": self.field("model")}

    def model_section(self) -> dict[str, Any]:
        section: dict[str, Any] = {**self.model_keys, **self.model_names()}
        section.update(self._memory().get("model", {}))
        return section

    def _memory(self) -> Mapping[str, Mapping[str, Any]]:
        for largest, rows in self.memory_plan:
            if self.tier() <= largest:
                return rows
        return {}

    def resolution(self) -> int:
        return int(self.field("resolution") or self.default_resolution)

    def dataset_folders(self, dataset: Path) -> list[Path]:
        try:
            return dataset_image_dirs(Path(dataset).expanduser(), "musubi")
        except BracketError:
            return [Path(dataset).expanduser()]

    def held_out_images(self, dataset: Path) -> list[Path]:
        """The session's validation images (none without a validation plan)."""
        if not self.validation_tags or self.validation is None:
            return []
        plan = self.validation
        return held_out(images_of(self.dataset_folders(dataset)), float(plan.split), int(plan.seed))

    def datasets_section(self, dataset: Path, knobs: Mapping[str, Any], run_dir: Path) -> list[dict[str, Any]]:
        folders = self.dataset_folders(dataset)
        held = {*self.held_out_images(dataset), *self.held_out_references}
        if held:  # ai-toolkit would train on them too: train from links to the rest
            folders = [training_folder(f, held, run_dir / "train-data" / str(n)) for n, f in enumerate(folders)]
        return [{"folder_path": str(folder), "caption_ext": "txt", "resolution": [self.resolution()],
                 "caption_dropout_rate": float(knobs.get("caption_dropout_rate", 0.0)), **self.dataset_defaults}
                for folder in folders]

    def sample_section(self, prompts: Sequence[SamplePrompt], every: int) -> dict[str, Any]:
        defaults = dict(self.sample_defaults)
        items = []
        for prompt in prompts:
            item: dict[str, Any] = {"prompt": prompt.text, "seed": int(prompt.seed)}
            for key, value in (("width", prompt.width), ("height", prompt.height), ("num_frames", prompt.frames),
                               ("sample_steps", prompt.steps), ("guidance_scale", prompt.cfg_scale),
                               ("neg", prompt.negative)):
                if value is not None:
                    item[key] = value
            items.append(item)
        return {"sampler": self.noise_scheduler, "sample_every": int(every), "walk_seed": False,
                "seed": int(prompts[0].seed) if prompts else 42, "neg": "", **defaults, "samples": items}

    def job_name(self, run_dir: Path) -> str:
        """``<run folder>-l<n>``: a name no earlier launch of this run folder used, so no launch
        resumes another's save by accident (ai-toolkit resumes by name)."""
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(run_dir).name).strip("-") or "run"
        launch = 1 + len(list(Path(run_dir).glob(f"{JOB_PREFIX}*.json")))
        return f"{stem}-l{launch}"

    def job_document(self, request: RunRequest, name: str) -> dict[str, Any]:
        knobs, run_dir, steps = request.knobs, request.run_dir, int(request.max_steps)
        every = request.save_every_n_steps or steps
        if request.stop_at_step:
            every = pause_save_every(int(request.stop_at_step), request.save_every_n_steps)
        train = {"steps": steps, "train_unet": True, "train_text_encoder": False, "gradient_checkpointing": True,
                 "noise_scheduler": self.noise_scheduler, "dtype": "bf16", **train_section(knobs),
                 **self._memory().get("train", {}), **self.train_defaults}
        process: dict[str, Any] = {
            "type": PROCESS_TYPE,
            "training_folder": str(run_dir / "output"),
            "log_dir": str(run_dir / "logs"),
            "training_seed": int(request.seed),
            "network": network_section(knobs),
            "save": {"dtype": "float16", "save_every": int(every), "max_step_saves_to_keep": 4},
            "datasets": self.datasets_section(request.dataset, knobs, run_dir),
            "train": train,
            "model": self.model_section(),
            "logging": {"log_every": 1, "use_ui_logger": True},
        }
        held = self.held_out_images(request.dataset)
        if held:
            train["validation_config"] = {
                "validation_items": validation_items(held), "resolution": self.resolution(),
                "validate_every_n_steps": self.validation.every(steps, request.sample_every_n_steps)}
        if request.sample_prompts and self.writes_samples:
            process["sample"] = self.sample_section(
                request.sample_prompts, sample_every(request.sample_every_n_steps, steps, self.sample_kind))
        else:
            train["disable_sampling"] = True
        return {"job": "extension", "config": {"name": name, "process": [process]},
                "meta": {"name": name, "version": "1.0"}}

    # -- one run ------------------------------------------------------------------------------------
    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        run_dir = request.run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        name = self.job_name(run_dir)
        job_file = run_dir / f"{JOB_PREFIX}{name}.json"
        job_file.write_text(json.dumps(self.job_document(request, name), indent=1), encoding="utf-8")
        save_root = run_dir / "output" / name
        validating = bool(self.held_out_images(request.dataset))
        return LaunchSpec(
            cmd=[self.python, str(self.checkout / "run.py"), str(job_file)],
            cwd=self.checkout, env=make_subprocess_env({"HF_HUB_OFFLINE": "1"}), output_dir=save_root,
            logging_dir=run_dir / "logs", sample_dir=save_root / "samples" if self.writes_samples else None,
            loss_tags=self.loss_tags, label=run_dir.name, max_steps=int(request.max_steps),
            pause_step=int(request.stop_at_step) if request.stop_at_step else None,
            eval_loss_tags=self.validation_tags if validating else (),
            metrics_db=save_root / "loss_log.db" if validating else None,
        )

    def paused_state(self, output_dir: Path, step: int) -> Path | None:
        """The weights saved at the rung step once a later step is logged (ai-toolkit saves a step
        before it logs it): a promoted config restarts, so the pause needs nothing else."""
        name = Path(output_dir).name
        found = Path(output_dir) / f"{name}_{int(step):09d}.safetensors"
        try:
            written = found.stat().st_mtime
        except OSError:
            return None
        logs = Path(output_dir).parent.parent / "logs"
        return found if logged_past(logs, int(step), self.loss_tags, since=written) else None

    def unfinished_reason(self, output_dir: Path) -> str | None:
        """Why a run that exited 0 did not finish: ai-toolkit stopped by SIGINT exits 0 without its
        final ``<name>.safetensors``."""
        final = Path(output_dir) / f"{Path(output_dir).name}.safetensors"
        if final.exists():
            return None
        return f"ai-toolkit exited without its final save {final.name} (stopped: 'Job stopped')"

    # -- checks before anything runs ----------------------------------------------------------------
    def model_fields(self) -> list[str]:
        return ["model"]

    def preflight_problems(self) -> list[str]:
        problems: list[str] = []
        if not Path(self.python).is_file():
            problems.append(f"Trainer python {self.python} does not exist; run ./install.sh --trainers.")
        checkout = self.checkout_problem()
        if checkout:
            problems.append(checkout)
        return problems + self.model_problems()

    def model_problems(self) -> list[str]:
        return [p for name in self.model_fields() if (p := model_problem(self.field(name)))]

    def parser_check_spec(self, launch: LaunchSpec) -> LaunchSpec | None:
        """ai-toolkit's own loader and config classes on the launch's job file, in the trainer's python."""
        return LaunchSpec(cmd=[self.python, str(CONFIG_CHECK), str(self.checkout), launch.cmd[-1]],
                          cwd=self.checkout, env=dict(launch.env), output_dir=launch.output_dir,
                          label="ai-toolkit config check")
