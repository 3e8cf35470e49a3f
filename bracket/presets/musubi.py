"""Preset table of the musubi family (filled in by its adapters)."""

PRESETS = ()
