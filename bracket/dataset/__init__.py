"""Datasets: pre-flight checks and the per-run dataset TOML."""
