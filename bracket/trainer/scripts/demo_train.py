"""The embedded CPU demo trainer: a tiny class-conditioned DDPM, trained from scratch.

This is a real training script with the command line of the kohya-ss trainers, so that
Bracket's demo preset exercises exactly the path a real search takes: it is launched with
``python -m accelerate.commands.launch ... demo_train.py --dataset_config run.toml ...``,
reads an sd-scripts-style dataset TOML (``[general]`` batch_size/resolution,
``[[datasets.subsets]]`` image_dir, ``.txt`` captions next to the images), writes
TensorBoard scalars ``loss/current`` and ``loss/average`` under
``<logging_dir>/<YYYYmmddHHMMSS>/network_train/`` and sample images to
``<output_dir>/sample/<output_name>_<NNNNNN|e000000>_<ii>_<YYYYmmddHHMMSS>_<seed>.png``.

Held-out validation works like sd-scripts' network trainers: ``--validation_split`` of each
subset's images (shuffled with ``--validation_seed``; the last ``round(n * split)`` images)
are not trained on; every ``--validate_every_n_steps`` steps the model is evaluated on them
at four fixed timesteps (200, 400, 600, 800) with fixed noise, and the mean is logged as
``loss/validation/step_average``.

``--stop_at_step N`` pauses a run (successive halving): it keeps the schedule of
``--max_train_steps``, saves ``<output_name>-step<N>-state`` (``demo_state.py``) and stops;
``--resume`` of that state goes on so that the losses and samples equal an unpaused run's.

The model is a diffusers ``UNet2DModel`` of about 0.6 million parameters, randomly
initialised (nothing is downloaded), conditioned on a class label read from the caption:
one of the colour words x one of the shape words of the demo dataset, or an "other" class.
Samples use DDIM with few steps and are upscaled (nearest) so they are visible in a grid.

It runs in the "trainer python", which need not have Bracket, so it imports nothing from
Bracket and parses the ``--d/--w/--h/--s`` prompt options itself.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

COLOUR_WORDS = ("red", "green", "blue", "yellow")
SHAPE_WORDS = ("circle", "square", "triangle")
NUM_CLASSES = len(COLOUR_WORDS) * len(SHAPE_WORDS) + 1  # the last one: "anything else"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
OPTIMIZERS = ("AdamW", "Adam", "RAdam", "SGD", "Adagrad")
SCHEDULERS = ("constant", "constant_with_warmup", "cosine", "linear")
TRACKER_NAME = "network_train"
VALIDATION_TAG = "loss/validation/step_average"
VALIDATION_TIMESTEPS = (200, 400, 600, 800)
PREVIEW_SIZE = 128
_OPTION = re.compile(r"\s+--(?=[A-Za-z]+\b)")


def caption_class(caption: str) -> int:
    """The class label of a caption: colour x shape from its words, else the last class."""
    words = re.findall(r"[a-z]+", caption.lower())
    colour = next((COLOUR_WORDS.index(w) for w in words if w in COLOUR_WORDS), None)
    shape = next((SHAPE_WORDS.index(w) for w in words if w in SHAPE_WORDS), None)
    if colour is None or shape is None:
        return NUM_CLASSES - 1
    return colour * len(SHAPE_WORDS) + shape


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bracket's CPU DDPM demo trainer (sd-scripts-style flags).")
    parser.add_argument("--dataset_config", required=True, help="sd-scripts-style dataset TOML")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--output_name", default="demo")
    parser.add_argument("--logging_dir", default=None)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--optimizer_type", default="AdamW", choices=OPTIMIZERS)
    parser.add_argument("--lr_scheduler", default="constant", choices=SCHEDULERS)
    parser.add_argument("--lr_warmup_steps", type=int, default=0)
    parser.add_argument("--max_train_steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--sample_prompts", default=None)
    parser.add_argument("--sample_every_n_steps", type=int, default=None)
    parser.add_argument("--sample_at_first", action="store_true")
    parser.add_argument("--mixed_precision", default="no", choices=("no",))
    parser.add_argument("--save_every_n_steps", type=int, default=None)
    parser.add_argument("--save_state", action="store_true")
    parser.add_argument("--resume", default=None, help="a state folder written by --save_state")
    parser.add_argument("--stop_at_step", type=int, default=None,
                        help="pause here: keep the schedule of --max_train_steps, save the state "
                        "(<output_name>-step<N>-state, its COMPLETE marker written last) and stop")
    parser.add_argument("--validation_split", type=float, default=0.0,
                        help="share of each subset's images held out for the validation loss")
    parser.add_argument("--validation_seed", type=int, default=None, help="shuffle seed of the split")
    parser.add_argument("--validate_every_n_steps", type=int, default=None)
    parser.add_argument("--validate_every_n_epochs", type=int, default=None, help="accepted; not used")
    parser.add_argument("--cpu_threads", type=int, default=0,
                        help="torch threads; 0 keeps OMP_NUM_THREADS (accelerate launch sets it to 1)")
    return parser.parse_args(argv)


# -- data -------------------------------------------------------------------------------

def split_train_val(images: list[Path], split: float, seed: int | None) -> tuple[list[Path], list[Path]]:
    """(training, held-out) images of one subset, by sd-scripts' rule: shuffle with the seed,
    train on the first ``ceil(n * (1 - split))``, hold out the last ``round(n * split)``."""
    if split <= 0.0:
        return list(images), []
    shuffled = list(images)
    random.Random(seed).shuffle(shuffled)
    train_count = math.ceil(len(shuffled) * (1 - split))
    held_count = round(len(shuffled) * split)
    return shuffled[:train_count], shuffled[len(shuffled) - held_count:] if held_count else []


def read_dataset(config_path: Path, validation_split: float = 0.0, validation_seed: int | None = None
                 ) -> tuple[list[tuple[Path, str]], int, int, list[tuple[Path, str]]]:
    """(image, caption) pairs, batch size, resolution and held-out pairs from an sd-scripts dataset TOML."""
    document = tomllib.loads(config_path.read_text(encoding="utf-8"))
    general = document.get("general", {})
    batch_size = int(general.get("batch_size", 1))
    resolution = general.get("resolution", 32)
    extension = general.get("caption_extension", ".txt")
    items: list[tuple[Path, str]] = []
    held_out: list[tuple[Path, str]] = []
    for dataset in document.get("datasets", []):
        batch_size = int(dataset.get("batch_size", batch_size))
        resolution = dataset.get("resolution", resolution)
        for subset in dataset.get("subsets", []):
            folder = Path(subset["image_dir"])
            if not folder.is_absolute():
                folder = config_path.resolve().parent / folder
            suffix = subset.get("caption_extension", extension)
            repeats = max(1, int(subset.get("num_repeats", 1)))
            images = [p for p in sorted(folder.iterdir()) if p.suffix.lower() in IMAGE_SUFFIXES]
            training, held = split_train_val(images, validation_split, validation_seed)

            def captioned(image: Path, suffix: str = suffix) -> tuple[Path, str]:
                caption_file = image.with_suffix(suffix)
                return image, caption_file.read_text(encoding="utf-8").strip() if caption_file.is_file() else ""

            for image in training:
                items.extend([captioned(image)] * repeats)
            held_out.extend(captioned(image) for image in held)
    resolution = resolution[0] if isinstance(resolution, list) else resolution
    if not items:
        sys.exit(f"error: dataset {config_path} holds no images; run `python -m bracket demo-data DIR`.")
    return items, batch_size, int(resolution), held_out


def load_tensors(items, resolution):
    import numpy as np
    import torch
    from PIL import Image

    pixels, labels = [], []
    for path, caption in items:
        with Image.open(path) as image:
            image = image.convert("RGB").resize((resolution, resolution), Image.Resampling.BICUBIC)
            pixels.append(np.asarray(image, dtype=np.float32) / 127.5 - 1.0)
        labels.append(caption_class(caption))
    images = torch.from_numpy(np.stack(pixels)).permute(0, 3, 1, 2).contiguous()
    return images, torch.tensor(labels, dtype=torch.long)


# -- model, optimizer, schedule ---------------------------------------------------------

def build_model(resolution: int):
    from diffusers import UNet2DModel

    return UNet2DModel(sample_size=resolution, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(16, 32, 64), norm_num_groups=8, num_class_embeds=NUM_CLASSES,
                       down_block_types=("DownBlock2D",) * 3, up_block_types=("UpBlock2D",) * 3)


def build_optimizer(name: str, parameters, learning_rate: float):
    import torch

    if name == "SGD":
        return torch.optim.SGD(parameters, lr=learning_rate, momentum=0.9)
    return getattr(torch.optim, name)(parameters, lr=learning_rate)


def build_noise_scheduler():
    """DDPM with a cosine schedule, predicting the clean image.

    Predicting the clean image (not the noise) is what lets a model this small show
    recognisable coloured shapes after ~100 steps; a noise-predicting model still
    renders noise at that point, and the demo would show no difference between runs.
    """
    from diffusers import DDPMScheduler

    return DDPMScheduler(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2",
                         prediction_type="sample")


# -- sampling -----------------------------------------------------------------------------

def read_prompts(path: Path) -> list[dict]:
    """Prompt lines ``text --d seed --w W --h H --s steps``; other options are ignored."""
    prompts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = _OPTION.split(line)
        prompt = {"text": parts[0].strip(), "seed": None, "width": None, "height": None, "steps": None}
        for part in parts[1:]:
            letter, _, value = part.partition(" ")
            key = {"d": "seed", "w": "width", "h": "height", "s": "steps"}.get(letter.lower())
            if key:
                try:
                    prompt[key] = int(value.strip())
                except ValueError:
                    pass
        prompts.append(prompt)
    return prompts


def _size(value, resolution: int) -> int:
    return max(16, min(128, int(value) // 8 * 8)) if value else resolution


def render_samples(model, noise_scheduler, prompts, *, output_dir: Path, output_name: str, step_label: str,
                   resolution: int, default_seed: int) -> None:
    """Render every prompt with its own seed and save it, upscaled, with the sd-scripts name."""
    import numpy as np
    import torch
    from diffusers import DDIMScheduler
    from PIL import Image

    sample_dir = output_dir / "sample"
    sample_dir.mkdir(parents=True, exist_ok=True)
    sampler = DDIMScheduler.from_config(noise_scheduler.config)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for index, prompt in enumerate(prompts):
            seed = prompt["seed"] if prompt["seed"] is not None else default_seed + index
            width, height = _size(prompt["width"], resolution), _size(prompt["height"], resolution)
            steps = max(1, min(200, prompt["steps"] or 20))
            generator = torch.Generator().manual_seed(seed)
            image = torch.randn((1, 3, height, width), generator=generator)
            label = torch.tensor([caption_class(prompt["text"])])
            sampler.set_timesteps(steps)
            for timestep in sampler.timesteps:
                predicted = model(image, timestep, class_labels=label).sample
                image = sampler.step(predicted, timestep, image).prev_sample
            array = ((image[0].clamp(-1, 1) + 1) * 127.5).round().byte().permute(1, 2, 0).numpy()
            scale = max(1, PREVIEW_SIZE // max(width, height))
            picture = Image.fromarray(np.ascontiguousarray(array)).resize((width * scale, height * scale),
                                                                          Image.Resampling.NEAREST)
            stamp = datetime.now().strftime("%Y%m%d%H%M%S")
            picture.save(sample_dir / f"{output_name}_{step_label}_{index:02d}_{stamp}_{seed}.png")
    if was_training:
        model.train()


# -- training -----------------------------------------------------------------------------

def train(args: argparse.Namespace) -> None:
    import torch
    import torch.nn.functional as F
    from accelerate import Accelerator
    from diffusers.optimization import get_scheduler
    from torch.utils.tensorboard import SummaryWriter

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, also Bracket-free
    from demo_state import resume_training_state, save_training_state, save_weights

    if args.cpu_threads > 0:
        torch.set_num_threads(args.cpu_threads)
    started = time.monotonic()
    config_path = Path(args.dataset_config)
    items, batch_size, resolution, held_out = read_dataset(config_path, args.validation_split, args.validation_seed)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    images, labels = load_tensors(items, resolution)
    validation = load_tensors(held_out, resolution) if held_out else None

    accelerator = Accelerator(mixed_precision="no", cpu=True)
    model = build_model(resolution)
    optimizer = build_optimizer(args.optimizer_type, model.parameters(), args.learning_rate)
    lr_scheduler = get_scheduler(args.lr_scheduler, optimizer=optimizer,
                                 num_warmup_steps=args.lr_warmup_steps, num_training_steps=args.max_train_steps)
    model, optimizer, lr_scheduler = accelerator.prepare(model, optimizer, lr_scheduler)
    noise_scheduler = build_noise_scheduler()
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    prompts = read_prompts(Path(args.sample_prompts)) if args.sample_prompts else []
    parameters = sum(p.numel() for p in model.parameters())
    print(f"demo_train: {len(items)} images at {resolution}px, batch {batch_size}, {parameters / 1e6:.2f}M "
          f"parameters, {args.optimizer_type} lr {args.learning_rate:g} {args.lr_scheduler}, "
          f"{args.max_train_steps} steps, {torch.get_num_threads()} thread(s)"
          + (f", {len(held_out)} held out for validation" if held_out else ""), flush=True)

    step, recent, generator_state = (resume_training_state(accelerator, Path(args.resume)) if args.resume
                                     else (0, [], None))
    stop_at = args.stop_at_step if args.stop_at_step and step < args.stop_at_step < args.max_train_steps else None
    run_log = Path(args.logging_dir or ".") / datetime.now().strftime("%Y%m%d%H%M%S") / TRACKER_NAME
    writer = SummaryWriter(log_dir=str(run_log)) if args.logging_dir else None

    def sample(label: str) -> None:
        if prompts:
            render_samples(accelerator.unwrap_model(model), noise_scheduler, prompts, output_dir=output_dir,
                           output_name=args.output_name, step_label=label, resolution=resolution,
                           default_seed=args.seed)

    def validate(held: tuple[Any, Any]) -> float:
        """Mean loss on the ``held`` (images, labels) at fixed timesteps with fixed noise."""
        val_images, val_labels = held
        seed = args.validation_seed if args.validation_seed is not None else args.seed
        noise_generator = torch.Generator().manual_seed(seed)
        net = accelerator.unwrap_model(model)
        net.eval()
        losses = []
        with torch.no_grad():
            for timestep in VALIDATION_TIMESTEPS:
                noise = torch.randn(val_images.shape, generator=noise_generator)
                times = torch.full((val_images.shape[0],), timestep, dtype=torch.long)
                noisy = noise_scheduler.add_noise(val_images, noise, times)
                losses.append(float(F.mse_loss(net(noisy, times, class_labels=val_labels).sample, val_images)))
        net.train()
        return sum(losses) / len(losses)

    if args.sample_at_first and step == 0:
        sample("e000000")
    generator = torch.Generator().manual_seed(args.seed + step)
    if generator_state is not None:  # the data order goes on exactly where the paused run stopped
        generator.set_state(generator_state)
    last_sampled = -1
    model.train()
    while step < args.max_train_steps:
        index = torch.randint(0, images.shape[0], (batch_size,), generator=generator)
        clean, label = images[index], labels[index]
        noise = torch.randn(clean.shape, generator=generator)
        timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (batch_size,),
                                  generator=generator)
        noisy = noise_scheduler.add_noise(clean, noise, timesteps)
        loss = F.mse_loss(model(noisy, timesteps, class_labels=label).sample, clean)
        accelerator.backward(loss)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        value = float(loss.detach())
        if not math.isfinite(value):
            sys.exit(f"error: the loss became {value} at step {step}; the learning rate is too high.")
        recent = (recent + [value])[-20:]
        if writer is not None:
            writer.add_scalar("loss/current", value, step)
            writer.add_scalar("loss/average", sum(recent) / len(recent), step)
            writer.add_scalar("lr/unet", lr_scheduler.get_last_lr()[0], step)
        if step % 10 == 0 or step == args.max_train_steps:
            average = sum(recent) / len(recent)
            print(f"steps: {step}/{args.max_train_steps} loss {value:.4f} avg {average:.4f}", flush=True)
        every = args.validate_every_n_steps
        if validation is not None and every and (step % every == 0 or step in (args.max_train_steps, stop_at)):
            value = validate(validation)
            if writer is not None:
                writer.add_scalar(VALIDATION_TAG, value, step)
            print(f"steps: {step}/{args.max_train_steps} validation loss {value:.4f}", flush=True)
        if args.sample_every_n_steps and step % args.sample_every_n_steps == 0:
            sample(f"{step:06d}")
            last_sampled = step
        if args.save_every_n_steps and step % args.save_every_n_steps == 0 and step < args.max_train_steps:
            stem = output_dir / f"{args.output_name}-step{step:08d}"
            save_weights(accelerator.unwrap_model(model), stem.with_name(stem.name + ".safetensors"))
            if args.save_state:
                save_training_state(accelerator, stem.with_name(stem.name + "-state"), step, generator, recent)
        if step == stop_at:
            if prompts and last_sampled != step:
                sample(f"{step:06d}")
            stem = output_dir / f"{args.output_name}-step{step:08d}"
            save_weights(accelerator.unwrap_model(model), stem.with_name(stem.name + ".safetensors"))
            if writer is not None:  # flushed before the state is complete: Bracket may stop the run then
                writer.close()
            save_training_state(accelerator, stem.with_name(stem.name + "-state"), step, generator, recent)
            print(f"demo_train: paused at step {step} in {time.monotonic() - started:.1f}s", flush=True)
            return
    if prompts and last_sampled != step:
        sample(f"{step:06d}")
    save_weights(accelerator.unwrap_model(model), output_dir / f"{args.output_name}.safetensors")
    if args.save_state:
        save_training_state(accelerator, output_dir / f"{args.output_name}-state", step, generator, recent)
    if writer is not None:
        writer.close()
    print(f"demo_train: done in {time.monotonic() - started:.1f}s", flush=True)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        import diffusers  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        sys.exit(f"error: {sys.executable} cannot import {error.name}; run ./install.sh "
                 f"(or {sys.executable} -m pip install -r requirements.txt).")
    train(args)


if __name__ == "__main__":
    main()
