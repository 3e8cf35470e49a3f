"""Trainer adapters, one package per family, all on the protocol in ``base``.

``sd_scripts/``, ``musubi/``, ``llm/`` and ``demo/`` each hold a family's base, one module per
model and the family's preset rows; ``presets.py`` is the one flat list of them. Shared
helpers (``base``, ``prompts``, ``tokenizers``, ``vram``, ``cache_key``, ``validation``,
``parser_check``, ``inventory/``) sit at this level; ``scripts/`` holds what runs in a
trainer's own interpreter and imports nothing from Bracket.
"""
