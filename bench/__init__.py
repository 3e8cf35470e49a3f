"""Bracket's benchmarks: search efficiency on synthetic landscapes, and the engine's overhead.

Run ``python -m bench`` (short) or ``python -m bench --full``; see docs/BENCHMARKS.md.
"""

import os as _os

# A trainer sees only an allow-list of Bracket's environment (bracket.trainer.environment): the
# landscape trainer's own switches (BRACKET_BENCH_LANDSCAPE, …) are passed to it by name, as a
# person passes WANDB_* to a real trainer.
_passed = _os.environ.get("BRACKET_TRAINER_ENV", "")
if "BRACKET_BENCH_*" not in _passed.split(","):
    _os.environ["BRACKET_TRAINER_ENV"] = ",".join(p for p in (_passed, "BRACKET_BENCH_*") if p)
