"""``app.py`` with a search started through the Setup tab's handler, for a test to SIGKILL.

``python tests/reliability/ui_app_with_search.py PORT FIELDS_JSON_FILE`` runs ``app.main`` exactly
as ``python app.py --port PORT --allow-custom-executables`` does, except that right after the Blocks are built it calls
``ui.setup_tab.start_search`` (the Start button's function) with the demo-cpu fields in
FIELDS_JSON_FILE: budget 3, 6 steps, session name ``ui-crash``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import app
import ui.blocks
from ui import setup_tab


def main(port: str, fields_file: str) -> int:
    fields = json.loads(Path(fields_file).read_text(encoding="utf-8"))
    build = ui.blocks.build_app

    def build_and_start(manager):
        demo = build(manager)
        setup_tab.start_search(manager, preset_id="demo-cpu", fields=fields, budget=3, steps=6, seeds=1,
                               prompts="a red circle --d 1", name="ui-crash")
        return demo

    ui.blocks.build_app = build_and_start
    return app.main(["--port", port, "--allow-custom-executables"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
