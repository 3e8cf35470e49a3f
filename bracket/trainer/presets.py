"""Every preset Bracket can search, as one flat list.

Each trainer family keeps its rows next to its adapters (``<family>/presets.py``), the way
one folder per model family and one flat list keep a catalogue easy to extend: a new model
is a module and a row in its family's folder; a new family is a folder and one line here.
:mod:`bracket.registry` checks this list and looks presets up.
"""

from __future__ import annotations

from bracket.trainer.ai_toolkit import presets as ai_toolkit
from bracket.trainer.demo import presets as demo
from bracket.trainer.llm import presets as llm
from bracket.trainer.musubi import presets as musubi
from bracket.trainer.sd_scripts import presets as sd_scripts

PRESETS = (*demo.PRESETS, *sd_scripts.PRESETS, *musubi.PRESETS, *ai_toolkit.PRESETS, *llm.PRESETS)
