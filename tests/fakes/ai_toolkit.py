"""A fake ostris/ai-toolkit checkout: ``run.py`` is ``fake_ai_toolkit.py``, beside the inventory it checks with."""

from __future__ import annotations

import shutil
from pathlib import Path

from bracket.trainer.inventory import ai_toolkit as inventory

FAKES_DIR = Path(__file__).resolve().parent


def make_fake_ai_toolkit(dest: Path) -> Path:
    """``dest`` made a checkout-shaped folder whose ``run.py`` is the fake trainer; returns ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(FAKES_DIR / "fake_ai_toolkit.py", dest / "run.py")
    shutil.copy2(inventory.__file__, dest / "aitk_inventory.py")
    shutil.copy2(inventory.INVENTORY_PATH, dest / "ai-toolkit.json")
    return dest
