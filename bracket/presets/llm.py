"""Preset table of the llm family (filled in by its adapters)."""

PRESETS = ()
