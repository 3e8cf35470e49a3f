"""Bracket: find the best hyperparameters for a fine-tune with short, real trainer runs.

The package is the engine; ``ui/`` is a thin Gradio front end over it and ``bracket.cli``
is the headless one. See ``docs/ARCHITECTURE.md`` for the map of the parts.
"""

__version__ = "0.1.0"
