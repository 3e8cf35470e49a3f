"""The small LoRA space the shape-draw and focus-draw tests share: the Adam family on a log
learning rate, Prodigy on ``d_coef``, a warm-up only with a schedule, rank and alpha, a fixed batch."""

from __future__ import annotations

from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

ADAM = ("AdamW8bit", "AdamW", "Adafactor")
SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob((*ADAM, "Prodigy")),
    "learning_rate": FloatKnob(1e-5, 2e-3, log=True, when={"optimizer_type": ADAM}),
    "prodigy_d_coef": FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": ("Prodigy",)}),
    "lr_scheduler": CategoricalKnob(("constant", "constant_with_warmup", "cosine", "linear")),
    "lr_warmup_steps": IntKnob(0, 20, step=10, when={"lr_scheduler": ("constant_with_warmup", "cosine", "linear")}),
    "network_dim": CategoricalKnob((4, 8, 16, 32, 64)),
    "network_alpha": CategoricalKnob((1, 4, 8, 16, 32)),
    "batch_size": FixedKnob(1),
})
#: the warm start's best config in both tests: AdamW8bit at 1e-4, rank 32, alpha 16
BASE = {"optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant", "network_dim": 32,
        "network_alpha": 16}
