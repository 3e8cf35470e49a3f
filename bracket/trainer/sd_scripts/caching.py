"""How the sd-scripts adapters cache latents and text-encoder outputs.

Latents (and text-encoder outputs, where the trainer can cache them and the
text encoders are frozen) are cached to disk (``--cache_latents_to_disk`` /
``--cache_text_encoder_outputs_to_disk``). sd-scripts writes those caches *next to each
image* (``<image stem>_<W>x<H>_<suffix>.npz``) and reuses any file that exists, whichever
model made it. So every run reads the images through a *mirror folder* — links to the
dataset's files in ``<session>/cache/<family>-<key>/s<i>`` (copies where links cannot be
made), with the key of :mod:`bracket.trainer.cache_key` (model files, cache flags, dataset
files): the person's folder gets no ``.npz`` files, and another model, VAE or an edited
caption gets a new folder instead of the old caches.

The caches are made once per session, before the baseline, by sd-scripts' own
``tools/cache_latents.py`` and ``tools/cache_text_encoder_outputs.py`` (SDXL and FLUX.1;
:meth:`SdScriptsTrainer.session_setup_commands`). That matters for comparability: sd-scripts
encodes latents with ``latent_dist.sample()`` on its seeded global generator, but only when
a cache file is missing — so the run that writes the cache draws a different noise stream
from every later run with the same seed. With the cache made beforehand, every run starts
from the same cache and the same generator state, and a config repeated with its seed
repeats its loss. ``--skip_cache_check`` (which only skips the content check of files that
exist, ``docs/train_network_advanced.md``) is emitted when every image already has its cache
files. The cache tools at our pin know no SD3, so SD3.5's first run still writes its cache.
Caching is left out when the dataset makes it impossible: ``color_aug``/``random_crop`` forbid
latent caching; ``shuffle_caption``, caption dropout or token warm-up forbid text-encoder
caching (the trainer would assert).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import tomli_w

from bracket.dataset.references import training_folder
from bracket.dataset.runtime import dataset_image_dirs, derive_run_toml, load_dataset_spec
from bracket.errors import BracketError
from bracket.trainer.base import LaunchSpec, RunRequest, Trainer, make_accelerate_launch_prefix, make_subprocess_env
from bracket.trainer.cache_key import CACHE_FILE_SUFFIXES, cache_key, held_out_key, session_cache_dir
from bracket.trainer.vram import runs_on_cpu

#: mixed precision on a GPU; on the CPU (field ``device``) everything is fp32 (``no``)
MIXED_PRECISION = "bf16"
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".avif", ".jxl")
CACHE_SEED = 0
CACHE_LATENTS_SCRIPT = "tools/cache_latents.py"
CACHE_TEXT_SCRIPT = "tools/cache_text_encoder_outputs.py"


def _effective(entries: Sequence[Mapping[str, Any]], key: str, default: Any) -> Any:
    """The value sd-scripts uses for ``key``: subset, else dataset, else general."""
    for entry in entries:
        if key in entry:
            return entry[key]
    return default


def dataset_caching_limits(document: Mapping[str, Any]) -> tuple[bool, bool]:
    """``(latents_cacheable, text_encoder_outputs_cacheable)`` for a sd-scripts dataset."""
    general = document.get("general", {})
    latents, text = True, True
    for dataset in document.get("datasets", []):
        for subset in dataset.get("subsets", []) or [{}]:
            chain = (subset, dataset, general)
            if _effective(chain, "color_aug", False) or _effective(chain, "random_crop", False):
                latents = False
            if (
                _effective(chain, "shuffle_caption", False)
                or float(_effective(chain, "caption_dropout_rate", 0) or 0) > 0
                or float(_effective(chain, "caption_tag_dropout_rate", 0) or 0) > 0
                or float(_effective(chain, "token_warmup_step", 0) or 0) > 0
            ):
                text = False
    return latents, text


def cache_is_complete(image_dirs: Sequence[Path], suffixes: Sequence[str]) -> bool:
    """Whether every image in ``image_dirs`` has a cache file with each of ``suffixes``."""
    images = [
        path for folder in image_dirs if folder.is_dir()
        for path in sorted(folder.iterdir()) if path.suffix.lower() in IMAGE_EXTENSIONS
    ]
    if not images or not suffixes:
        return False
    for image in images:
        siblings = [p.name for p in image.parent.glob(f"{image.stem}*.npz")]
        for suffix in suffixes:
            if not any(name.startswith(image.stem) and name.endswith(suffix) for name in siblings):
                return False
    return True


def mirror_folder(source: Path, dest: Path, excluded: Collection[Path] = ()) -> Path:
    """Make ``dest`` hold a link to each file of ``source`` (no caches, none of the ``excluded``
    images nor their captions: the session's held-out likeness references); return ``dest``.

    Links are symbolic where the system allows them, else hard links, else copies. Files
    already there are kept, so concurrent runs (or workers) can call this safely.
    """
    return training_folder(source, excluded, dest, skip_suffixes=CACHE_FILE_SUFFIXES)


def _has_key(document: Mapping[str, Any], key: str) -> bool:
    if key in document.get("general", {}):
        return True
    return any(key in d for d in document.get("datasets", []))


class SdScriptsCaching(Trainer):
    """The caching half of :class:`~bracket.trainer.sd_scripts.base.SdScriptsTrainer`: keyed
    mirror folders, the run's dataset TOML, the cache flags and the once-per-session cache
    commands. Reads the adapter's class data (``model_inputs``, cache suffixes and tool flag)."""

    #: the adapter's class data and helpers this half reads (defined by ``SdScriptsTrainer``, and
    #: ``fit_epoch`` by ``KohyaPauseResume``)
    cache_tool_flag: ClassVar[str]
    latent_cache_suffix: ClassVar[str]
    text_encoder_cache_suffix: ClassVar[str]

    @abstractmethod
    def resolution(self) -> int: ...

    @abstractmethod
    def sd_scripts_dir(self) -> Path: ...

    @abstractmethod
    def cache_suffixes(self, cache_text: bool) -> tuple[str, ...]: ...

    @abstractmethod
    def tokenizer_args(self) -> list[str]: ...

    @abstractmethod
    def fit_epoch(self, document: MutableMapping[str, Any], request: RunRequest) -> None: ...

    @property
    def on_cpu(self) -> bool:
        """Whether runs train on the CPU (field ``device``; :func:`bracket.trainer.vram.runs_on_cpu`)."""
        return runs_on_cpu(self.fields)

    def mixed_precision(self) -> str:
        """``bf16`` on a GPU; ``no`` (fp32 throughout) on the CPU, where bf16 without native
        instructions runs far slower than fp32."""
        return "no" if self.on_cpu else MIXED_PRECISION

    def cache_tool_args(self) -> list[str]:
        """Flags of the cache tools that change what they write (also part of the cache key)."""
        return [self.cache_tool_flag, "--mixed_precision", self.mixed_precision(), "--seed", str(CACHE_SEED)]

    def latent_cache_args(self) -> list[str]:
        """The latent tool encodes with an fp32 VAE (``--no_half_vae``): exact latents, and on a
        CPU without bf16 instructions (AVX2 only) far faster than the bf16 VAE."""
        return ["--no_half_vae"]

    def cache_folder(self, source: Path, run_dir: Path) -> Path:
        """``<session cache>/<family>-<key>``: where this dataset's mirror and caches live."""
        try:
            folders = dataset_image_dirs(source, "sd-scripts")
        except BracketError:
            folders = []
        models = [self.field(item.field) for item in self.model_inputs]
        flags = self.cache_tool_args() + self.latent_cache_args()
        key = cache_key(models=models, flags=flags, folders=folders,
                        extra={"resolution": self.resolution(), "suffix": self.latent_cache_suffix,
                               **held_out_key(self.held_out_references)})
        family = self.latent_cache_suffix.strip("_").split(".")[0] or "sd"
        return session_cache_dir(run_dir, self.field("cache_dir")) / f"{family}-{key}"

    def write_dataset_toml(self, source: Path, run_dir: Path, knobs: Mapping[str, Any],
                           fit: Callable[[dict], None] | None = None, *, standalone: bool = False,
                           name: str = "dataset.toml") -> tuple[Path, dict]:
        """The run's dataset TOML (``run_dir/name``): batch size, resolution/buckets when the user
        set none, and every subset's ``image_dir`` replaced by its mirror in the keyed cache folder
        — unless ``standalone`` (an export): then it stays the person's own folder; ``fit`` may
        then change the document (a paused run's repeats, ``sd_scripts.resume``)."""
        document = load_dataset_spec(source, "sd-scripts")
        general: dict[str, Any] = {"batch_size": int(knobs.get("batch_size", 1))}
        if not _has_key(document, "resolution"):
            general["resolution"] = self.resolution()
        if not _has_key(document, "enable_bucket"):
            general["enable_bucket"] = True
        path = derive_run_toml(source, run_dir / name, style="sd-scripts", general=general)
        written = load_dataset_spec(path, "sd-scripts")
        cache = self.cache_folder(source, run_dir)
        index = 0
        held = self.held_out_references
        for dataset in written["datasets"]:
            for subset in dataset.get("subsets", []):
                if not isinstance(subset.get("image_dir"), str):
                    continue
                if not standalone:
                    subset["image_dir"] = str(mirror_folder(Path(subset["image_dir"]), cache / f"s{index}", held))
                elif held:  # an export trains on the search's images: its own links, beside it
                    subset["image_dir"] = str(mirror_folder(Path(subset["image_dir"]), run_dir / "train-data"
                                                            / f"s{index}", held))
                index += 1
        if fit is not None:
            fit(written)
        path.write_text(tomli_w.dumps(written), encoding="utf-8")
        return path, written

    def cache_args(self, document: Mapping[str, Any], *, standalone: bool = False) -> list[str]:
        """The caching flags of a run; ``standalone`` (an export reading the person's own
        folders): in memory only, so no cache file is written beside their images."""
        latents_ok, text_ok = dataset_caching_limits(document)
        cache_text = text_ok and bool(self.text_encoder_cache_suffix)
        args: list[str] = []
        if latents_ok:
            args += ["--cache_latents"] + ([] if standalone else ["--cache_latents_to_disk"])
        if cache_text:
            args += ["--cache_text_encoder_outputs"] + ([] if standalone else ["--cache_text_encoder_outputs_to_disk"])
        if standalone:
            return args
        mirrors = [Path(s["image_dir"]) for d in document.get("datasets", []) for s in d.get("subsets", [])
                   if isinstance(s.get("image_dir"), str)]
        if latents_ok and cache_is_complete(mirrors, self.cache_suffixes(cache_text)):
            args.append("--skip_cache_check")
        return args

    def session_cache_variant(self, request: RunRequest, spec: LaunchSpec) -> tuple[list[Path], list[str]] | None:
        """An export's faster twin: the same command reading the dataset through the session's
        keyed mirror folders (whose cache files the session made), written beside the export's
        own dataset TOML as ``dataset.session-cache.toml``; None when nothing is cached."""
        run_dir = Path(request.run_dir)
        own = load_dataset_spec(run_dir / "dataset.toml", "sd-scripts")
        toml, cached = self.write_dataset_toml(request.dataset, run_dir, request.knobs,
                                               fit=lambda written: self.fit_epoch(written, request),
                                               name="dataset.session-cache.toml")
        mirrors = [Path(s["image_dir"]) for d in cached.get("datasets", []) for s in d.get("subsets", [])
                   if isinstance(s.get("image_dir"), str)]
        before, after = self.cache_args(own, standalone=True), self.cache_args(cached)
        cmd = [str(a) for a in spec.cmd]
        at = next((i for i in range(len(cmd)) if cmd[i:i + len(before)] == before), None)
        if not mirrors or not before or at is None or "--dataset_config" not in cmd:
            return None
        cmd[at:at + len(before)] = after
        cmd[cmd.index("--dataset_config") + 1] = str(toml)
        return mirrors, cmd

    def session_setup_commands(self, *, dataset: Path, run_dir: Path) -> list[LaunchSpec]:
        """Cache latents, then text-encoder outputs, once per session with sd-scripts' tools.

        Every run then reads the same cache (see the module docstring); nothing for families
        the tools do not support (SD3) or datasets that cannot be cached.
        """
        if not self.cache_tool_flag:
            return []
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        toml, document = self.write_dataset_toml(Path(dataset), run_dir, {"batch_size": 1})
        latents_ok, text_ok = dataset_caching_limits(document)
        cache_text = text_ok and bool(self.text_encoder_cache_suffix)
        prefix = make_accelerate_launch_prefix(self.python,
                                               mixed_precision=self.mixed_precision())
        common = [*self.model_flags(), *self.tokenizer_args(), "--dataset_config", str(toml),
                  *self.cache_tool_args()]
        cache = self.cache_folder(Path(dataset), run_dir)
        specs: list[LaunchSpec] = []
        for wanted, script, extra, label in (
            (latents_ok, CACHE_LATENTS_SCRIPT, self.latent_cache_args(), "cache latents"),
            (cache_text, CACHE_TEXT_SCRIPT, [], "cache text encoder outputs"),
        ):
            if wanted:
                specs.append(LaunchSpec(
                    cmd=[*prefix, str(self.sd_scripts_dir() / script), *common, *extra],
                    cwd=self.sd_scripts_dir(), env=make_subprocess_env(), output_dir=cache, loss_tags=(),
                    label=label))
        return specs
