"""Each trainer's real tag names read back from fixture event files, as the session reads them."""

from __future__ import annotations

import pytest

from bracket.trainer.base import RunRequest
from tests.llm.llm_helpers import read_tags


def _write(folder, scalars, new_style):
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(folder))
    for tag, step, value in scalars:
        writer.add_scalar(tag, value, step, new_style=new_style)
    writer.close()


@pytest.mark.parametrize("preset_id,new_style,scalars", [
    # HF Trainer callback (Axolotl): legacy simple_value summaries, train/ and eval/ prefixes
    ("axolotl-lora", False, [("eval/loss", 0, 2.5), ("train/loss", 1, 2.4), ("train/loss", 2, 2.2),
                             ("eval/loss", 2, 2.1), ("train/train_loss", 2, 2.3)]),
    # Bracket's Unsloth driver: torch SummaryWriter, HF tag names
    ("unsloth-lora", False, [("eval/loss", 0, 2.5), ("train/loss", 1, 2.4), ("train/loss", 2, 2.2),
                             ("eval/loss", 2, 2.1)]),
    # torchtune TensorBoardLogger: add_scalar(new_style=True), bare names
    ("torchtune-lora", True, [("loss", 1, 2.4), ("lr", 1, 3e-4), ("loss", 2, 2.2)]),
])
def test_tags_of_each_trainer(make_trainer, tmp_path, preset_id, new_style, scalars):
    trainer = make_trainer(preset_id)
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=trainer.config_from_dict(
        trainer.baseline_config().knobs), dataset=trainer.dataset_source(None), max_steps=10, seed=1))
    _write(spec.logging_dir, scalars, new_style)
    series = read_tags(spec.logging_dir, spec.tfevents_glob)
    loss = series[spec.loss_tags[0]]
    assert loss == [(1, pytest.approx(2.4)), (2, pytest.approx(2.2))]
    if spec.eval_loss_tags:
        assert series[spec.eval_loss_tags[0]] == [(0, pytest.approx(2.5)), (2, pytest.approx(2.1))]
    else:
        assert not [tag for tag in series if "val" in tag]
