"""The protocol every trainer adapter follows, and the launch rules they share.

An adapter turns a configuration (a dict of knob values) into a :class:`LaunchSpec`: the
exact command line, working folder and environment of one real trainer run, plus where
that run will write its logs and samples. Adapters never launch anything themselves and
never touch the store or a judge; the session does that. Keeping them pure data-to-command
functions is what lets the contract test check every command against the real parsers'
flag inventory without a GPU.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import IntKnob, SearchSpace
from bracket.trainer.environment import trainer_environment
from bracket.trainer.prompts import SamplePrompt

#: Thread-count variables pinned to 1 so that a trainer on a shared machine does not
#: oversubscribe the CPU through every BLAS library at once.
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass(frozen=True)
class LaunchSpec:
    """One process to run: its argv (no shell), cwd, env and where its outputs appear."""

    cmd: list[str]
    cwd: Path
    env: dict[str, str]
    output_dir: Path
    logging_dir: Path | None = None
    #: glob, relative to ``logging_dir``, that finds the event files of this run
    tfevents_glob: str = "**/events.out.tfevents.*"
    sample_dir: Path | None = None
    #: scalar tags carrying the training loss, most preferred first
    loss_tags: tuple[str, ...] = ("loss/current", "loss")
    #: a short label for logs and the UI ("cache latents", "trial 3")
    label: str = ""
    #: the number of optimizer steps the run will make, when known (progress bars)
    max_steps: int | None = None
    #: scalar tags of an evaluation loss (LLM trainers), most preferred first
    eval_loss_tags: tuple[str, ...] = ()
    #: the run pauses at this step (``RunRequest.stop_at_step``): once the trainer's state
    #: for it is complete (``Trainer.paused_state``) the run is stopped and recorded "paused"
    pause_step: int | None = None
    #: a sqlite metrics file read beside the tfevents (ai-toolkit's ``loss_log.db``: table
    #: ``metrics(step, key, value_real)``), for scalars the trainer logs only there
    metrics_db: Path | None = None


@dataclass(frozen=True)
class ModelInput:
    """One preset field holding a model path, and the flag it fills on each command.

    sd-scripts passes the same model flags to training and to its cache tools
    (``train_flag``); musubi-tuner's cache scripts take their own (``latent_flag``,
    ``text_flag``)."""

    field: str
    train_flag: str | None = None
    latent_flag: str | None = None
    text_flag: str | None = None
    #: emitted only when the field has a value
    optional: bool = False


@dataclass(frozen=True)
class RunRequest:
    """One run to prepare: where it writes, which configuration, which data, how long, what
    it samples and saves. The session builds one per trial; ``Trainer.prepare_run`` turns it
    into a :class:`LaunchSpec`."""

    run_dir: Path
    #: a complete, validated configuration (:meth:`Trainer.config_from_dict`)
    knobs: Mapping[str, Any]
    #: the preset's dataset: a kohya dataset TOML or image folder for the diffusion
    #: trainers, the JSONL (or JSON list) file for the LLM trainers
    dataset: Path
    max_steps: int
    seed: int
    sample_prompts: Sequence[SamplePrompt] = ()
    sample_every_n_steps: int | None = None
    save_every_n_steps: int | None = None
    save_state: bool = False
    #: a state folder (or checkpoint) written by an earlier run with ``save_state``
    resume_from: Path | None = None
    #: the optimizer step that state holds (the run goes on from ``resume_step + 1``); None
    #: when unknown (the adapter reads it from the state, where the trainer records it)
    resume_step: int | None = None
    #: pause here: the run keeps the schedule of ``max_steps`` (warm-up, decay) but saves
    #: its state at this step and stops (successive halving, ``bracket.search.halving``)
    stop_at_step: int | None = None
    #: an export (``bracket.report.export``): the command must stand without the session — it
    #: reads the person's own dataset folders and files and writes no cache there (an adapter
    #: may still offer the session's caches as a speed-up, :meth:`Trainer.session_cache_variant`)
    standalone: bool = False
    #: a standalone command's own cache folder: where an adapter that trains only from caches
    #: (musubi-tuner) makes them (:meth:`Trainer.export_setup_commands`); None: ``run_dir/cache``
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "run_dir", Path(self.run_dir))
        object.__setattr__(self, "dataset", Path(self.dataset))
        object.__setattr__(self, "knobs", dict(self.knobs))
        object.__setattr__(self, "sample_prompts", tuple(self.sample_prompts or ()))


def save_resume_args(request: RunRequest, *, pause: str | None = None, continue_steps: bool = False) -> list[str]:
    """The save / state / resume flags of the kohya-style trainers (sd-scripts, musubi-tuner
    and the demo): ``--save_every_n_steps N``, ``--save_state``, ``--resume DIR``.

    ``pause`` ("state" or "weights") makes ``request.stop_at_step`` a save step (``N`` divides
    it: :func:`bracket.trainer.pause.pause_save_every`), with ``--save_state`` for "state"; the
    run keeps ``--max_train_steps`` of the full length. ``continue_steps`` adds, to a resume,
    sd-scripts' ``--skip_until_initial_step`` (and ``--initial_step S`` when
    ``request.resume_step`` is known): without it ``train_network.py`` restores the state but
    counts its steps from 0 again (see :mod:`bracket.trainer.sd_scripts.resume`). Without
    either, the flags are the request's own (the demo, a plain save)."""
    from bracket.trainer.pause import pause_save_every

    every, state = request.save_every_n_steps, request.save_state
    if pause and request.stop_at_step:
        every = pause_save_every(int(request.stop_at_step), every)
        state = state or pause == "state"
    args: list[str] = []
    if every:
        args += ["--save_every_n_steps", str(int(every))]
    if state:
        args.append("--save_state")
    if request.resume_from:
        args += ["--resume", str(request.resume_from)]
        if continue_steps:
            args.append("--skip_until_initial_step")
            if request.resume_step is not None:
                args += ["--initial_step", str(int(request.resume_step))]
    return args


class Trainer(ABC):
    """A trainer adapter: search space, warm-start configs and the command of one run.

    Subclasses are constructed from the preset's field values (``dict[str, str]``, already
    validated by the registry). ``prepare_run`` writes every input file the run needs under
    the request's ``run_dir`` (dataset TOML, prompt file, config) and returns the command;
    it launches nothing.
    """

    #: scalar tags of the training loss in this trainer's tfevents, most preferred first
    loss_tags: ClassVar[tuple[str, ...]] = ("loss/current", "loss")
    #: False for trainers that cannot render samples; such runs are scored by loss only
    writes_samples: ClassVar[bool] = True
    #: "image", "video" or "text": what the samples are, for the Compare view
    sample_kind: str = "image"
    #: sample prompt lines of the trainer's own (the demo's, whose dataset it generates); every
    #: other trainer's are proposed from its dataset (``bracket.trainer.sample_proposal``)
    default_sample_prompts: ClassVar[tuple[str, ...]] = ()
    #: Hugging Face ids of tokenizers the trainer loads from the hub by name at start (no model
    #: file carries them); ``bracket doctor`` checks they are on this machine
    tokenizer_ids: tuple[str, ...] = ()
    #: "sd-scripts" or "musubi": the ``dataset`` field is a kohya dataset the session pre-flights; None: other
    dataset_style: ClassVar[str | None] = None
    #: how a paused run goes on: "continue" (model, optimizer, schedule and step restored: the loss
    #: curve continues) or "restart" (a promoted config trains again from 0; ``bracket.search.halving``)
    resume_mode: ClassVar[str] = "restart"
    #: a paused run exits by itself at its rung: every run (``stops_at_pause``), or the configs meeting the
    #: (knob, values) pairs of ``stops_at_pause_when`` (``pause.stops_itself``): halving charges it the rung
    stops_at_pause: ClassVar[bool] = False
    stops_at_pause_when: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()
    #: tags of a held-out validation loss it can log, most preferred first; () none (``bracket.trainer.heldout``)
    validation_tags: ClassVar[tuple[str, ...]] = ()
    #: the session's held-out split, set by the session when validation is on; adapters
    #: with ``validation_tags`` add their validation flags to every run while it is set
    validation: Any = None
    #: the held-out likeness references (``bracket.dataset.references``), set by the session only
    #: for adapters that ``holds_out_references``: none of their runs trains on them
    holds_out_references: ClassVar[bool] = False
    held_out_references: tuple[Path, ...] = ()
    #: the knob of the examples per optimizer step, narrowed by a ``batch_size`` bound (``--batch-sizes``)
    batch_knob: ClassVar[str] = "batch_size"

    def __init__(self, fields: Mapping[str, str] | None = None) -> None:
        self.fields: dict[str, str] = {k: str(v) for k, v in (fields or {}).items()}

    def field(self, name: str, default: str = "") -> str:
        """The value of the preset field ``name``, stripped; ``default`` when it is empty."""
        return (self.fields.get(name) or default).strip()

    @property
    def python(self) -> str:
        """The trainer's python (field ``trainer_python``)."""
        return self.field("trainer_python", "python")

    #: the preset fields holding model files, and the flags they fill
    model_inputs: ClassVar[tuple[ModelInput, ...]] = ()

    def active_model_inputs(self) -> tuple[ModelInput, ...]:
        """The model inputs this configuration reads (e.g. an image encoder only for I2V)."""
        return self.model_inputs

    def model_flags(self, command: str = "train") -> list[str]:
        """``flag value`` of every model input with a ``<command>_flag`` (``train``, ``latent``,
        ``text``); optional inputs only when their field is filled in."""
        words: list[str] = []
        for item in self.active_model_inputs():
            flag, value = getattr(item, f"{command}_flag"), self.field(item.field)
            if flag and (value or not item.optional):
                words += [flag, value]
        return words

    def paused_state(self, output_dir: Path, step: int) -> Path | None:
        """The state folder (or checkpoint) this trainer saved for ``step`` under
        ``output_dir``, once it is complete (every file written); None until then, and for
        trainers that cannot pause (``resume_mode == "restart"``)."""
        return None

    def model_problems(self) -> list[str]:
        """Model inputs that cannot load without a download (a Hugging Face id not in the cache);
        ``bracket doctor`` and the session's pre-flight report them. [] for trainers that take files."""
        return []

    #: how many steps before ``max_steps`` a complete run logs its last loss (ai-toolkit counts its
    #: steps from 0, so the loss of its last step is logged at ``max_steps - 1``)
    last_loss_step_offset: ClassVar[int] = 0

    def unfinished_reason(self, output_dir: Path) -> str | None:
        """Why a run that exited 0 did not finish training, told by what it wrote under
        ``output_dir`` (a trainer that exits 0 when stopped by a signal: ai-toolkit); None when
        it finished, and for trainers whose exit code says it."""
        return None

    @abstractmethod
    def declare_search_space(self) -> SearchSpace:
        """Knobs this trainer searches; everything else is a ``FixedKnob``."""

    @abstractmethod
    def baseline_config(self) -> NamedConfig:
        """What a person would run by hand today, with its source."""

    @abstractmethod
    def curated_configs(self) -> list[NamedConfig]:
        """Three to five known-good configurations, each with its source."""

    def session_space(self, bounds: Mapping[str, Any], *, steps: int | None = None,
                      warmup_share: float | None = None) -> SearchSpace:
        """This trainer's space narrowed by a session's bounds (``batch_size`` meaning
        :attr:`batch_knob`) and, given the run length ``steps`` and ``warmup_share`` (e.g.
        :data:`WARMUP_SHARE`), with a warm-up in steps limited to that share of the run. Every
        config of the session is validated against this space, and the warm start is fitted into it (a curated 100-step
        warm-up in a 100-step search is clamped, with a note)."""
        bounds = dict(bounds)
        if "batch_size" in bounds and self.batch_knob != "batch_size":
            bounds[self.batch_knob] = bounds.pop("batch_size")
        space = self.declare_search_space().narrow(bounds)
        cap = warmup_cap(space, steps, warmup_share)
        return space if cap is None else space.narrow({WARMUP_KNOB: (0, cap)})

    def config_from_dict(self, knobs: Mapping[str, Any], space: SearchSpace | None = None) -> dict[str, Any]:
        """``knobs`` completed with the space's fixed values and validated.

        ``space`` is the space the config was searched in: a session's space narrowed by
        the person's bounds, where a fixed knob such as ``batch_size`` may have become a
        searched choice. Without it the trainer's own space is used.
        """
        space = self.declare_search_space() if space is None else space
        complete = space.complete(knobs)
        space.validate(complete)
        return complete

    @abstractmethod
    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        """Write the run's inputs under ``request.run_dir`` and return its command."""

    def session_setup_commands(self, *, dataset: Path, run_dir: Path) -> list[LaunchSpec]:
        """Commands to run once per session before the first trial (pre-caching)."""
        return []

    def export_setup_commands(self, request: RunRequest) -> list[LaunchSpec]:
        """For an export (``request.standalone``): the commands its script runs before training
        unless the session's caches are there (:meth:`session_cache_variant`) — the session's own
        pre-caching commands, writing into ``request.cache_dir``; [] when training needs none."""
        return []

    def session_cache_variant(self, request: RunRequest, spec: LaunchSpec) -> tuple[list[Path], list[str]] | None:
        """For an export (``request.standalone``): the folders of the session's caches and the
        command that reads them instead (faster, same training), to be run only while every one
        of those folders exists — and then without :meth:`export_setup_commands`; None when the
        adapter has none."""
        return None

    def post_run_commands(
        self, *, run_dir: Path, launch: LaunchSpec, sample_prompts: Sequence[SamplePrompt] | None = None
    ) -> list[LaunchSpec]:
        """Commands to run after a successful run (e.g. LLM generations for Compare)."""
        return []

    def rung_commands(
        self, *, run_dir: Path, output_dir: Path, step: int, sample_dir: Path,
        sample_prompts: Sequence[SamplePrompt] | None = None,
    ) -> list[LaunchSpec]:
        """Commands that make, from the state a run paused with at ``step`` (``paused_state``),
        what its judges read there, written into ``sample_dir`` (LLM presets: the held-out answers
        and generations a finished run makes after training); [] when the run's samples exist
        already (images, videos) or nothing can be made from that state."""
        return []

    def parser_check_spec(self, launch: LaunchSpec) -> LaunchSpec | None:
        """A command that hands ``launch``'s arguments to the trainer's own parser.

        Returns None when this trainer has no parser check (``bracket doctor`` then
        skips that step). See ``bracket.trainer.parser_check``.
        """
        return None

    def script_files(self) -> list[Path]:
        """The trainer scripts this adapter runs (training and pre-cache), for ``bracket doctor``."""
        return []

    #: the field naming the trainer's checkout (the sd-scripts or musubi-tuner folder), which
    #: must hold every file of :meth:`script_files`; "" when the trainer has none
    checkout_field: str = ""
    #: how to get a real checkout, said when the folder lacks the scripts
    checkout_hint: str = ""

    def checkout_problem(self) -> str | None:
        """Why the :attr:`checkout_field` folder is not a checkout of this trainer (a script of
        :meth:`script_files` is not in it: an empty ``vendor/`` folder, another trainer's), or None."""
        if not self.checkout_field:
            return None
        folder = Path(self.field(self.checkout_field))
        missing = [p for p in self.script_files() if not p.is_file()]
        if not missing:
            return None
        names = ", ".join(p.relative_to(folder).as_posix() if p.is_relative_to(folder) else str(p) for p in missing)
        return f"{names} {'is' if len(missing) == 1 else 'are'} not in {folder}; {self.checkout_hint}".rstrip("; ")

    def preflight_problems(self) -> list[str]:
        """Problems visible before any run (missing trainer python, scripts, models)."""
        return []


#: the knob of trainers whose warm-up is a step count (LLM trainers search a ratio instead)
WARMUP_KNOB = "lr_warmup_steps"
#: the longest warm-up a search tries, as a share of the run: a run that is mostly warm-up
#: never trains at its rate, whatever that rate is
WARMUP_SHARE = 0.25


def warmup_cap(space: SearchSpace, steps: int | None, share: float | None) -> int | None:
    """The highest warm-up on ``space``'s grid within ``share`` of ``steps``, or None when
    there is no limit, no step-count warm-up or its range already fits."""
    knob = space.get(WARMUP_KNOB)
    if steps is None or share is None or not isinstance(knob, IntKnob):
        return None
    limit = int(share * steps)
    if knob.high <= limit:
        return None
    return max(knob.low, knob.low + (limit - knob.low) // knob.step * knob.step)


def make_accelerate_launch_prefix(
    venv_python: str | os.PathLike[str],
    *,
    mixed_precision: str = "bf16",
    num_cpu_threads_per_process: int = 1,
) -> list[str]:
    """The ``accelerate launch`` prefix, run as a module of the trainer's own python.

    Running ``python -m accelerate.commands.launch`` instead of the ``accelerate`` console
    script means the trainer venv's accelerate is used even when that venv is not active.
    """
    return [
        str(venv_python),
        "-m",
        "accelerate.commands.launch",
        "--num_cpu_threads_per_process",
        str(num_cpu_threads_per_process),
        "--mixed_precision",
        mixed_precision,
    ]


def make_subprocess_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a trainer process: ours as far as a trainer needs it (never Bracket's
    credentials: :mod:`bracket.trainer.environment`), one thread per BLAS, unbuffered output."""
    environment = trainer_environment()
    for name in _THREAD_VARIABLES:
        environment[name] = "1"
    environment["PYTHONUNBUFFERED"] = "1"
    environment["PYTHONIOENCODING"] = "utf-8"
    environment["TQDM_DISABLE"] = "1"
    if extra:
        environment.update({k: str(v) for k, v in extra.items()})
    return environment
