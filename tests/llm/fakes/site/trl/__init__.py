"""Fake ``trl``: an SFTTrainer that 'trains' by logging a falling loss through the callbacks."""

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/llm/fakes: hf_checkpoints
import hf_checkpoints  # noqa: E402
import transformers
import unsloth


class SFTConfig(SimpleNamespace):
    def __init__(self, **kwargs):
        major = int(transformers.__version__.split(".")[0])
        if major >= 5 and "warmup_ratio" in kwargs:
            raise ValueError("warmup_ratio is deprecated on transformers 5; pass warmup_steps")
        if major < 5 and "warmup_steps" in kwargs and kwargs["warmup_steps"] < 1 and kwargs["warmup_steps"] != 0:
            raise ValueError("transformers 4 takes an integer warmup_steps")
        super().__init__(**kwargs)
        self.kwargs = kwargs


class SFTTrainer:
    def __init__(self, model, processing_class, train_dataset, eval_dataset, args, callbacks):
        self.model, self.args, self.callbacks = model, args, callbacks
        self.train_dataset, self.eval_dataset = train_dataset, eval_dataset
        self.state = SimpleNamespace(global_step=0, log_history=[])

    def _log(self, logs):
        self.state.log_history.append({**logs, "step": self.state.global_step})
        for callback in self.callbacks:
            callback.on_log(self.args, self.state, None, logs=logs)

    def _evaluate(self):
        if os.environ.get("FAKE_NO_EVAL_LOSS") == "1":
            self._log({"eval_runtime": 0.1})
        else:
            self._log({"eval_loss": 2.0 / (1 + self.state.global_step), "eval_runtime": 0.1})

    def train(self, resume_from_checkpoint=None):
        out = Path(self.args.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "fake_sft_args.json").write_text(json.dumps(self.args.kwargs), encoding="utf-8")
        (out / "fake_calls.json").write_text(json.dumps({**unsloth.CALLS, "peft": self.model.peft}),
                                            encoding="utf-8")
        (out / "fake_first_text.txt").write_text(self.train_dataset.rows[0]["text"], encoding="utf-8")
        self.state.global_step = hf_checkpoints.resumed_step(resume_from_checkpoint)
        if self.eval_dataset is not None and getattr(self.args, "eval_on_start", False):
            self._evaluate()
        save_every = getattr(self.args, "save_steps", 0) if self.args.save_strategy == "steps" else 0
        for step in range(self.state.global_step + 1, self.args.max_steps + 1):
            hf_checkpoints.step_pause()
            self.state.global_step = step
            self._log({"loss": 3.0 / step, "learning_rate": self.args.learning_rate, "epoch": step / 10})
            if self.eval_dataset is not None and step % self.args.eval_steps == 0:
                self._evaluate()
            if save_every and step % save_every == 0:
                hf_checkpoints.save_checkpoint(out, step, self.state.log_history, adapter_config=self.model.peft)
                hf_checkpoints.hold(step, self.args.max_steps)
