"""The GPU proof: one prepared script that trains real presets on CUDA through Bracket (README.md)."""
