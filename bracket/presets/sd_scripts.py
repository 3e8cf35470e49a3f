"""Preset table of the sd_scripts family (filled in by its adapters)."""

PRESETS = ()
