"""ostris/ai-toolkit adapters: one job file per run (``base.py``), one module per model family."""
