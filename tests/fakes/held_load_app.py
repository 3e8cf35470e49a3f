"""``python tests/fakes/held_load_app.py --port N``: ``python app.py`` whose page-load answer comes late,
after a person's preset switch reached the server (issue 43: a late load answer over a picked preset).

The load chain's first step (``ui.setup_tab.on_load``) computes its answer, then holds it until

- a preset switch waits in the load's own queue, behind it (the form's one ordered path: that switch
  cannot be answered before this load); it writes ``<gate>.queued`` and answers; or
- the file ``BRACKET_TEST_LOAD_GATE`` names exists: the test makes it once the page shows the
  switch's answer (the switch ran beside the held load, in a queue of its own);

at most :data:`HELD_S` either way. Everything else is the real app.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELD_S = 120.0


def _wrapped(block_function: Any) -> Any:
    """The function a Setup listener was made from (``SetupForm.filler`` over a ``functools.partial``)."""
    return getattr(getattr(block_function.fn, "__wrapped__", None), "func", None)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    import app
    import ui.blocks as blocks
    import ui.setup_tab as setup_tab

    gate = Path(os.environ["BRACKET_TEST_LOAD_GATE"])
    built: dict[str, Any] = {}
    real_on_load, real_switch, real_build = setup_tab.on_load, setup_tab.switch_preset, blocks.build_app

    @functools.wraps(real_switch)
    def switch_preset(*args: Any, **kwargs: Any) -> Any:
        return real_switch(*args, **kwargs)

    def switch_waits_behind(load_queue: str) -> bool:
        queue = getattr(built.get("demo"), "_queue", None)
        waiting = queue.event_queue_per_concurrency_id.get(load_queue) if queue else None
        return any(_wrapped(event.fn) is switch_preset for event in (waiting.queue if waiting else []))

    @functools.wraps(real_on_load)
    def on_load(*args: Any, **kwargs: Any) -> Any:
        answer = real_on_load(*args, **kwargs)
        load_queue = next(f.concurrency_id for f in built["demo"].fns.values() if _wrapped(f) is on_load)
        deadline = time.monotonic() + HELD_S
        while time.monotonic() < deadline and not gate.exists():
            if switch_waits_behind(load_queue):
                gate.with_suffix(".queued").write_text("a preset switch waits behind the page's load\n")
                break
            time.sleep(0.05)
        return answer

    def build_app(manager: Any) -> Any:
        built["demo"] = real_build(manager)
        return built["demo"]

    # app.py imports build_app from ui.blocks when it serves, and build_app reads these by name
    setup_tab.on_load, setup_tab.switch_preset, blocks.build_app = on_load, switch_preset, build_app
    return app.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
