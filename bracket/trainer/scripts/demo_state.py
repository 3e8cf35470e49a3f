"""The demo trainer's checkpoints: weights, and the training state a paused run resumes from.

``demo_train.py`` imports this from its own folder (it runs in the trainer python, which
need not have Bracket, so this imports nothing from Bracket either). A state folder holds
what makes a resumed run continue *exactly* where the paused one stopped: model, optimizer,
LR scheduler and the global RNGs (``accelerate``'s ``save_state``), the generator that draws
the batches, noise and timesteps (``generator.pt``), the loss window of ``loss/average``
and the step (``train_state.json``), and last the ``COMPLETE`` marker, so a reader (Bracket
waiting to stop a paused run) never takes a half-written state.

Run by path, it says what a state folder holds: ``python demo_state.py FOLDER``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

#: written last into a state folder: its presence says every other file of the state is complete
COMPLETE_MARKER = "COMPLETE"
STATE_FILE = "train_state.json"


def save_weights(model, path: Path) -> None:
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(path))


def save_training_state(accelerator, folder: Path, step: int, generator=None,
                        recent: list[float] | None = None) -> None:
    """Everything a resume needs (see the module), the COMPLETE marker written last."""
    import torch

    (folder / COMPLETE_MARKER).unlink(missing_ok=True)
    accelerator.save_state(str(folder))
    if generator is not None:
        torch.save(generator.get_state(), folder / "generator.pt")
    (folder / STATE_FILE).write_text(json.dumps({"current_step": step, "recent": list(recent or [])}),
                                     encoding="utf-8")
    (folder / COMPLETE_MARKER).write_text(f"{step}\n", encoding="utf-8")


def resume_training_state(accelerator, folder: Path) -> tuple[int, list[float], object | None]:
    """Load a state folder into ``accelerator``'s objects; returns (step, loss window, the
    batch generator's state or None for a state saved before it was kept)."""
    import torch

    if not (folder / STATE_FILE).is_file():
        sys.exit(f"error: {folder} is not a state folder written by --save_state (no {STATE_FILE}).")
    accelerator.load_state(str(folder))
    state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    generator = torch.load(folder / "generator.pt") if (folder / "generator.pt").is_file() else None
    return int(state["current_step"]), [float(v) for v in state.get("recent", [])], generator


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Say which step a demo state folder holds and whether it is complete.")
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args(argv).folder
    if not (folder / STATE_FILE).is_file():
        sys.exit(f"error: {folder} is not a demo state folder (no {STATE_FILE}).")
    step = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))["current_step"]
    print(f"step {step}, {'complete' if (folder / COMPLETE_MARKER).is_file() else 'incomplete'}")


if __name__ == "__main__":
    main()
